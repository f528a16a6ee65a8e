//! `text_to_speech` with provider `edge` (Hermes' default) through the real server
//! binary, against the loopback Read Aloud fake — and Hermes' own `text_to_speech_tool`
//! against the same fake, so the config keys, the SSML it leads to and the result shape
//! are Hermes', not our reading of them.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::support::common::*;
use super::support::edge::{FakeEdge, fake_audio};
use super::support::fake::free_port;
use super::support::prereq::require_program;
use super::support::tts::{real_mp3, run_hermes_tts, tts_choice};

const ARIA: &str = "Microsoft Server Speech Text to Speech Voice (en-US, AriaNeural)";
const SONIA: &str = "Microsoft Server Speech Text to Speech Voice (en-GB, SoniaNeural)";

/// Hermes' own `text_to_speech_tool` with `$HERMES_HOME` = the env's, edge-tts pointed
/// at `wss_url`; returns its JSON result.
fn hermes_tts(env: &TestEnv, wss_url: &str, text: &str, out: &Path) -> Value {
    const DRIVER: &str = r#"
import json, sys
import edge_tts.communicate as communicate
communicate.WSS_URL = sys.argv[1]
from tools.tts_tool import text_to_speech_tool
print(text_to_speech_tool(text=sys.argv[2], output_path=sys.argv[3]))
"#;
    run_hermes_tts(
        env,
        &[],
        DRIVER,
        &[wss_url.as_ref(), text.as_ref(), out.as_os_str()],
    )
}

fn hermes_keys(v: &Value) -> Value {
    let mut m = serde_json::Map::new();
    for k in ["success", "provider", "voice_compatible", "error"] {
        if let Some(x) = v.get(k) {
            m.insert(k.into(), x.clone());
        }
    }
    Value::Object(m)
}

#[test]
fn unset_provider_is_edge_with_hermes_voice_and_needs_no_program_or_key() {
    let fake = FakeEdge::start();
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!("tts:\n  edge:\n    base_url: {}\n", fake.base_url()),
    );
    let empty = tempfile::tempdir().unwrap();
    let path = empty.path().to_str().unwrap();
    // Available with no espeak-ng, no converter and no key; `tools` says why edge runs.
    let (tool, choice) = tts_choice(&env, &[("PATH", path), ("OPENAI_API_KEY", "sk-x")]);
    assert_eq!(tool["available"], true, "{tool}");
    assert_eq!(choice["provider"], "edge", "{choice}");
    assert!(
        choice["why"]
            .as_str()
            .unwrap()
            .contains("tts.provider unset"),
        "{choice}"
    );
    let out = env.dir.path().join("hello.mp3");
    let mut rc = client(&env, &[("PATH", path), ("OPENAI_API_KEY", "sk-x")]);
    let r = rc.call_tool(
        "text_to_speech",
        json!({"text": "Hello <world> & you", "output_path": out}),
    );
    assert!(!is_error(&r), "{r}");
    let v = result_json(&r);
    assert_eq!(v["success"], true);
    assert_eq!(v["provider"], "edge");
    assert_eq!(v["file_path"], out.to_str().unwrap());
    assert_eq!(v["media_tag"], format!("MEDIA:{}", out.display()));
    assert_eq!(v["voice_compatible"], false);
    assert_eq!(v["format"], "mp3");
    assert!(v.get("note").is_none(), "{v}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        fake_audio(ARIA, "+0%", "+0%", "+0Hz", "Hello &lt;world&gt; &amp; you")
    );
    assert_eq!(fake.errors(), Vec::<String>::new());

    // The default path: $HERMES_HOME/cache/audio/tts_<timestamp>.mp3.
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "Again"})));
    let p = PathBuf::from(v["file_path"].as_str().unwrap());
    assert_eq!(p.parent().unwrap(), env.hermes_home().join("cache/audio"));
    assert_eq!(p.extension().unwrap(), "mp3");
    assert!(std::fs::read(&p).unwrap().starts_with(b"FAKE-MP3|"));
}

/// Voice and speed from `tts.edge.*` (and `tts.speed`), an unknown provider name, and
/// what Hermes itself sends and answers for the same config.
#[test]
fn edge_settings_and_fallthrough_match_hermes_itself() {
    let cases: &[(&str, &str, &str)] = &[
        // (tts section, voice expected, rate expected)
        (
            "  provider: edge\n  edge:\n    voice: en-GB-SoniaNeural\n    speed: 1.5\n",
            SONIA,
            "+50%",
        ),
        ("  speed: 0.8\n", ARIA, "-20%"),
        // Not built-in, no command, no plugin: Hermes falls through to Edge.
        ("  provider: my-voice\n", ARIA, "+0%"),
    ];
    for (section, voice, rate) in cases {
        let fake = FakeEdge::start();
        let env = TestEnv::new();
        // Hermes' edge-tts gets its URL from the driver; ours from tts.edge.base_url.
        let mut cfg = format!("tts:\n{section}");
        if cfg.contains("  edge:\n") {
            cfg = cfg.replace(
                "  edge:\n",
                &format!("  edge:\n    base_url: {}\n", fake.base_url()),
            );
        } else {
            cfg.push_str(&format!("  edge:\n    base_url: {}\n", fake.base_url()));
        }
        env.write_hermes("config.yaml", &cfg);
        let theirs_out = env.dir.path().join("hermes.mp3");
        let theirs = hermes_tts(&env, &fake.python_wss_url(), "Speak up.", &theirs_out);
        let n = fake.sessions().len();
        let ours_out = env.dir.path().join("ours.mp3");
        let mut rc = client(&env, &[]);
        let ours = result_json(&rc.call_tool(
            "text_to_speech",
            json!({"text": "Speak up.", "output_path": ours_out}),
        ));
        assert_eq!(hermes_keys(&ours), hermes_keys(&theirs), "{cfg}");
        assert_eq!(theirs["file_path"], theirs_out.to_str().unwrap());
        assert_eq!(ours["file_path"], ours_out.to_str().unwrap());
        assert_eq!(
            std::fs::read(&ours_out).unwrap(),
            std::fs::read(&theirs_out).unwrap()
        );
        let ssml: Vec<_> = fake.sessions().iter().map(|s| s.ssml.clone()).collect();
        assert_eq!(ssml[n..], ssml[..n], "{cfg}");
        let s = ssml[0].clone().unwrap();
        assert_eq!((s[0].as_str(), s[1].as_str()), (*voice, *rate), "{cfg}");
        assert_eq!(fake.errors(), Vec::<String>::new());
    }
}

#[test]
fn edge_errors_are_worded_like_hermes() {
    let env = TestEnv::new();
    // Nothing listens on the port.
    let port = free_port();
    env.write_hermes(
        "config.yaml",
        &format!("tts:\n  edge:\n    base_url: ws://127.0.0.1:{port}/x\n"),
    );
    let mut rc = client(&env, &[]);
    let r = rc.call_tool("text_to_speech", json!({"text": "x"}));
    assert!(is_error(&r));
    let v = result_json(&r);
    assert_eq!(v["success"], false);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("TTS generation failed (edge): cannot connect to the Edge TTS service"),
        "{v}"
    );
    drop(rc);

    // A voice edge-tts rejects: its ValueError, so a configuration error.
    let fake = FakeEdge::start();
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  edge:\n    voice: Aria\n    base_url: {}\n",
            fake.base_url()
        ),
    );
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x"})));
    assert_eq!(
        v["error"], "TTS configuration error (edge): Invalid voice 'Aria'.",
        "{v}"
    );
    drop(rc);

    // The service refusing (403 three times).
    let fake = FakeEdge::start();
    fake.forbid_next(3);
    env.write_hermes(
        "config.yaml",
        &format!("tts:\n  edge:\n    base_url: {}\n", fake.base_url()),
    );
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x"})));
    assert!(
        v["error"].as_str().unwrap().starts_with(
            "TTS generation failed (edge): Edge TTS service refused the connection: HTTP 403"
        ),
        "{v}"
    );
    drop(rc);

    // The website blocklist applies to the configured endpoint.
    env.write_hermes(
        "config.yaml",
        "security:\n  website_blocklist:\n    enabled: true\n    domains: [speech.example.test]\ntts:\n  edge:\n    base_url: wss://speech.example.test/x\n",
    );
    let mut rc = client(&env, &[]);
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x"})));
    let e = v["error"].as_str().unwrap();
    assert!(e.starts_with("TTS generation failed (edge): "), "{v}");
    assert!(e.contains("speech.example.test"), "{v}");
}

/// A real MP3 from the service is kept as-is for `.mp3`, measured from its frame
/// headers, and decoded for `.wav` / `.ogg` when lame (or ffmpeg) is here.
#[test]
fn edge_mp3_is_measured_and_converted_for_other_formats() {
    require_program("lame");
    require_program("sox");
    let dir = tempfile::tempdir().unwrap();
    let mp3 = real_mp3(dir.path());
    let fake = FakeEdge::start();
    fake.answer_audio(mp3.clone());
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        &format!("tts:\n  edge:\n    base_url: {}\n", fake.base_url()),
    );
    let mut rc = client(&env, &[]);
    let out = env.dir.path().join("a.mp3");
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x", "output_path": out})));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(std::fs::read(&out).unwrap(), mp3);
    let d = v["duration_seconds"].as_f64().unwrap();
    assert!((d - 1.0).abs() < 0.1, "{v}");

    let wav = env.dir.path().join("a.wav");
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x", "output_path": wav})));
    assert_eq!(v["file_path"], wav.to_str().unwrap(), "{v}");
    assert!(std::fs::read(&wav).unwrap().starts_with(b"RIFF"));
    assert!(
        (v["duration_seconds"].as_f64().unwrap() - 1.0).abs() < 0.1,
        "{v}"
    );

    let ogg = env.dir.path().join("a.ogg");
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x", "output_path": ogg})));
    assert_eq!(v["file_path"], ogg.to_str().unwrap(), "{v}");
    assert!(std::fs::read(&ogg).unwrap().starts_with(b"OggS"));
    // No temporary files left behind.
    let names: Vec<_> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(".tts-"))
        .collect();
    assert!(names.is_empty(), "{names:?}");

    // Without lame/ffmpeg on PATH: the MP3 is kept, and the note says why.
    let empty = tempfile::tempdir().unwrap();
    drop(rc);
    let mut rc = client(&env, &[("PATH", empty.path().to_str().unwrap())]);
    let flac = env.dir.path().join("b.flac");
    let v = result_json(&rc.call_tool("text_to_speech", json!({"text": "x", "output_path": flac})));
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(
        v["file_path"],
        env.dir.path().join("b.mp3").to_str().unwrap()
    );
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .contains("install ffmpeg or lame"),
        "{v}"
    );
}
