//! vision_analyze's provider choice, as Hermes 0.19's
//! `resolve_vision_provider_client` makes it, each choice exercised against a
//! loopback OpenAI-compatible chat-completions fake; and
//! `HERMES_VISION_MAX_CONCURRENCY`, which (as in Hermes) bounds only the
//! image decode/resize, never the model calls.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hermes_mcp::server::Availability;
use serde_json::{Value, json};

use super::support::fake::{Resp, TestServer};
use super::support::vision::{assert_seen, mk, text};

/// A chat-completions fake that answers "seen" (and serves a DeepInfra-style
/// catalog on GET /models).
fn fake() -> TestServer {
    TestServer::start(|req| {
        if req.method == "GET" && req.path.ends_with("/models") {
            return Resp::json(
                200,
                json!({"data": [
                    {"id": "meta/embed-v1", "metadata": {"tags": ["embed", "vision"]}},
                    {"id": "acme/text-only", "metadata": {"tags": ["chat"]}},
                    {"id": "stub/no-meta", "metadata": null},
                    {"id": "qwen/Qwen3-VL", "metadata": {"tags": ["chat", "vision"]}},
                ]}),
            );
        }
        Resp::json(
            200,
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "seen"}, "finish_reason": "stop"}]}),
        )
    })
}

fn chat_req(srv: &TestServer) -> super::support::fake::Req {
    srv.reqs()
        .into_iter()
        .find(|r| r.path.ends_with("/chat/completions"))
        .expect("a chat-completions request")
}

fn nous_auth(base: &str, exp: &str) -> Value {
    json!({"active_provider": "nous", "providers": {"nous": {
        "agent_key": "nous-agent-jwt", "agent_key_expires_at": exp,
        "access_token": "nous-access", "expires_at": "2000-01-01T00:00:00Z",
        "inference_base_url": format!("{base}/v1")}}})
}

#[tokio::test]
async fn nothing_configured_is_native() {
    let h = mk("", &[], None);
    let (p, why) = h.choice();
    assert_eq!(p, "native");
    assert!(why.contains("OPENROUTER_API_KEY"), "{why}");
    assert_eq!(h.availability(), Availability::Available);
    let out = h.analyze().await;
    assert!(!out.is_error);
    assert!(text(&out).contains("natively"));
}

#[tokio::test]
async fn auto_chain_order_openrouter_then_nous_then_deepinfra() {
    let srv = fake();
    let auth = nous_auth(&srv.base(), "2999-01-01T00:00:00Z");
    let all = [("OPENROUTER_API_KEY", "sk-or"), ("DEEPINFRA_API_KEY", "di")];
    let h1 = mk("", &all, Some(auth.clone()));
    assert_eq!(h1.choice().0, "openrouter (google/gemini-3-flash-preview)");
    assert!(h1.choice().1.contains("OPENROUTER_API_KEY"));
    let h2 = mk("", &all[1..], Some(auth));
    assert_eq!(h2.choice().0, "nous (google/gemini-3-flash-preview)");
    let h3 = mk("", &all[1..], None);
    assert_eq!(
        h3.choice().0,
        "deepinfra (model from the DeepInfra catalog)"
    );
}

#[tokio::test]
async fn explicit_openrouter_sends_its_headers_key_and_default_model() {
    let srv = fake();
    let yaml = format!(
        "auxiliary:\n  vision:\n    provider: openrouter\n    base_url: {}/api/v1\n",
        srv.base()
    );
    let h = mk(&yaml, &[("OPENROUTER_API_KEY", "sk-or")], None);
    assert_eq!(h.choice().0, "openrouter (google/gemini-3-flash-preview)");
    assert_seen(&h.analyze().await);
    let r = chat_req(&srv);
    assert_eq!(r.path, "/api/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer sk-or"));
    assert_eq!(
        r.header("http-referer"),
        Some("https://hermes-agent.nousresearch.com")
    );
    assert_eq!(r.header("x-title"), Some("Hermes Agent"));
    assert_eq!(r.json_or_null()["model"], "google/gemini-3-flash-preview");
}

#[tokio::test]
async fn nous_from_auth_json_in_auto_mode() {
    let srv = fake();
    let h = mk(
        "",
        &[],
        Some(nous_auth(&srv.base(), "2999-01-01T00:00:00Z")),
    );
    assert_seen(&h.analyze().await);
    let r = chat_req(&srv);
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer nous-agent-jwt"));
    let b = r.json_or_null();
    assert_eq!(b["model"], "google/gemini-3-flash-preview");
    assert_eq!(
        b["tags"],
        json!(["product=hermes-agent", "client=hermes-client-v0.19.0"])
    );
    // Every token expired: no Nous, so nothing → native.
    let h = mk(
        "",
        &[],
        Some(nous_auth(&srv.base(), "2001-01-01T00:00:00Z")),
    );
    assert_eq!(h.choice().0, "native");
}

#[tokio::test]
async fn deepinfra_takes_the_first_vision_chat_model_of_its_catalog() {
    let srv = fake();
    let base = format!("{}/v1/openai", srv.base());
    let h = mk(
        "",
        &[
            ("DEEPINFRA_API_KEY", "di-key"),
            ("DEEPINFRA_BASE_URL", &base),
        ],
        None,
    );
    assert_seen(&h.analyze().await);
    let cat = &srv.reqs()[0];
    assert_eq!(
        (cat.method.as_str(), cat.path.as_str(), cat.query.as_str()),
        ("GET", "/v1/openai/models", "filter=true&sort_by=hermes")
    );
    assert_eq!(cat.header("authorization"), Some("Bearer di-key"));
    assert_eq!(cat.header("user-agent"), Some("hermes-cli/0.19.0"));
    let r = chat_req(&srv);
    assert_eq!(r.path, "/v1/openai/chat/completions");
    assert_eq!(r.json_or_null()["model"], "qwen/Qwen3-VL");
}

#[tokio::test]
async fn main_custom_provider_comes_before_the_aggregators() {
    let srv = fake();
    let yaml = format!(
        "model:\n  provider: custom\n  default: local/vlm\n  base_url: {}/v1\n  api_key: main-key\n",
        srv.base()
    );
    let h = mk(&yaml, &[("OPENROUTER_API_KEY", "sk-or")], None);
    let (p, why) = h.choice();
    assert_eq!(p, "custom (local/vlm)");
    assert!(why.contains("model.provider: custom"), "{why}");
    assert_seen(&h.analyze().await);
    let r = chat_req(&srv);
    assert_eq!(r.header("authorization"), Some("Bearer main-key"));
    assert_eq!(r.json_or_null()["model"], "local/vlm");
}

#[tokio::test]
async fn main_provider_variants() {
    // openrouter as the main provider: the main model, not the aux default.
    let h1 = mk(
        "model:\n  provider: openrouter\n  default: anthropic/claude-sonnet-4\n",
        &[("OPENROUTER_API_KEY", "k")],
        None,
    );
    assert_eq!(h1.choice().0, "openrouter (anthropic/claude-sonnet-4)");
    // Kimi Coding has no vision: skipped for the aggregator chain.
    let h2 = mk(
        "model:\n  provider: kimi-coding\n  default: kimi-k2\n",
        &[("OPENROUTER_API_KEY", "k")],
        None,
    );
    assert_eq!(h2.choice().0, "openrouter (google/gemini-3-flash-preview)");
    // Codex as the main provider: Codex's own model looks.
    let h3 = mk(
        "model:\n  provider: openai-codex\n  default: gpt-5.5\n",
        &[("OPENROUTER_API_KEY", "k")],
        None,
    );
    assert_eq!(h3.choice().0, "native");
}

#[tokio::test]
async fn explicit_provider_unavailable_falls_back_to_auto_or_fails_with_hermes_text() {
    let h1 = mk(
        "auxiliary:\n  vision:\n    provider: nous\n",
        &[("OPENROUTER_API_KEY", "k")],
        None,
    );
    let (p, why) = h1.choice();
    assert_eq!(p, "openrouter (google/gemini-3-flash-preview)");
    assert!(why.contains("nous unavailable"), "{why}");
    let h2 = mk("auxiliary:\n  vision:\n    provider: nous\n", &[], None);
    let Availability::Unavailable(msg) = h2.availability() else {
        panic!("should be unavailable")
    };
    assert!(
        msg.starts_with(
            "No LLM provider configured for task=vision provider=nous. Run: hermes setup"
        ),
        "{msg}"
    );
    assert!(msg.contains("auth.json"), "{msg}");
    let out = h2.analyze().await;
    assert!(out.is_error);
    assert!(text(&out).contains("No LLM provider configured"));
}

#[tokio::test]
async fn bare_endpoint_is_custom_with_hermes_defaults() {
    let srv = fake();
    let yaml = format!("auxiliary:\n  vision:\n    base_url: {}/v1/\n", srv.base());
    let h = mk(&yaml, &[], None);
    assert_eq!(h.choice().0, "custom (gpt-4o-mini)");
    assert_seen(&h.analyze().await);
    let r = chat_req(&srv);
    assert_eq!(r.header("authorization"), Some("Bearer no-key-required"));
    assert_eq!(r.json_or_null()["model"], "gpt-4o-mini");
    // A named provider with base_url AND api_key is custom too (Hermes).
    let yaml = format!(
        "auxiliary:\n  vision:\n    provider: openrouter\n    base_url: {}/v1\n    api_key: own\n    model: m\n",
        srv.base()
    );
    assert_eq!(h_choice(&yaml), "custom (m)");
    // provider: openai is custom at api.openai.com.
    let h2 = mk("auxiliary:\n  vision:\n    provider: openai\n", &[], None);
    let (p, why) = h2.choice();
    assert_eq!(p, "custom (gpt-4o-mini)");
    assert!(why.contains("https://api.openai.com/v1"), "{why}");
}

fn h_choice(yaml: &str) -> String {
    mk(yaml, &[], None).choice().0
}

#[tokio::test]
async fn image_input_mode_native_wins() {
    let h = mk(
        "agent:\n  image_input_mode: native\n",
        &[("OPENROUTER_API_KEY", "k")],
        None,
    );
    assert_eq!(h.choice().0, "native");
}

/// HERMES_VISION_MAX_CONCURRENCY=1 bounds the decode/resize only: four
/// analyses still reach the model at the same time (the fake holds each
/// request until all four are in flight, or gives up after 20 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn max_concurrency_bounds_only_the_image_work_not_the_model_calls() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let max = Arc::new(Mutex::new(0usize));
    let (f, m) = (in_flight.clone(), max.clone());
    let srv = TestServer::start(move |_| {
        let now = f.fetch_add(1, Ordering::SeqCst) + 1;
        {
            let mut g = m.lock().unwrap();
            *g = (*g).max(now);
        }
        let end = Instant::now() + Duration::from_secs(20);
        // Waits on the event (four requests in flight); a fake's handler
        // gives up rather than panics, so the test's assertion reports it.
        while f.load(Ordering::SeqCst) < 4 && *m.lock().unwrap() < 4 && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        f.fetch_sub(1, Ordering::SeqCst);
        Resp::json(
            200,
            json!({"choices": [{"message": {"role": "assistant", "content": "seen"}}]}),
        )
    });
    let yaml = format!(
        "auxiliary:\n  vision:\n    base_url: {}/v1\n    model: m\n",
        srv.base()
    );
    let h = Arc::new(mk(&yaml, &[("HERMES_VISION_MAX_CONCURRENCY", "1")], None));
    let calls: Vec<_> = (0..4)
        .map(|_| {
            let h = h.clone();
            tokio::spawn(async move { h.analyze().await })
        })
        .collect();
    for c in calls {
        assert_seen(&c.await.unwrap());
    }
    assert_eq!(*max.lock().unwrap(), 4, "model calls ran concurrently");
}
