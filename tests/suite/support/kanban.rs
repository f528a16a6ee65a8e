//! Helpers for the kanban suites: Hermes' own `hermes kanban` CLI on the env's board,
//! the board's database, and `serve` clients with the kanban toolset.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use super::common::{RawClient, TestEnv, hermes_python, is_error, result_json};
use super::serve::Serve;

/// Hermes' `hermes` script next to its Python.
pub fn hermes_cli() -> PathBuf {
    let cli = hermes_python("hermes_cli.kanban_db").with_file_name("hermes");
    assert!(
        cli.is_file(),
        "the Python Hermes CLI is missing: expected {} (tools/test.sh installs it)",
        cli.display()
    );
    cli
}

/// `hermes <args>` on this env's Hermes home; panics with its output on failure.
pub fn hermes(env: &TestEnv, args: &[&str]) -> String {
    let out = hermes_cmd(env, args).output().expect("run hermes");
    assert!(
        out.status.success(),
        "hermes {args:?} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// `hermes <args>` on this env's Hermes home, not yet run.
pub fn hermes_cmd(env: &TestEnv, args: &[&str]) -> Command {
    let mut c = Command::new(hermes_cli());
    env.apply(&mut c);
    c.args(args);
    c
}

/// `hermes <args>` parsed as JSON.
pub fn hermes_json(env: &TestEnv, args: &[&str]) -> Value {
    let out = hermes(env, args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("hermes {args:?}: not JSON ({e}): {out}"))
}

/// `hermes kanban create <title> --assignee <a> [extra]` → task id.
pub fn py_create(env: &TestEnv, title: &str, assignee: &str, extra: &[&str]) -> String {
    let mut a = vec!["kanban", "create", title, "--assignee", assignee, "--json"];
    a.extend_from_slice(extra);
    hermes_json(env, &a)["id"].as_str().unwrap().to_string()
}

/// `hermes kanban show <id> --json`.
pub fn py_show(env: &TestEnv, id: &str) -> Value {
    hermes_json(env, &["kanban", "show", id, "--json"])
}

/// The env's `kanban.db`, waiting up to 30 s on a lock.
pub fn db(env: &TestEnv) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(env.hermes_home().join("kanban.db")).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(30)).unwrap();
    c
}

/// The claim lock and run id a dispatcher would hand the worker for `id`.
pub fn claim_env(env: &TestEnv, id: &str) -> (String, i64) {
    db(env)
        .query_row(
            "SELECT claim_lock, current_run_id FROM tasks WHERE id = ?",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
}

/// A `serve` child with extra environment variables, initialized.
pub fn server(env: &TestEnv, vars: &[(&str, &str)]) -> RawClient {
    Serve::new().vars(vars).client(env)
}

/// An orchestrator: the profile enables the `kanban` toolset.
pub fn orchestrator(env: &TestEnv) -> RawClient {
    env.write_hermes("config.yaml", "toolsets:\n  - hermes-cli\n  - kanban\n");
    server(env, &[("HERMES_PROFILE", "orch")])
}

/// Call a tool; (isError, parsed JSON text).
pub fn call(c: &mut RawClient, name: &str, args: Value) -> (bool, Value) {
    let r = c.call_tool(name, args);
    (is_error(&r), result_json(&r))
}

/// Call a tool that must succeed (`"ok": true`).
pub fn call_ok(c: &mut RawClient, name: &str, args: Value) -> Value {
    let (err, v) = call(c, name, args.clone());
    assert!(!err, "{name}({args}) failed: {v}");
    assert_eq!(v["ok"], true, "{name}: {v}");
    v
}

/// Call a tool that must fail; its `error` text.
pub fn call_err(c: &mut RawClient, name: &str, args: Value) -> String {
    let (err, v) = call(c, name, args.clone());
    assert!(err, "{name}({args}) should fail: {v}");
    v["error"].as_str().unwrap_or_default().to_string()
}
