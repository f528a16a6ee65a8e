//! Hermes' auxiliary *text* tasks — long browser snapshots summarised
//! (`web_extract`) and xAI speech tags rewritten (`tts_audio_tags`) — run on
//! the model Hermes' `_resolve_auto` picks: the main provider and main model
//! (`model.provider`, `model.default`), whatever its type. One loopback
//! server plays every endpoint (a custom OpenAI-compatible server, Z.AI, the
//! Codex Responses endpoint, xAI's speech API) and records what it got;
//! Hermes' own Python (`text_to_speech_tool`, `call_llm(task="web_extract")`)
//! runs against the same server and must send the same requests.

use std::process::Command;
use std::sync::OnceLock;

use base64::Engine as _;
use serde_json::{Value, json};

use super::support::browser::{Browsing, page_server};
use super::support::common::*;
use super::support::fake::*;
use super::support::media::*;
use super::support::prereq::require_chromium;
use super::support::serve::Serve;
use super::support::tts::{hermes_tts, ours};

const ANSWER: &str = "[laugh] Hello there, friend. [pause] How are you today?";

fn chat_answer(content: &str) -> Value {
    json!({"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
           "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content}}]})
}

/// A Codex Responses event stream whose final response says `text`.
fn responses_stream(text: &str) -> Vec<u8> {
    let resp = json!({"id": "r1", "object": "response", "created_at": 1, "model": "gpt-5.4-mini",
        "status": "completed", "parallel_tool_calls": false, "tool_choice": "auto", "tools": [],
        "output": [{"type": "message", "id": "m1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}]});
    let events = [
        json!({"type": "response.output_text.delta", "delta": text, "item_id": "m1",
               "output_index": 0, "content_index": 0, "sequence_number": 1}),
        json!({"type": "response.completed", "response": resp, "sequence_number": 2}),
    ];
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect::<String>()
        .into_bytes()
}

/// An Anthropic Messages event stream saying `text` (Hermes streams).
fn messages_stream(text: &str) -> Vec<u8> {
    let events = [
        json!({"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant",
               "model": "m", "content": [], "stop_reason": null,
               "usage": {"input_tokens": 1, "output_tokens": 0}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ];
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect::<String>()
        .into_bytes()
}

fn tiny_wav() -> Vec<u8> {
    wav_24k_mono(vec![0u8; 4800])
}

fn server(answer: &'static str) -> TestServer {
    let chat = Resp::json(200, chat_answer(answer));
    Routes::new()
        .on("POST", "/main/v1/chat/completions", chat.clone())
        .on("POST", "/zai/v4/chat/completions", chat)
        .on(
            "POST",
            "/codex/responses",
            Resp::sse(responses_stream(answer)),
        )
        .on(
            "POST",
            "/anthropic/v1/messages",
            Resp::sse(messages_stream(answer)),
        )
        .on("POST", "/v1/tts", Resp::bytes("audio/wav", tiny_wav()))
        .start()
}

/// An unsigned JWT carrying an expiry an hour ahead and a ChatGPT account id.
fn chatgpt_jwt() -> String {
    let b = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    format!(
        "{}.{}.sig",
        b(json!({"alg": "none"})),
        b(json!({"exp": exp, "https://api.openai.com/auth": {"chatgpt_account_id": "acct-42"}}))
    )
}

/// Hermes' auth.json with a ChatGPT sign-in in the credential pool, its
/// `base_url` pointing at the fake.
fn codex_sign_in(env: &TestEnv, base: &str) -> String {
    let tok = chatgpt_jwt();
    env.write_hermes(
        "auth.json",
        &json!({"version": 1, "credential_pool": {"openai-codex": [{
            "id": "e1", "label": "chatgpt", "auth_type": "oauth", "priority": 0,
            "source": "manual", "access_token": tok, "refresh_token": "rt-1",
            "base_url": format!("{base}/codex")}]}})
        .to_string(),
    );
    tok
}

const CODEX_HEADERS: [&str; 4] = [
    "authorization",
    "originator",
    "chatgpt-account-id",
    "user-agent",
];

/// Our requests `o` against Hermes' `h`, request by request: same paths and
/// bodies (the auxiliary chat body's `model`, `messages`, `temperature`,
/// `max_tokens`; Responses and speech bodies whole) and auth headers.
fn assert_same_requests(h: &[Req], o: &[Req]) {
    assert_eq!(
        h.iter().map(|r| &r.target).collect::<Vec<_>>(),
        o.iter().map(|r| &r.target).collect::<Vec<_>>(),
        "hermes {h:#?}\nours {o:#?}"
    );
    for (h, o) in h.iter().zip(o) {
        let (hb, ob) = (h.json(), o.json());
        if o.target.ends_with("/chat/completions") {
            for k in ["model", "messages", "temperature", "max_tokens"] {
                assert_eq!(ob.get(k), hb.get(k), "auxiliary request {k}");
            }
            assert_eq!(o.header("authorization"), h.header("authorization"));
        } else {
            assert_eq!(ob, hb, "{} body", o.target);
        }
        if o.target.ends_with("/responses") {
            for k in CODEX_HEADERS {
                assert_eq!(o.header(k), h.header(k), "header {k}");
            }
        }
    }
}

fn xai_tts(main: &str, base: &str) -> String {
    format!(
        "{main}tts:\n  provider: xai\n  xai:\n    auto_speech_tags: true\n    base_url: {base}/v1\n"
    )
}

/// Hermes' `text_to_speech_tool`, then ours; both succeed, send the same
/// requests, and speak the rewritten text. Returns our requests.
fn speak_like_hermes(env: &TestEnv, srv: &TestServer, vars: &[(&str, &str)]) -> Vec<Req> {
    let text = "Hello there, friend. How are you today?";
    let before = srv.reqs().len();
    let theirs = hermes_tts(env, vars, text, &env.dir.path().join("hermes.wav"));
    let n = srv.reqs().len() - before;
    let v = ours(env, vars, text, &env.dir.path().join("ours.wav"));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(theirs["success"], true, "{theirs}");
    assert!(v.get("note").is_none_or(Value::is_null), "{v}");
    let reqs = srv.reqs()[before..].to_vec();
    assert_eq!(reqs.len(), 2 * n, "{reqs:#?}");
    let ours = reqs[n..].to_vec();
    assert_same_requests(&reqs[..n], &reqs[n..]);
    assert_eq!(ours.last().unwrap().target, "/v1/tts");
    assert_eq!(ours.last().unwrap().json()["text"], ANSWER, "{ours:#?}");
    assert!(v.get("note").is_none_or(Value::is_null), "{v}");
    ours
}

#[test]
fn aux_text_tts_tags_use_the_main_custom_endpoint_and_model() {
    let srv = server(ANSWER);
    let env = TestEnv::new();
    let main = format!(
        "model:\n  provider: custom\n  default: main-model\n  base_url: {}/main/v1\n  api_key: sk-main\n",
        srv.base()
    );
    env.write_hermes("config.yaml", &xai_tts(&main, &srv.base()));
    let reqs = speak_like_hermes(&env, &srv, &[("XAI_API_KEY", "xai-key")]);
    assert_eq!(reqs[0].target, "/main/v1/chat/completions");
    let chat = reqs[0].json();
    assert_eq!(chat["model"], "main-model");
    assert_eq!(chat["temperature"], 0.7);
    assert_eq!(chat["messages"][0]["role"], "system");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer sk-main"));
}

#[test]
fn aux_text_tts_tags_use_an_api_key_main_provider() {
    let srv = server(ANSWER);
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &xai_tts("model:\n  provider: zai\n  default: glm-5.1\n", &srv.base()),
    );
    let zai = format!("{}/zai/v4", srv.base());
    let vars = [
        ("XAI_API_KEY", "xai-key"),
        ("GLM_API_KEY", "zk-1234"),
        ("GLM_BASE_URL", zai.as_str()),
    ];
    let reqs = speak_like_hermes(&env, &srv, &vars);
    assert_eq!(reqs[0].target, "/zai/v4/chat/completions");
    assert_eq!(reqs[0].json()["model"], "glm-5.1");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer zk-1234"));
}

#[test]
fn aux_text_tts_tags_use_an_anthropic_wire_main_provider() {
    let srv = server(ANSWER);
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &xai_tts(
            "model:\n  provider: minimax\n  default: MiniMax-M2.7\n",
            &srv.base(),
        ),
    );
    let mm = format!("{}/anthropic", srv.base());
    let vars = [
        ("XAI_API_KEY", "xai-key"),
        ("MINIMAX_API_KEY", "mm-1234"),
        ("MINIMAX_BASE_URL", mm.as_str()),
    ];
    let reqs = speak_like_hermes(&env, &srv, &vars);
    assert_eq!(reqs[0].target, "/anthropic/v1/messages");
    let body = reqs[0].json();
    assert_eq!(body["model"], "MiniMax-M2.7");
    assert!(
        body["system"]
            .as_str()
            .unwrap()
            .starts_with("You rewrite transcripts")
    );
    assert_eq!(body["max_tokens"], 131072);
}

#[test]
fn aux_text_tts_tags_run_on_codex_with_the_chatgpt_sign_in() {
    let srv = server(ANSWER);
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &xai_tts(
            "model:\n  provider: openai-codex\n  default: gpt-5.4-mini\n",
            &srv.base(),
        ),
    );
    let tok = codex_sign_in(&env, &srv.base());
    let reqs = speak_like_hermes(&env, &srv, &[("XAI_API_KEY", "xai-key")]);
    assert_eq!(reqs[0].target, "/codex/responses");
    let body = reqs[0].json();
    assert_eq!(body["model"], "gpt-5.4-mini");
    assert_eq!(body["stream"], true);
    assert_eq!(body["store"], false);
    assert!(
        body["instructions"]
            .as_str()
            .unwrap()
            .starts_with("You rewrite transcripts")
    );
    assert_eq!(body["input"][0]["role"], "user");
    assert_eq!(
        reqs[0].header("authorization"),
        Some(format!("Bearer {tok}").as_str())
    );
    assert_eq!(reqs[0].header("chatgpt-account-id"), Some("acct-42"));
    assert_eq!(reqs[0].header("originator"), Some("codex_cli_rs"));
}

#[test]
fn aux_text_tts_tags_without_any_model_keep_the_local_pass() {
    let srv = server(ANSWER);
    let env = TestEnv::new();
    // xAI has no default auxiliary model, so Hermes' chain finds nothing.
    env.write_hermes("config.yaml", &xai_tts("", &srv.base()));
    let text = "Hello there, friend. How are you today?";
    let v = ours(
        &env,
        &[("XAI_API_KEY", "xai-key")],
        text,
        &env.dir.path().join("n.wav"),
    );
    assert_eq!(v["success"], true, "{v}");
    let note = v["note"].as_str().unwrap();
    assert!(
        note.contains("auxiliary rewrite did not run") && note.contains("tts_audio_tags"),
        "{v}"
    );
    let reqs = srv.reqs();
    assert_eq!(reqs.len(), 1, "{reqs:#?}");
    assert_eq!(
        reqs[0].json()["text"],
        "Hello there, friend. [pause] How are you today?"
    );
}

/// `hermes-mcp tools --json`'s provider lines.
fn providers(env: &TestEnv, vars: &[(&str, &str)]) -> Vec<Value> {
    let mut c = env.cmd();
    c.args(["tools", "--json"]);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["providers"].as_array().unwrap().clone()
}

fn job<'a>(ps: &'a [Value], job: &str) -> &'a Value {
    ps.iter()
        .find(|p| p["job"] == job)
        .unwrap_or_else(|| panic!("no {job} in {ps:#?}"))
}

#[test]
fn aux_text_tools_say_which_model_summarises_and_tags() {
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        "model:\n  provider: openrouter\n  default: anthropic/claude-sonnet-4.6\ntts:\n  provider: xai\n  xai:\n    auto_speech_tags: true\n",
    );
    let vars = [("OPENROUTER_API_KEY", "or-key"), ("XAI_API_KEY", "x")];
    let ps = providers(&env, &vars);
    let b = job(&ps, "browser_snapshot summaries");
    assert_eq!(
        b["provider"], "openrouter (anthropic/claude-sonnet-4.6)",
        "{b}"
    );
    assert!(b["why"].as_str().unwrap().contains("main provider"), "{b}");
    let t = job(&ps, "text_to_speech tags");
    assert_eq!(
        t["provider"], "openrouter (anthropic/claude-sonnet-4.6)",
        "{t}"
    );
    assert!(
        t["why"]
            .as_str()
            .unwrap()
            .contains("tts.xai.auto_speech_tags"),
        "{t}"
    );

    // Codex as the main provider, signed in: the Responses wire.
    env.write_hermes(
        "config.yaml",
        "model:\n  provider: openai-codex\n  default: gpt-5.4-mini\n",
    );
    codex_sign_in(&env, "http://127.0.0.1:9");
    let ps = providers(&env, &[]);
    let b = job(&ps, "browser_snapshot summaries");
    assert_eq!(
        b["provider"], "openai-codex (gpt-5.4-mini, Codex Responses)",
        "{b}"
    );
    assert!(
        b["why"].as_str().unwrap().contains("ChatGPT sign-in"),
        "{b}"
    );
    // Tags are not enabled: no tag line.
    assert!(
        ps.iter().all(|p| p["job"] != "text_to_speech tags"),
        "{ps:#?}"
    );

    // Nothing usable: none, and why.
    std::fs::remove_file(env.hermes_home().join("auth.json")).unwrap();
    let ps = providers(&env, &[]);
    let b = job(&ps, "browser_snapshot summaries");
    assert_eq!(b["provider"], "none", "{b}");
    let why = b["why"].as_str().unwrap();
    assert!(
        why.contains("truncated") && why.contains("no ChatGPT sign-in"),
        "{b}"
    );
}

fn snap(v: &Value) -> String {
    v["snapshot"].as_str().unwrap_or_default().to_string()
}

/// Hermes' `call_llm(task="web_extract", ...)` as `_extract_relevant_content`
/// calls it, with `prompt`, in `env` (plus `vars`).
fn hermes_web_extract(env: &TestEnv, vars: &[(&str, &str)], prompt: &str) -> String {
    static PY: OnceLock<std::path::PathBuf> = OnceLock::new();
    let py = PY.get_or_init(|| hermes_python("agent.auxiliary_client"));
    const DRIVER: &str = r#"
import sys
from agent.auxiliary_client import call_llm
prompt = open(sys.argv[1], encoding="utf-8").read()
r = call_llm(task="web_extract", messages=[{"role": "user", "content": prompt}], max_tokens=4000, temperature=0.1)
print(r.choices[0].message.content)
"#;
    // The prompt is too long for an argument.
    let file = env.dir.path().join("prompt.txt");
    std::fs::write(&file, prompt).unwrap();
    let mut c = Command::new(py);
    c.args(["-c", DRIVER]).arg(&file);
    env.apply(&mut c);
    for (k, v) in vars {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// browser_snapshot on a long page with `config` (+ `vars`, + Hermes'
/// auth.json written by `setup`): the summary comes from the fake at `path`,
/// and Hermes' own call with the same prompt sends the same request.
fn summarised_like_hermes(
    main: &str,
    vars: &[(&str, &str)],
    setup: impl FnOnce(&TestEnv, &str),
    path: &str,
) -> Req {
    let pages = page_server();
    let srv = server("Item 7 is the link [ref=e9].");
    let main = main.replace("{base}", &srv.base());
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.replace("{base}", &srv.base())))
        .collect();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    require_chromium();
    let env = TestEnv::new();
    setup(&env, &srv.base());
    let client = Serve::new()
        .config(&main)
        .private_tmp()
        .vars(&vars)
        .client(&env);
    let mut b = Browsing { env, client };
    b.ok("browser_navigate", json!({"url": pages.url("/big?n=4000")}));
    let s = snap(&b.ok("browser_snapshot", json!({"task": "open item 7"})));
    assert!(
        s.starts_with("Item 7 is the link [ref=e9].\n\n[Summarized from a "),
        "{s}"
    );
    let reqs = srv.reqs();
    assert_eq!(reqs.len(), 1, "{reqs:#?}");
    let ours = reqs[0].clone();
    assert_eq!(ours.target, path);
    let prompt = match path {
        "/codex/responses" => ours.json()["input"][0]["content"].clone(),
        _ => ours.json()["messages"][0]["content"].clone(),
    };
    let prompt = prompt.as_str().unwrap().to_string();
    assert!(
        prompt.contains("The user's task is: open item 7"),
        "{prompt}"
    );
    let answer = hermes_web_extract(&b.env, &vars, &prompt);
    assert_eq!(answer, "Item 7 is the link [ref=e9].");
    let reqs = srv.reqs();
    assert_eq!(reqs.len(), 2);
    assert_same_requests(&reqs[1..], &reqs[..1]);
    ours
}

#[test]
fn browser_long_snapshot_summary_on_an_api_key_main_provider() {
    let req = summarised_like_hermes(
        "model:\n  provider: zai\n  default: glm-5.1\n",
        &[
            ("GLM_API_KEY", "zk-1234"),
            ("GLM_BASE_URL", "{base}/zai/v4"),
        ],
        |_, _| {},
        "/zai/v4/chat/completions",
    );
    let body = req.json();
    assert_eq!(body["model"], "glm-5.1");
    assert_eq!(body["temperature"], 0.1);
    // Hermes' _build_call_kwargs sends no token limit to OpenAI-wire providers.
    assert!(body.get("max_tokens").is_none(), "{body}");
}

#[test]
fn browser_long_snapshot_summary_on_codex_with_the_chatgpt_sign_in() {
    let req = summarised_like_hermes(
        "model:\n  provider: openai-codex\n  default: gpt-5.4-mini\n",
        &[],
        |env, base| {
            codex_sign_in(env, base);
        },
        "/codex/responses",
    );
    let body = req.json();
    assert_eq!(body["model"], "gpt-5.4-mini");
    assert_eq!(body["instructions"], "You are a helpful assistant.");
    assert_eq!(body["prompt_cache_key"], "pck_9c16f6f671531a364e0c9073");
    assert_eq!(req.header("chatgpt-account-id"), Some("acct-42"));
}

#[test]
fn browser_long_snapshot_without_any_model_is_truncated() {
    let pages = page_server();
    let mut b = Browsing::start("model:\n  provider: openai-codex\n  default: gpt-5.4-mini\n");
    // Codex is the main provider but there is no sign-in: nothing to ask.
    b.ok("browser_navigate", json!({"url": pages.url("/big?n=4000")}));
    let s = snap(&b.ok("browser_snapshot", json!({})));
    assert!(s.contains("more lines truncated"), "{s}");
}
