//! What the hostile-`state.db` suites (`session_search_hostile`,
//! `session_search_fuzz`) share: a small `state.db` written by Hermes' own
//! `SessionDB` (built once per run), copied into a home and bent there with
//! SQLite, and a `serve` whose calls are timed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::{RawClient, TestEnv, hermes_python, run_ok};
use super::run::once_per_run;

/// Hermes' Python filling the base database: a compression chain `s1` → `s2`
/// (eight and four messages, every one with "needle"), and a titled `s3`.
const FILL: &str = "from hermes_state import SessionDB
db = SessionDB()
t0 = 1752000000.0
db.create_session('s1', 'cli', model='gpt-5.5')
for i in range(8):
    db.append_message('s1', 'user' if i % 2 == 0 else 'assistant', f'hello world needle {i}', timestamp=t0 + i)
db.end_session('s1', 'compression')
db.create_session('s2', 'cli', model='gpt-5.5', parent_session_id='s1')
for i in range(4):
    db.append_message('s2', 'user' if i % 2 == 0 else 'assistant', f'hello again needle {i}', timestamp=t0 + 100 + i)
db.create_session('s3', 'telegram')
db.append_message('s3', 'user', 'another conversation entirely', timestamp=t0 + 200)
db.set_session_title('s3', 'Third')
db.close()
";

/// The base `state.db` (Hermes schema 22, WAL mode, no `-wal`/`-shm` left).
pub fn base_db() -> PathBuf {
    let dir = once_per_run("session_search_base", |dir| {
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut c = Command::new(hermes_python("hermes_state"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", dir)
            .env("HERMES_HOME", &home)
            .env("TZ", "UTC")
            .args(["-c", FILL]);
        run_ok(c);
        std::fs::copy(home.join("state.db"), dir.join("state.db")).unwrap();
    });
    dir.join("state.db")
}

/// A fresh copy of the base database at `to` (its `-wal`/`-shm` removed).
pub fn install_base(to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(to);
    for sfx in ["-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{}{sfx}", to.display()));
    }
    std::fs::copy(base_db(), to).unwrap();
}

/// Run `sql` on the database at `path` (read-write, as an attacker would).
pub fn bend(path: &Path, sql: &str) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(sql)
        .unwrap_or_else(|e| panic!("{e} in {sql}"));
}

/// One `session_search` call answered within `within`: `(text, isError)`.
/// Panics naming the call when no answer comes in time.
pub fn timed_call(c: &mut RawClient, args: Value, within: Duration) -> (String, bool, Duration) {
    let start = Instant::now();
    let id = c.send(
        "tools/call",
        json!({"name": "session_search", "arguments": args}),
    );
    loop {
        let left = within.saturating_sub(start.elapsed());
        let msg = c
            .recv(left)
            .unwrap_or_else(|| panic!("session_search {args} did not answer within {within:?}"));
        if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
            let r = &msg["result"];
            let text = r["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            return (text, r["isError"] == true, start.elapsed());
        }
    }
}

/// The peak resident memory of a process, in bytes (`VmHWM`).
pub fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap()
}

/// User plus system CPU time a process has used so far.
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the `(comm)`: state is field 3; utime, stime are 14 and 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_millis(ticks * 1000 / hz)
}

/// A test env whose Hermes home holds a fresh copy of the base database.
pub fn base_env() -> TestEnv {
    let env = TestEnv::new();
    install_base(&env.hermes_home().join("state.db"));
    env
}
