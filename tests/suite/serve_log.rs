//! `$HERMES_HOME/logs/hermes-mcp.log`: what `serve` records (start, the
//! client, one line per tool call, shutdown; arguments and results only at
//! debug, cut and redacted, without rmcp's protocol dumps), and how the path
//! is opened (never blocking on a FIFO, never through a symlink, 0600).
//! The failing tool call is a `web_search` against a loopback fake.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use super::support::common::*;
use super::support::fake::{Resp, TestServer};
use super::support::fs::mkfifo;
use super::support::serve::Serve;

fn log_path(env: &TestEnv) -> PathBuf {
    env.hermes_home().join("logs/hermes-mcp.log")
}

/// A Firecrawl fake that refuses every search (HTTP 401).
fn refusing_firecrawl() -> TestServer {
    TestServer::start(|_| {
        Resp::json(
            401,
            json!({"success": false, "error": "Unauthorized: Invalid token"}),
        )
    })
}

/// `serve` in `env` with Firecrawl pointed at `srv`, `vars` added.
fn serve(env: &TestEnv, srv: &TestServer, vars: &[(&str, &str)]) -> RawClient {
    Serve::new()
        .config("web:\n  backend: firecrawl\n")
        .var("FIRECRAWL_API_URL", srv.base())
        .var("FIRECRAWL_API_KEY", "fc-testkey123456")
        .vars(vars)
        .client(env)
}

#[test]
fn default_level_records_start_client_each_call_and_shutdown() {
    let env = TestEnv::new();
    let srv = refusing_firecrawl();
    let mut c = serve(&env, &srv, &[]);
    let r = c.call_tool("web_search", json!({"query": "otters"}));
    assert!(is_error(&r), "{r}");
    assert!(c.finish(Duration::from_secs(20)).success());
    let log = std::fs::read_to_string(log_path(&env)).unwrap();
    let line = |needle: &str| {
        log.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in the log:\n{log}"))
    };
    let start = line("serve started");
    assert!(start.contains(env!("CARGO_PKG_VERSION")), "{start}");
    assert!(
        start.contains(&env.hermes_home().display().to_string()),
        "{start}"
    );
    assert!(start.contains("config.yaml"), "{start}");
    let client = line("client test 0");
    assert!(client.contains("protocol 2025-06-18"), "{client}");
    let call = line("tools/call web_search");
    assert!(call.contains("error"), "{call}");
    assert!(
        call.contains("Firecrawl search failed: HTTP 401: Unauthorized: Invalid token"),
        "{call}"
    );
    assert!(line("shut down").contains("end of input"), "{log}");
    assert!(!log.contains("DEBUG"), "{log}");
    assert!(!log.contains("fc-testkey123456"), "{log}");
}

#[test]
fn debug_level_cuts_and_redacts_arguments_and_keeps_rmcp_quiet() {
    let env = TestEnv::new();
    let srv = refusing_firecrawl();
    let mut c = serve(&env, &srv, &[("HERMES_MCP_LOG", "debug")]);
    let query = format!(
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123 key sk-proj-abcdefghijklmnop1234567890 {}",
        "otter ".repeat(2000)
    );
    let r = c.call_tool("web_search", json!({ "query": query }));
    assert!(is_error(&r), "{r}");
    assert!(c.finish(Duration::from_secs(20)).success());
    let log = std::fs::read_to_string(log_path(&env)).unwrap();
    let args = log
        .lines()
        .find(|l| l.contains("tools/call web_search arguments:"))
        .unwrap_or_else(|| panic!("no arguments line:\n{log}"));
    assert!(args.contains("more chars]"), "{args}");
    assert!(args.chars().count() < 800, "{args}");
    assert!(log.contains("tools/call web_search result:"), "{log}");
    for secret in [
        "abcdefghijklmnopqrstuvwxyz0123",
        "sk-proj-abcdefghijklmnop1234567890",
    ] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
    }
    // rmcp's debug records are whole protocol messages: not in the file.
    assert!(
        !log.lines().any(|l| l.contains("DEBUG rmcp")),
        "rmcp debug records in the log:\n{log}"
    );
    assert!(
        log.lines().all(|l| l.len() <= 4200),
        "a line longer than a record may be"
    );
}

#[test]
fn a_new_log_is_created_0600() {
    let env = TestEnv::new();
    let c = client(&env, &[]);
    assert!(c.finish(Duration::from_secs(20)).success());
    let mode = std::fs::metadata(log_path(&env))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// `serve` run with stdin at EOF: its stderr, after a bounded wait.
fn serve_stderr_at_eof(env: &TestEnv) -> String {
    let err = env.dir.path().join("stderr");
    let mut c = env.cmd();
    c.arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap());
    let mut child = c.spawn().unwrap();
    wait_exit(&mut child, "serve at EOF", 20);
    std::fs::read_to_string(err).unwrap()
}

#[test]
fn a_fifo_at_the_log_path_does_not_stop_serve() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.hermes_home().join("logs")).unwrap();
    mkfifo(&log_path(&env));
    let mut c = client(&env, &[]);
    let r = c.call_tool("web_search", json!({}));
    assert!(is_error(&r), "{r}");
    assert!(c.finish(Duration::from_secs(20)).success());
    let err = serve_stderr_at_eof(&env);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("hermes-mcp.log"))
        .collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains("FIFO"), "{err}");
}

#[test]
fn a_symlink_at_the_log_path_is_not_followed() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.hermes_home().join("logs")).unwrap();
    let target = env.dir.path().join("elsewhere.txt");
    std::fs::write(&target, "precious\n").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink(&target, log_path(&env)).unwrap();
    let mut c = client(&env, &[]);
    let r = c.call_tool("web_search", json!({}));
    assert!(is_error(&r), "{r}");
    assert!(c.finish(Duration::from_secs(20)).success());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
    let meta = std::fs::metadata(&target).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o644);
    assert!(
        std::fs::symlink_metadata(log_path(&env))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let err = serve_stderr_at_eof(&env);
    assert!(err.contains("symlink"), "{err}");
}

#[test]
fn a_signal_is_named_as_the_reason_for_shutting_down() {
    let env = TestEnv::new();
    let mut c = client(&env, &[]);
    let pid = c.child.id() as i32;
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    wait_exit(&mut c.child, "serve after SIGTERM", 20);
    let log = std::fs::read_to_string(log_path(&env)).unwrap();
    assert!(log.contains("shut down: SIGTERM"), "{log}");
}

/// Every file under `dir` but the log, with its bytes (what a warm-up must leave alone).
fn files_but_logs(dir: &std::path::Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.ends_with("logs") {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                out.push((p.clone(), Vec::new()));
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_warm_up_after_the_tool_list_reads_only_gives_back_start_up_and_says_when_it_is_done() {
    let env = TestEnv::new();
    env.write_hermes(
        "skills/writing/essay/SKILL.md",
        "---\nname: essay\ndescription: Write an essay.\n---\nBody with !`date` and ${HERMES_SKILL_DIR}.\n",
    );
    env.write_hermes("memories/MEMORY.md", "Likes tea.\n§\nWorks in UTC.");
    env.write_hermes("config.yaml", "toolsets:\n  - hermes-cli\n  - kanban\n");
    let before = files_but_logs(&env.hermes_home());
    let mut c = Serve::new().var("HERMES_MCP_LOG", "debug").client(&env);
    let list = c.request("tools/list", json!({}));
    assert!(list["result"]["tools"].as_array().is_some(), "{list}");
    let log = poll_until(
        "the warm-up's last log line",
        30,
        || std::fs::read_to_string(log_path(&env)).unwrap_or_default(),
        |l| l.contains("warm-up end: "),
    );
    for toolset in ["skills", "memory", "web", "session_search"] {
        assert!(log.contains(&format!("warm-up of {toolset}")), "{log}");
    }
    // What start-up and the warm-up no longer need went back (src/server/idle.rs): the
    // relocation records before `instructions` were composed, the binary's code and
    // constants when the warm-up started and ended.
    let given = |what: &str| -> u64 {
        let line = log
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("{log}"));
        let n = line
            .split(what)
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        n.parse().unwrap()
    };
    assert!(given("relocation records given back: ") > 0, "{log}");
    assert!(given("warm-up start: ") > 0, "{log}");
    assert!(given("warm-up end: ") > 0, "{log}");
    assert_eq!(
        files_but_logs(&env.hermes_home()),
        before,
        "the warm-up wrote into the Hermes home"
    );
    // The warm skills listing answers as a cold one does, its code faulted back.
    let r = c.call_tool("skills_list", json!({}));
    assert!(r.to_string().contains("essay"), "{r}");
    assert!(c.finish(Duration::from_secs(20)).success());
}
