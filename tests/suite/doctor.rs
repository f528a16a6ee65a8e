//! `hermes-mcp doctor`: starts hermes-tools as codex would, times it, and
//! names every problem (exit 1) or none (exit 0). codex itself judges
//! config.toml, so these tests need the real codex 0.169.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

use serde_json::Value;

use super::common::{bin, hermes_python};
use super::migrate::{END, START};
use super::migrate_codex::CodexEnv;

fn doctor(env: &CodexEnv, extra: &[(&str, &str)]) -> (Output, Value) {
    let mut c = Command::new(bin());
    env.apply(&mut c);
    c.envs(extra.iter().copied());
    let out = c.args(["doctor", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor --json printed no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, v)
}

fn codes(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

fn migrated(yaml: &str) -> CodexEnv {
    let env = CodexEnv::new();
    env.write_hermes("config.yaml", yaml);
    let out = env.migrate(&["--no-plugins", "--no-hermes-hook"]);
    assert!(out.status.success(), "{out:?}");
    env
}

#[test]
fn healthy_setup_exits_0_with_timings_tools_and_providers() {
    let env = migrated(
        "model:\n  openai_runtime: codex_app_server\ntoolsets: [hermes-cli, kanban]\ntts:\n  provider: edge\n",
    );
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    assert_eq!(v["healthy"], true);
    assert_eq!(v["codex_check"], "loads");
    let s = &v["server"];
    assert_eq!(s["server_name"], "hermes-tools");
    assert!(s["initialize_ms"].as_u64().is_some());
    assert!(s["tools_list_ms"].as_u64().is_some());
    let listed: Vec<&str> = s["tools_listed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(listed.contains(&"web_search"), "{listed:?}");
    assert!(listed.contains(&"kanban_list"), "{listed:?}");
    // Unavailable tools come with their reason (no FAL key here).
    let unavailable = v["unavailable_tools"].as_array().unwrap();
    let img = unavailable
        .iter()
        .find(|t| t["name"] == "image_generate")
        .expect("image_generate is unavailable without a key");
    assert!(img["reason"].as_str().unwrap().contains("FAL_KEY"), "{img}");
    let providers = v["providers"].as_array().unwrap();
    assert!(
        providers.iter().any(|p| p["job"] == "web_search"),
        "{providers:?}"
    );
    assert_eq!(v["openai_runtime"], "codex_app_server");
    assert!(
        v["log_file"]
            .as_str()
            .unwrap()
            .ends_with("hermes/logs/hermes-mcp.log")
    );
    // The text form says the same in words.
    let mut c = Command::new(bin());
    env.apply(&mut c);
    let text = c.arg("doctor").output().unwrap();
    let t = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.status.code(), Some(0));
    assert!(t.contains("initialize") && t.contains("tools/list"), "{t}");
    assert!(t.contains("No problems found"), "{t}");
}

#[test]
fn runtime_not_codex_app_server_is_a_note() {
    let env = migrated("toolsets: [hermes-cli]\n");
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("openai_runtime"), "{notes}");
}

#[test]
fn missing_config_and_missing_entry_are_findings() {
    let env = CodexEnv::new();
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(codes(&v), ["config_toml_missing"]);
    env.write_config("model = \"x\"\n");
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(codes(&v), ["hermes_tools_missing"]);
}

#[test]
fn stale_binary_path_is_named() {
    let env = migrated("toolsets: [hermes-cli]\n");
    let exe = bin().canonicalize().unwrap();
    let text = env
        .config()
        .replace(exe.to_str().unwrap(), "/nonexistent/old/hermes-mcp");
    env.write_config(&text);
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(codes(&v), ["binary_missing"], "{v:#}");
    assert!(
        v["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("stale path")
    );
}

#[test]
fn broken_config_yaml_is_a_finding() {
    let env = migrated("toolsets: [hermes-cli]\n");
    env.write_hermes("config.yaml", "toolsets: [unclosed\n");
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        codes(&v).contains(&"config_yaml_invalid".to_string()),
        "{v:#}"
    );
}

#[test]
fn codex_rejecting_config_toml_is_a_finding() {
    let env = migrated("toolsets: [hermes-cli]\n");
    let text = format!("{}\n[mcp_servers.broken]\ncommand = 1\n", env.config());
    env.write_config(&text);
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        codes(&v).contains(&"codex_rejects_config".to_string()),
        "{v:#}"
    );
    assert!(v["codex_check"].as_str().unwrap().starts_with("refused"));
}

#[test]
fn hermes_python_server_in_the_block_is_named() {
    let py = hermes_python("agent.transports.hermes_tools_mcp_server");
    let env = CodexEnv::new();
    env.write_config(&format!(
        "{START}\n[mcp_servers.hermes-tools]\ncommand = \"{}\"\nargs = [\"-m\", \"agent.transports.hermes_tools_mcp_server\"]\n{END}\n",
        py.display()
    ));
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        codes(&v).contains(&"hermes_python_server".to_string()),
        "{v:#}"
    );
}

/// A server that writes its environment to a file, then never answers
/// (`hang`) or answers the handshake.
fn env_server(env: &CodexEnv, hang: bool) -> std::path::PathBuf {
    let dump = env.dir.path().join("env.json");
    let script = env.dir.path().join("srv.py");
    fs::write(
        &script,
        format!(
            r#"#!/usr/bin/env python3
import json, os, sys, time
json.dump(dict(os.environ), open({dump:?}, "w"))
if {hang}:
    time.sleep(60)
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m: continue
    r = {{"protocolVersion": "2025-06-18", "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "envsrv", "version": "1"}}}} if m["method"] == "initialize" else {{"tools": [{{"name": "t", "inputSchema": {{"type": "object"}}}}]}}
    print(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "result": r}}), flush=True)
"#,
            dump = dump.display().to_string(),
            hang = if hang { "True" } else { "False" },
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn the_server_gets_codex_minimal_environment_plus_env_vars_and_env() {
    let env = CodexEnv::new();
    let script = env_server(&env, false);
    env.write_config(&format!(
        "[mcp_servers.hermes-tools]\ncommand = \"{}\"\nenv_vars = [\"LISTED\", {{ name = \"LISTED2\", source = \"local\" }}]\nenv = {{ LITERAL = \"x\" }}\n",
        script.display()
    ));
    let (out, v) = doctor(
        &env,
        &[("LISTED", "1"), ("LISTED2", "2"), ("NOT_LISTED", "3")],
    );
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    assert_eq!(v["server"]["tools_listed"], serde_json::json!(["t"]));
    let seen: Value =
        serde_json::from_str(&fs::read_to_string(env.dir.path().join("env.json")).unwrap())
            .unwrap();
    assert_eq!(seen["LISTED"], "1");
    assert_eq!(seen["LISTED2"], "2");
    assert_eq!(seen["LITERAL"], "x");
    assert!(seen.get("NOT_LISTED").is_none(), "{seen}");
    assert!(seen.get("CODEX_HOME").is_none(), "{seen}");
    assert!(seen.get("PATH").is_some() && seen.get("HOME").is_some());
}

#[test]
fn a_server_that_does_not_answer_in_time_fails_like_in_codex() {
    let env = CodexEnv::new();
    let script = env_server(&env, true);
    env.write_config(&format!(
        "[mcp_servers.hermes-tools]\ncommand = \"{}\"\nstartup_timeout_sec = 1.0\n",
        script.display()
    ));
    let t = std::time::Instant::now();
    let (out, v) = doctor(&env, &[]);
    assert!(t.elapsed().as_secs() < 10);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(codes(&v), ["server_failed"], "{v:#}");
    assert!(
        v["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("in time")
    );
}

fn notes(v: &Value) -> String {
    v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn finding<'a>(v: &'a Value, code: &str) -> &'a Value {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code}: {v:#}"))
}

/// doctor says whether the Hermes plugin is installed, enabled, runs this
/// binary and keeps this Codex home current; each way it cannot work is a
/// finding with the fix, and only a working plugin is said to repair
/// Hermes' Python server by itself.
#[test]
fn doctor_checks_the_hermes_plugin() {
    let env = CodexEnv::new();
    env.write_hermes(
        "config.yaml",
        "model:\n  openai_runtime: codex_app_server\n",
    );
    let plugin = env.hermes_home().join("plugins/hermes-mcp");

    // Not installed (--no-hermes-hook): a note, not a problem.
    assert!(
        env.migrate(&["--no-plugins", "--no-hermes-hook"])
            .status
            .success()
    );
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    assert!(
        notes(&v).contains("the Hermes plugin hermes-mcp is not installed"),
        "{v:#}"
    );

    // Installed and working.
    assert!(env.migrate(&["--no-plugins"]).status.success());
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    assert!(
        notes(&v).contains(&format!(
            "is enabled, runs this hermes-mcp, and at each Hermes session start brings the managed block of {} up to date",
            env.codex_home().join("config.toml").display()
        )),
        "{v:#}"
    );
    let ours = env.config();
    // Hermes' Python server back in the block: the plugin repairs it by itself.
    let py = hermes_python("agent.transports.hermes_tools_mcp_server");
    let hermes_block = format!(
        "{START}\n[mcp_servers.hermes-tools]\ncommand = \"{}\"\nargs = [\"-m\", \"agent.transports.hermes_tools_mcp_server\"]\n{END}\n",
        py.display()
    );
    env.write_config(&hermes_block);
    let (_, v) = doctor(&env, &[]);
    let hint = finding(&v, "hermes_python_server")["hint"]
        .as_str()
        .unwrap();
    assert!(
        hint.contains("does it by itself at the next Hermes session start"),
        "{hint}"
    );

    // It runs a binary that is gone: a finding, and the hint no longer promises a repair.
    let settings_path = plugin.join("settings.json");
    let settings = fs::read_to_string(&settings_path).unwrap();
    let mut s: Value = serde_json::from_str(&settings).unwrap();
    s["argv"][0] = Value::from("/nonexistent/hermes-mcp");
    fs::write(&settings_path, s.to_string()).unwrap();
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(1));
    let f = finding(&v, "hermes_plugin_binary_missing");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/hermes-mcp"),
        "{f}"
    );
    assert!(
        f["hint"].as_str().unwrap().contains("hermes-mcp migrate"),
        "{f}"
    );
    let hint = finding(&v, "hermes_python_server")["hint"]
        .as_str()
        .unwrap();
    assert!(!hint.contains("does it by itself"), "{hint}");

    // Not enabled in plugins.enabled.
    fs::write(&settings_path, &settings).unwrap();
    env.write_config(&ours);
    let yaml_path = env.hermes_home().join("config.yaml");
    let yaml = fs::read_to_string(&yaml_path).unwrap();
    fs::write(&yaml_path, yaml.replace("- hermes-mcp", "- something-else")).unwrap();
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    let f = finding(&v, "hermes_plugin_disabled");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("is not in plugins.enabled"),
        "{f}"
    );
    assert!(
        f["hint"]
            .as_str()
            .unwrap()
            .contains("hermes plugins enable hermes-mcp"),
        "{f}"
    );

    // An older plugin that watched another Codex home.
    fs::write(&yaml_path, &yaml).unwrap();
    fs::write(plugin.join("__init__.py"), "# older\n").unwrap();
    s = serde_json::from_str(&settings).unwrap();
    s["codex_config"] = Value::from("/scratch/config.toml");
    fs::write(&settings_path, s.to_string()).unwrap();
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    let f = finding(&v, "hermes_plugin_outdated");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("it watches /scratch/config.toml only"),
        "{f}"
    );

    // Examining another Codex home: the plugin keeps Hermes' one current, not this.
    assert!(env.migrate(&["--no-plugins"]).status.success());
    let other = env.dir.path().join("other-codex");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("config.toml"), &ours).unwrap();
    let mut c = Command::new(bin());
    env.apply(&mut c);
    let out = c
        .args(["doctor", "--json", "--codex-home", other.to_str().unwrap()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        notes(&v).contains(&format!(
            "keeps {} current",
            env.codex_home().join("config.toml").display()
        )),
        "{v:#}"
    );
}
