//! A closed stdout (`hermes-mcp tools | head -c1`) ends the program quietly with
//! status 0: no panic (exit 101), no `error: Broken pipe`.

use std::io::Read;
use std::process::{Command, Stdio};

use super::common::bin;

/// Run `args` with a stdout pipe closed before the program writes, and return
/// (status, stderr).
fn with_closed_stdout(args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(bin())
        .args(args)
        .env("HERMES_HOME", env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap(), err)
}

#[test]
fn cli_closed_stdout_ends_quietly() {
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/migrate");
    for args in [
        vec!["tools"],
        vec!["tools", "--json"],
        vec![
            "migrate",
            "--hermes-home",
            examples,
            "--codex-home",
            examples,
            "--no-plugins",
            "--no-hermes-hook",
            "--dry-run",
            "--color",
            "always",
        ],
    ] {
        for _ in 0..5 {
            let (st, err) = with_closed_stdout(&args);
            assert_eq!(st.code(), Some(0), "{args:?}: {st:?}\n{err}");
            assert!(
                !err.contains("Broken pipe") && !err.contains("panicked"),
                "{args:?}: {err}"
            );
        }
    }
}
