//! `text_to_speech` with the cloud providers MiniMax, xAI, Mistral, Gemini and DeepInfra
//! through the real server binary, each against a loopback server speaking the
//! provider's wire format (including its error answer). Where Hermes' own client can
//! reach the fake (all but Mistral, whose SDK is not in Hermes' base install), Hermes'
//! `text_to_speech_tool` runs against the same fake and the requests must be the same.

use base64::Engine as _;
use serde_json::{Value, json};

use super::support::common::*;
use super::support::fake::*;
use super::support::prereq::require_program;
use super::support::tts::{hermes_tts, ours, real_mp3, tts_choice};

fn core(v: &Value) -> Value {
    json!({"success": v["success"], "provider": v["provider"], "voice_compatible": v["voice_compatible"]})
}

/// Run Hermes then us; the fake must have seen the same requests (method, path, body,
/// and the listed headers), and both must succeed alike.
fn same_as_hermes(
    env: &TestEnv,
    srv: &TestServer,
    vars: &[(&str, &str)],
    ext: &str,
    headers: &[&str],
) -> (Value, Vec<Req>) {
    let before = srv.reqs().len();
    let theirs_out = env.dir.path().join(format!("hermes.{ext}"));
    let theirs = hermes_tts(env, vars, "Hello there.", &theirs_out);
    let n = srv.reqs().len() - before;
    let ours_out = env.dir.path().join(format!("ours.{ext}"));
    let v = ours(env, vars, "Hello there.", &ours_out);
    assert_eq!(core(&v), core(&theirs), "ours {v}\nhermes {theirs}");
    let reqs = srv.reqs()[before..].to_vec();
    assert_eq!(reqs.len(), 2 * n, "{reqs:?}");
    for (h, o) in reqs[..n].iter().zip(&reqs[n..]) {
        // Hermes sends Gemini's key as `?key=`; we send it in a header.
        let hp = h.target.replace("?key=g-key", "");
        assert_eq!((&o.method, &o.target), (&h.method, &hp));
        assert_eq!(o.json(), h.json(), "request body");
        for name in headers {
            assert_eq!(o.header(name), h.header(name), "header {name}");
        }
    }
    (v, reqs[n..].to_vec())
}

#[test]
fn minimax_t2a_v2_hex_audio_and_api_errors() {
    require_program("lame");
    require_program("sox");
    let mp3 = real_mp3(tempfile::tempdir().unwrap().path());
    let hex: String = mp3.iter().map(|b| format!("{b:02x}")).collect();
    let srv = TestServer::start(move |req| {
        if req.header("authorization") != Some("Bearer mm-key") {
            return Resp::json(
                200,
                json!({"base_resp": {"status_code": 1004, "status_msg": "authentication failed"}}),
            );
        }
        Resp::json(
            200,
            json!({"data": {"audio": hex, "status": 2}, "base_resp": {"status_code": 0, "status_msg": "success"}}),
        )
    });
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!("tts:\n  provider: minimax\n  minimax:\n    voice_id: Wise_Woman\n    speed: 1.2\n    base_url: {}/v1/t2a_v2\n", srv.base()),
    );
    let vars = [("MINIMAX_API_KEY", "mm-key"), ("MINIMAX_GROUP_ID", "g42")];
    let (v, reqs) = same_as_hermes(&env, &srv, &vars, "mp3", &["authorization", "content-type"]);
    assert_eq!(v["provider"], "minimax");
    assert_eq!(reqs[0].target, "/v1/t2a_v2?GroupId=g42");
    assert_eq!(reqs[0].json()["voice_setting"]["voice_id"], "Wise_Woman");
    assert_eq!(std::fs::read(env.dir.path().join("ours.mp3")).unwrap(), mp3);
    assert!(
        (v["duration_seconds"].as_f64().unwrap() - 1.0).abs() < 0.1,
        "{v}"
    );
    let (_, choice) = tts_choice(&env, &vars);
    assert_eq!(choice["provider"], "minimax");
    assert_eq!(choice["why"], "tts.provider: minimax");

    let v = ours(
        &env,
        &[("MINIMAX_API_KEY", "wrong")],
        "x",
        &env.dir.path().join("e.mp3"),
    );
    assert_eq!(
        v["error"],
        "TTS generation failed (minimax): MiniMax TTS API error (code 1004): authentication failed",
        "{v}"
    );
    // No key: unavailable, with Hermes' text.
    let (tool, choice) = tts_choice(&env, &[]);
    assert_eq!(tool["available"], false);
    assert_eq!(choice["provider"], "none");
    assert!(
        choice["why"]
            .as_str()
            .unwrap()
            .contains("MINIMAX_API_KEY not set. Get one at https://platform.minimax.io/"),
        "{choice}"
    );
}

#[test]
fn xai_tts_endpoint_formats_and_errors() {
    let srv = TestServer::start(|req| {
        if req.header("authorization") != Some("Bearer xai-key") {
            return Resp::json(
                401,
                json!({"code": "Unauthorized", "error": "Incorrect API key provided"}),
            );
        }
        let wav = req.json()["output_format"]["codec"] == "wav";
        Resp::bytes(
            if wav { "audio/wav" } else { "audio/mpeg" },
            if wav {
                b"RIFF-xai".to_vec()
            } else {
                b"ID3-xai".to_vec()
            },
        )
    });
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: xai\n  speed: 0.5\n  xai:\n    voice_id: rex\n    speed: 2\n    base_url: {}/v1\n",
            srv.base()
        ),
    );
    let vars = [("XAI_API_KEY", "xai-key")];
    let (v, reqs) = same_as_hermes(&env, &srv, &vars, "wav", &["authorization"]);
    assert_eq!(v["provider"], "xai");
    assert_eq!(reqs[0].target, "/v1/tts");
    assert_eq!(
        reqs[0].json(),
        json!({"text": "Hello there.", "voice_id": "rex", "language": "en", "speed": 1.5,
               "output_format": {"codec": "wav", "sample_rate": 24000}})
    );
    assert_eq!(
        std::fs::read(env.dir.path().join("ours.wav")).unwrap(),
        b"RIFF-xai"
    );
    let (v, reqs) = same_as_hermes(&env, &srv, &vars, "mp3", &["authorization"]);
    assert_eq!(v["success"], true);
    assert!(reqs[0].json().get("output_format").is_none());
    let v = ours(
        &env,
        &[("XAI_API_KEY", "bad")],
        "x",
        &env.dir.path().join("e.mp3"),
    );
    assert_eq!(
        v["error"],
        "TTS generation failed (xai): xAI TTS request failed: HTTP 401: Incorrect API key provided",
        "{v}"
    );
    let (_, choice) = tts_choice(&env, &[]);
    assert!(
        choice["why"].as_str().unwrap().contains("set XAI_API_KEY"),
        "{choice}"
    );
}

#[test]
fn gemini_pcm_becomes_wav_and_errors_carry_the_message() {
    let pcm: Vec<u8> = (0..24000i32)
        .flat_map(|i| ((i % 100 * 300) as i16).to_le_bytes())
        .collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&pcm);
    let srv = TestServer::start(move |req| {
        if req.header("x-goog-api-key") != Some("g-key") && !req.target.contains("key=g-key") {
            return Resp::json(
                400,
                json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}),
            );
        }
        Resp::json(
            200,
            json!({"candidates": [{"content": {"parts": [{"inlineData": {"mimeType": "audio/L16;codec=pcm;rate=24000", "data": b64}}], "role": "model"}}]}),
        )
    });
    let env = TestEnv::new();
    std::fs::create_dir_all(env.hermes_home()).unwrap();
    env.write_hermes("persona.md", "Speak warmly: {{transcript}}");
    env.write_hermes(
        "config.yaml",
        &format!("tts:\n  provider: gemini\n  gemini:\n    voice: Puck\n    persona_prompt_file: persona.md\n    base_url: {}/v1beta\n", srv.base()),
    );
    let vars = [("GEMINI_API_KEY", "g-key")];
    let (v, reqs) = same_as_hermes(&env, &srv, &vars, "wav", &["content-type"]);
    assert_eq!(v["provider"], "gemini");
    // Hermes puts the key in the query; we send it as x-goog-api-key (never in a URL).
    assert!(
        reqs[0]
            .target
            .starts_with("/v1beta/models/gemini-2.5-flash-preview-tts:generateContent"),
        "{}",
        reqs[0].target
    );
    assert!(!reqs[0].target.contains("g-key"));
    assert_eq!(reqs[0].header("x-goog-api-key"), Some("g-key"));
    let body = reqs[0].json();
    assert_eq!(
        body["generationConfig"]["speechConfig"]["voiceConfig"]["prebuiltVoiceConfig"]["voiceName"],
        "Puck"
    );
    assert!(
        body["contents"][0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with("Speak warmly: Hello there.")
    );
    let out = std::fs::read(env.dir.path().join("ours.wav")).unwrap();
    let info = hermes_mcp::toolsets::tts::audio::parse_wav(&out).unwrap();
    assert_eq!(
        (info.sample_rate, info.channels, info.bits_per_sample),
        (24000, 1, 16)
    );
    assert!(
        (v["duration_seconds"].as_f64().unwrap() - 1.0).abs() < 0.01,
        "{v}"
    );
    let v = ours(
        &env,
        &[("GEMINI_API_KEY", "bad")],
        "x",
        &env.dir.path().join("e.wav"),
    );
    assert_eq!(
        v["error"],
        "TTS generation failed (gemini): Gemini TTS API error (HTTP 400): API key not valid. Please pass a valid API key.",
        "{v}"
    );
}

#[test]
fn deepinfra_openai_compatible_with_catalog_model_and_errors() {
    let srv = TestServer::start(|req| {
        if req.header("authorization") != Some("Bearer di-key") {
            return Resp::json(401, json!({"detail": {"error": "Invalid API key"}}));
        }
        if req.method == "GET" {
            return Resp::json(
                200,
                json!({"data": [
                    {"id": "meta/chat", "metadata": {"tags": ["chat"]}},
                    {"id": "stub/none", "metadata": null},
                    {"id": "hexgrad/Kokoro-82M", "metadata": {"tags": ["tts"]}},
                ]}),
            );
        }
        Resp::bytes("audio/mpeg", b"ID3-deepinfra".to_vec())
    });
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        "tts:\n  provider: deepinfra\n  deepinfra:\n    voice: af_bella\n",
    );
    let base = format!("{}/v1/openai", srv.base());
    let vars = [
        ("DEEPINFRA_API_KEY", "di-key"),
        ("DEEPINFRA_BASE_URL", base.as_str()),
    ];
    let theirs = hermes_tts(&env, &vars, "Hello there.", &env.dir.path().join("h.mp3"));
    let v = ours(&env, &vars, "Hello there.", &env.dir.path().join("o.mp3"));
    assert_eq!(core(&v), core(&theirs), "{v} {theirs}");
    let reqs = srv.reqs();
    let posts: Vec<_> = reqs.iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 2);
    assert_eq!(posts[0].target, "/v1/openai/audio/speech");
    assert_eq!(posts[1].target, posts[0].target);
    assert_eq!(posts[1].json(), posts[0].json());
    assert_eq!(posts[1].json()["model"], "hexgrad/Kokoro-82M");
    assert!(
        reqs.iter().any(
            |r| r.method == "GET" && r.target == "/v1/openai/models?filter=true&sort_by=hermes"
        )
    );
    assert_eq!(
        std::fs::read(env.dir.path().join("o.mp3")).unwrap(),
        b"ID3-deepinfra"
    );

    // A pinned model needs no catalog; a bad key gets DeepInfra's message.
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: deepinfra\n  deepinfra:\n    model: m/x\n    base_url: {base}\n"
        ),
    );
    let v = ours(
        &env,
        &[("DEEPINFRA_API_KEY", "bad")],
        "x",
        &env.dir.path().join("e.mp3"),
    );
    let e = v["error"].as_str().unwrap();
    assert!(
        e.starts_with(
            "TTS generation failed (deepinfra): DeepInfra speech request failed: HTTP 401"
        ),
        "{v}"
    );
}

#[test]
fn mistral_speech_base64_audio_and_errors() {
    let srv = TestServer::start(|req| {
        if req.header("authorization") != Some("Bearer mi-key") {
            return Resp::json(401, json!({"message": "Unauthorized", "request_id": "r1"}));
        }
        if req.json()["voice_id"] == "nobody" {
            return Resp::json(
                422,
                json!({"detail": [{"loc": ["body", "voice_id"], "msg": "unknown voice", "type": "value_error"}]}),
            );
        }
        let b = base64::engine::general_purpose::STANDARD.encode(b"OggS-mistral-opus");
        Resp::json(200, json!({"audio_data": b}))
    });
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: mistral\n  mistral:\n    base_url: {}\n",
            srv.base()
        ),
    );
    let out = env.dir.path().join("m.ogg");
    let v = ours(&env, &[("MISTRAL_API_KEY", "mi-key")], "Bonjour", &out);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "mistral");
    assert_eq!(std::fs::read(&out).unwrap(), b"OggS-mistral-opus");
    let r = &srv.reqs()[0];
    assert_eq!(
        (r.method.as_str(), r.target.as_str()),
        ("POST", "/v1/audio/speech")
    );
    assert_eq!(
        r.json(),
        json!({"model": "voxtral-mini-tts-2603", "input": "Bonjour", "voice_id": "c69964a6-ab8b-4f8a-9465-ec0925096ec8", "response_format": "opus", "stream": false})
    );
    let v = ours(
        &env,
        &[("MISTRAL_API_KEY", "bad")],
        "x",
        &env.dir.path().join("e.mp3"),
    );
    assert_eq!(
        v["error"],
        "TTS generation failed (mistral): Mistral TTS failed: SDKError (HTTP 401: Unauthorized)",
        "{v}"
    );
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: mistral\n  mistral:\n    voice_id: nobody\n    base_url: {}\n",
            srv.base()
        ),
    );
    let v = ours(
        &env,
        &[("MISTRAL_API_KEY", "mi-key")],
        "x",
        &env.dir.path().join("e.mp3"),
    );
    assert!(
        v["error"].as_str().unwrap().starts_with(
            "TTS generation failed (mistral): Mistral TTS failed: HTTPValidationError (HTTP 422"
        ),
        "{v}"
    );
}
