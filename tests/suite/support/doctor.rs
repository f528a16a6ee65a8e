//! Helpers of the doctor suites: `hermes-mcp doctor --json` run in a
//! [`CodexEnv`], and its findings read.

use std::process::{Command, Output};

use serde_json::Value;

use super::common::bin;
use super::migrate::CodexEnv;

/// `hermes-mcp doctor --json ARGS` in `env`, with `envs` added to its
/// environment: the run and its parsed report.
pub fn doctor_json(env: &CodexEnv, args: &[&str], envs: &[(&str, &str)]) -> (Output, Value) {
    let mut c = Command::new(bin());
    env.apply(&mut c);
    c.envs(envs.iter().copied());
    let out = c.args(["doctor", "--json"]).args(args).output().unwrap();
    let v = json_of(&out);
    (out, v)
}

/// The report `doctor --json` printed (both streams in the failure when it printed none).
pub fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor --json printed no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The finding with `code` in a report, if there is one.
pub fn finding<'a>(v: &'a Value, code: &str) -> Option<&'a Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
}
