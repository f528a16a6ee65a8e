//! hermes-tools' `env_vars` lists only what the setup needs, so the real
//! `codex mcp list` stays readable and `codex doctor` quiet, while every key
//! stays reachable (`serve` reads `$HERMES_HOME/.env` itself).

use std::process::Command;

use serde_json::Value;

use super::support::common::{bin, hermes_python};
use super::support::migrate::CodexEnv;

fn migrate(env: &CodexEnv, vars: &[(&str, &str)]) -> Value {
    let mut c = Command::new(bin());
    env.apply(&mut c);
    let out = c
        .envs(vars.iter().copied())
        .args(["migrate", "--no-plugins", "--no-hermes-hook", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn hermes_tools_row(env: &CodexEnv) -> String {
    let out = env.codex(&["mcp", "list"]);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.starts_with("hermes-tools"))
        .expect("hermes-tools in codex mcp list")
        .to_string()
}

fn codex_doctor_env_warnings(env: &CodexEnv) -> Vec<String> {
    let out = env.codex(&["doctor"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&out.stderr).lines())
        .filter(|l| l.contains("hermes-tools") && l.contains("is not set"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_normal_setup_keeps_codex_mcp_list_readable_and_codex_doctor_quiet() {
    let env = CodexEnv::new();
    env.write_hermes("config.yaml", "toolsets: [hermes-cli]\n");
    env.write_hermes(".env", "FAL_KEY=fal_from_dotenv\n");
    // Hermes exports .env into its own environment: the same value in the
    // shell needs no pass-through.
    let report = migrate(&env, &[("FAL_KEY", "fal_from_dotenv")]);
    assert_eq!(
        report["hermes_tools_env_vars"]["names"],
        serde_json::json!([])
    );
    let row = hermes_tools_row(&env);
    assert!(row.len() < 200, "{} chars: {row}", row.len());
    let warnings = codex_doctor_env_warnings(&env);
    assert!(warnings.is_empty(), "{warnings:?}");
    // The key still reaches serve: started as codex starts it, image_generate works.
    let mut c = Command::new(bin());
    env.apply(&mut c);
    let out = c.args(["doctor", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        !v["unavailable_tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "image_generate"),
        "{v:#}"
    );
}

#[test]
fn a_key_only_in_the_shell_is_passed_through_and_reported() {
    let env = CodexEnv::new();
    env.write_hermes("config.yaml", "toolsets: [hermes-cli]\n");
    let report = migrate(&env, &[("EXA_API_KEY", "exa_shell")]);
    assert_eq!(
        report["hermes_tools_env_vars"]["names"],
        serde_json::json!(["EXA_API_KEY"])
    );
    assert!(!env.config().contains("exa_shell"));
    let row = hermes_tools_row(&env);
    assert!(row.contains("EXA_API_KEY"), "{row}");
    // codex has it when started from the same shell: no warning.
    let mut c = Command::new("codex");
    env.apply(&mut c);
    let out = c
        .env("EXA_API_KEY", "exa_shell")
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text
            .lines()
            .any(|l| l.contains("hermes-tools") && l.contains("is not set")),
        "{text}"
    );
    // The text report says where the list comes from.
    let mut c = Command::new(bin());
    env.apply(&mut c);
    let out = c
        .env("EXA_API_KEY", "exa_shell")
        .args(["migrate", "--no-plugins", "--no-hermes-hook"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("set in this shell: EXA_API_KEY"), "{text}");
}

#[test]
fn a_kanban_home_passes_the_dispatcher_worker_variables() {
    let env = CodexEnv::new();
    env.write_hermes("config.yaml", "toolsets: [hermes-cli, kanban]\n");
    let report = migrate(&env, &[]);
    let names: Vec<String> = report["hermes_tools_env_vars"]["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    // What the kanban tools read, nothing more (`codex doctor` warns about each one unset).
    let worker: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| {
            n.starts_with("HERMES_KANBAN")
                || n.starts_with("TERMINAL_")
                || *n == "HERMES_TENANT"
                || *n == "HERMES_PROFILE"
        })
        .collect();
    assert_eq!(
        worker,
        [
            "HERMES_PROFILE",
            "HERMES_KANBAN_TASK",
            "HERMES_KANBAN_RUN_ID",
            "HERMES_KANBAN_CLAIM_LOCK",
            "HERMES_KANBAN_DB",
            "HERMES_KANBAN_BOARD",
            "HERMES_TENANT",
            "TERMINAL_TIMEOUT",
        ]
    );
    // Each is one Hermes' dispatcher sets in a worker's environment (hermes-agent 0.19.0),
    // which reaches codex unchanged.
    let py = hermes_python("hermes_cli.kanban_db");
    let out = Command::new(py)
        .args([
            "-c",
            "import inspect, hermes_cli.kanban_db as k; print(inspect.getsource(k))",
        ])
        .output()
        .unwrap();
    let src = String::from_utf8_lossy(&out.stdout);
    for v in &worker {
        assert!(src.contains(&format!("env[\"{v}\"] = ")), "{v}");
    }
    assert_eq!(report["hermes_tools_env_vars"]["kanban"], true);
}
