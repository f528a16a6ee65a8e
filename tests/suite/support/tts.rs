//! Helpers for the `text_to_speech` suites: the provider choice `tools --json` reports,
//! Hermes' own `text_to_speech_tool` and ours on the same input, and a real MP3.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::common::{TestEnv, client, hermes_python, result_json};

/// `hermes-mcp tools --json`'s provider entry for `text_to_speech`.
pub fn tts_choice(env: &TestEnv, vars: &[(&str, &str)]) -> (Value, Value) {
    let mut c = env.cmd();
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.args(["tools", "--json"]).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let tool = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "text_to_speech")
        .cloned()
        .unwrap_or(Value::Null);
    let choice = doc
        .to_string()
        .contains("\"job\":\"text_to_speech\"")
        .then(|| find_job(&doc, "text_to_speech"))
        .flatten()
        .unwrap_or(Value::Null);
    (tool, choice)
}

fn find_job(v: &Value, job: &str) -> Option<Value> {
    match v {
        Value::Object(m) => {
            if m.get("job").and_then(Value::as_str) == Some(job) {
                return Some(v.clone());
            }
            m.values().find_map(|x| find_job(x, job))
        }
        Value::Array(a) => a.iter().find_map(|x| find_job(x, job)),
        _ => None,
    }
}

/// One second of a 440 Hz tone, encoded by lame.
pub fn real_mp3(dir: &Path) -> Vec<u8> {
    let wav = dir.join("tone.wav");
    let mp3 = dir.join("tone.mp3");
    let ok = Command::new("sox")
        .args(["-n", "-r", "24000", "-c", "1", "-b", "16"])
        .arg(&wav)
        .args(["synth", "1", "sine", "440"])
        .status()
        .unwrap()
        .success();
    assert!(ok, "sox could not make a tone");
    let ok = Command::new("lame")
        .args(["--quiet", "-b", "48"])
        .arg(&wav)
        .arg(&mp3)
        .status()
        .unwrap()
        .success();
    assert!(ok, "lame could not encode");
    std::fs::read(&mp3).unwrap()
}

/// Hermes' own `text_to_speech_tool` with this env's `$HERMES_HOME` and `vars`.
pub fn hermes_tts(env: &TestEnv, vars: &[(&str, &str)], text: &str, out: &Path) -> Value {
    const DRIVER: &str = r#"
import sys
from tools.tts_tool import text_to_speech_tool
print(text_to_speech_tool(text=sys.argv[1], output_path=sys.argv[2]))
"#;
    run_hermes_tts(env, vars, DRIVER, &[text.as_ref(), out.as_os_str()])
}

/// Run `driver` (a `python -c` script that prints the JSON result of Hermes'
/// `text_to_speech_tool` last) with `args`, in Hermes' Python, this env's homes plus `vars`
/// and no proxy variables; its JSON result.
pub fn run_hermes_tts(
    env: &TestEnv,
    vars: &[(&str, &str)],
    driver: &str,
    args: &[&std::ffi::OsStr],
) -> Value {
    let mut c = Command::new(hermes_python("tools.tts_tool"));
    c.args(["-c", driver]).args(args);
    env.apply(&mut c);
    for (k, v) in vars {
        c.env(k, v);
    }
    for k in [
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "all_proxy",
    ] {
        c.env_remove(k);
    }
    let o = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| {
        panic!(
            "Hermes' text_to_speech_tool printed no JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Our `text_to_speech` through `hermes-mcp serve`, with `vars`, on the same input.
pub fn ours(env: &TestEnv, vars: &[(&str, &str)], text: &str, out: &Path) -> Value {
    let mut rc = client(env, vars);
    result_json(&rc.call_tool("text_to_speech", json!({"text": text, "output_path": out})))
}
