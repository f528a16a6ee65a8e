//! The xAI web search backend against a loopback fake of the Responses API
//! (checked against Hermes' own Python provider, plugins/web/xai), and
//! DuckDuckGo's paging past the first result page.

use std::process::Command;

use hermes_mcp::hermes::Context;
use hermes_mcp::hermes::{Env, HermesConfig, HermesHome};
use hermes_mcp::toolsets::web::providers::{Backend, extract_backend, search_backend};
use serde_json::{Value, json};

use super::support::common::{TestEnv, hermes_python};
use super::support::fake::*;
use super::support::web::*;

fn web(v: &Value) -> Vec<Value> {
    v["data"]["web"].as_array().cloned().unwrap_or_default()
}

fn err(out: &hermes_mcp::server::ToolOutput) -> String {
    assert!(out.is_error, "{:?}", out_json(out));
    out_json(out)["error"].as_str().unwrap().to_string()
}

/// A Responses API answer whose message is `text`.
fn answer(text: &str) -> Value {
    json!({
        "id": "resp_1", "object": "response", "status": "completed",
        "output": [
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": text, "annotations": []}
            ]}
        ],
        "citations": ["https://cited.example/"]
    })
}

const RESULTS: &str = r#"Here you go: {"results": [{"title": "Rust", "url": "https://www.rust-lang.org/", "description": "A language empowering everyone."}, {"title": "bad row"}, {"title": "Book", "url": "https://doc.rust-lang.org/book/", "description": "The book."}]}"#;

fn xai_config(base: &str, extra: &str) -> String {
    format!(
        "web:\n  search_backend: xai\n  xai:\n    base_url: '{base}/v1'\n    model: grok-4-fast\n{extra}"
    )
}

#[tokio::test]
async fn xai_search_speaks_the_responses_api_and_maps_results() {
    let srv = TestServer::start(|_| Resp::json(200, answer(RESULTS)));
    let h = harness(
        &xai_config(
            &srv.base(),
            "    allowed_domains: [' rust-lang.org ', '', 3]\n",
        ),
        &[("XAI_API_KEY", "xai-test")],
    );
    let out = h
        .call("web_search", json!({"query": "rust lang", "limit": 3}))
        .await;
    assert!(!out.is_error, "{:?}", out_json(&out));
    assert_eq!(
        web(&out_json(&out)),
        vec![
            json!({"title": "Rust", "url": "https://www.rust-lang.org/", "description": "A language empowering everyone.", "position": 1}),
            json!({"title": "Book", "url": "https://doc.rust-lang.org/book/", "description": "The book.", "position": 2}),
        ]
    );
    let r = &srv.reqs()[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/responses")
    );
    assert_eq!(r.header("authorization"), Some("Bearer xai-test"));
    assert_eq!(r.header("user-agent"), Some("Hermes-Agent/0.19.0"));
    let body = r.json_or_null();
    assert_eq!(body["model"], "grok-4-fast");
    assert_eq!(
        body["tools"],
        json!([{"type": "web_search", "filters": {"allowed_domains": ["rust-lang.org"]}}])
    );
    assert_eq!(body["include"], json!(["no_inline_citations"]));
    let prompt = body["input"][0]["content"].as_str().unwrap();
    assert_eq!(body["input"][0]["role"], "user");
    assert!(prompt.contains("Return at most 3 results") && prompt.ends_with("Query: rust lang"));
}

#[tokio::test]
async fn xai_errors_read_as_hermes_words_them() {
    let srv = TestServer::start(|req| match req.n {
        1 => Resp::json(
            401,
            json!({"code": "unauthorized", "error": "Incorrect API key"}),
        ),
        2 => Resp::json(200, json!({"error": {"code": "overloaded", "message": ""}})),
        3 => Resp::new(200, "application/json", "not json"),
        _ => Resp::json(
            200,
            json!({"output": [], "citations": ["https://c.example/", 7]}),
        ),
    });
    let h = harness(&xai_config(&srv.base(), ""), &[("XAI_API_KEY", "k")]);
    let q = json!({"query": "q"});
    assert_eq!(
        err(&h.call("web_search", q.clone()).await),
        r#"xAI web search returned HTTP 401: {"code":"unauthorized","error":"Incorrect API key"}"#
    );
    assert_eq!(
        err(&h.call("web_search", q.clone()).await),
        "xAI returned an error: overloaded"
    );
    assert_eq!(
        err(&h.call("web_search", q.clone()).await),
        "Could not parse xAI Responses API reply as JSON"
    );
    // No JSON block and no annotations: the bare citations list.
    let out = h.call("web_search", q.clone()).await;
    assert_eq!(
        web(&out_json(&out)),
        vec![json!({"title": "", "url": "https://c.example/", "description": "", "position": 1})]
    );

    // Both domain filters: refused before any request.
    let before = srv.count();
    let h = harness(
        &xai_config(
            &srv.base(),
            "    allowed_domains: [a.com]\n    excluded_domains: [b.com]\n",
        ),
        &[("XAI_API_KEY", "k")],
    );
    assert_eq!(
        err(&h.call("web_search", q.clone()).await),
        "web.xai.allowed_domains and web.xai.excluded_domains cannot both be set (xAI restriction)."
    );
    // web.backend names it without a key: Hermes' credentials message.
    let h = harness(
        &format!("web: {{backend: xai, xai: {{base_url: '{}'}}}}", srv.base()),
        &[],
    );
    assert_eq!(
        err(&h.call("web_search", q).await),
        "No xAI credentials found. Run `hermes auth` to sign in with xAI Grok OAuth, or set XAI_API_KEY."
    );
    assert_eq!(srv.count(), before);
}

#[tokio::test]
async fn xai_unreachable_says_so() {
    let port = free_port();
    let h = harness(
        &xai_config(&format!("http://127.0.0.1:{port}"), ""),
        &[("XAI_API_KEY", "k")],
    );
    let e = err(&h.call("web_search", json!({"query": "q"})).await);
    assert!(e.starts_with("Could not reach xAI: "), "{e}");
}

fn ctx(yaml: &str, env: &[(&str, &str)]) -> Context {
    Context::with_parts(
        HermesHome {
            path: "/nonexistent".into(),
            explicit: true,
        },
        Env::from_map(env.iter().map(|(k, v)| (k.to_string(), v.to_string()))),
        HermesConfig::from_yaml(yaml).unwrap(),
    )
}

#[test]
fn xai_is_chosen_only_when_named() {
    let key = [("XAI_API_KEY", "k")];
    // Hermes' auto-detection never lands on xAI, even with its key set.
    assert_eq!(search_backend(&ctx("", &key)), Backend::Ddgs);
    assert_eq!(
        search_backend(&ctx("web: {search_backend: xai}", &key)),
        Backend::Xai
    );
    // The capability key needs the key; web.backend is taken as named.
    assert_eq!(
        search_backend(&ctx("web: {search_backend: xai}", &[])),
        Backend::Ddgs
    );
    let c = ctx("web: {backend: xai}", &[]);
    assert_eq!(search_backend(&c), Backend::Xai);
    assert_eq!(extract_backend(&c), Backend::Builtin, "xAI cannot extract");
    let c = ctx("web: {search_backend: XAI}", &key);
    assert_eq!(search_backend(&c), Backend::Xai);
}

/// Hermes' own provider and ours, against the same fake: the same request
/// (path, auth, content type, user agent, body) and the same results.
#[tokio::test]
async fn xai_request_matches_hermes_python_provider() {
    let srv = TestServer::start(|_| Resp::json(200, answer(RESULTS)));
    let env = TestEnv::new();
    let extra = "    excluded_domains: [spam.example]\n    timeout: 30\n";
    // Hermes reads the base URL from XAI_BASE_URL; ours from web.xai.base_url.
    env.write_hermes(
        "config.yaml",
        &format!("web:\n  search_backend: xai\n  xai:\n    model: grok-4-fast\n{extra}"),
    );
    let script = "import json\n\
        from plugins.web.xai.provider import XAIWebSearchProvider\n\
        print(json.dumps(XAIWebSearchProvider().search('rust lang', 2)))\n";
    let mut cmd = Command::new(hermes_python("plugins.web.xai.provider"));
    env.apply(&mut cmd);
    cmd.env("XAI_API_KEY", "xai-test")
        .env("XAI_BASE_URL", format!("{}/v1", srv.base()))
        .env_remove("HERMES_XAI_BASE_URL");
    let out = cmd.args(["-c", script]).output().unwrap();
    assert!(
        out.status.success(),
        "Hermes' xAI provider failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let py: Value = serde_json::from_slice(
        out.stdout
            .split(|b| *b == b'\n')
            .rfind(|l| l.starts_with(b"{"))
            .unwrap(),
    )
    .unwrap();

    let h = harness(
        &xai_config(&srv.base(), extra),
        &[("XAI_API_KEY", "xai-test")],
    );
    let ours = out_json(
        &h.call("web_search", json!({"query": "rust lang", "limit": 2}))
            .await,
    );
    assert_eq!(py["success"], json!(true), "{py}");
    assert_eq!(web(&ours), web(&py));

    let reqs = srv.reqs();
    assert_eq!(reqs.len(), 2);
    let shape = |r: &Req| {
        json!({
            "method": r.method, "path": r.path,
            "auth": r.header("authorization"),
            "content_type": r.header("content-type"),
            "user_agent": r.header("user-agent"),
            "body": r.json_or_null(),
        })
    };
    assert_eq!(shape(&reqs[1]), shape(&reqs[0]));
}

// ------------------------------------------------------ DuckDuckGo paging --

fn ddg_page(urls: &[&str]) -> String {
    let rows: String = urls
        .iter()
        .map(|u| {
            format!(
                "<div class=\"result results_links web-result\"><h2 class=\"result__title\">\
                 <a class=\"result__a\" href=\"{u}\">T {u}</a></h2>\
                 <a class=\"result__snippet\" href=\"{u}\">S {u}</a></div>"
            )
        })
        .collect();
    format!("<html><body>{rows}</body></html>")
}

/// Page 1 (no `s`), page 2 (`s=10`, one repeat), page 3 (`s=25`, only repeats).
fn ddg_server() -> TestServer {
    TestServer::start(|req| {
        let s = req.form().get("s").cloned();
        Resp::html(&match s.as_deref() {
            None => ddg_page(&["https://a.example/", "https://b.example/"]),
            Some("10") => ddg_page(&[
                "https://b.example/",
                "https://c.example/",
                "https://d.example/",
            ]),
            Some("25") => ddg_page(&["https://a.example/", "https://d.example/"]),
            Some(other) => panic!("unexpected offset {other}"),
        })
    })
}

fn ddg_harness(srv: &TestServer) -> WebHarness {
    harness(
        &format!(
            "web: {{ddgs: {{base_url: '{}', min_interval: 0}}}}",
            srv.base()
        ),
        &[],
    )
}

#[tokio::test]
async fn duckduckgo_pages_until_limit_or_a_page_adds_nothing() {
    let srv = ddg_server();
    let h = ddg_harness(&srv);
    let out = h
        .call("web_search", json!({"query": "paging", "limit": 10}))
        .await;
    let hits = web(&out_json(&out));
    let urls: Vec<&str> = hits.iter().map(|h| h["url"].as_str().unwrap()).collect();
    assert_eq!(
        urls,
        [
            "https://a.example/",
            "https://b.example/",
            "https://c.example/",
            "https://d.example/"
        ]
    );
    assert_eq!(hits[3]["position"], 4);
    assert_eq!(hits[2]["title"], "T https://c.example/");
    let offsets: Vec<Option<String>> = srv
        .reqs()
        .iter()
        .map(|r| r.form().get("s").cloned())
        .collect();
    assert_eq!(offsets, [None, Some("10".into()), Some("25".into())]);
    assert!(srv.reqs().iter().all(|r| r.form()["q"] == "paging"));

    // Three wanted: page 2 completes them, no third request.
    let srv = ddg_server();
    let h = ddg_harness(&srv);
    let out = h
        .call("web_search", json!({"query": "paging", "limit": 3}))
        .await;
    assert_eq!(web(&out_json(&out)).len(), 3);
    assert_eq!(srv.count(), 2);
    // Two wanted: one page is enough.
    let srv = ddg_server();
    let h = ddg_harness(&srv);
    let out = h
        .call("web_search", json!({"query": "paging", "limit": 2}))
        .await;
    assert_eq!(web(&out_json(&out)).len(), 2);
    assert_eq!(srv.count(), 1);
}
