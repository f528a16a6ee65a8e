//! Speech tags added before xAI and Gemini speak (`tts.xai.auto_speech_tags`,
//! `tts.gemini.audio_tags`), through the real server binary: one loopback server
//! plays the auxiliary model (`auxiliary.tts_audio_tags`, OpenAI chat completions)
//! and the speech API, and records what each received. Hermes' own
//! `text_to_speech_tool` runs against the same server and must send the same
//! requests (the auxiliary prompt, then the rewritten text to the speech API).

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{Value, json};

use super::support::common::*;
use super::support::fake::*;
use super::support::media::*;
use super::support::tts::{hermes_tts, ours};

/// What the fake auxiliary model answers next: (status, body).
type AuxAnswer = Arc<Mutex<(u16, Value)>>;

fn chat_answer(content: &str) -> Value {
    json!({"id": "c1", "object": "chat.completion", "created": 1, "model": "tagger-1",
           "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content}}]})
}

fn tiny_wav() -> Vec<u8> {
    wav_24k_mono(
        (0..2400i32)
            .flat_map(|i| ((i % 50 * 400) as i16).to_le_bytes())
            .collect(),
    )
}

fn server(aux: AuxAnswer) -> TestServer {
    let pcm_b64 = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 4800]);
    TestServer::start(move |req| {
        if req.target == "/aux/v1/chat/completions" {
            let (status, body) = aux.lock().unwrap().clone();
            return Resp::json(status, body);
        }
        if req.target == "/v1/tts" {
            return Resp::bytes("audio/wav", tiny_wav());
        }
        if req.target.starts_with("/v1beta/models/") {
            return Resp::json(
                200,
                json!({"candidates": [{"content": {"parts": [{"inlineData": {"mimeType": "audio/L16;codec=pcm;rate=24000", "data": pcm_b64}}]}}]}),
            );
        }
        Resp::json(404, json!({"error": "not found"}))
    })
}

fn aux_config(base: &str) -> String {
    format!(
        "auxiliary:\n  tts_audio_tags:\n    provider: custom\n    base_url: {base}/aux/v1\n    api_key: aux-key\n    model: tagger-1\n"
    )
}

/// Hermes, then us, with `text`: both succeed alike and the server sees the same
/// requests (paths and bodies). Returns our result and our requests.
fn same_as_hermes(
    env: &TestEnv,
    srv: &TestServer,
    vars: &[(&str, &str)],
    text: &str,
) -> (Value, Vec<Req>) {
    let before = srv.reqs().len();
    let theirs = hermes_tts(env, vars, text, &env.dir.path().join("hermes.wav"));
    let n = srv.reqs().len() - before;
    let v = ours(env, vars, text, &env.dir.path().join("ours.wav"));
    assert_eq!(
        (&v["success"], &v["provider"]),
        (&theirs["success"], &theirs["provider"]),
        "ours {v}\nhermes {theirs}"
    );
    let reqs = srv.reqs()[before..].to_vec();
    assert_eq!(reqs.len(), 2 * n, "{reqs:#?}");
    for (h, o) in reqs[..n].iter().zip(&reqs[n..]) {
        assert_eq!(o.target, h.target.replace("?key=g-key", ""));
        let (hb, ob) = (h.json(), o.json());
        if o.target.ends_with("/chat/completions") {
            for k in ["model", "messages", "temperature"] {
                assert_eq!(ob[k], hb[k], "auxiliary request {k}");
            }
            assert_eq!(o.header("authorization"), Some("Bearer aux-key"));
        } else {
            assert_eq!(ob, hb, "speech request body");
        }
    }
    (v, reqs[n..].to_vec())
}

fn paths(reqs: &[Req]) -> Vec<&str> {
    reqs.iter().map(|r| r.target.as_str()).collect()
}

#[test]
fn xai_auto_speech_tags_rewrite_with_the_auxiliary_model_and_fall_back_to_local_pauses() {
    let aux: AuxAnswer = Arc::new(Mutex::new((
        200,
        chat_answer(
            "```text\n[laugh] Hello there, friend. [pause] <whisper>How are you today?</whisper>\n```",
        ),
    )));
    let srv = server(aux.clone());
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!(
            "{}tts:\n  provider: xai\n  xai:\n    auto_speech_tags: true\n    base_url: {}/v1\n",
            aux_config(&srv.base()),
            srv.base()
        ),
    );
    let vars = [("XAI_API_KEY", "xai-key")];
    let text = "Hello there, friend. How are you today?";
    let (v, reqs) = same_as_hermes(&env, &srv, &vars, text);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(paths(&reqs), ["/aux/v1/chat/completions", "/v1/tts"]);
    let chat = reqs[0].json();
    assert_eq!(chat["model"], "tagger-1");
    assert_eq!(chat["temperature"], 0.7);
    assert!(
        chat["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You rewrite transcripts for the xAI /v1/tts endpoint")
    );
    assert_eq!(
        chat["messages"][1]["content"],
        "TRANSCRIPT TO TAG:\nHello there, friend. [pause] How are you today?"
    );
    // The model's script (fence removed) is what xAI speaks.
    assert_eq!(
        reqs[1].json()["text"],
        "[laugh] Hello there, friend. [pause] <whisper>How are you today?</whisper>"
    );
    assert!(v.get("note").is_none(), "{v}");

    // The auxiliary model fails: the local [pause] pass is spoken, as Hermes does.
    // (A 400: Hermes' OpenAI SDK would retry a 5xx twice; our auxiliary client does not.)
    *aux.lock().unwrap() = (400, json!({"error": {"message": "model not found"}}));
    let (v, reqs) = same_as_hermes(&env, &srv, &vars, "First paragraph here.\n\nSecond one.");
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(
        reqs.last().unwrap().json()["text"],
        "First paragraph here. [pause] Second one."
    );
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .contains("auxiliary rewrite did not run"),
        "{v}"
    );

    // Tags already in the text are trusted: no auxiliary call.
    let (_, reqs) = same_as_hermes(&env, &srv, &vars, "Well [sigh] that is that. Really now.");
    assert_eq!(paths(&reqs), ["/v1/tts"]);
    assert_eq!(
        reqs[0].json()["text"],
        "Well [sigh] that is that. Really now."
    );

    // Off by default: the text goes as given.
    env.write_hermes(
        "config.yaml",
        &format!(
            "{}tts:\n  provider: xai\n  xai:\n    base_url: {}/v1\n",
            aux_config(&srv.base()),
            srv.base()
        ),
    );
    let (_, reqs) = same_as_hermes(&env, &srv, &vars, text);
    assert_eq!(paths(&reqs), ["/v1/tts"]);
    assert_eq!(reqs[0].json()["text"], text);
}

#[test]
fn gemini_audio_tags_rewrite_with_persona_context_for_tag_models_only() {
    let aux: AuxAnswer = Arc::new(Mutex::new((
        200,
        chat_answer("[warmly] Hello there. [laughs] Nice to meet you."),
    )));
    let srv = server(aux.clone());
    let env = TestEnv::new();
    std::fs::create_dir_all(env.hermes_home()).unwrap();
    env.write_hermes(
        "persona.md",
        "AUDIO PROFILE: a kind host.\nSay: {{transcript}}",
    );
    let config = |model: &str, aux: &str| {
        format!(
            "{aux}tts:\n  provider: gemini\n  gemini:\n    model: {model}\n    audio_tags:\n      enabled: true\n    persona_prompt_file: persona.md\n    base_url: {}/v1beta\n",
            srv.base()
        )
    };
    env.write_hermes(
        "config.yaml",
        &config("gemini-3.1-flash-tts-preview", &aux_config(&srv.base())),
    );
    let vars = [("GEMINI_API_KEY", "g-key")];
    let text = "Hello there. Nice to meet you.";
    let (v, reqs) = same_as_hermes(&env, &srv, &vars, text);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(
        paths(&reqs),
        [
            "/aux/v1/chat/completions",
            "/v1beta/models/gemini-3.1-flash-tts-preview:generateContent"
        ]
    );
    let chat = reqs[0].json();
    assert!(
        chat["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You rewrite transcripts for Gemini 3.1 Flash TTS")
    );
    assert_eq!(
        chat["messages"][1]["content"],
        format!(
            "PERSONA AND DIRECTOR CONTEXT:\nAUDIO PROFILE: a kind host.\nSay: {{{{transcript}}}}\n\nTRANSCRIPT TO TAG:\n{text}"
        )
    );
    // The tagged script goes into the persona prompt's transcript slot.
    let prompt = reqs[1].json()["contents"][0]["parts"][0]["text"].clone();
    assert!(
        prompt.as_str().unwrap().ends_with(
            "AUDIO PROFILE: a kind host.\nSay: [warmly] Hello there. [laughs] Nice to meet you."
        ),
        "{prompt}"
    );

    // The auxiliary model answers nothing: the untagged text is spoken.
    *aux.lock().unwrap() = (200, chat_answer(""));
    let (_, reqs) = same_as_hermes(&env, &srv, &vars, text);
    let prompt = reqs[1].json()["contents"][0]["parts"][0]["text"].clone();
    assert!(
        prompt.as_str().unwrap().ends_with(&format!("Say: {text}")),
        "{prompt}"
    );

    // A model that does not take audio tags: no rewrite, and the note says why.
    env.write_hermes(
        "config.yaml",
        &config("gemini-2.5-flash-preview-tts", &aux_config(&srv.base())),
    );
    let (v, reqs) = same_as_hermes(&env, &srv, &vars, text);
    assert_eq!(paths(&reqs).len(), 1);
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .contains("not known to support Gemini audio tags"),
        "{v}"
    );

    // No auxiliary model configured and no main provider: Hermes' fallback
    // chain reaches the API-key providers, and GEMINI_API_KEY makes Gemini
    // (its auxiliary model, native API) the tagger. Its answer here has no
    // text, so the text is sent untagged.
    env.write_hermes("config.yaml", &config("gemini-3.1-flash-tts-preview", ""));
    let gemini_base = format!("{}/v1beta", srv.base());
    let chain_vars = [
        ("GEMINI_API_KEY", "g-key"),
        ("GEMINI_BASE_URL", gemini_base.as_str()),
    ];
    let before = srv.reqs().len();
    let v = ours(&env, &chain_vars, text, &env.dir.path().join("n.wav"));
    assert_eq!(v["success"], true, "{v}");
    let reqs = srv.reqs()[before..].to_vec();
    assert_eq!(
        paths(&reqs),
        [
            "/v1beta/models/gemini-3.5-flash:generateContent",
            "/v1beta/models/gemini-3.1-flash-tts-preview:generateContent"
        ]
    );
    let tagger = reqs[0].json();
    assert!(
        tagger["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("audio tags"),
        "{tagger}"
    );
    assert_eq!(tagger["contents"][0]["role"], "user");
    let last = srv.reqs().last().unwrap().clone();
    assert!(last.target.starts_with("/v1beta/"));
    assert!(
        last.json()["contents"][0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with(&format!("Say: {text}"))
    );
}
