//! Helpers for the kanban suites: Hermes' own `hermes kanban` CLI on the env's board,
//! the board's database, and `serve` clients with the kanban toolset.
//!
//! Each `hermes` process costs close to a second of CPU (its imports and the whole
//! argparse tree), so [`hermes`] runs the commands of one env in one long-lived Python
//! ([`PY_CLI`]) that calls Hermes' `main()` per command, as a fresh `hermes` process
//! would; [`hermes_batch`] runs commands in a Hermes process of their own, for tests
//! that race processes.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

use super::common::{RawClient, TestEnv, hermes_python, is_error, result_json};
use super::serve::Serve;

/// Hermes' CLI, many commands per process: one JSON line per command on stdin (its argv
/// after `hermes`), one JSON line `{"code", "stdout", "stderr"}` per command on stdout.
/// Each command runs `hermes_cli.main.main()` as the `hermes` script does, with its
/// stdin on /dev/null and its stdout and stderr (file descriptors 1 and 2, so child
/// processes' output too) in files of their own; the board initialisation Hermes does
/// once per process and path is forgotten first, so every command opens the board as a
/// new `hermes` process would.
const PY_CLI: &str = r#"
import json, os, sys, tempfile, traceback
proto_in = os.fdopen(os.dup(0), "r")
proto_out = os.fdopen(os.dup(1), "w")
null = os.open(os.devnull, os.O_RDONLY)
os.dup2(null, 0)
import hermes_cli.main as hermes_main
import hermes_cli.kanban_db as kanban_db
for line in proto_in:
    argv = json.loads(line)
    kanban_db._INITIALIZED_PATHS.clear()
    files = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
    for fd, f in zip((1, 2), files):
        os.dup2(f.fileno(), fd)
    sys.argv = ["hermes", *argv]
    code = 0
    try:
        code = hermes_main.main()
    except SystemExit as e:
        code = e.code
    except BaseException:
        traceback.print_exc()
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    out = []
    for f in files:
        f.seek(0)
        out.append(f.read().decode("utf-8", "replace"))
        f.close()
    proto_out.write(json.dumps({"code": code, "stdout": out[0], "stderr": out[1]}) + "\n")
    proto_out.flush()
"#;

/// One [`PY_CLI`] process.
struct Cli {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Cli {
    fn spawn(env: &TestEnv) -> Self {
        let mut c = Command::new(hermes_python("hermes_cli.kanban_db"));
        env.apply(&mut c);
        let mut child = c
            .args(["-c", PY_CLI])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start Hermes' Python");
        Cli {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
        }
    }

    /// Send one command; [`Cli::answer`] reads its result.
    fn send(&mut self, args: &[&str]) {
        writeln!(self.stdin, "{}", json!(args)).expect("write to Hermes' CLI");
        self.stdin.flush().unwrap();
    }

    /// `(exit code, stdout, stderr)` of the oldest command not yet answered.
    fn answer(&mut self) -> (i64, String, String) {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
            panic!(
                "Hermes' CLI process ended ({e}): {:?}",
                self.child.try_wait()
            )
        });
        let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
        (v["code"].as_i64().unwrap_or(1), s("stdout"), s("stderr"))
    }
}

impl Drop for Cli {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The [`PY_CLI`] process of `env` (one per Hermes home, started on first use).
fn cli_of(env: &TestEnv) -> Arc<Mutex<Cli>> {
    static CLIS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<Cli>>>>> = OnceLock::new();
    let mut clis = CLIS.get_or_init(Default::default).lock().unwrap();
    // Forget the processes of envs that are gone (their tests ended).
    clis.retain(|home, _| home.exists());
    clis.entry(env.hermes_home())
        .or_insert_with(|| Arc::new(Mutex::new(Cli::spawn(env))))
        .clone()
}

/// `hermes <args>` on this env's Hermes home; panics with its output on failure.
pub fn hermes(env: &TestEnv, args: &[&str]) -> String {
    let cli = cli_of(env);
    let mut cli = cli.lock().unwrap();
    cli.send(args);
    let (code, stdout, stderr) = cli.answer();
    assert!(
        code == 0,
        "hermes {args:?} failed (exit {code}):\nstdout: {stdout}\nstderr: {stderr}"
    );
    stdout
}

/// Run every command of `cmds` (`hermes <args>` each, in order) in one Hermes process of
/// its own, started now: a writer that races other processes. Each command's
/// `(exit code, stderr)`.
pub fn hermes_batch(env: &TestEnv, cmds: &[Vec<String>]) -> Vec<(i64, String)> {
    let mut cli = Cli::spawn(env);
    for c in cmds {
        cli.send(&c.iter().map(String::as_str).collect::<Vec<_>>());
    }
    cmds.iter()
        .map(|_| {
            let (code, _, stderr) = cli.answer();
            (code, stderr)
        })
        .collect()
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
