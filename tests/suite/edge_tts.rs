//! TTS provider `edge`: hermes-mcp's Read Aloud client against a loopback fake of the
//! service, and the fake against the real `edge-tts` Python client Hermes uses.

use std::process::Command;

use hermes_mcp::toolsets::tts::edge::{self as edge_tts, EdgeTtsError};

use super::support::edge::{FakeEdge, fake_audio};
use super::support::fake::free_port;
use super::support::prereq::edge_tts_python;

const ARIA: &str = "Microsoft Server Speech Text to Speech Voice (en-US, AriaNeural)";

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn speak(fake: &FakeEdge, voice: &str, rate: &str, text: &str) -> Result<Vec<u8>, EdgeTtsError> {
    rt().block_on(edge_tts::synthesize(&fake.base_url(), voice, rate, text))
}

#[test]
fn speaks_escaped_ssml_and_returns_the_audio_frames() {
    let fake = FakeEdge::start();
    let mp3 = speak(&fake, edge_tts::DEFAULT_VOICE, "+50%", "Hi <you> & \x0bme").unwrap();
    assert_eq!(
        mp3,
        fake_audio(ARIA, "+50%", "+0%", "+0Hz", "Hi &lt;you&gt; &amp;  me")
    );
    assert_eq!(fake.errors(), Vec::<String>::new());
    let s = fake.sessions();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].gec_version, "2");
}

#[test]
fn a_403_corrects_the_clock_and_retries_then_falls_back_to_token_v1() {
    let fake = FakeEdge::start();
    fake.forbid_next(1);
    speak(&fake, "en-GB-SoniaNeural", "+0%", "one").unwrap();
    let v: Vec<_> = fake
        .sessions()
        .iter()
        .map(|s| (s.gec_version.clone(), s.rejected))
        .collect();
    assert_eq!(v, [("2".into(), true), ("2".into(), false)]);

    let fake = FakeEdge::start();
    fake.only_version("1");
    let mp3 = speak(&fake, "en-GB-SoniaNeural", "+0%", "two").unwrap();
    assert!(mp3.starts_with(b"FAKE-MP3|"));
    let v: Vec<_> = fake
        .sessions()
        .iter()
        .map(|s| s.gec_version.clone())
        .collect();
    assert_eq!(v, ["2", "2", "1"]);
    assert_eq!(fake.errors(), Vec::<String>::new());

    let fake = FakeEdge::start();
    fake.forbid_next(3);
    let e = speak(&fake, "en-GB-SoniaNeural", "+0%", "three").unwrap_err();
    assert!(
        matches!(e, EdgeTtsError::Handshake { status: 403, .. }),
        "{e}"
    );
}

#[test]
fn long_text_goes_out_in_4096_byte_chunks() {
    let fake = FakeEdge::start();
    let text = "word ".repeat(1000); // 5000 bytes
    let mp3 = speak(&fake, edge_tts::DEFAULT_VOICE, "+0%", &text).unwrap();
    let sessions = fake.sessions();
    assert_eq!(sessions.len(), 2);
    let texts: Vec<String> = sessions
        .iter()
        .map(|s| s.ssml.clone().unwrap()[4].clone())
        .collect();
    assert!(texts.iter().all(|t| t.len() <= 4096));
    assert_eq!(texts.join(" "), text.trim());
    let want: Vec<u8> = texts
        .iter()
        .flat_map(|t| fake_audio(ARIA, "+0%", "+0%", "+0Hz", t))
        .collect();
    assert_eq!(mp3, want);
}

#[test]
fn bad_parameters_and_dead_endpoints_are_reported() {
    let fake = FakeEdge::start();
    let e = speak(&fake, "Aria", "+0%", "x").unwrap_err();
    assert_eq!(e.to_string(), "Invalid voice 'Aria'.");
    let e = speak(&fake, edge_tts::DEFAULT_VOICE, "fast", "x").unwrap_err();
    assert_eq!(e.to_string(), "Invalid rate 'fast'.");
    assert!(fake.sessions().is_empty());

    let port = free_port();
    let e = rt()
        .block_on(edge_tts::synthesize(
            &format!("ws://127.0.0.1:{port}/x"),
            edge_tts::DEFAULT_VOICE,
            "+0%",
            "x",
        ))
        .unwrap_err();
    assert!(matches!(e, EdgeTtsError::Connect { .. }), "{e}");
    let e = rt()
        .block_on(edge_tts::synthesize(
            "https://example.invalid/",
            "en-US-AriaNeural",
            "+0%",
            "x",
        ))
        .unwrap_err();
    assert!(matches!(e, EdgeTtsError::BadUrl { .. }), "{e}");
}

const DRIVER: &str = r#"
import asyncio, sys
import edge_tts, edge_tts.communicate as communicate
communicate.WSS_URL = sys.argv[1]          # the only change: talk to the loopback fake
text = open(sys.argv[4], encoding="utf-8").read()
asyncio.run(edge_tts.Communicate(text, sys.argv[2], rate=sys.argv[3]).save(sys.argv[5]))
"#;

/// The fake is what the real client expects (it saves the audio, raising on any frame it
/// does not understand), the fake accepts everything the real client sends (including its
/// Sec-MS-GEC token, checked against ours), and hermes-mcp gets byte-identical audio.
#[test]
fn the_real_edge_tts_client_accepts_the_fake_and_gets_what_we_get() {
    let py = edge_tts_python();
    let dir = tempfile::tempdir().unwrap();
    for (i, (voice, rate, text)) in [
        (
            "en-US-AriaNeural",
            "+0%",
            "Hello from Hermes <3 & friends.".to_string(),
        ),
        ("zh-CN-liaoning-XiaobeiNeural", "-20%", "你好 ".repeat(700)), // > 4096 bytes: 2 chunks
    ]
    .into_iter()
    .enumerate()
    {
        let fake = FakeEdge::start();
        let input = dir.path().join(format!("in{i}.txt"));
        std::fs::write(&input, &text).unwrap();
        let out = dir.path().join(format!("out{i}.mp3"));
        let run = Command::new(&py)
            .args(["-c", DRIVER, &fake.python_wss_url(), voice, rate])
            .arg(&input)
            .arg(&out)
            .env_remove("http_proxy")
            .env_remove("https_proxy")
            .env_remove("HTTP_PROXY")
            .env_remove("HTTPS_PROXY")
            .env_remove("ALL_PROXY")
            .env_remove("all_proxy")
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "edge-tts against the fake failed: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert_eq!(fake.errors(), Vec::<String>::new(), "what edge-tts sent");
        let python_audio = std::fs::read(&out).unwrap();
        let python_sessions = fake.sessions();
        assert!(!python_audio.is_empty());

        let ours = speak(&fake, voice, rate, &text).unwrap();
        assert_eq!(fake.errors(), Vec::<String>::new(), "what hermes-mcp sent");
        assert_eq!(ours, python_audio, "{voice}");
        let ssml = |s: &[super::support::edge::Session]| -> Vec<_> {
            s.iter().map(|s| s.ssml.clone()).collect()
        };
        let all = fake.sessions();
        assert_eq!(ssml(&all[python_sessions.len()..]), ssml(&python_sessions));
        eprintln!(
            "edge-tts sent Sec-MS-GEC-Version {}; hermes-mcp {}",
            python_sessions[0].gec_version,
            all[python_sessions.len()].gec_version
        );
    }
}
