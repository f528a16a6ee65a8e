//! vision_analyze with Hermes' API-key providers: the provider
//! table agrees with Hermes' own registry; OpenAI-wire providers (zai, xai,
//! gmi), Anthropic Messages (x-api-key, OAuth Bearer + betas, MiniMax
//! Bearer) and Gemini's native generateContent against loopback fakes; the
//! fakes themselves checked against Hermes' real clients (the `anthropic`
//! SDK behind `AnthropicAuxiliaryClient`, and `GeminiNativeClient`), which
//! must send the same requests ours send and read the same answers.

use std::process::Command;

use serde_json::{Value, json};

use super::support::common::hermes_python;
use super::support::fake::{Req, Resp, TestServer};
use super::support::vision::{assert_seen, mk, text};
use hermes_mcp::llm::route::providers as table;
use hermes_mcp::server::Availability;

const SSE: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"se\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"en\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":1}}\n\n",
    "event: message_stop\n",
    "data: {\"type\":\"message_stop\"}\n\n",
);

/// One fake for the three wires: chat completions, Anthropic Messages
/// (streamed when asked, as the documented SSE events), Gemini
/// generateContent; the key `bad` gets each API's documented error shape.
fn fake() -> TestServer {
    TestServer::start(|req| {
        let bad = [req.header("x-api-key"), req.header("x-goog-api-key")]
            .contains(&Some("bad-key"))
            || req.header("authorization") == Some("Bearer bad-key");
        if req.path.ends_with("/chat/completions") {
            return Resp::json(
                200,
                json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "seen"}, "finish_reason": "stop"}]}),
            );
        }
        if req.path.ends_with("/v1/messages") {
            if bad {
                return Resp::json(
                    401,
                    json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
                );
            }
            if req.json_or_null()["stream"] == json!(true) {
                return Resp::new(200, "text/event-stream", SSE);
            }
            return Resp::json(
                200,
                json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                       "content": [{"type": "text", "text": "seen"}], "stop_reason": "end_turn",
                       "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}}),
            );
        }
        if req.path.ends_with(":generateContent") {
            if bad {
                return Resp::json(
                    400,
                    json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}),
                );
            }
            return Resp::json(
                200,
                json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "plan", "thought": true}, {"text": "seen"}]}, "finishReason": "STOP"}],
                       "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1, "totalTokenCount": 6}}),
            );
        }
        Resp::json(404, json!({"error": "no route"}))
    })
}

fn last(srv: &TestServer) -> Req {
    srv.reqs().pop().expect("a request")
}

/// Run Hermes' own client (`wire`: `anthropic` or `gemini`) with `args`
/// against the fake; its answer text or its error text.
fn hermes_client(args: Value) -> Value {
    const SCRIPT: &str = r#"
import json, sys
a = json.loads(sys.argv[1])
msgs = [{"role": "user", "content": [{"type": "text", "text": a["prompt"]},
        {"type": "image_url", "image_url": {"url": a["image"]}}]}]
kw = dict(model=a["model"], messages=msgs, max_tokens=a["max_tokens"])
if a.get("temperature") is not None:
    kw["temperature"] = a["temperature"]
try:
    if a["wire"] == "gemini":
        from agent.gemini_native_adapter import GeminiNativeClient
        c = GeminiNativeClient(api_key=a["key"], base_url=a["base"])
    else:
        from agent.anthropic_adapter import build_anthropic_client
        from agent.auxiliary_client import AnthropicAuxiliaryClient
        # The client Hermes builds for the real host, pointed at the fake.
        real = build_anthropic_client(a["key"], a["as_base"]).with_options(base_url=a["base"])
        c = AnthropicAuxiliaryClient(real, a["model"], a["key"], a["base"], is_oauth=a["is_oauth"])
    r = c.chat.completions.create(**kw)
    print(json.dumps({"content": r.choices[0].message.content}))
except Exception as e:
    print(json.dumps({"error": str(e)}))
"#;
    let py = hermes_python("agent.anthropic_adapter, anthropic, agent.gemini_native_adapter");
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(py)
        .args(["-c", SCRIPT, &args.to_string()])
        .env("HOME", home.path())
        .env("HERMES_HOME", home.path().join(".hermes"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|_| {
        panic!(
            "Hermes' client printed no answer: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// These headers, as sent, must be the same in both requests.
fn same_headers(ours: &Req, theirs: &Req, names: &[&str]) {
    for h in names {
        assert_eq!(ours.header(h), theirs.header(h), "header {h}");
    }
    assert_eq!(ours.path, theirs.path);
}

#[test]
fn provider_table_agrees_with_hermes_registry() {
    const DUMP: &str = r#"
import inspect, json, re
import agent.auxiliary_client as ac, agent.anthropic_adapter as aa
from hermes_cli import auth
from agent.models_dev import PROVIDER_TO_MODELS_DEV
from providers import get_provider_profile, list_providers
reg = {}
for k, p in auth.PROVIDER_REGISTRY.items():
    prof = get_provider_profile(k)
    reg[k] = {"auth_type": p.auth_type, "base_url": p.inference_base_url,
              "key_vars": list(p.api_key_env_vars), "base_url_var": p.base_url_env_var or None,
              "aux_model": ac._get_aux_model_for_provider(k),
              "headers": dict(prof.default_headers) if prof and prof.default_headers else {}}
src = inspect.getsource(ac.resolve_vision_provider_client)
print(json.dumps({"registry": reg,
  "profiles": [p.name for p in list_providers()],
  "aux_aliases": ac._PROVIDER_ALIASES, "vision_models": ac._PROVIDER_VISION_MODELS,
  "without_vision": sorted(ac._PROVIDERS_WITHOUT_VISION), "models_dev": PROVIDER_TO_MODELS_DEV,
  "common_betas": aa._COMMON_BETAS, "oauth_betas": aa._OAUTH_ONLY_BETAS,
  "tool_streaming_beta": aa._TOOL_STREAMING_BETA,
  "cc_version": aa._CLAUDE_CODE_VERSION_FALLBACK, "cc_prefix": aa._CLAUDE_CODE_SYSTEM_PREFIX,
  "kimi_code": auth.KIMI_CODE_BASE_URL, "lmstudio": auth.LMSTUDIO_NOAUTH_PLACEHOLDER,
  "zai_urls": re.findall(r'"(https://[^"]+)"', re.search(r"zai_openai_urls = \[(.*?)\]", src, re.S).group(1))}))
"#;
    let py = hermes_python("hermes_cli.auth, providers, agent.models_dev");
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(py)
        .args(["-c", DUMP])
        .env("HOME", home.path())
        .env("HERMES_HOME", home.path().join(".hermes"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let h: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pairs = |v: &Value| -> Vec<(String, String)> {
        let mut p: Vec<_> = v
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        p.sort();
        p
    };
    let ours = |t: &[(&str, &str)]| -> Vec<(String, String)> {
        let mut p: Vec<_> = t
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        p.sort();
        p
    };
    // Every registry entry is in the table, a second name of one, handled
    // by its own path (nous, openai-codex), or said to be uncallable.
    let reg = h["registry"].as_object().unwrap();
    let mut checked = 0;
    for (name, r) in reg {
        let alias = table::REGISTRY_ALIASES
            .iter()
            .find(|(a, _)| a == name)
            .map(|(_, c)| *c);
        if let Some(p) = table::API_KEY_PROVIDERS
            .iter()
            .find(|p| p.name == name || Some(p.name) == alias)
        {
            assert_eq!(r["auth_type"], "api_key", "{name}");
            assert_eq!(r["base_url"], p.base_url, "{name}");
            assert_eq!(r["key_vars"], json!(p.key_vars), "{name}");
            // Hermes' auxiliary Anthropic path ignores ANTHROPIC_BASE_URL.
            if name != "anthropic" {
                assert_eq!(r["base_url_var"], json!(p.base_url_var), "{name}");
            }
            assert_eq!(r["aux_model"], p.aux_model, "{name}");
            assert_eq!(pairs(&r["headers"]), ours(p.headers), "{name}");
            checked += 1;
        } else if ["nous", "openai-codex"].contains(&name.as_str()) {
            assert_ne!(r["auth_type"], "api_key");
        } else {
            assert!(
                table::uncallable(name).is_some(),
                "registry provider {name} is neither in the vision table nor listed as uncallable"
            );
        }
    }
    assert!(checked >= 30, "{checked}");
    for (name, _) in table::UNCALLABLE {
        assert!(
            reg.contains_key(*name) || h["profiles"].as_array().unwrap().contains(&json!(name)),
            "{name} is not a Hermes provider"
        );
    }
    assert_eq!(pairs(&h["aux_aliases"]), ours(table::AUX_ALIASES));
    assert_eq!(pairs(&h["vision_models"]), ours(table::VISION_MODELS));
    assert_eq!(pairs(&h["models_dev"]), ours(table::MODELS_DEV));
    assert_eq!(h["without_vision"], json!(table::WITHOUT_VISION));
    assert_eq!(h["common_betas"], json!(table::COMMON_BETAS));
    assert_eq!(h["oauth_betas"], json!(table::OAUTH_ONLY_BETAS));
    assert_eq!(h["tool_streaming_beta"], table::TOOL_STREAMING_BETA);
    assert_eq!(h["cc_version"], table::CLAUDE_CODE_VERSION);
    assert_eq!(h["cc_prefix"], table::CLAUDE_CODE_SYSTEM_PREFIX);
    assert_eq!(h["kimi_code"], table::KIMI_CODE_BASE_URL);
    assert_eq!(h["lmstudio"], table::LMSTUDIO_NOAUTH_PLACEHOLDER);
    assert_eq!(h["zai_urls"], json!(table::ZAI_OPENAI_URLS));
}

#[tokio::test]
async fn openai_wire_providers_zai_vision_model_xai_main_model_gmi_headers() {
    let srv = fake();
    // Z.AI as the main provider: its dedicated vision model wins.
    let h = mk(
        "model:\n  provider: glm\n  default: glm-4.6\n",
        &[
            ("ZAI_API_KEY", "zai-key"),
            ("GLM_BASE_URL", &format!("{}/api/paas/v4", srv.base())),
        ],
        None,
    );
    let (p, why) = h.choice();
    assert_eq!(p, "zai (glm-5v-turbo)");
    assert!(why.contains("model.provider: zai"), "{why}");
    assert_seen(&h.analyze().await);
    let r = last(&srv);
    assert_eq!(r.path, "/api/paas/v4/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer zai-key"));
    let b = r.json_or_null();
    assert_eq!(b["model"], "glm-5v-turbo");
    assert!(
        b["messages"][0]["content"][1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    // xAI: the main model.
    let h = mk(
        "model:\n  provider: xai\n  default: grok-4\n",
        &[
            ("XAI_API_KEY", "xai-key"),
            ("XAI_BASE_URL", &format!("{}/v1", srv.base())),
        ],
        None,
    );
    assert_eq!(h.choice().0, "xai (grok-4)");
    assert_seen(&h.analyze().await);
    let r = last(&srv);
    assert_eq!(r.header("authorization"), Some("Bearer xai-key"));
    assert_eq!(r.json_or_null()["model"], "grok-4");
    // Explicit gmi: its default aux model and its profile's User-Agent.
    let h = mk(
        "auxiliary:\n  vision:\n    provider: gmi-cloud\n",
        &[
            ("GMI_API_KEY", "gmi-key"),
            ("GMI_BASE_URL", &format!("{}/v1", srv.base())),
        ],
        None,
    );
    assert_eq!(h.choice().0, "gmi (google/gemini-3.1-flash-lite-preview)");
    assert_seen(&h.analyze().await);
    assert_eq!(last(&srv).header("user-agent"), Some("HermesAgent/0.19.0"));
    // Explicit Kimi: its default aux model, its profile's User-Agent, and
    // no temperature (Kimi's server picks it).
    let h = mk(
        "auxiliary:\n  vision:\n    provider: moonshot\n",
        &[
            ("KIMI_API_KEY", "kimi-key"),
            ("KIMI_BASE_URL", &format!("{}/v1", srv.base())),
        ],
        None,
    );
    assert_eq!(h.choice().0, "kimi-coding (kimi-k2-turbo-preview)");
    assert_seen(&h.analyze().await);
    let r = last(&srv);
    assert_eq!(r.header("user-agent"), Some("hermes-agent/1.0"));
    assert!(
        r.json_or_null().get("temperature").is_none(),
        "{}",
        r.json_or_null()
    );
    // Explicit xai with no model anywhere: xAI has no default aux model.
    let h = mk(
        "auxiliary:\n  vision:\n    provider: grok\n",
        &[("XAI_API_KEY", "k1234")],
        None,
    );
    let Availability::Unavailable(msg) = h.availability() else {
        panic!("should be unavailable")
    };
    assert!(
        msg.contains("provider=xai") && msg.contains("auxiliary.vision.model"),
        "{msg}"
    );
    // ... unless the main model names one (Hermes' aux model, then main model).
    let h = mk(
        "model:\n  default: grok-4-fast\nauxiliary:\n  vision:\n    provider: xai\n",
        &[("XAI_API_KEY", "k1234")],
        None,
    );
    assert_eq!(h.choice().0, "xai (grok-4-fast)");
    // Explicit deepseek without its key: Hermes' text naming the variable.
    let h = mk("auxiliary:\n  vision:\n    provider: deepseek\n", &[], None);
    let Availability::Unavailable(msg) = h.availability() else {
        panic!("should be unavailable")
    };
    assert!(msg.contains("DEEPSEEK_API_KEY"), "{msg}");
}

#[tokio::test]
async fn anthropic_api_key_matches_hermes_sdk_client() {
    let srv = fake();
    let yaml = format!(
        "auxiliary:\n  vision:\n    provider: claude\n    base_url: {}\n",
        srv.base()
    );
    let h = mk(&yaml, &[("ANTHROPIC_API_KEY", "sk-ant-api03-test")], None);
    assert_eq!(
        h.choice().0,
        "anthropic (claude-haiku-4-5-20251001, Anthropic Messages)"
    );
    assert_seen(&h.analyze().await);
    let ours = last(&srv);
    assert_eq!(ours.path, "/v1/messages");
    assert_eq!(ours.header("x-api-key"), Some("sk-ant-api03-test"));
    assert_eq!(ours.header("authorization"), None);
    assert_eq!(ours.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        ours.header("anthropic-beta"),
        Some("interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14")
    );
    let b = ours.json_or_null();
    assert_eq!(b["model"], "claude-haiku-4-5-20251001");
    assert_eq!(b["max_tokens"], 2000);
    assert_eq!(b["temperature"], 0.1);
    assert_eq!(b["stream"], true);
    assert_eq!(b["messages"][0]["content"][1]["type"], "image");
    assert_eq!(
        b["messages"][0]["content"][1]["source"]["media_type"],
        "image/png"
    );
    assert!(b.get("system").is_none());
    // Hermes' client: the same request, the same answer from the fake.
    let content = &b["messages"][0]["content"];
    let image = format!(
        "data:image/png;base64,{}",
        content[1]["source"]["data"].as_str().unwrap()
    );
    let got = hermes_client(json!({"wire": "anthropic", "key": "sk-ant-api03-test",
        "as_base": "https://api.anthropic.com", "base": srv.base(), "is_oauth": false,
        "model": "claude-haiku-4-5-20251001", "prompt": content[0]["text"], "image": image,
        "temperature": 0.1, "max_tokens": 2000}));
    assert_eq!(got, json!({"content": "seen"}));
    let theirs = last(&srv);
    assert_eq!(theirs.json_or_null(), b, "Hermes' request body");
    same_headers(
        &ours,
        &theirs,
        &[
            "x-api-key",
            "authorization",
            "anthropic-version",
            "anthropic-beta",
            "x-app",
        ],
    );
    // A rejected key: the SDK's error text, Hermes' hint.
    let h = mk(&yaml, &[("ANTHROPIC_API_KEY", "bad-key")], None);
    let out = h.analyze().await;
    assert!(out.is_error);
    let v = out.first_json().unwrap();
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("Error analyzing image: Error code: 401 - "),
        "{v}"
    );
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("authentication_error")
    );
}

#[tokio::test]
async fn anthropic_oauth_from_the_credential_pool_matches_hermes() {
    let srv = fake();
    // Main provider anthropic, an OAuth token in Hermes' credential pool
    // (whose base_url is the fake): Bearer, OAuth betas, Claude Code's
    // identity and system prompt; Opus 4.7 takes no temperature.
    let auth = json!({"credential_pool": {"anthropic": [
        {"auth_type": "oauth", "access_token": "sk-ant-oat01-pooled", "base_url": srv.base()}]}});
    let h = mk(
        "model:\n  provider: anthropic\n  default: claude-opus-4.7\n",
        &[],
        Some(auth),
    );
    assert_eq!(
        h.choice().0,
        "anthropic (claude-opus-4.7, Anthropic Messages)"
    );
    assert_seen(&h.analyze().await);
    let ours = last(&srv);
    assert_eq!(
        ours.header("authorization"),
        Some("Bearer sk-ant-oat01-pooled")
    );
    assert_eq!(ours.header("x-api-key"), None);
    assert_eq!(
        ours.header("anthropic-beta"),
        Some(
            "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14,claude-code-20250219,oauth-2025-04-20"
        )
    );
    assert_eq!(
        ours.header("user-agent"),
        Some("claude-code/2.1.74 (external, cli)")
    );
    assert_eq!(ours.header("x-app"), Some("cli"));
    let b = ours.json_or_null();
    assert_eq!(b["model"], "claude-opus-4-7");
    assert!(b.get("temperature").is_none(), "{b}");
    assert_eq!(
        b["system"],
        json!([{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."}])
    );
    let content = &b["messages"][0]["content"];
    let image = format!(
        "data:image/png;base64,{}",
        content[1]["source"]["data"].as_str().unwrap()
    );
    let got = hermes_client(json!({"wire": "anthropic", "key": "sk-ant-oat01-pooled",
        "as_base": "https://api.anthropic.com", "base": srv.base(), "is_oauth": true,
        "model": "claude-opus-4.7", "prompt": content[0]["text"], "image": image,
        "temperature": 0.1, "max_tokens": 2000}));
    assert_eq!(got, json!({"content": "seen"}));
    let theirs = last(&srv);
    assert_eq!(theirs.json_or_null(), b, "Hermes' request body");
    same_headers(
        &ours,
        &theirs,
        &[
            "authorization",
            "anthropic-version",
            "anthropic-beta",
            "x-app",
            "user-agent",
        ],
    );
}

#[tokio::test]
async fn minimax_anthropic_endpoint_uses_bearer_and_its_betas() {
    let srv = fake();
    let h = mk(
        "model:\n  provider: minimax\n  default: MiniMax-M2.7\n",
        &[
            ("MINIMAX_API_KEY", "mm-key"),
            ("MINIMAX_BASE_URL", &format!("{}/anthropic", srv.base())),
        ],
        None,
    );
    assert_eq!(h.choice().0, "minimax (MiniMax-M2.7, Anthropic Messages)");
    assert_seen(&h.analyze().await);
    let ours = last(&srv);
    assert_eq!(ours.path, "/anthropic/v1/messages");
    assert_eq!(ours.header("authorization"), Some("Bearer mm-key"));
    assert_eq!(ours.header("x-api-key"), None);
    assert_eq!(
        ours.header("anthropic-beta"),
        Some("interleaved-thinking-2025-05-14")
    );
    let b = ours.json_or_null();
    assert_eq!(
        (b["model"].as_str(), b["temperature"].as_f64()),
        (Some("MiniMax-M2.7"), Some(0.1))
    );
    // Hermes' client built for MiniMax's real endpoint sends the same.
    let content = &b["messages"][0]["content"];
    let image = format!(
        "data:image/png;base64,{}",
        content[1]["source"]["data"].as_str().unwrap()
    );
    let got = hermes_client(json!({"wire": "anthropic", "key": "mm-key",
        "as_base": "https://api.minimax.io/anthropic", "base": format!("{}/anthropic", srv.base()),
        "is_oauth": false, "model": "MiniMax-M2.7", "prompt": content[0]["text"], "image": image,
        "temperature": 0.1, "max_tokens": 2000}));
    assert_eq!(got, json!({"content": "seen"}));
    let theirs = last(&srv);
    assert_eq!(theirs.json_or_null(), b, "Hermes' request body");
    same_headers(
        &ours,
        &theirs,
        &[
            "authorization",
            "x-api-key",
            "anthropic-version",
            "anthropic-beta",
        ],
    );
}

#[tokio::test]
async fn gemini_native_matches_hermes_gemini_client() {
    let srv = fake();
    let base = format!("{}/v1beta", srv.base());
    let env = [
        ("GOOGLE_API_KEY", "g-key"),
        ("GEMINI_API_KEY", "other"),
        ("GEMINI_BASE_URL", base.as_str()),
    ];
    let h = mk(
        "model:\n  provider: google\n  default: google/gemini-3-flash-preview\n",
        &env,
        None,
    );
    assert_eq!(
        h.choice().0,
        "gemini (gemini-3-flash-preview, Gemini generateContent)"
    );
    assert_seen(&h.analyze().await);
    let ours = last(&srv);
    assert_eq!(
        ours.path,
        "/v1beta/models/gemini-3-flash-preview:generateContent"
    );
    assert_eq!(ours.header("x-goog-api-key"), Some("g-key"));
    assert_eq!(ours.header("authorization"), None);
    let b = ours.json_or_null();
    let parts = &b["contents"][0]["parts"];
    assert_eq!(parts[1]["inlineData"]["mimeType"], "image/png");
    assert_eq!(
        b["generationConfig"],
        json!({"temperature": 0.1, "maxOutputTokens": 2000})
    );
    let image = format!(
        "data:image/png;base64,{}",
        parts[1]["inlineData"]["data"].as_str().unwrap()
    );
    let args = json!({"wire": "gemini", "key": "g-key", "base": base,
        "model": "gemini-3-flash-preview", "prompt": parts[0]["text"], "image": image,
        "temperature": 0.1, "max_tokens": 2000});
    assert_eq!(hermes_client(args.clone()), json!({"content": "seen"}));
    let theirs = last(&srv);
    assert_eq!(theirs.json_or_null(), b, "Hermes' request body");
    same_headers(
        &ours,
        &theirs,
        &[
            "x-goog-api-key",
            "user-agent",
            "x-goog-api-client",
            "accept",
        ],
    );
    // A rejected key: Hermes' GeminiAPIError text, word for word.
    let mut bad = args;
    bad["key"] = json!("bad-key");
    let theirs = hermes_client(bad)["error"].as_str().unwrap().to_string();
    assert_eq!(
        theirs,
        "Gemini HTTP 400 (INVALID_ARGUMENT): API key not valid. Please pass a valid API key."
    );
    let h = mk(
        "model:\n  provider: gemini\n  default: gemini-3-flash-preview\n",
        &[
            ("GEMINI_API_KEY", "bad-key"),
            ("GEMINI_BASE_URL", base.as_str()),
        ],
        None,
    );
    let out = h.analyze().await;
    assert!(out.is_error);
    let v = out.first_json().unwrap();
    assert_eq!(v["error"], format!("Error analyzing image: {theirs}"));
    assert_eq!(v["success"], false);
    assert!(v["analysis"].as_str().unwrap().contains(&theirs));
}

#[tokio::test]
async fn text_only_main_model_is_skipped_by_the_models_dev_cache() {
    let srv = fake();
    let cache = json!({"deepseek": {"models": {
        "deepseek-chat": {"attachment": true, "modalities": {"input": ["text"], "output": ["text"]}},
        "deepseek-vl": {"attachment": true}}}});
    let yaml = "model:\n  provider: deepseek\n  default: deepseek-chat\n";
    let ds_base = format!("{}/v1", srv.base());
    let env = [
        ("DEEPSEEK_API_KEY", "ds-key"),
        ("DEEPSEEK_BASE_URL", &ds_base),
    ];
    let write_cache = |h: &super::support::vision::H| {
        std::fs::write(
            h.dir.path().join("hermes/models_dev_cache.json"),
            cache.to_string(),
        )
        .unwrap();
    };
    // Text-only by models.dev, no aggregator: native, and why.
    let h = mk(yaml, &env, None);
    assert_eq!(h.choice().0, "deepseek (deepseek-chat)");
    write_cache(&h);
    let (p, why) = h.choice();
    assert_eq!(p, "native");
    assert!(
        why.contains("deepseek-chat") && why.contains("text-only"),
        "{why}"
    );
    let out = h.analyze().await;
    assert!(!out.is_error);
    assert!(text(&out).contains("natively"));
    assert_eq!(srv.count(), 0, "the text-only model was not called");
    // With OpenRouter set: OpenRouter, saying why the main one was skipped.
    let mut with_or = env.to_vec();
    with_or.push(("OPENROUTER_API_KEY", "sk-or"));
    let h = mk(yaml, &with_or, None);
    write_cache(&h);
    let (p, why) = h.choice();
    assert_eq!(p, "openrouter (google/gemini-3-flash-preview)");
    assert!(why.contains("text-only"), "{why}");
    // A listed vision model (attachment flag) and the config override win.
    let h = mk(
        "model:\n  provider: deepseek\n  default: DeepSeek-VL\n",
        &env,
        None,
    );
    write_cache(&h);
    assert_eq!(h.choice().0, "deepseek (DeepSeek-VL)");
    let h = mk(&format!("{yaml}  supports_vision: true\n"), &env, None);
    write_cache(&h);
    assert_eq!(h.choice().0, "deepseek (deepseek-chat)");
    assert_seen(&h.analyze().await);
    assert_eq!(last(&srv).header("authorization"), Some("Bearer ds-key"));
}

#[tokio::test]
async fn uncallable_and_unknown_main_providers() {
    let h = mk(
        "model:\n  provider: bedrock\n  default: anthropic.claude-opus-4-7\n",
        &[("OPENROUTER_API_KEY", "sk-or")],
        None,
    );
    let (p, why) = h.choice();
    assert_eq!(p, "native");
    assert!(why.contains("AWS"), "{why}");
    // A name Hermes' router does not know: on to the aggregators.
    let h = mk(
        "model:\n  provider: my-own\n  default: m\n",
        &[("OPENROUTER_API_KEY", "sk-or")],
        None,
    );
    let (p, why) = h.choice();
    assert_eq!(p, "openrouter (google/gemini-3-flash-preview)");
    assert!(why.contains("my-own"), "{why}");
    // A main API-key provider without its key: on to the aggregators too.
    let h = mk(
        "model:\n  provider: zai\n  default: glm-4.6\n",
        &[("OPENROUTER_API_KEY", "sk-or")],
        None,
    );
    let (p, why) = h.choice();
    assert_eq!(p, "openrouter (google/gemini-3-flash-preview)");
    assert!(why.contains("GLM_API_KEY"), "{why}");
    // Explicit Z.AI: Hermes pins its OpenAI-wire endpoint.
    let h = mk(
        "auxiliary:\n  vision:\n    provider: zai\n    model: glm-5v-turbo\n",
        &[("GLM_API_KEY", "zai-key")],
        None,
    );
    assert_eq!(h.choice().0, "zai (glm-5v-turbo)");
    // ... with auxiliary.vision.api_key as its key, and its default model.
    let h = mk(
        "auxiliary:\n  vision:\n    provider: zai\n    api_key: task-key\n",
        &[],
        None,
    );
    assert_eq!(h.choice().0, "zai (glm-4.5-flash)");
}

/// Claude Code's own sign-in (`~/.claude/.credentials.json`, under the `HOME`
/// the server sees) in Hermes' token order: a valid, refreshable one beats a
/// static OAuth token in the environment and is used when nothing else is
/// set; an expired one is skipped (never refreshed here), so the API key runs.
#[tokio::test]
async fn claude_code_sign_in_in_hermes_token_order() {
    let srv = fake();
    let home = tempfile::tempdir().unwrap();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let write = |expires: u64| {
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        std::fs::write(
            home.path().join(".claude/.credentials.json"),
            json!({"claudeAiOauth": {"accessToken": "sk-ant-oat01-claude", "refreshToken": "rt",
                   "expiresAt": expires}})
            .to_string(),
        )
        .unwrap();
    };
    let yaml = format!(
        "auxiliary:\n  vision:\n    provider: anthropic\n    base_url: {}\n    model: claude-haiku-4-5\n",
        srv.base()
    );
    let h_home = home.path().to_string_lossy().to_string();
    let bearer = |env: &[(&str, &str)]| {
        let h = mk(&yaml, env, None);
        async move {
            assert_seen(&h.analyze().await);
        }
    };
    write(now_ms + 3_600_000);
    bearer(&[
        ("HOME", &h_home),
        ("ANTHROPIC_TOKEN", "sk-ant-oat01-static"),
    ])
    .await;
    assert_eq!(
        last(&srv).header("authorization"),
        Some("Bearer sk-ant-oat01-claude")
    );
    bearer(&[("HOME", &h_home)]).await;
    assert_eq!(
        last(&srv).header("authorization"),
        Some("Bearer sk-ant-oat01-claude")
    );
    write(now_ms - 1000);
    bearer(&[("HOME", &h_home), ("ANTHROPIC_API_KEY", "sk-ant-api03-key")]).await;
    let r = last(&srv);
    assert_eq!(r.header("x-api-key"), Some("sk-ant-api03-key"));
    assert_eq!(r.header("authorization"), None);
}
