//! A task's program text (`[[task]] text_pages`, `workload/text.rs`):
//! each exit marks the pages accessed (`zap_pte_range`), so the second of
//! two tasks of one program activates them on the classic LRU and only
//! references them with MGLRU.

use wbsim::scenario::parse_scenario;

fn scenario(text_pages: u32, second_file: &str) -> String {
    format!(
        r#"
kernel = "6.1"
[machine]
cpus = 2
[[machine.zone]]
name = "DMA32"
size_mib = 128
kernel_mib = 8
[[device]]
name = "sdb"
model = "usb-stick"
capacity_gib = 1
seq_write_mib_per_s = 20.0
max_request_kib = 512
command_overhead_us = 50.0
small_write_penalty_us = 0.0
[[fs]]
type = "xfs"
device = "sdb"
mount = "disk"
[[task]]
name = "dd"
command = "dd if=/dev/zero of=disk/f bs=32k count=64"
text_pages = {text_pages}
text_file = "/init"
[[task]]
name = "sync"
command = "sync"
after = "dd"
text_pages = {text_pages}
text_file = "{second_file}"
"#
    )
}

fn pgactivate(text: &str, kernel: &str) -> u64 {
    let sc = parse_scenario(text, "text.toml").unwrap();
    let profile = wbsim::kernel::preset(kernel).unwrap();
    let r = wbsim::simulate(&sc, &profile, 1, &wbsim::RunOptions::default());
    r.vmstat["pgactivate"] as u64
}

#[test]
fn the_second_exit_of_a_program_activates_its_text_on_the_classic_lru_only() {
    let base = pgactivate(&scenario(0, "/init"), "6.1");
    assert_eq!(pgactivate(&scenario(40, "/init"), "6.1"), base + 40);
    assert_eq!(
        pgactivate(&scenario(40, "/init"), "3.10"),
        pgactivate(&scenario(0, "/init"), "3.10") + 40
    );
    // Two different files: each page is touched once, no activation.
    assert_eq!(pgactivate(&scenario(40, "/bin/sync"), "6.1"), base);
    // MGLRU: references, no activation.
    let mglru = pgactivate(&scenario(0, "/init"), "6.1+mglru");
    assert_eq!(pgactivate(&scenario(40, "/init"), "6.1+mglru"), mglru);
}

#[test]
fn text_pages_out_of_range_names_the_key() {
    let text = scenario(0, "/init").replace(
        "text_pages = 0\ntext_file = \"/init\"\n[[task]]",
        "text_pages = -3\ntext_file = \"/init\"\n[[task]]",
    );
    let e = parse_scenario(&text, "text.toml").unwrap_err().to_string();
    assert!(e.contains("text_pages") && e.contains("text.toml:"), "{e}");
}
