//! `image_generate` and `text_to_speech` through the real server binary:
//! real espeak-ng speech measured with sox and the WAV header, command
//! providers, and the FAL / OpenAI / ElevenLabs clients against loopback
//! servers speaking the providers' documented wire formats.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::support::common::*;
use super::support::fake::*;
use super::support::media::*;

fn listed(rc: &mut RawClient) -> Vec<Value> {
    let r = rc.request("tools/list", json!({}));
    r["result"]["tools"].as_array().cloned().unwrap_or_default()
}

fn wav_duration(path: &Path) -> f64 {
    let b = std::fs::read(path).unwrap();
    hermes_mcp::toolsets::tts::audio::parse_wav(&b)
        .unwrap_or_else(|| panic!("{} is not a WAV file", path.display()))
        .duration_secs()
}

const SENTENCE: &str = "Hermes speaks offline. This sentence is long enough to last a few seconds.";

// ------------------------------------------------------------------ TTS: espeak-ng (ours)

/// `tts.provider: espeak-ng`, hermes-mcp's offline extension (Hermes' default, edge,
/// is tested in tts_edge.rs).
fn espeak_env() -> TestEnv {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "tts:\n  provider: espeak-ng\n");
    env
}

#[test]
fn tts_espeak_writes_real_speech() {
    require("espeak-ng", "espeak-ng");
    require("soxi", "sox");
    let env = espeak_env();
    let out = env.dir.path().join("speech.wav");
    let mut rc = client(&env, &[]);
    let tool = listed(&mut rc)
        .into_iter()
        .find(|t| t["name"] == "text_to_speech")
        .expect("text_to_speech listed when espeak-ng is installed");
    assert_eq!(tool["annotations"]["readOnlyHint"], false);
    assert!(tool["description"].as_str().unwrap().contains("espeak-ng"));
    let r = rc.call_tool(
        "text_to_speech",
        json!({"text": SENTENCE, "output_path": out}),
    );
    assert!(!is_error(&r), "{r}");
    let v = result_json(&r);
    assert_eq!(v["success"], true);
    assert_eq!(v["provider"], "espeak-ng");
    assert_eq!(v["file_path"], out.to_str().unwrap());
    assert_eq!(v["media_tag"], format!("MEDIA:{}", out.display()));
    assert_eq!(v["voice_compatible"], false);
    assert_eq!(v["format"], "wav");
    // A real recording: the header and sox agree, and ~13 words take seconds, not ms.
    let header = wav_duration(&out);
    let sox = soxi_duration(&out);
    assert!(
        (2.0..15.0).contains(&header),
        "implausible duration {header} s"
    );
    assert!((header - sox).abs() < 0.05, "header {header} vs sox {sox}");
    assert!((v["duration_seconds"].as_f64().unwrap() - header).abs() < 0.01);
    // Not silence: some samples are loud.
    let bytes = std::fs::read(&out).unwrap();
    let loud = bytes[44..]
        .chunks_exact(2)
        .filter(|s| i16::from_le_bytes([s[0], s[1]]).unsigned_abs() > 2000)
        .count();
    assert!(
        loud > 1000,
        "the audio is (nearly) silent: {loud} loud samples"
    );
    eprintln!(
        "espeak-ng: {header:.2} s of speech (sox says {sox:.2} s), {} bytes",
        bytes.len()
    );
}

#[test]
fn tts_converts_to_ogg_and_default_path_is_in_the_cache() {
    require("espeak-ng", "espeak-ng");
    require("soxi", "sox");
    let env = espeak_env();
    let mut rc = client(&env, &[]);
    let ogg = env.dir.path().join("out").join("v.ogg");
    let v = result_json(&rc.call_tool(
        "text_to_speech",
        json!({"text": SENTENCE, "output_path": ogg}),
    ));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["file_path"], ogg.to_str().unwrap(), "{v}");
    let bytes = std::fs::read(&ogg).unwrap();
    assert_eq!(&bytes[..4], b"OggS", "not an Ogg file");
    let d = soxi_duration(&ogg);
    assert!(
        (d - v["duration_seconds"].as_f64().unwrap()).abs() < 0.1,
        "ogg {d} s vs {v}"
    );
    assert!(
        std::fs::read_dir(ogg.parent().unwrap()).unwrap().count() == 1,
        "temp WAV left behind"
    );

    // Default path: $HERMES_HOME/cache/audio/tts_<ts>.mp3 — or .wav with a note when
    // nothing here can encode MP3 (sox without libsox-fmt-mp3 and no ffmpeg).
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "Second file."})));
    let p = PathBuf::from(v["file_path"].as_str().unwrap());
    assert_eq!(p.parent().unwrap(), env.hermes_home().join("cache/audio"));
    let name = p.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        name.starts_with("tts_") && name.len() == "tts_20260101_000000.mp3".len(),
        "{name}"
    );
    let bytes = std::fs::read(&p).unwrap();
    match v["format"].as_str().unwrap() {
        "mp3" => {
            let info = hermes_mcp::toolsets::tts::audio::mp3_info(&bytes).expect("not MP3");
            assert!(info.frames > 10 && info.duration_secs() > 0.3, "{info:?}");
        }
        "wav" => {
            assert!(bytes.starts_with(b"RIFF"));
            let note = v["note"].as_str().unwrap();
            assert!(
                note.contains("no converter for mp3") && note.contains("kept the WAV"),
                "{note}"
            );
        }
        other => panic!("unexpected format {other}"),
    }
    // Two calls in one second never overwrite each other.
    let v2 = result_json(&rc.call_tool("text_to_speech", json!({"text": "Third."})));
    assert_ne!(v["file_path"], v2["file_path"]);
}

#[test]
fn tts_rejects_traversal_and_empty_text() {
    let env = TestEnv::new();
    let mut rc = client(&env, &[]);
    let r = rc.call_tool(
        "text_to_speech",
        json!({"text": "x", "output_path": "audio/../../etc/cron.d/x"}),
    );
    assert!(is_error(&r));
    let v = result_json(&r);
    assert_eq!(v["success"], false);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("output_path contains '..' traversal component"),
        "{v}"
    );
    assert!(!env.dir.path().join("etc").exists());
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "   "})));
    assert_eq!(v, json!({"error": "Text is required", "success": false}));
}

#[test]
fn tts_unavailable_without_espeak_says_what_to_install() {
    let env = espeak_env();
    let empty = tempfile::tempdir().unwrap();
    let out = env
        .cmd()
        .env("PATH", empty.path())
        .args(["tools", "--json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "text_to_speech")
        .unwrap()
        .clone();
    assert_eq!(t["available"], false);
    assert!(
        t["reason"]
            .as_str()
            .unwrap()
            .contains("apt install espeak-ng"),
        "{t}"
    );
    let mut c = env.cmd();
    c.env("PATH", empty.path());
    let mut rc = RawClient::spawn(c);
    rc.initialize();
    assert!(
        !listed(&mut rc)
            .iter()
            .any(|t| t["name"] == "text_to_speech")
    );
    // The human-readable listing says it too.
    let out = env
        .cmd()
        .env("PATH", empty.path())
        .arg("tools")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("text_to_speech") && text.contains("espeak-ng"),
        "{text}"
    );
}

// ------------------------------------------------------------------ TTS: command providers

#[test]
fn tts_command_provider_placeholders_truncation_and_errors() {
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        r#"
tts:
  provider: echoer
  speed: 1.5
  providers:
    echoer:
      type: command
      command: "printf '%s|%s|%s|' {format} '{voice}' \"{speed}\" > {output_path}; cat {input_path} >> {output_path}"
      output_format: wav
      voice: "it's me"
      max_text_length: 12
    slow:
      command: "sleep 5; touch {output_path}"
      timeout: 0.5
    failing:
      command: "echo broken >&2; exit 7"
    silent:
      command: "true"
"#,
    );
    let mut rc = client(&env, &[]);
    let out = env.dir.path().join("my file.mp3");
    let v = result_json(&rc.call_tool(
        "text_to_speech",
        json!({"text": "Hello there, general!", "output_path": out}),
    ));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "echoer");
    // The extension follows the provider's output_format, as in Hermes.
    let wav = env.dir.path().join("my file.wav");
    assert_eq!(v["file_path"], wav.to_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(&wav).unwrap(),
        "wav|it's me|1.5|Hello there,"
    );
    assert!(
        v["warning"].as_str().unwrap().contains("truncated to 12"),
        "{v}"
    );

    let set = |p: &str| {
        let text = std::fs::read_to_string(env.hermes_home().join("config.yaml")).unwrap();
        let text = text.replacen("provider: echoer", &format!("provider: {p}"), 1);
        std::fs::write(env.hermes_home().join("config.yaml"), text).unwrap();
    };
    drop(rc);
    set("slow");
    let mut rc = client(&env, &[]);
    let t = std::time::Instant::now();
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x"})));
    assert_eq!(
        v["error"],
        "TTS generation failed (slow): TTS provider 'slow' timed out after 0.5s"
    );
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "the command was not killed"
    );
    drop(rc);
    let text = std::fs::read_to_string(env.hermes_home().join("config.yaml")).unwrap();
    std::fs::write(
        env.hermes_home().join("config.yaml"),
        text.replacen("provider: slow", "provider: failing", 1),
    )
    .unwrap();
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x"})));
    assert_eq!(
        v["error"],
        "TTS generation failed (failing): TTS provider 'failing' exited with code 7: stderr: broken"
    );
    drop(rc);
    let text = std::fs::read_to_string(env.hermes_home().join("config.yaml")).unwrap();
    std::fs::write(
        env.hermes_home().join("config.yaml"),
        text.replacen("provider: failing", "provider: silent", 1),
    )
    .unwrap();
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x"})));
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("TTS provider 'silent' produced no output at"),
        "{v}"
    );
}

// ------------------------------------------------------------------ TTS: OpenAI and ElevenLabs

#[test]
fn tts_openai_speech_over_loopback() {
    let srv = TestServer::start(|req| {
        if req.header("authorization") != Some("Bearer sk-test") {
            return Resp::json(
                401,
                json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
            );
        }
        Resp::bytes("audio/wav", b"RIFF-pretend-wav-bytes".to_vec())
    });
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!("tts:\n  provider: openai\n  openai:\n    voice: nova\n    speed: 1.25\n    base_url: {}/v1\n", srv.base()),
    );
    let out = env.dir.path().join("a.wav");
    let mut rc = client(&env, &[("OPENAI_API_KEY", "sk-test")]);
    let tool = listed(&mut rc)
        .into_iter()
        .find(|t| t["name"] == "text_to_speech")
        .unwrap();
    assert_eq!(tool["annotations"]["openWorldHint"], true);
    let v = result_json(&rc.call_tool(
        "text_to_speech",
        json!({"text": "Hi there", "output_path": out}),
    ));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "openai");
    assert_eq!(std::fs::read(&out).unwrap(), b"RIFF-pretend-wav-bytes");
    let reqs = srv.reqs();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].target, "/v1/audio/speech");
    let body = reqs[0].json();
    assert_eq!(
        body,
        json!({"model": "gpt-4o-mini-tts", "voice": "nova", "input": "Hi there", "response_format": "wav", "speed": 1.25})
    );
    assert!(reqs[0].header("x-idempotency-key").is_some());
    drop(rc);

    // VOICE_TOOLS_OPENAI_KEY wins; a wrong key surfaces OpenAI's message.
    let mut rc = client(
        &env,
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("VOICE_TOOLS_OPENAI_KEY", "sk-wrong"),
        ],
    );
    let r = rc.call_tool("text_to_speech", json!({"text": "Hi"}));
    assert!(is_error(&r));
    let v = result_json(&r);
    assert_eq!(v["success"], false);
    let e = v["error"].as_str().unwrap();
    assert!(e.starts_with("TTS generation failed (openai): OpenAI speech request failed: HTTP 401: Incorrect API key provided"), "{e}");
}

#[test]
fn tts_elevenlabs_over_loopback() {
    let srv = TestServer::start(|req| {
        if req.header("xi-api-key") != Some("el-key") {
            return Resp::json(
                401,
                json!({"detail": {"status": "invalid_api_key", "message": "Invalid API key"}}),
            );
        }
        Resp::bytes("audio/mpeg", b"ID3-fake-mp3".to_vec())
    });
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!("tts:\n  provider: elevenlabs\n  elevenlabs:\n    voice_id: voice123\n    base_url: {}\n", srv.base()),
    );
    let mut rc = client(&env, &[("ELEVENLABS_API_KEY", "el-key")]);
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "Bonjour"})));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "elevenlabs");
    let p = PathBuf::from(v["file_path"].as_str().unwrap());
    assert!(
        p.starts_with(env.hermes_home().join("cache/audio")) && p.extension().unwrap() == "mp3"
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"ID3-fake-mp3");
    let reqs = srv.reqs();
    assert_eq!(
        reqs[0].target,
        "/v1/text-to-speech/voice123?output_format=mp3_44100_128"
    );
    assert_eq!(
        reqs[0].json(),
        json!({"text": "Bonjour", "model_id": "eleven_multilingual_v2"})
    );
    // .ogg asks for Opus.
    let ogg = env.dir.path().join("x.ogg");
    result_json(&rc.call_tool("text_to_speech", json!({"text": "x", "output_path": ogg})));
    assert!(
        srv.reqs()[1]
            .target
            .ends_with("output_format=opus_48000_64")
    );
    drop(rc);
    let mut rc = client(&env, &[("ELEVENLABS_API_KEY", "bad")]);
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x"})));
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("HTTP 401: Invalid API key"),
        "{v}"
    );
}

// ------------------------------------------------------------------ image_generate: FAL queue

/// A FAL queue on loopback: submit, `polls` IN_QUEUE/IN_PROGRESS answers, then
/// COMPLETED; the result points at an image served by the same server.
fn fal_server(polls: usize, result: Arc<dyn Fn(&str) -> Resp + Send + Sync>) -> TestServer {
    let count = Arc::new(AtomicUsize::new(0));
    TestServer::start(move |req| {
        let base = req.base.as_str();
        if req.header("authorization") != Some("Key fal-test") && !req.target.starts_with("/files/")
        {
            return Resp::json(
                401,
                json!({"detail": "No user found for Key ID and Secret"}),
            );
        }
        let path = req.target.as_str();
        match (req.method.as_str(), path) {
            ("POST", p) if p.starts_with("/fal-ai/") || p.starts_with("/openai/") => {
                let app: Vec<&str> = p.trim_start_matches('/').splitn(3, '/').collect();
                let app = format!("{}/{}", app[0], app[1]);
                Resp::json(
                    200,
                    json!({
                        "request_id": "req-1",
                        "response_url": format!("{base}/{app}/requests/req-1"),
                        "status_url": format!("{base}/{app}/requests/req-1/status"),
                        "cancel_url": format!("{base}/{app}/requests/req-1/cancel"),
                        "queue_position": 0,
                    }),
                )
            }
            ("GET", p) if p.ends_with("/status") => {
                let n = count.fetch_add(1, Ordering::SeqCst);
                let status = if n >= polls {
                    "COMPLETED"
                } else if n == 0 {
                    "IN_QUEUE"
                } else {
                    "IN_PROGRESS"
                };
                Resp {
                    status: if status == "COMPLETED" { 200 } else { 202 },
                    ..Resp::json(200, json!({"status": status, "queue_position": 0}))
                }
            }
            ("GET", p) if p.ends_with("/requests/req-1") => result(base),
            ("PUT", p) if p.ends_with("/cancel") => {
                Resp::json(202, json!({"status": "CANCELLATION_REQUESTED"}))
            }
            ("GET", "/files/img.png") => Resp::bytes("image/png", png_bytes()),
            _ => Resp::json(404, json!({"detail": "not found"})),
        }
    })
}

fn fal_ok() -> Arc<dyn Fn(&str) -> Resp + Send + Sync> {
    Arc::new(|base: &str| {
        Resp::json(
            200,
            json!({"images": [{"url": format!("{base}/files/img.png"), "width": 1024, "height": 576, "content_type": "image/png"}], "seed": 1}),
        )
    })
}

fn fal_env(srv: &TestServer, extra_yaml: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!(
            "image_gen:\n  fal:\n    base_url: {}\n{extra_yaml}",
            srv.base()
        ),
    );
    env
}

#[test]
fn image_generate_fal_queue_submit_poll_result() {
    let srv = fal_server(2, fal_ok());
    let env = fal_env(&srv, "");
    let mut rc = client(
        &env,
        &[
            ("FAL_KEY", "fal-test"),
            ("HERMES_ALLOW_PRIVATE_URLS", "true"),
        ],
    );
    let tool = listed(&mut rc)
        .into_iter()
        .find(|t| t["name"] == "image_generate")
        .expect("listed with FAL_KEY");
    let desc = tool["description"].as_str().unwrap();
    assert!(
        desc.contains("Active backend: FAL.ai · model: FLUX 2 Klein 9B"),
        "{desc}"
    );
    assert_eq!(tool["annotations"]["readOnlyHint"], false);
    assert_eq!(
        tool["inputSchema"]["properties"]["aspect_ratio"]["enum"],
        json!(["landscape", "square", "portrait"])
    );

    // With a progress token, each pending poll is reported.
    let id = rc.send(
        "tools/call",
        json!({"name": "image_generate", "arguments": {"prompt": "a red pixel", "aspect_ratio": "portrait"},
               "_meta": {"progressToken": "p1"}}),
    );
    let mut notes = Vec::new();
    let r = rc.response(id, &mut notes)["result"].clone();
    assert!(!is_error(&r), "{r}");
    let progress: Vec<String> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| n["params"]["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        progress,
        ["FAL: in queue (position 0)", "FAL: in progress"],
        "{notes:?}"
    );
    let v = result_json(&r);
    assert_eq!(v["success"], true);
    assert_eq!(v["modality"], "text");
    assert_eq!(v["model"], "fal-ai/flux-2/klein/9b");
    let saved = PathBuf::from(v["image"].as_str().unwrap());
    assert!(
        saved.starts_with(env.hermes_home().join("cache/images")),
        "{v}"
    );
    assert_eq!(std::fs::read(&saved).unwrap(), png_bytes());
    assert_eq!(v["image_url"], format!("{}/files/img.png", srv.base()));
    // Also returned as MCP image content.
    let img = r["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "image")
        .expect("image content");
    assert_eq!(img["mimeType"], "image/png");
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(img["data"].as_str().unwrap())
            .unwrap(),
        png_bytes()
    );

    let reqs = srv.reqs();
    let submit = &reqs[0];
    assert_eq!(
        (submit.method.as_str(), submit.target.as_str()),
        ("POST", "/fal-ai/flux-2/klein/9b")
    );
    assert_eq!(
        submit.json(),
        json!({"num_inference_steps": 4, "output_format": "png", "enable_safety_checker": false, "prompt": "a red pixel", "image_size": "portrait_16_9"})
    );
    assert!(submit.header("x-idempotency-key").is_some());
    let statuses = reqs
        .iter()
        .filter(|r| r.target.ends_with("/status"))
        .count();
    assert_eq!(statuses, 3, "two pending polls then COMPLETED");
    assert!(
        reqs.iter()
            .any(|r| r.method == "GET" && r.target == "/fal-ai/flux-2/requests/req-1")
    );
}

#[test]
fn image_generate_fal_failure_timeout_and_rejection() {
    // The result endpoint reports the model's failure.
    let srv = fal_server(
        0,
        Arc::new(|_: &str| Resp::json(500, json!({"detail": "model crashed"}))),
    );
    let env = fal_env(&srv, "");
    let mut rc = client(&env, &[("FAL_KEY", "fal-test")]);
    let r = rc.call_tool("image_generate", json!({"prompt": "x"}));
    assert!(is_error(&r));
    let v = result_json(&r);
    assert_eq!(v["success"], false);
    assert_eq!(v["image"], Value::Null);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("HTTP 500: model crashed"),
        "{v}"
    );
    assert!(v["error_type"].is_string());
    drop(rc);

    // A request that never leaves the queue times out and is cancelled.
    let srv = fal_server(usize::MAX, fal_ok());
    let env = fal_env(&srv, "    timeout: 1\n");
    let mut rc = client(&env, &[("FAL_KEY", "fal-test")]);
    let t = std::time::Instant::now();
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    let e = v["error"].as_str().unwrap();
    assert!(
        e.contains("did not finish within 1s") && e.contains("cancelled"),
        "{e}"
    );
    assert_eq!(v["error_type"], "TimeoutError");
    assert!(t.elapsed() < Duration::from_secs(10));
    assert!(
        srv.reqs()
            .iter()
            .any(|r| r.method == "PUT" && r.target.ends_with("/requests/req-1/cancel"))
    );
    drop(rc);

    // A wrong key is rejected at submit.
    let srv = fal_server(0, fal_ok());
    let env = fal_env(&srv, "");
    let mut rc = client(&env, &[("FAL_KEY", "wrong")]);
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("HTTP 401: No user found"),
        "{v}"
    );
    assert_eq!(srv.reqs().len(), 1);
}

#[test]
fn image_generate_fal_guards_the_image_download_and_edits_local_files() {
    // Without allow_private_urls the loopback image URL is a private address:
    // the guarded fetch refuses it, and the result keeps FAL's URL with a warning.
    let srv = fal_server(0, fal_ok());
    let env = fal_env(&srv, "");
    let mut rc = client(&env, &[("FAL_KEY", "fal-test")]);
    let r = rc.call_tool("image_generate", json!({"prompt": "x"}));
    let v = result_json(&r);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["image"], format!("{}/files/img.png", srv.base()));
    assert!(
        v["warning"].as_str().unwrap().contains("could not save"),
        "{v}"
    );
    assert!(
        !srv.reqs().iter().any(|r| r.target == "/files/img.png"),
        "the guard let a private fetch through"
    );

    // An edit with a local file: sent to the edit endpoint as a data: URI.
    let src = env.dir.path().join("src.png");
    std::fs::write(&src, png_bytes()).unwrap();
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "make it blue", "image_url": src, "reference_image_urls": ["https://example.invalid/ref.png"]})));
    assert_eq!(v["modality"], "image", "{v}");
    let edit = srv
        .reqs()
        .into_iter()
        .rev()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(edit.target, "/fal-ai/flux-2/klein/9b/edit");
    let body = edit.json();
    let urls = body["image_urls"].as_array().unwrap();
    assert!(
        urls[0]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    assert_eq!(urls[1], "https://example.invalid/ref.png");
    assert!(body.get("image_size").is_none() || body["image_size"] == "landscape_16_9");
    // A non-image local file is never sent.
    let secret = env.dir.path().join("id_rsa");
    std::fs::write(&secret, "-----BEGIN OPENSSH PRIVATE KEY-----").unwrap();
    let n = srv.reqs().len();
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "x", "image_url": secret}),
    ));
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("not a PNG, JPEG, WebP or GIF"),
        "{v}"
    );
    assert_eq!(srv.reqs().len(), n);
    drop(rc);

    // A text-only model refuses image_url, as Hermes does.
    let env = fal_env(&srv, "  model: fal-ai/z-image/turbo\n");
    std::fs::write(
        env.hermes_home().join("config.yaml"),
        format!(
            "image_gen:\n  model: fal-ai/z-image/turbo\n  fal:\n    base_url: {}\n",
            srv.base()
        ),
    )
    .unwrap();
    let mut rc = client(&env, &[("FAL_KEY", "fal-test")]);
    let tool = listed(&mut rc)
        .into_iter()
        .find(|t| t["name"] == "image_generate")
        .unwrap();
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .contains("this model is text-to-image only")
    );
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "x", "image_url": "https://a/b.png"}),
    ));
    assert!(
        v["error"].as_str().unwrap().starts_with(
            "Model 'Z-Image Turbo' (fal-ai/z-image/turbo) is not capable of image-to-image"
        ),
        "{v}"
    );
}

#[test]
fn image_generate_unavailable_without_a_backend() {
    let env = TestEnv::new();
    let out = env.cmd().args(["tools", "--json"]).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "image_generate")
        .unwrap()
        .clone();
    assert_eq!(t["available"], false);
    assert_eq!(t["toolset"], "image_gen");
    assert!(t["reason"].as_str().unwrap().contains("FAL_KEY"), "{t}");
    env.write_hermes("config.yaml", "image_gen: {provider: openai}\n");
    let out = env.cmd().args(["tools"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("image_generate") && text.contains("OPENAI_API_KEY"),
        "{text}"
    );
}

// ------------------------------------------------------------------ image_generate: OpenAI Images

#[test]
fn image_generate_openai_images_api_over_loopback() {
    let b64 = base64::engine::general_purpose::STANDARD.encode(png_bytes());
    let srv = TestServer::start(move |req| {
        if req.header("authorization") != Some("Bearer sk-img") {
            return Resp::json(
                401,
                json!({"error": {"message": "Incorrect API key provided"}}),
            );
        }
        match req.target.as_str() {
            "/v1/images/generations" | "/v1/images/edits" => Resp::json(
                200,
                json!({
                    "created": 1, "data": [{"b64_json": b64, "revised_prompt": "a lighthouse, revised"}]
                }),
            ),
            _ => Resp::json(404, json!({"error": {"message": "no route"}})),
        }
    });
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        "image_gen:\n  provider: openai\n  model: gpt-image-2-high\n",
    );
    let base = format!("{}/v1", srv.base());
    let mut rc = client(
        &env,
        &[("OPENAI_API_KEY", "sk-img"), ("OPENAI_BASE_URL", &base)],
    );
    let tool = listed(&mut rc)
        .into_iter()
        .find(|t| t["name"] == "image_generate")
        .unwrap();
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .contains("Active backend: OpenAI · model: gpt-image-2-high")
    );
    let r = rc.call_tool(
        "image_generate",
        json!({"prompt": "a lighthouse", "aspect_ratio": "square"}),
    );
    let v = result_json(&r);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "openai");
    assert_eq!(v["model"], "gpt-image-2-high");
    assert_eq!(v["revised_prompt"], "a lighthouse, revised");
    let p = PathBuf::from(v["image"].as_str().unwrap());
    assert!(p.starts_with(env.hermes_home().join("cache/images")));
    assert!(
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("openai_gpt-image-2-high_")
    );
    assert_eq!(std::fs::read(&p).unwrap(), png_bytes());
    assert!(
        r["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "image")
    );
    let req = &srv.reqs()[0];
    assert_eq!(
        req.json(),
        json!({"model": "gpt-image-2", "prompt": "a lighthouse", "size": "1024x1024", "n": 1, "quality": "high"})
    );

    // Edit: multipart with the source image file.
    let src = env.dir.path().join("in.png");
    std::fs::write(&src, png_bytes()).unwrap();
    let v = result_json(&rc.call_tool(
        "image_generate",
        json!({"prompt": "make it night", "image_url": src}),
    ));
    assert_eq!(v["modality"], "image", "{v}");
    let edit = srv
        .reqs()
        .into_iter()
        .find(|r| r.target == "/v1/images/edits")
        .unwrap();
    assert!(
        edit.header("content-type")
            .unwrap()
            .starts_with("multipart/form-data; boundary=")
    );
    let body = String::from_utf8_lossy(&edit.body);
    assert!(
        body.contains("name=\"image\"; filename=\"in.png\""),
        "{body}"
    );
    assert!(body.contains("name=\"quality\"\r\n\r\nhigh\r\n"));
    assert!(edit.body.windows(8).any(|w| w == b"\x89PNG\r\n\x1a\n"));
    drop(rc);

    // API errors come back in Hermes' shape.
    let mut rc = client(
        &env,
        &[("OPENAI_API_KEY", "sk-bad"), ("OPENAI_BASE_URL", &base)],
    );
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["success"], false);
    assert_eq!(v["error_type"], "api_error");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("OpenAI image generation failed: HTTP 401: Incorrect API key provided"),
        "{v}"
    );
}

/// The `piper` provider's contract with the `piper` CLI (`-m <model.onnx> -f <out.wav>`,
/// text on stdin) and voice lookup under `tts.piper.voices_dir`. The real piper-tts is
/// not installed here, so a stand-in `piper` on PATH records its arguments and speaks
/// with espeak-ng; what is tested is our side: arguments, stdin, WAV handling.
#[test]
fn tts_piper_provider_runs_the_piper_cli_with_a_local_voice() {
    require("espeak-ng", "espeak-ng");
    let env = TestEnv::new();
    let bin = env.dir.path().join("bin");
    let voices = env.dir.path().join("voices");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&voices).unwrap();
    let log = env.dir.path().join("piper.log");
    let script = format!(
        "#!/bin/sh\necho \"$@\" > '{}'\nout=''\nwhile [ $# -gt 0 ]; do [ \"$1\" = -f ] && out=\"$2\"; shift; done\nexec espeak-ng -w \"$out\" --stdin\n",
        log.display()
    );
    let piper = bin.join("piper");
    std::fs::write(&piper, script).unwrap();
    std::fs::set_permissions(&piper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // No voice model yet: unavailable, and the reason says where to put it.
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: piper\n  piper:\n    voice: en_GB-test\n    voices_dir: {}\n",
            voices.display()
        ),
    );
    let out = env
        .cmd()
        .env("PATH", &path)
        .args(["tools", "--json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "text_to_speech")
        .unwrap()
        .clone();
    assert_eq!(t["available"], false);
    assert!(
        t["reason"].as_str().unwrap().contains("en_GB-test.onnx"),
        "{t}"
    );
    std::fs::write(voices.join("en_GB-test.onnx"), b"model").unwrap();
    std::fs::write(voices.join("en_GB-test.onnx.json"), b"{}").unwrap();
    let mut rc = client(&env, &[("PATH", &path)]);
    let wav = env.dir.path().join("p.wav");
    let v = result_json(&rc.call_tool(
        "text_to_speech",
        json!({"text": "Piper speaks.", "output_path": wav}),
    ));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "piper");
    assert!(wav_duration(&wav) > 0.5);
    let args = std::fs::read_to_string(&log).unwrap();
    assert!(
        args.starts_with(&format!(
            "-m {} -f ",
            voices.join("en_GB-test.onnx").display()
        )),
        "{args}"
    );
}

/// Some OpenAI-compatible endpoints answer with a URL instead of b64_json: the
/// image is downloaded with the guarded fetch (loopback only when allowed).
#[test]
fn image_generate_openai_url_answers_are_fetched_through_the_guard() {
    let srv = TestServer::start(|req| match req.target.as_str() {
        "/v1/images/generations" => Resp::json(
            200,
            json!({"created": 1, "data": [{"url": format!("{}/files/x.png", req.base)}]}),
        ),
        "/files/x.png" => Resp::bytes("image/png", png_bytes()),
        _ => Resp::json(404, json!({})),
    });
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "image_gen: {provider: openai}\n");
    let base = format!("{}/v1", srv.base());
    let mut rc = client(
        &env,
        &[
            ("OPENAI_API_KEY", "k"),
            ("OPENAI_BASE_URL", &base),
            ("HERMES_ALLOW_PRIVATE_URLS", "true"),
        ],
    );
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(
        std::fs::read(v["image"].as_str().unwrap()).unwrap(),
        png_bytes()
    );
    drop(rc);
    let mut rc = client(&env, &[("OPENAI_API_KEY", "k"), ("OPENAI_BASE_URL", &base)]);
    let n = srv.reqs().len();
    let v = result_json(&rc.call_tool("image_generate", json!({"prompt": "x"})));
    assert_eq!(v["image"], format!("{}/files/x.png", srv.base()), "{v}");
    assert!(v["warning"].as_str().unwrap().contains("could not save"));
    assert_eq!(
        srv.reqs().len(),
        n + 1,
        "only the API call, no private fetch"
    );
}

/// Cancelling the MCP call cancels the queued FAL request too.
#[test]
fn image_generate_cancelled_call_cancels_the_fal_request() {
    let srv = fal_server(usize::MAX, fal_ok());
    let env = fal_env(&srv, "");
    let mut rc = client(&env, &[("FAL_KEY", "fal-test")]);
    let id = rc.send(
        "tools/call",
        json!({"name": "image_generate", "arguments": {"prompt": "x"}}),
    );
    srv.wait_for(
        "the queued request's status poll",
        |r| r.iter().any(|r| r.target.ends_with("/status")),
        10,
    );
    rc.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user"}),
    );
    srv.wait_for(
        "a PUT to cancel_url after the call was cancelled",
        |r| {
            r.iter()
                .any(|r| r.method == "PUT" && r.target.ends_with("/requests/req-1/cancel"))
        },
        10,
    );
}

/// Cancelling a call kills the command provider's whole process group.
#[test]
fn tts_cancelled_call_kills_the_command_provider() {
    let env = TestEnv::new();
    let pidfile = env.dir.path().join("child.pid");
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: hang\n  providers:\n    hang:\n      command: \"sleep 60 & echo $! > '{}'; wait\"\n",
            pidfile.display()
        ),
    );
    let mut rc = client(&env, &[]);
    let id = rc.send(
        "tools/call",
        json!({"name": "text_to_speech", "arguments": {"text": "x"}}),
    );
    let pid = poll_until(
        "the command's pid file",
        10,
        || {
            std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
        },
        Option::is_some,
    )
    .unwrap();
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.split_whitespace().nth(2).is_none_or(|st| st != "Z"))
            .unwrap_or(false)
    };
    assert!(alive(pid));
    rc.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user"}),
    );
    poll_until(
        "the end of the provider's child process after the cancellation",
        10,
        || alive(pid),
        |a| !a,
    );
}
