//! The command line, parsed by hand (a small static binary): `init`,
//! `task`, `check-plan`, `help`. As PID 1 the arguments (whatever the
//! kernel passed on) are ignored and the plan runs.

use std::io::Write;
use std::path::PathBuf;

use crate::protocol::PLAN_PATH;
use crate::{init, plan, sys, workloads};

pub const USAGE: &str = "\
wbsim-guest: the guest side of `wbsim lab` (its /init in a QEMU guest)

usage:
  wbsim-guest init [--plan PATH] [--poweroff]
      run a plan (default /wbsim-lab/plan.json): mount the data disk, run
      the tasks, write the results disk; as PID 1 this is what happens,
      and the machine powers off at the end (elsewhere only with --poweroff)
  wbsim-guest task [--name NAME] [--] COMMAND...
      run one workload command line in the current directory, as a
      scenario's [[task]] command: dd, fs_mark, iozone, mapwrite, memtouch,
      sync
      (exit 2 when it does not parse)
  wbsim-guest check-plan FILE
      check a plan file: prints \"ok\" or its problems (exit 2)
  wbsim-guest help | --help | -h
      this text
";

/// A parsed command line.
#[derive(Debug, PartialEq)]
pub enum Mode {
    Init {
        plan: PathBuf,
        poweroff: bool,
    },
    Task {
        name: Option<String>,
        command: String,
    },
    CheckPlan(PathBuf),
    Help,
}

/// Parse the arguments after the program name.
pub fn parse_args(args: &[String]) -> Result<Mode, String> {
    let Some((sub, rest)) = args.split_first() else {
        return Err("no subcommand given".into());
    };
    match sub.as_str() {
        "help" | "--help" | "-h" => Ok(Mode::Help),
        "init" => {
            let (mut plan, mut poweroff) = (PathBuf::from(PLAN_PATH), false);
            let mut it = rest.iter();
            while let Some(a) = it.next() {
                match a.as_str() {
                    "--plan" => plan = it.next().ok_or("--plan needs a path")?.into(),
                    "--poweroff" => poweroff = true,
                    other => return Err(format!("init: unknown option `{other}`")),
                }
            }
            Ok(Mode::Init { plan, poweroff })
        }
        "task" => {
            let mut name = None;
            let mut i = 0;
            while i < rest.len() {
                match rest[i].as_str() {
                    "--name" => {
                        name = Some(rest.get(i + 1).ok_or("--name needs a value")?.clone());
                        i += 2;
                    }
                    "--" => {
                        i += 1;
                        break;
                    }
                    o if o.starts_with("--") => return Err(format!("task: unknown option `{o}`")),
                    _ => break,
                }
            }
            let command = rest[i..].join(" ");
            if command.trim().is_empty() {
                return Err("task: no command given".into());
            }
            Ok(Mode::Task { name, command })
        }
        "check-plan" => match rest {
            [file] => Ok(Mode::CheckPlan(file.into())),
            [] => Err("check-plan: no plan file given".into()),
            _ => Err("check-plan: takes one plan file".into()),
        },
        other => Err(format!("unknown subcommand `{other}`")),
    }
}

/// `task`: parse (exit 2 with the parser's message) and run.
fn task(name: Option<&str>, command: &str) -> i32 {
    let label = name.map_or_else(String::new, |n| format!(" {n}"));
    let program = match workloads::parse(command) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("wbsim-guest task{label}: {e}");
            return 2;
        }
    };
    match workloads::run(&program, command) {
        Ok(()) => 0,
        Err(f) => {
            if !f.message.is_empty() {
                eprintln!("{}", f.message);
            }
            f.status
        }
    }
}

fn check_plan(path: &std::path::Path) -> i32 {
    let problems = match plan::read(path) {
        Ok(p) => plan::problems(&p),
        Err(e) => vec![e],
    };
    if problems.is_empty() {
        println!("ok");
        return 0;
    }
    for p in problems {
        println!("{p}");
    }
    2
}

/// The program: an exit status (PID 1 never gets here: it powers off).
pub fn main() -> i32 {
    if sys::getpid() == 1 {
        init::pid1_main();
    }
    let mut args = Vec::new();
    for a in std::env::args_os().skip(1) {
        match a.into_string() {
            Ok(s) => args.push(s),
            Err(a) => {
                eprintln!("wbsim-guest: argument {a:?} is not UTF-8");
                return 2;
            }
        }
    }
    match parse_args(&args) {
        Ok(Mode::Help) => {
            let _ = std::io::stdout().write_all(USAGE.as_bytes());
            0
        }
        Ok(Mode::Init { plan, poweroff }) => init::init_command(&plan, poweroff),
        Ok(Mode::Task { name, command }) => task(name.as_deref(), &command),
        Ok(Mode::CheckPlan(path)) => check_plan(&path),
        Err(m) => {
            eprintln!("wbsim-guest: {m}\n(wbsim-guest --help for usage)");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Mode, String> {
        parse_args(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn subcommands() {
        assert_eq!(p(&["--help"]), Ok(Mode::Help));
        assert_eq!(
            p(&["init"]),
            Ok(Mode::Init {
                plan: PLAN_PATH.into(),
                poweroff: false
            })
        );
        assert_eq!(
            p(&["init", "--plan", "x.json", "--poweroff"]),
            Ok(Mode::Init {
                plan: "x.json".into(),
                poweroff: true
            })
        );
        assert_eq!(p(&["check-plan", "f"]), Ok(Mode::CheckPlan("f".into())));
    }

    #[test]
    fn task_command_words_are_joined() {
        let want = Mode::Task {
            name: Some("w".into()),
            command: "dd if=/dev/zero of=f bs=1 count=1".into(),
        };
        assert_eq!(
            p(&[
                "task",
                "--name",
                "w",
                "--",
                "dd if=/dev/zero of=f bs=1 count=1"
            ]),
            Ok(want)
        );
        let split = p(&[
            "task",
            "--name",
            "w",
            "--",
            "dd",
            "if=/dev/zero",
            "of=f",
            "bs=1",
            "count=1",
        ]);
        assert!(
            matches!(split, Ok(Mode::Task { command, .. }) if command == "dd if=/dev/zero of=f bs=1 count=1")
        );
        assert!(matches!(
            p(&["task", "memtouch", "-s", "1M"]),
            Ok(Mode::Task { name: None, .. })
        ));
    }

    #[test]
    fn bad_command_lines() {
        assert!(p(&[]).is_err());
        assert!(p(&["frobnicate"])
            .unwrap_err()
            .contains("unknown subcommand"));
        assert!(p(&["init", "--plan"]).is_err());
        assert!(p(&["init", "--bogus"]).is_err());
        assert!(p(&["task", "--name"]).is_err());
        assert!(p(&["task", "--"]).is_err());
        assert!(p(&["task", "--bogus", "--", "dd"]).is_err());
        assert!(p(&["check-plan"]).is_err());
        assert!(p(&["check-plan", "a", "b"]).is_err());
    }
}
