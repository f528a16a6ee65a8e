//! The codex end-to-end harness (`tools/codex_e2e.py`: a loopback mock of the Responses
//! API driving the real `codex exec`) and what the model saw through it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::common::bin;

/// Run the harness; returns its JSON summary (panics with the summary on failure).
pub fn run_harness(hermes_home: &Path, tool: &str, args: &str, extra: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/codex_e2e.py");
    let out = Command::new("python3")
        .arg(&script)
        .args([
            "--bin",
            bin().to_str().unwrap(),
            "--hermes-home",
            hermes_home.to_str().unwrap(),
        ])
        .args(["--tool", tool, "--args", args])
        .args(extra)
        .output()
        .expect("python3 must be installed to run the codex end-to-end harness");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(2), "harness setup failed: {stderr}");
    let summary: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("harness printed no JSON ({e}); stderr: {stderr}"));
    summary
}

/// What the model received as the tool's output (the second request's function_call_output).
pub fn model_saw(s: &Value) -> String {
    match &s["function_call_output"] {
        Value::String(t) => t.clone(),
        other => other.to_string(),
    }
}
