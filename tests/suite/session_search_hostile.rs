//! `session_search` on a `state.db` that fights back: a FIFO in its place,
//! views instead of tables, huge or generated values, duplicate ids that make
//! browse's chain explode, a read-only directory, a hot rollback journal,
//! messages of tens of megabytes. Every call answers (a result or a clear
//! error) in bounded time and memory, and the server lives on.
//!
//! These tests need the Python Hermes (it writes the base database):
//! `HERMES_PYTHON` (default `/opt/hermes-venv/bin/python`).

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::common::{RawClient, TIME_SCALE, TestEnv, bin};
use super::support::fs::mkfifo;
use super::support::serve::Serve;
use super::support::session_search::{
    base_env, bend, cpu_time, install_base, peak_rss, timed_call,
};

/// Long enough for any honest call on a loaded machine.
const ANSWER: Duration = Duration::from_secs(30);

/// The error text of a failed call (the JSON `error`), else a panic.
fn error_of(text: &str, is_error: bool) -> String {
    assert!(is_error, "not an error: {}", &text[..text.len().min(400)]);
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(v["success"], false, "{text}");
    v["error"].as_str().unwrap().to_string()
}

/// The server still answers: a call that needs no database.
fn still_serving(c: &mut RawClient) {
    assert!(c.child.try_wait().unwrap().is_none(), "serve exited");
    let (text, err, _) = timed_call(c, json!({"profile": "no-such-profile"}), ANSWER);
    assert!(err && text.contains("does not exist"), "{text}");
}

#[test]
fn a_state_db_that_is_a_fifo_is_refused_at_once() {
    let env = TestEnv::new();
    mkfifo(&env.hermes_home().join("state.db"));
    mkfifo(&env.hermes_home().join("profiles/p1/state.db"));
    let mut c = Serve::new().client(&env);
    let (text, err, took) = timed_call(&mut c, json!({}), ANSWER);
    let e = error_of(&text, err);
    assert!(
        e.contains("state.db is a FIFO (named pipe), not a regular file"),
        "{e}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    let (text, err, _) = timed_call(&mut c, json!({"profile": "p1"}), ANSWER);
    let e = error_of(&text, err);
    assert!(e.starts_with("profile 'p1': ") && e.contains("FIFO"), "{e}");
    // The read shape's search of every profile skips it too.
    let (text, err, _) = timed_call(&mut c, json!({"session_id": "s1"}), ANSWER);
    assert!(err, "{text}");
    still_serving(&mut c);
}

#[test]
fn views_in_place_of_tables_are_refused() {
    let cases = [
        (
            "ALTER TABLE messages RENAME TO m0; CREATE VIEW messages AS SELECT id, session_id, role, \
             randomblob(200000000) AS content, tool_call_id, tool_calls, tool_name, timestamp, \
             active, compacted FROM m0;",
            "messages is a view, not a table",
        ),
        (
            "ALTER TABLE sessions RENAME TO s0; CREATE VIEW sessions AS WITH RECURSIVE r(n) AS \
             (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT s0.* FROM s0, r;",
            "sessions is a view, not a table",
        ),
        (
            "ALTER TABLE messages RENAME COLUMN tool_name TO tn;",
            "table messages has no column tool_name",
        ),
    ];
    for (sql, want) in cases {
        let env = base_env();
        bend(&env.hermes_home().join("state.db"), sql);
        let mut c = Serve::new().client(&env);
        for args in [
            json!({}),
            json!({"query": "needle"}),
            json!({"session_id": "s1"}),
        ] {
            let (text, err, _) = timed_call(&mut c, args.clone(), ANSWER);
            let e = error_of(&text, err);
            assert!(
                e.contains(want) && e.contains("is not a Hermes state.db"),
                "{args}: {e}"
            );
        }
        still_serving(&mut c);
    }
}

#[test]
fn a_huge_generated_value_fails_cleanly_in_bounded_memory() {
    let env = base_env();
    let db = env.hermes_home().join("state.db");
    // A `content` column SQLite computes on read: 300 MB per row.
    bend(
        &db,
        "ALTER TABLE messages RENAME TO m0;
         CREATE TABLE messages(id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, raw TEXT,
           content TEXT GENERATED ALWAYS AS (zeroblob(300000000)) VIRTUAL,
           tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL,
           active INTEGER DEFAULT 1, compacted INTEGER DEFAULT 0);
         INSERT INTO messages(id, session_id, role, raw, tool_call_id, tool_calls, tool_name,
           timestamp, active, compacted)
         SELECT id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp,
           active, compacted FROM m0;",
    );
    let mut c = Serve::new().client(&env);
    for args in [
        json!({"session_id": "s1"}),
        json!({"session_id": "s1", "around_message_id": 2}),
    ] {
        let (text, err, _) = timed_call(&mut c, args.clone(), ANSWER);
        let e = error_of(&text, err);
        assert!(e.contains("too big") && e.contains("64 MiB"), "{args}: {e}");
    }
    let rss = peak_rss(c.child.id());
    assert!(rss < 200 << 20, "serve peaked at {} MiB", rss >> 20);
    still_serving(&mut c);
}

/// A `sessions` table without its primary key, holding 1000 roots and 1000
/// compression children that all share the id `x`: Hermes' recursive chain
/// (`UNION ALL`) grows without end on it.
const DUPLICATE_CHAIN: &str = "ALTER TABLE sessions RENAME TO s0;
CREATE TABLE sessions AS SELECT * FROM s0 WHERE 0;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
INSERT INTO sessions(id, source, started_at, end_reason, parent_session_id, archived, message_count)
SELECT 'x', 'cli', 1752000000.0 + i, 'compression', NULL, 0, 1 FROM n
UNION ALL
SELECT 'x', 'cli', 1752000000.0 + i, 'compression', 'x', 0, 1 FROM n;";

#[test]
fn duplicate_ids_in_the_browse_chain_end_at_the_deadline() {
    let env = base_env();
    bend(&env.hermes_home().join("state.db"), DUPLICATE_CHAIN);
    // The 20 s deadline, scaled to 1 s.
    let mut c = Serve::new().var(TIME_SCALE, "0.05").client(&env);
    let (text, err, took) = timed_call(&mut c, json!({}), ANSWER);
    let e = error_of(&text, err);
    assert!(
        e.contains("session_search stopped after 20s") && e.contains("took too long"),
        "{e}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
    still_serving(&mut c);
}

#[test]
fn a_cancelled_call_stops_its_database_work() {
    let env = base_env();
    bend(&env.hermes_home().join("state.db"), DUPLICATE_CHAIN);
    let mut c = Serve::new().client(&env);
    let id = c.send(
        "tools/call",
        json!({"name": "session_search", "arguments": {}}),
    );
    // Still running 1.5 s in: there is work for the cancel to stop.
    let start = Instant::now();
    while let Some(msg) = c.recv(Duration::from_millis(1500).saturating_sub(start.elapsed())) {
        assert!(
            msg.get("id") != Some(&json!(id)),
            "the call answered before it was cancelled, so the cancel is not tested: {msg}"
        );
    }
    c.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user"}),
    );
    // A measurement, so sleeps: 0.5 s for the cancel to land, then the CPU
    // serve spends in a 3 s window.
    std::thread::sleep(Duration::from_millis(500));
    let pid = c.child.id();
    let before = cpu_time(pid);
    std::thread::sleep(Duration::from_secs(3));
    let spent = cpu_time(pid) - before;
    assert!(
        spent < Duration::from_millis(150),
        "serve used {spent:?} of CPU in the 3 s after the cancel"
    );
    still_serving(&mut c);
}

#[test]
fn huge_messages_are_cut_and_the_answer_is_capped() {
    let env = base_env();
    let db = env.hermes_home().join("state.db");
    // Session s4: three 50 MB messages and ten of 200 KB, all matching
    // "needle" in the word index (kept small: the index is not the point).
    bend(
        &db,
        "DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_trigram_insert;
         INSERT INTO sessions(id, source, started_at, message_count) VALUES ('s4', 'cli', 1752100000.0, 13);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 13)
         INSERT INTO messages(session_id, role, content, timestamp)
         SELECT 's4', CASE i % 2 WHEN 1 THEN 'user' ELSE 'assistant' END,
           'needle ' || replace(hex(zeroblob(CASE WHEN i <= 3 THEN 25000000 ELSE 100000 END)), '0', 'x'),
           1752100000.0 + i FROM n;
         INSERT INTO messages_fts(rowid, content)
         SELECT id, 'needle huge' FROM messages WHERE session_id = 's4';",
    );
    let mut c = Serve::new().client(&env);
    let (text, err, _) = timed_call(&mut c, json!({"query": "needle", "limit": 10}), ANSWER);
    assert!(!err, "{}", &text[..text.len().min(400)]);
    assert!(text.len() <= 1 << 20, "a {} byte answer", text.len());
    let v: Value = serde_json::from_str(&text).unwrap();
    let s4 = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == "s4")
        .unwrap_or_else(|| panic!("s4 not found: {}", &text[..text.len().min(2000)]));
    let contents: Vec<&str> = ["bookend_start", "messages", "bookend_end"]
        .iter()
        .flat_map(|k| s4[k].as_array().unwrap())
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(contents.len() >= 6, "{contents:?}");
    for t in contents {
        assert!(
            t.starts_with("needle xxxx") && t.ends_with("... [truncated]") && t.len() <= 100_100,
            "{} chars: {}",
            t.len(),
            &t[t.len().saturating_sub(40)..]
        );
    }
    // The read shape: thirteen texts of 100,000 characters are more than an
    // answer carries, so each is cut shorter.
    let (text, err, _) = timed_call(&mut c, json!({"session_id": "s4"}), ANSWER);
    assert!(!err && text.len() <= 1 << 20, "{}", text.len());
    let v: Value = serde_json::from_str(&text).unwrap();
    let first = v["messages"][0]["content"].as_str().unwrap();
    assert!(
        first.starts_with("needle xxxx")
            && first.ends_with("... [truncated]")
            && first.len() < 100_000,
        "{}",
        first.len()
    );
    let rss = peak_rss(c.child.id());
    assert!(rss < 400 << 20, "serve peaked at {} MiB", rss >> 20);
}

#[test]
fn a_wal_database_in_a_read_only_directory_is_read_without_writing() {
    let env = base_env();
    let home = env.hermes_home();
    assert!(!home.join("state.db-wal").exists() && !home.join("state.db-shm").exists());
    // The home read-only even for root: a read-only bind mount in a private
    // mount namespace (chmod suffices for anyone else).
    let cmd = if unsafe { libc::geteuid() } == 0 {
        let probe = Command::new("unshare").args(["-m", "true"]).status();
        assert!(
            probe.is_ok_and(|s| s.success()),
            "as root this test makes the home read-only with a bind mount: it needs `unshare -m` \
             (util-linux) and CAP_SYS_ADMIN, as tools/test.sh's namespace has"
        );
        let mut cmd = Command::new("unshare");
        env.apply(&mut cmd);
        cmd.args([
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            "mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" \"$0\" && exec \"$@\"",
        ])
        .arg(&home)
        .arg(bin());
        cmd
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o555)).unwrap();
        env.cmd()
    };
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    for args in [
        json!({}),
        json!({"query": "needle"}),
        json!({"session_id": "s3"}),
    ] {
        let (text, err, _) = timed_call(&mut c, args.clone(), ANSWER);
        assert!(!err, "{args}: {text}");
    }
    let (text, _, _) = timed_call(&mut c, json!({}), ANSWER);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v["count"].as_u64().unwrap() >= 2, "{text}");
    drop(c);
    assert!(!home.join("state.db-wal").exists() && !home.join("state.db-shm").exists());
}

#[test]
fn a_hot_journal_is_reported_as_an_interrupted_hermes_write() {
    let env = TestEnv::new();
    let src = env.dir.path().join("src/state.db");
    install_base(&src);
    let w = rusqlite::Connection::open(&src).unwrap();
    w.query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()))
        .unwrap();
    w.execute_batch(
        "PRAGMA cache_size = 1; BEGIN;
         UPDATE messages SET content = content || hex(randomblob(2000));",
    )
    .unwrap();
    // A copy taken mid-write: what a Hermes killed in the middle leaves.
    let home = env.hermes_home();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::copy(&src, home.join("state.db")).unwrap();
    std::fs::copy(
        env.dir.path().join("src/state.db-journal"),
        home.join("state.db-journal"),
    )
    .unwrap();
    w.execute_batch("ROLLBACK").unwrap();
    let mut c = Serve::new().client(&env);
    let (text, err, _) = timed_call(&mut c, json!({}), ANSWER);
    let e = error_of(&text, err);
    assert!(
        e.contains("has a hot rollback journal")
            && e.contains("a Hermes process stopped in the middle of a write")
            && e.contains("Start Hermes once"),
        "{e}"
    );
}
