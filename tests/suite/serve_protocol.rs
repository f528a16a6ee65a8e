//! `hermes-mcp serve` over raw stdio: handshake, listing, protocol edge cases.

use std::time::Duration;

use serde_json::json;

use super::support::common::*;

#[test]
fn initialize_answers_with_server_identity() {
    let env = TestEnv::new();
    let mut c = RawClient::spawn(env.cmd());
    let r = c.initialize();
    assert_eq!(r["result"]["serverInfo"]["name"], "hermes-tools", "{r}");
    assert!(r["result"]["capabilities"]["tools"].is_object(), "{r}");
    let st = c.finish(Duration::from_secs(5));
    assert!(st.success(), "{st:?}");
}

/// Every kind of bad line gets a JSON-RPC error (or an isError result), and the
/// server keeps serving afterwards.
#[test]
fn bad_lines_get_errors_and_the_server_keeps_serving() {
    let env = TestEnv::new();
    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    let mut notes = Vec::new();

    c.send_line("this is not json");
    let r = c
        .recv(Duration::from_secs(10))
        .expect("a reply to a malformed line");
    assert_eq!(r["error"]["code"], -32700, "{r}");
    assert!(r["id"].is_null(), "{r}");

    c.send_line("[]");
    let r = c.recv(Duration::from_secs(10)).unwrap();
    assert_eq!(r["error"]["code"], -32600, "{r}");

    let id = c.send("no/such/method", json!({}));
    let r = c.response(id, &mut notes);
    assert_eq!(r["error"]["code"], -32601, "{r}");

    c.send_line(r#"{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":"oops"}"#);
    let r = c.response_str("s1");
    assert_eq!(r["error"]["code"], -32602, "{r}");

    c.send_line(r#"{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"arguments":{}}}"#);
    let r = c.response_str("s2");
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("params.name"),
        "{r}"
    );

    let r = c.call_tool("no_such_tool", json!({}));
    assert!(is_error(&r), "{r}");
    assert_eq!(result_json(&r)["error"], "Unknown tool: no_such_tool");

    // A 20 MB line is refused without being buffered whole; the next line works.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{{"name":"x","arguments":{{"a":"{}"}}}}}}"#,
        "x".repeat(20 * 1024 * 1024)
    );
    c.send_line(&huge);
    let r = c.recv(Duration::from_secs(30)).unwrap();
    assert_eq!(r["error"]["code"], -32600, "{r}");

    let r = c.request("ping", json!({}));
    assert!(r["result"].is_object(), "{r}");
    let st = c.finish(Duration::from_secs(5));
    assert!(st.success(), "{st:?}");
}

/// A line that is valid JSON syntax but holds a lone UTF-16 surrogate escape
/// is refused with `-32700` (it is not Unicode text), yet the reply carries
/// the request's id, which was readable; a valid pair and an escaped
/// backslash before `u` are not mistaken for one.
#[test]
fn lone_surrogates_are_refused_with_the_request_id() {
    let env = TestEnv::new();
    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    c.send_line(r#"{"jsonrpc":"2.0","id":555,"method":"ping","params":{"x":"\ud800"}}"#);
    let r = c.recv(Duration::from_secs(10)).unwrap();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(555), json!(-32700)),
        "{r}"
    );
    c.send_line(r#"{"jsonrpc":"2.0","id":"low","method":"ping","params":{"x":"a\udc00\ud83d"}}"#);
    let r = c.response_str("low");
    assert_eq!(r["error"]["code"], -32700, "{r}");
    // A valid pair (😀) and `\\ud800` (a backslash, then text) are fine.
    c.send_line(
        r#"{"jsonrpc":"2.0","id":"ok","method":"ping","params":{"x":"\ud83d\ude00 \\ud800"}}"#,
    );
    let r = c.response_str("ok");
    assert!(r["result"].is_object(), "{r}");
    // An id that cannot be a request id stays null.
    c.send_line(r#"{"jsonrpc":"2.0","id":[1],"method":"ping","params":{"x":"\ud800"}}"#);
    let r = c.recv(Duration::from_secs(10)).unwrap();
    assert!(r["id"].is_null() && r["error"]["code"] == -32700, "{r}");
    let st = c.finish(Duration::from_secs(5));
    assert!(st.success(), "{st:?}");
}

/// Raw CESU-8 surrogate bytes (`ED A0 80`, not UTF-8) inside an otherwise
/// valid request are refused like the escape form, with the request's id.
#[test]
fn raw_surrogate_bytes_are_refused_with_the_request_id() {
    let env = TestEnv::new();
    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    c.send_line_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":556,\"method\":\"ping\",\"params\":{\"x\":\"\xed\xa0\x80\"}}",
    );
    let r = c.recv(Duration::from_secs(10)).unwrap();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(556), json!(-32700)),
        "{r}"
    );
    let r = c.request("ping", json!({}));
    assert!(r["result"].is_object(), "{r}");
    let st = c.finish(Duration::from_secs(5));
    assert!(st.success(), "{st:?}");
}

/// stdin EOF while requests are in flight: the server exits promptly and cleanly.
#[test]
fn eof_with_requests_in_flight_exits_promptly() {
    let env = TestEnv::new();
    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    for _ in 0..20 {
        c.send("tools/list", json!({}));
    }
    let start = std::time::Instant::now();
    let st = c.finish(Duration::from_secs(5));
    assert!(st.success(), "{st:?}");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn serves_old_and_current_protocol_versions() {
    for v in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let env = TestEnv::new();
        let mut c = RawClient::spawn(env.cmd());
        let r = c.request(
            "initialize",
            json!({"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        assert_eq!(r["result"]["protocolVersion"], v, "{r}");
        c.notify("notifications/initialized", json!({}));
        let r = c.request("tools/list", json!({}));
        assert!(r["result"]["tools"].is_array(), "{r}");
    }
}

#[test]
fn tools_command_reports_every_tool_and_why() {
    let env = TestEnv::new();
    let out = env.cmd().args(["tools", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["hermes_home"], env.hermes_home().to_str().unwrap());
    for t in doc["tools"].as_array().unwrap() {
        assert!(t["name"].is_string() && t["toolset"].is_string(), "{t}");
        assert_eq!(
            t["available"].as_bool().unwrap(),
            t["reason"].is_null(),
            "{t}"
        );
    }
    // A broken config.yaml is reported, not fatal.
    env.write_hermes("config.yaml", "web: [unclosed\n");
    let out = env.cmd().arg("tools").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("not valid YAML"), "{text}");
}

/// The 2026-07-28 protocol has no handshake: lifecycle data rides in each request's `_meta`.
#[test]
fn serves_the_handshake_free_2026_protocol() {
    let env = TestEnv::new();
    let mut c = RawClient::spawn(env.cmd());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
    });
    let r = c.request("server/discover", json!({"_meta": meta}));
    assert!(
        r["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{r}"
    );
    let r = c.request("tools/list", json!({"_meta": meta}));
    assert!(r["result"]["tools"].is_array(), "{r}");
}

/// Wrong argument types get an isError result naming the argument; the server keeps serving.
#[test]
fn wrong_argument_types_get_a_clear_tool_error() {
    let env = TestEnv::new();
    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    let r = c.call_tool("skill_view", json!({"name": {"not": "a string"}}));
    assert!(is_error(&r), "{r}");
    let msg = result_json(&r)["error"].as_str().unwrap().to_string();
    assert!(
        msg.contains("Invalid arguments for skill_view") && msg.contains("'name' must be a string"),
        "{msg}"
    );
    let r = c.call_tool("skill_view", json!({}));
    assert!(is_error(&r));
    assert!(
        result_json(&r)["error"]
            .as_str()
            .unwrap()
            .contains("missing required argument(s): name"),
        "{r}"
    );
    let r = c.call_tool("skills_list", json!({"category": 42}));
    assert!(
        !is_error(&r),
        "a number where a string is expected is coerced, as Hermes does: {r}"
    );
    let r = c.request("ping", json!({}));
    assert!(r["result"].is_object());
}
