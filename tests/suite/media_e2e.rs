//! `text_to_speech` through the real codex binary (tools/codex_e2e.py).
//!
//! text_to_speech writes a file, so it is not read-only and Codex asks for
//! approval; `codex exec` cannot answer (it behaves as approval `never`). The
//! harness's `--via appserver` mode runs the turn through `codex app-server`
//! with `approvalPolicy: on-request` and accepts any approval request, which
//! is what a user clicking "allow" does.

use serde_json::Value;

use super::support::codex::{model_saw, run_harness};
use super::support::common::*;
use super::support::media::require;

#[test]
fn codex_e2e_text_to_speech_returns_the_file_path_to_the_model() {
    require("espeak-ng", "espeak-ng");
    let env = TestEnv::new();
    // Offline: Hermes' default (edge) would need Microsoft's service.
    env.write_hermes("config.yaml", "tts:\n  provider: espeak-ng\n");
    let s = run_harness(
        &env.hermes_home(),
        "text_to_speech",
        r#"{"text":"Hello from Codex."}"#,
        &["--via", "appserver"],
    );
    assert_eq!(
        s["ok"],
        true,
        "codex run failed:\n{}",
        serde_json::to_string_pretty(&s).unwrap()
    );
    // Codex saw a writing tool (not read-only), which `codex exec` would refuse
    // under its `never` approval policy; the app-server turn approved it.
    assert_eq!(s["tool_call"]["readOnlyHint"], false, "{s}");
    let saw = model_saw(&s);
    // The model receives the tool's JSON text (possibly wrapped in Codex's content list).
    let inner: Value = serde_json::from_str(&saw)
        .ok()
        .and_then(|v: Value| match v {
            Value::Array(items) => items.iter().find_map(|i| {
                i["text"]
                    .as_str()
                    .and_then(|t| serde_json::from_str(t).ok())
            }),
            other @ Value::Object(_) => Some(other),
            _ => None,
        })
        .unwrap_or_else(|| panic!("model saw no JSON result: {saw}"));
    assert_eq!(inner["success"], true, "{inner}");
    assert_eq!(inner["provider"], "espeak-ng");
    let path = inner["file_path"].as_str().unwrap();
    assert!(
        path.starts_with(env.hermes_home().join("cache/audio").to_str().unwrap()),
        "{path}"
    );
    let meta = std::fs::metadata(path).expect("the file the model was told about exists");
    assert!(meta.len() > 1000);
}
