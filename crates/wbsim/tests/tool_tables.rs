//! The text report prints fs_mark's and IOzone's result tables as those
//! tools print them, with the figures of the JSON report.

mod common;

use common::{scenario, three_zone_machine};
use wbsim::{kernel, make_report, report::format_text, simulate, RunOptions};

fn text_of(tasks: &str) -> (String, wbsim::report::RunReport) {
    let sc = scenario(&three_zone_machine(2, 16, 64, 48), "xfs", tasks, "t.toml");
    let profile = kernel::preset("3.0-vanilla").unwrap();
    let run = simulate(&sc, &profile, 1, &RunOptions::default());
    let report = make_report(&sc, &profile, vec![run.clone()]);
    (format_text(&report), run)
}

#[test]
fn fs_mark_prints_its_files_per_second_table() {
    let (text, run) = text_of(
        r#"[[task]]
command = "fs_mark -d disk/a -n 50 -s 65536 -L 3 -S0""#,
    );
    let lines: Vec<&str> = text.lines().collect();
    let head = lines
        .iter()
        .position(|l| *l == "FSUse%        Count         Size    Files/sec     App Overhead")
        .expect(&text);
    assert_eq!(run.fsmark.len(), 3);
    assert!(!text.contains("-D"), "no subdirectory note without -D");
    for (i, l) in run.fsmark.iter().enumerate() {
        let row: Vec<&str> = lines[head + 1 + i].split_whitespace().collect();
        assert_eq!(row[1], ((i + 1) * 50).to_string(), "cumulative count");
        assert_eq!(row[2], "65536");
        assert_eq!(row[3], format!("{:.1}", l.files_per_second));
    }
}

#[test]
fn iozone_prints_its_kbytes_per_second_table() {
    let (text, run) = text_of(
        r#"[[task]]
name = "io"
command = "iozone -i 0 -i 2 -r 4k -s 8m -f disk/iozone.tmp""#,
    );
    assert!(
        text.contains("KB  reclen   write rewrite    read    reread    read   write"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("8192 "))
        .expect(&text);
    let kib = |t: &str| {
        run.iozone
            .iter()
            .find(|r| r.test.name() == t)
            .unwrap()
            .kib_per_second
            .to_string()
    };
    // write, rewrite, blank read/reread, random read, random write.
    let expected = format!(
        "{:>16}{:>8}{:>8}{:>8}{:18}{:>8}{:>8}   (io)",
        8192,
        4,
        kib("write"),
        kib("rewrite"),
        "",
        kib("randread"),
        kib("randwrite")
    );
    assert_eq!(row, expected);
}

/// fs_mark's `-D`/`-N` are accepted (the published commands use them) but
/// not modelled: the report says so beside the figures.
#[test]
fn fs_mark_says_that_subdirectories_are_not_modelled() {
    let (text, _) = text_of(
        r#"[[task]]
command = "fs_mark -d disk/a -D 100 -N 10 -n 50 -s 4096 -L 1 -S0""#,
    );
    assert!(text.contains("(-D 100 and -N are not modelled"), "{text}");
}
