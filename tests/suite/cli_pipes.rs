//! A closed stdout (`hermes-mcp tools | head -c1`) ends the program quietly with
//! status 0: no panic (exit 101), no `error: Broken pipe`.

use std::io::Read;
use std::process::{Command, Stdio};

use super::support::common::bin;

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

/// `completion SHELL` prints a script that names every subcommand; bash's
/// parses (`bash -n`) and, once sourced, completes `hermes-mcp mi` to `migrate`.
#[test]
fn completion_scripts_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let out = std::process::Command::new(bin())
            .args(["completion", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        for sub in ["serve", "migrate", "tools", "doctor", "completion"] {
            assert!(text.contains(sub), "{shell} script lacks {sub}");
        }
        assert!(
            !text.contains("__pdf-text"),
            "{shell}: hidden command shown"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hermes-mcp.bash");
    let out = std::process::Command::new(bin())
        .args(["completion", "bash"])
        .output()
        .unwrap();
    std::fs::write(&script, &out.stdout).unwrap();
    let probe = format!(
        "set -e; source {}; COMP_WORDS=(hermes-mcp mi); COMP_CWORD=1; COMP_LINE='hermes-mcp mi'; COMP_POINT=13; _hermes__mcp hermes-mcp mi hermes-mcp; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &probe])
        .output()
        .unwrap();
    let got = String::from_utf8_lossy(&out.stdout);
    assert!(
        got.lines().any(|l| l == "migrate"),
        "{got}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
