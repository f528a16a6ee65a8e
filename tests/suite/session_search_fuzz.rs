//! A seeded fuzz of hostile `state.db` files against `serve`'s
//! `session_search`: views in place of tables (endless recursion,
//! `randomblob(200000000)`), triggers, generated and large values, cycles in
//! `parent_session_id`, duplicate ids, renamed columns, broken JSON, foreign
//! FTS tables, and corrupt or truncated pages, alone and combined. Every call
//! must answer (a result, or a clear error) well within the scaled deadline,
//! and the one server must survive them all.
//!
//! `HERMES_MCP_FUZZ_STATE_DBS` sets how many databases (default 24),
//! `HERMES_MCP_FUZZ_SEED` the seed. Needs the Python Hermes (it writes the
//! base database).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::support::common::{TIME_SCALE, TestEnv};
use super::support::fuzz::{Rng, env_u64};
use super::support::serve::Serve;
use super::support::session_search::{bend, install_base, timed_call};

/// One hostile change, as SQL on the base database.
const MUTATIONS: &[&str] = &[
    // Views in place of tables.
    "ALTER TABLE messages RENAME TO m0; CREATE VIEW messages AS SELECT id, session_id, role, \
     randomblob(200000000) AS content, tool_call_id, tool_calls, tool_name, timestamp, active, \
     compacted FROM m0;",
    "ALTER TABLE sessions RENAME TO s0; CREATE VIEW sessions AS WITH RECURSIVE r(n) AS \
     (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT s0.* FROM s0, r;",
    "ALTER TABLE schema_version RENAME TO v0; CREATE VIEW schema_version AS WITH RECURSIVE \
     r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT 22 AS version FROM r WHERE n < 0;",
    // Triggers (never fired by a reader) and a foreign FTS table.
    "CREATE TRIGGER t_hostile AFTER INSERT ON sessions BEGIN SELECT randomblob(200000000); END;",
    "DROP TABLE messages_fts; CREATE TABLE messages_fts(content, rank);",
    "DROP TABLE messages_fts_trigram; CREATE VIEW messages_fts_trigram AS WITH RECURSIVE \
     r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n AS content FROM r;",
    // Generated and large values.
    "ALTER TABLE messages RENAME TO m0; CREATE TABLE messages(id INTEGER PRIMARY KEY, \
     session_id TEXT, role TEXT, raw TEXT, content TEXT GENERATED ALWAYS AS (CASE WHEN id % 2 = 0 \
     THEN zeroblob(300000000) ELSE raw END) VIRTUAL, tool_call_id TEXT, tool_calls TEXT, \
     tool_name TEXT, timestamp REAL, active INTEGER DEFAULT 1, compacted INTEGER DEFAULT 0); \
     INSERT INTO messages(id, session_id, role, raw, tool_call_id, tool_calls, tool_name, \
     timestamp, active, compacted) SELECT id, session_id, role, content, tool_call_id, tool_calls, \
     tool_name, timestamp, active, compacted FROM m0;",
    "DROP TRIGGER messages_fts_update; DROP TRIGGER messages_fts_trigram_update; \
     UPDATE messages SET content = content || hex(randomblob(150000)) WHERE id % 3 = 0;",
    "UPDATE sessions SET title = hex(randomblob(120000)) WHERE id = 's3';",
    "UPDATE messages SET tool_calls = '[' || hex(randomblob(120000)) WHERE id % 2 = 1;",
    "UPDATE sessions SET model_config = printf('%.*c', 5000, '[') WHERE id = 's1';",
    "UPDATE messages SET content = X'00' || 'json:{\"a\": [' || printf('%.*c', 3000, '[') \
     WHERE id % 2 = 0;",
    "UPDATE messages SET content = CAST(randomblob(64) AS TEXT), role = randomblob(4);",
    // Cycles and duplicates.
    "UPDATE sessions SET parent_session_id = 's2', end_reason = 'compression' WHERE id = 's1'; \
     UPDATE sessions SET end_reason = 'compression' WHERE id = 's2';",
    "UPDATE sessions SET parent_session_id = id;",
    "ALTER TABLE sessions RENAME TO s0; CREATE TABLE sessions AS SELECT * FROM s0; \
     INSERT INTO sessions SELECT * FROM sessions; INSERT INTO sessions SELECT * FROM sessions; \
     INSERT INTO sessions SELECT * FROM sessions; INSERT INTO sessions SELECT * FROM sessions; \
     UPDATE sessions SET end_reason = 'compression', model_config = NULL;",
    "ALTER TABLE sessions RENAME TO s0; CREATE TABLE sessions AS SELECT * FROM s0 WHERE 0; \
     WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) \
     INSERT INTO sessions(id, source, started_at, end_reason, parent_session_id, archived) \
     SELECT 'x', 'cli', i, 'compression', CASE WHEN i % 2 = 0 THEN 'x' END, 0 FROM n;",
    // Shapes Hermes never writes.
    "ALTER TABLE messages RENAME COLUMN content TO body;",
    "UPDATE schema_version SET version = 99;",
    "DELETE FROM schema_version;",
    "UPDATE messages SET id = id * 1000000000000, timestamp = 'not a time';",
    "UPDATE sessions SET started_at = 1e308, source = NULL;",
];

/// The calls made on each database (a few of them, chosen by the seed).
fn calls() -> Vec<Value> {
    vec![
        json!({}),
        json!({"query": "needle"}),
        json!({"query": "hello world", "sort": "newest", "limit": 10}),
        json!({"query": "Third"}),
        json!({"query": "大别山的"}),
        json!({"query": "大别"}),
        json!({"session_id": "s1"}),
        json!({"session_id": "s2", "around_message_id": 3, "window": 20}),
        json!({"session_id": "x", "around_message_id": 1}),
        json!({"session_id": "default/s3"}),
    ]
}

/// Overwrite bytes of the closed database at `path`: single bytes, whole
/// pages, or a cut at a page boundary (the 100-byte header kept, mostly).
fn corrupt(path: &Path, rng: &mut Rng) {
    let mut bytes = std::fs::read(path).unwrap();
    let len = bytes.len();
    match rng.below(4) {
        0 => {
            for _ in 0..1 + rng.below(30) {
                let at = 100 + rng.below(len - 100);
                bytes[at] = rng.next() as u8;
            }
        }
        1 => {
            let page = 4096;
            let p = 1 + rng.below(len / page - 1);
            for b in &mut bytes[p * page..(p + 1) * page] {
                *b = rng.next() as u8;
            }
        }
        2 => bytes.truncate(4096 * (1 + rng.below(len / 4096 - 1))),
        _ => {
            let at = rng.below(100);
            bytes[at] ^= 1 << rng.below(8);
        }
    }
    std::fs::write(path, bytes).unwrap();
}

/// Make the `i`th hostile database at `path` (the base, changed).
fn generate(path: &Path, rng: &mut Rng) -> String {
    install_base(path);
    let mut what = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let m = rng.below(MUTATIONS.len());
        // A mutation may not apply after another (a renamed table): skipped.
        let c = rusqlite::Connection::open(path).unwrap();
        if c.execute_batch(MUTATIONS[m]).is_ok() {
            what.push(format!("m{m}"));
        }
    }
    // Leave WAL where it is sometimes, so both journal modes are read.
    if rng.chance(30) {
        bend(path, "PRAGMA journal_mode=DELETE;");
        what.push("delete-journal".into());
    }
    if rng.chance(35) {
        corrupt(path, rng);
        what.push("corrupt".into());
    }
    what.join("+")
}

#[test]
fn hostile_state_dbs_always_get_an_answer_and_never_stop_the_server() {
    let count = env_u64("HERMES_MCP_FUZZ_STATE_DBS").unwrap_or(24);
    let seed = env_u64("HERMES_MCP_FUZZ_SEED").unwrap_or(0x0053_5441_5445_4442);
    let mut rng = Rng(seed | 1);
    let env = TestEnv::new();
    let home = env.hermes_home();
    let db = home.join("state.db");
    // The 20 s per-call deadline, scaled to 1 s: a call answers well within 15 s.
    let mut c = Serve::new().var(TIME_SCALE, "0.05").client(&env);
    let calls = calls();
    let scratch = env.dir.path().join("next.db");
    for i in 0..count {
        let what = generate(&scratch, &mut rng);
        for sfx in ["-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(format!("{}{sfx}", db.display()));
        }
        // A new file in place (a new inode), as a Hermes that replaced it.
        std::fs::rename(&scratch, &db).unwrap();
        for _ in 0..3 {
            let args = calls[rng.below(calls.len())].clone();
            let (text, err, took) = timed_call(&mut c, args.clone(), Duration::from_secs(15));
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
                panic!(
                    "case {i} ({what}) {args}: not JSON ({e}): {}",
                    &text[..text.len().min(300)]
                )
            });
            if err {
                let e = v["error"].as_str().unwrap_or_default();
                assert!(!e.is_empty(), "case {i} ({what}) {args}: {text}");
            } else {
                assert_eq!(v["success"], true, "case {i} ({what}) {args}: {text}");
            }
            assert!(
                text.len() <= 1 << 20,
                "case {i} ({what}) {args}: {} bytes",
                text.len()
            );
            assert!(
                took < Duration::from_secs(15),
                "case {i} ({what}) {args}: {took:?}"
            );
        }
        assert!(
            c.child.try_wait().unwrap().is_none(),
            "serve exited at case {i} ({what})"
        );
    }
    let list = c.request("tools/list", json!({}));
    assert!(list["result"]["tools"].is_array(), "{list}");
}
