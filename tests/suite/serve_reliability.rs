//! What the stdio channel guarantees: it survives whatever arrives before the
//! handshake, every error to a request whose id can be read carries that id,
//! the line limit is exact, and the end of input (or SIGTERM) stops running
//! calls at once without leaving a child behind.

use std::time::{Duration, Instant};

use hermes_mcp::server::framing::MAX_LINE;
use serde_json::{Value, json};

use super::support::browser::procs_with;
use super::support::common::*;

/// Messages that are not requests, sent before `initialize`, are ignored: the
/// server neither exits nor answers them, and the handshake then works.
#[test]
fn messages_before_initialize_are_ignored_and_the_server_keeps_serving() {
    for first in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        r#"{"id":3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
    ] {
        let env = TestEnv::new();
        let mut c = RawClient::spawn(env.cmd());
        c.send_line(first);
        c.send_line(first);
        let r = c.initialize();
        assert_eq!(
            r["result"]["serverInfo"]["name"], "hermes-tools",
            "after {first}: {r}"
        );
        let r = c.request("tools/list", json!({}));
        assert!(r["result"]["tools"].is_array(), "after {first}: {r}");
        assert!(
            c.child.try_wait().unwrap().is_none(),
            "the server exited after {first}"
        );
        let st = c.finish(Duration::from_secs(10));
        assert!(st.success(), "after {first}: {st:?}");
    }
}

/// The next message, which must be an error reply to `id` with `code`.
fn expect_error(c: &RawClient, line: &str, id: &Value, code: i64) {
    let r = c
        .recv(Duration::from_secs(10))
        .unwrap_or_else(|| panic!("no reply to {line}"));
    assert_eq!(&r["id"], id, "{line} -> {r}");
    assert_eq!(r["error"]["code"], code, "{line} -> {r}");
    assert_eq!(r["jsonrpc"], "2.0", "{line} -> {r}");
}

/// Errors to requests whose id can be read carry that id, before and after the
/// handshake; notifications and responses that cannot be used get no reply.
#[test]
fn errors_keep_the_request_id() {
    let cases: &[(&str, Value, i64)] = &[
        (r#"{"id":7,"method":"ping"}"#, json!(7), -32600),
        (
            r#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#,
            json!(8),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"m","method":"tools/list","params":{"_meta":"x"}}"#,
            json!("m"),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"skills_list","_meta":[1]}}"#,
            json!(9),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
            json!(9223372036854775808u64),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"tools/list"}"#,
            json!(18446744073709551615u64),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2.5,"method":"ping"}"#,
            json!(2.5),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":7}}"#,
            json!(10),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":5}}"#,
            json!(11),
            -32602,
        ),
    ];
    for before_handshake in [true, false] {
        let env = TestEnv::new();
        let mut c = RawClient::spawn(env.cmd());
        if !before_handshake {
            c.initialize();
        }
        for (line, id, code) in cases {
            // Unusable notifications and responses first: they get no reply,
            // so the next message is the error for `line`.
            c.send_line(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}"#,
            );
            c.send_line(r#"{"id":"r","result":7}"#);
            c.send_line(line);
            expect_error(&c, line, id, *code);
        }
        let r = c.request("ping", json!({}));
        assert!(r["result"].is_object(), "{r}");
        let st = c.finish(Duration::from_secs(10));
        assert!(st.success(), "{st:?}");
    }
}

/// A ping line of exactly `len` bytes before its newline (JSON whitespace pads it).
fn ping_of_len(id: &str, len: usize) -> String {
    let head = format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping""#);
    let mut s = head.clone();
    s.push_str(&" ".repeat(len - head.len() - 1));
    s.push('}');
    assert_eq!(s.len(), len);
    s
}

/// One limit, counted the same way everywhere: MAX_LINE bytes before the
/// newline are served, one more byte is refused (and the server goes on).
#[test]
fn the_line_limit_is_exact() {
    assert_eq!(MAX_LINE, 16 * 1024 * 1024);
    let env = TestEnv::new();
    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    for (id, len) in [("below", MAX_LINE - 1), ("at", MAX_LINE)] {
        c.send_line(&ping_of_len(id, len));
        let r = c
            .recv(Duration::from_secs(60))
            .unwrap_or_else(|| panic!("no reply to a ping of {len} bytes"));
        assert_eq!(r["id"], id, "{r}");
        assert!(r["result"].is_object(), "a line of {len} bytes: {r}");
    }
    c.send_line(&ping_of_len("above", MAX_LINE + 1));
    let r = c
        .recv(Duration::from_secs(60))
        .expect("a reply to a long line");
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&MAX_LINE.to_string()),
        "{r}"
    );
    let r = c.request("ping", json!({}));
    assert!(r["result"].is_object(), "{r}");
    let st = c.finish(Duration::from_secs(10));
    assert!(st.success(), "{st:?}");
}

/// A server with a tool call that runs `sleep` for a long time, tagged with
/// `marker` so its processes can be found.
fn slow_call(marker: &str) -> (TestEnv, RawClient) {
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: slow\n  providers:\n    slow:\n      type: command\n      command: \"sleep {marker}; touch {{output_path}}\"\n      timeout: 120\n"
        ),
    );
    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    c.send(
        "tools/call",
        json!({"name": "text_to_speech", "arguments": {"text": "hello"}}),
    );
    poll_until(
        "the slow command's start",
        20,
        || procs_with(&format!("sleep {marker}")),
        |p| !p.is_empty(),
    );
    (env, c)
}

/// Wait for the server to exit; fails when that takes `limit` or longer.
fn exit_within(c: &mut RawClient, limit: Duration) -> (std::process::ExitStatus, Duration) {
    let start = Instant::now();
    let st = wait_exit(&mut c.child, "the server", 30);
    let took = start.elapsed();
    assert!(
        took < limit,
        "the server took {took:?} to exit with a call running (limit {limit:?})"
    );
    (st, took)
}

fn assert_no_orphan(marker: &str) {
    poll_until(
        "the end of the tool's child after the server's",
        2,
        || procs_with(&format!("sleep {marker}")),
        |left| left.is_empty(),
    );
}

/// Closing stdin while a slow call runs cancels it at once: the server exits
/// in well under rmcp's 5 s drain, the call's child is killed, and the call
/// still gets its (cancelled) reply.
#[test]
fn eof_during_a_running_call_exits_at_once_without_orphans() {
    let marker = "87.1234";
    let (_env, mut c) = slow_call(marker);
    c.close_stdin();
    let (st, took) = exit_within(&mut c, Duration::from_millis(1500));
    eprintln!("exit after EOF with a call running: {took:?}");
    assert!(st.success(), "{st:?}");
    let mut replies = Vec::new();
    while let Some(m) = c.recv(Duration::from_millis(200)) {
        replies.push(m);
    }
    assert!(
        replies
            .iter()
            .any(|m| m["id"] == 2 && m["result"]["isError"] == true),
        "the cancelled call got no reply: {replies:?}"
    );
    assert_no_orphan(marker);
}

/// SIGTERM while a slow call runs: the same, without the reply.
#[test]
fn sigterm_during_a_running_call_exits_at_once_without_orphans() {
    let marker = "88.4321";
    let (_env, mut c) = slow_call(marker);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(c.child.id() as i32, libc::SIGTERM) };
    let (st, took) = exit_within(&mut c, Duration::from_millis(1500));
    eprintln!("exit after SIGTERM with a call running: {took:?}");
    assert!(st.success(), "{st:?}");
    assert_no_orphan(marker);
}
