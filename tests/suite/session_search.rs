//! `session_search` against Hermes 0.19.0's own. A `state.db` is filled
//! through Hermes' `SessionDB` API (`tests/fixtures/session_search/
//! fill_state.py`: a few hundred sessions, several sources, a second
//! profile, compression lineages, branches, delegates, titles, rewinds,
//! compaction, CJK); then the same calls, in every shape
//! (`calls.py`), are answered by Hermes' registry handler
//! (`hermes_calls.py`) and by `serve`, and the texts must be equal byte for
//! byte — with and without `HERMES_SESSION_ID`. Also: the schema equals
//! Hermes' registry's, `state.db` is never written, and a missing, locked,
//! corrupt or unknown database gives a clear error.
//!
//! These tests need the Python Hermes: `HERMES_PYTHON` (default
//! `/opt/hermes-venv/bin/python`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::support::common::{RawClient, TestEnv, hermes_python, is_error, run_ok};
use super::support::fs::copy_tree;
use super::support::run::once_per_run;
use super::support::serve::Serve;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session_search")
}

/// Hermes' Python with a clean environment pointing at `home`.
fn python(env: &TestEnv, home: &Path, session: Option<&str>) -> Command {
    let mut c = Command::new(hermes_python("hermes_state"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .env("HERMES_HOME", home)
        .env("TZ", "UTC");
    if let Some(s) = session {
        c.env("HERMES_SESSION_ID", s);
    }
    c
}

/// The filled home (built once per test run, shared by the run's test processes) and the
/// ids fill_state.py reported.
struct Fixture {
    home: PathBuf,
    info: Value,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = once_per_run("session_search_state", |dir| {
            let env = TestEnv::new();
            let mut c = python(&env, &dir.join("template"), None);
            c.arg(fixtures().join("fill_state.py")).arg("300");
            std::fs::write(dir.join("info.json"), run_ok(c).trim()).unwrap();
        });
        let info = std::fs::read_to_string(dir.join("info.json")).unwrap();
        Fixture {
            home: dir.join("template"),
            info: serde_json::from_str(&info).unwrap(),
        }
    })
}

/// A test env whose Hermes home is a copy of the fixture.
fn filled_env() -> TestEnv {
    let env = TestEnv::new();
    copy_tree(&fixture().home, &env.hermes_home());
    env
}

/// `serve` in `env`, with the local time zone Hermes' Python gets.
fn serve(env: &TestEnv, session: Option<&str>) -> RawClient {
    let mut serve = Serve::new().var("TZ", "UTC");
    if let Some(s) = session {
        serve = serve.var("HERMES_SESSION_ID", s);
    }
    serve.client(env)
}

/// The tool's text and `isError`.
fn call(c: &mut RawClient, args: Value) -> (String, bool) {
    let r = c.call_tool("session_search", args);
    let text = r["content"][0]["text"].as_str().unwrap().to_string();
    (text, is_error(&r))
}

/// The parity calls (`calls.py`) for the home in `env`.
fn parity_calls(env: &TestEnv) -> Vec<(String, Value)> {
    let info = env.dir.path().join("info.json");
    std::fs::write(&info, fixture().info.to_string()).unwrap();
    let mut c = python(env, &env.hermes_home(), None);
    c.arg(fixtures().join("calls.py"))
        .arg(env.hermes_home())
        .arg(&info);
    let calls: Vec<(String, Value)> = serde_json::from_str(&run_ok(c)).unwrap();
    assert!(calls.len() > 500, "{} calls", calls.len());
    calls
}

/// Hermes' answers to `calls` on the home in `env`, by label.
fn hermes_answers(
    env: &TestEnv,
    calls: &[(String, Value)],
    session: Option<&str>,
) -> HashMap<String, String> {
    let file = env.dir.path().join("calls.json");
    std::fs::write(&file, serde_json::to_string(calls).unwrap()).unwrap();
    let mut c = python(env, &env.hermes_home(), session);
    c.arg(fixtures().join("hermes_calls.py")).arg(&file);
    run_ok(c)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["label"].as_str().unwrap().to_string(),
                v["out"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Every call answered by `serve` exactly as by Hermes, `isError` set on
/// Hermes' `success: false`.
fn assert_parity(session: Option<&str>) {
    let env = filled_env();
    let calls = parity_calls(&env);
    let want = hermes_answers(&env, &calls, session);
    let mut c = serve(&env, session);
    let mut mismatches = Vec::new();
    for (label, args) in &calls {
        let (got, err) = call(&mut c, args.clone());
        let expected = &want[label];
        if &got != expected {
            mismatches.push(format!(
                "{label} {args}\n  hermes: {expected}\n  ours:   {got}"
            ));
            continue;
        }
        let success = serde_json::from_str::<Value>(&got).unwrap()["success"] == true;
        assert_eq!(err, !success, "{label}: isError {err} for {got}");
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} calls differ from Hermes:\n{}",
        mismatches.len(),
        calls.len(),
        mismatches.join("\n")
    );
}

#[test]
fn every_shape_answers_as_hermes_does() {
    assert_parity(None);
}

#[test]
fn the_current_conversation_is_left_out_as_hermes_leaves_it_out_at_the_chain_tip() {
    // The tip: what Hermes exports after compressing.
    let d = &fixture().info["default"];
    let chain = d["chains"][3].as_array().unwrap();
    assert_parity(Some(chain.last().unwrap().as_str().unwrap()));
}

#[test]
fn the_current_conversation_is_left_out_as_hermes_leaves_it_out_at_the_chain_root() {
    // The root: the id a codex started before the compression saw.
    let d = &fixture().info["default"];
    let chain = d["chains"][3].as_array().unwrap();
    assert_parity(Some(chain[0].as_str().unwrap()));
}

#[test]
fn the_current_conversation_is_left_out_as_hermes_leaves_it_out_for_a_plain_session() {
    let d = &fixture().info["default"];
    assert_parity(Some(d["long"]["id"].as_str().unwrap()));
}

#[test]
fn schema_matches_hermes_registry() {
    let env = TestEnv::new();
    let mut c = python(&env, &env.hermes_home(), None);
    c.args([
        "-c",
        "import json, tools.session_search_tool\nfrom tools.registry import registry\nprint(json.dumps(registry.get_schema('session_search'), ensure_ascii=False))",
    ]);
    let hermes: Value = serde_json::from_str(&run_ok(c)).unwrap();
    let mut s = RawClient::spawn(env.cmd());
    s.initialize();
    let list = s.request("tools/list", json!({}));
    let tool = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "session_search")
        .cloned()
        .expect("session_search listed");
    assert_eq!(tool["description"], hermes["description"]);
    // Same keys in the same order, `"required": []` included.
    assert_eq!(
        tool["inputSchema"].to_string(),
        hermes["parameters"].to_string()
    );
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
}

/// `(bytes, mtime)` of a file.
fn snapshot(p: &Path) -> (Vec<u8>, std::time::SystemTime) {
    (
        std::fs::read(p).unwrap(),
        std::fs::metadata(p).unwrap().modified().unwrap(),
    )
}

#[test]
fn state_db_is_never_written() {
    let env = filled_env();
    let dbs = [
        env.hermes_home().join("state.db"),
        env.hermes_home().join("profiles/work/state.db"),
    ];
    let before: Vec<_> = dbs.iter().map(|p| snapshot(p)).collect();
    let calls = parity_calls(&env);
    let mut c = serve(&env, None);
    for (_, args) in calls.iter().step_by(3) {
        call(&mut c, args.clone());
    }
    drop(c);
    for (p, b) in dbs.iter().zip(before) {
        let a = snapshot(p);
        assert!(a.0 == b.0, "{} changed", p.display());
        assert_eq!(a.1, b.1, "{} mtime changed", p.display());
    }
}

#[test]
fn the_kept_connection_sees_hermes_writes_and_a_replaced_file() {
    let env = filled_env();
    let mut c = serve(&env, None);
    let first = |c: &mut RawClient| -> Value {
        let (text, err) = call(c, json!({"limit": 1}));
        assert!(!err, "{text}");
        serde_json::from_str::<Value>(&text).unwrap()["results"][0].clone()
    };
    assert_ne!(first(&mut c)["session_id"], "fresh_session");
    // Hermes records a conversation while serve runs: the next call has it.
    let mut py = python(&env, &env.hermes_home(), None);
    py.args([
        "-c",
        "from hermes_state import SessionDB\nimport time\ndb = SessionDB()\n\
         db.create_session('fresh_session', 'cli')\n\
         db.append_message('fresh_session', 'user', 'a brand new question', timestamp=time.time() + 10**6)\n\
         db.close()",
    ]);
    run_ok(py);
    let r = first(&mut c);
    assert_eq!(
        (&r["session_id"], &r["preview"]),
        (&json!("fresh_session"), &json!("a brand new question"))
    );
    // The file goes away: reported, not recreated; a new file is read.
    let db = env.hermes_home().join("state.db");
    for f in ["state.db", "state.db-wal", "state.db-shm"] {
        let _ = std::fs::remove_file(env.hermes_home().join(f));
    }
    let (text, err) = call(&mut c, json!({}));
    assert!(err && text.contains("does not exist"), "{text}");
    assert!(!db.exists());
    std::fs::copy(fixture().home.join("state.db"), &db).unwrap();
    assert_ne!(first(&mut c)["session_id"], "fresh_session");
}

/// One call through `serve` in `env` that must fail; returns the error text.
fn error_for(env: &TestEnv, args: Value) -> String {
    let mut c = serve(env, None);
    let (text, err) = call(&mut c, args);
    assert!(err, "not an error: {text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["success"], false, "{text}");
    v["error"].as_str().unwrap().to_string()
}

#[test]
fn a_missing_database_is_reported_not_created() {
    let env = TestEnv::new();
    let e = error_for(&env, json!({}));
    let db = env.hermes_home().join("state.db");
    assert!(
        e.starts_with("Session database not available: ")
            && e.contains(&format!("{} does not exist", db.display())),
        "{e}"
    );
    assert!(!db.exists(), "state.db was created");
    // Another profile's missing database reads as Hermes words it.
    std::fs::create_dir_all(env.hermes_home().join("profiles/p1")).unwrap();
    assert_eq!(
        error_for(&env, json!({"profile": "p1"})),
        "profile 'p1': unable to open database file"
    );
}

#[test]
fn corrupt_and_foreign_databases_are_reported() {
    let env = filled_env();
    let db = env.hermes_home().join("state.db");
    let good = std::fs::read(&db).unwrap();
    // Not SQLite at all.
    std::fs::write(&db, b"this is not a database, just text.".repeat(200)).unwrap();
    let e = error_for(&env, json!({"query": "auth"}));
    assert!(
        e.contains("is not a readable SQLite database (file is not a database)"),
        "{e}"
    );
    // A torn copy: the header survives, the pages do not.
    std::fs::write(&db, &good[..8192]).unwrap();
    let e = error_for(&env, json!({}));
    assert!(e.contains("is not a readable SQLite database"), "{e}");
    // A SQLite file that is not Hermes'.
    std::fs::remove_file(&db).unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE t(x)")
        .unwrap();
    let e = error_for(&env, json!({}));
    assert!(
        e.contains("has no schema_version table, so it is not a Hermes state.db")
            && e.contains("schema 22, written by hermes-agent 0.19"),
        "{e}"
    );
}

#[test]
fn unknown_schema_versions_name_the_hermes_they_need() {
    let env = filled_env();
    let db = env.hermes_home().join("state.db");
    let set = |v: i64| {
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute("UPDATE schema_version SET version = ?", [v])
            .unwrap();
    };
    set(23);
    let e = error_for(&env, json!({"query": "auth"}));
    assert!(
        e.contains("is at schema version 23, from a Hermes newer than hermes-agent 0.19")
            && e.contains("reads schema 22"),
        "{e}"
    );
    set(21);
    let e = error_for(&env, json!({}));
    assert!(
        e.contains("is at schema version 21, from a Hermes older than hermes-agent 0.19")
            && e.contains("Start Hermes once"),
        "{e}"
    );
    set(22);
    let mut c = serve(&env, None);
    assert!(!call(&mut c, json!({})).1);
}

#[test]
fn a_locked_database_is_reported_and_wal_writers_never_block_reads() {
    let env = filled_env();
    let db = env.hermes_home().join("state.db");
    // Hermes writing (WAL, its default): an open write transaction does not
    // stop a read.
    let w = rusqlite::Connection::open(&db).unwrap();
    w.execute_batch("BEGIN IMMEDIATE; UPDATE sessions SET title = 'in flight' WHERE rowid = 1;")
        .unwrap();
    let mut c = serve(&env, None);
    let (text, err) = call(&mut c, json!({}));
    assert!(!err, "{text}");
    w.execute_batch("ROLLBACK").unwrap();
    drop(w);
    // Leaving WAL needs the file to itself: no server keeping a connection.
    drop(c);
    // A rollback-journal database held exclusively: reported after the
    // short busy timeout, not waited on.
    let x = rusqlite::Connection::open(&db).unwrap();
    x.query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()))
        .unwrap();
    x.execute_batch("BEGIN EXCLUSIVE; UPDATE sessions SET title = 'held' WHERE rowid = 1;")
        .unwrap();
    let start = std::time::Instant::now();
    let e = error_for(&env, json!({"query": "auth"}));
    assert!(
        e.contains("is locked by another process (database is locked)"),
        "{e}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    x.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn available_when_the_hermes_home_exists() {
    let env = TestEnv::new();
    // `hermes-mcp tools --json`'s row for session_search with `home` as HERMES_HOME.
    let row = |home: &Path| -> Value {
        let mut c = env.cmd();
        c.env("HERMES_HOME", home).args(["tools", "--json"]);
        let doc: Value = serde_json::from_slice(&c.output().unwrap().stdout).unwrap();
        doc["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "session_search")
            .cloned()
            .unwrap_or_else(|| panic!("{doc:#}"))
    };
    // The home exists (state.db need not yet): available, read-only.
    let r = row(&env.hermes_home());
    assert_eq!(
        (&r["available"], &r["read_only"]),
        (&json!(true), &json!(true)),
        "{r}"
    );
    // `tools` refuses a home that is not there; `serve` (which Codex starts
    // whatever the home) leaves the tool out and says why when it is called.
    let gone = env.dir.path().join("no-such-home");
    let mut c = Serve::new().var("HERMES_HOME", &gone).client(&env);
    let list = c.request("tools/list", json!({}));
    let listed = list["result"]["tools"].as_array().expect("tools").clone();
    assert!(
        !listed.iter().any(|t| t["name"] == "session_search"),
        "{list}"
    );
    let r = c.call_tool("session_search", json!({}));
    assert!(is_error(&r), "{r}");
    let why = format!(
        "the Hermes home {} does not exist (session_search reads its state.db)",
        gone.display()
    );
    assert!(r.to_string().contains(&why), "{r}");
    assert!(c.finish(std::time::Duration::from_secs(20)).success());
}

#[test]
fn migrate_passes_hermes_session_id_when_hermes_runs_codex() {
    use super::support::migrate::CodexEnv;
    let env = CodexEnv::new();
    env.write_hermes(
        "config.yaml",
        "model:\n  openai_runtime: codex_app_server\ntoolsets: [hermes-cli]\n",
    );
    let out = env.migrate(&["--no-plugins", "--no-hermes-hook", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["hermes_tools_env_vars"]["names"],
        json!(["HERMES_SESSION_ID"])
    );
    assert_eq!(report["hermes_tools_env_vars"]["hermes_session"], true);
    // codex hands it to serve when its own launcher (Hermes) set it.
    let row = env.codex(&["mcp", "list"]);
    assert!(
        String::from_utf8_lossy(&row.stdout).contains("HERMES_SESSION_ID"),
        "{row:?}"
    );
}
