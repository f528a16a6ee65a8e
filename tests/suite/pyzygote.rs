//! `tools/pyzygote.py`, the fork server `tools/test.sh` runs Hermes' Python through: a run
//! forked from it must be the run the plain interpreter makes (argv, environment, working
//! directory, stdio, exit status, deaths by signal, `-u`, `-m`, exit handlers, threads), and a
//! killed caller must take its forked child with it. The parity tests trust their oracle to
//! this.

use std::process::Command;

use super::support::prereq::hermes_python_process;

#[test]
fn a_forked_hermes_python_runs_as_the_plain_one_does() {
    let plain = hermes_python_process("openai");
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tools/pyzygote.py"))
        .arg("selfcheck")
        .arg(&plain)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("16 of 16 checks agree"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
