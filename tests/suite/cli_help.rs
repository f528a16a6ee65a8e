//! `-v` is one global flag, but what it does differs by subcommand: each
//! subcommand's `--help` says what it does there, and the flag works before
//! or after the subcommand.

use std::process::Command;

use super::support::common::{TestEnv, bin};

fn help(sub: &str) -> String {
    let out = Command::new(bin()).args([sub, "--help"]).output().unwrap();
    assert!(out.status.success(), "{sub} --help");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `-v, --verbose` line of a help text and what follows it on that line.
fn verbose_line(text: &str) -> Option<String> {
    text.lines()
        .find(|l| l.trim_start().starts_with("-v, --verbose"))
        .map(str::to_string)
}

#[test]
fn each_subcommands_help_says_what_v_does_there() {
    for (sub, says) in [
        (
            "serve",
            "-vv debug (and debug in $HERMES_HOME/logs/hermes-mcp.log too)",
        ),
        (
            "migrate",
            "With --check, print the whole report instead of one line",
        ),
        ("tools", "sign-in refreshes it waits for (-v)"),
        ("doctor", "The report stays the same"),
    ] {
        let line = verbose_line(&help(sub)).unwrap_or_else(|| panic!("{sub}: no -v"));
        assert!(line.contains(says), "{sub}: {line}");
    }
    // No effect on completion: not offered there.
    assert_eq!(verbose_line(&help("completion")), None);
    let top = verbose_line(&String::from_utf8_lossy(
        &Command::new(bin()).arg("--help").output().unwrap().stdout,
    ))
    .unwrap();
    assert!(top.contains("see its --help"), "{top}");
}

#[test]
fn v_works_before_and_after_the_subcommand() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers:\n  a:\n    command: a-mcp\n");
    let run = |args: &[&str]| {
        let out = env.cmd().args(args).output().unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // `--check -v` prints the whole report (it names the servers), wherever -v is.
    for args in [
        &["migrate", "--no-plugins", "--check", "-v"][..],
        &["-v", "migrate", "--no-plugins", "--check"][..],
    ] {
        let err = run(args);
        assert!(err.contains("MCP server"), "{args:?}: {err}");
    }
    assert!(!run(&["migrate", "--no-plugins", "--check"]).contains("MCP server"));
}
