//! `serve` with a missing Hermes home or a broken config.yaml: it creates no
//! home, and the broken file is named wherever a tool says why it cannot run.

use serde_json::{Value, json};

use super::support::common::*;

#[test]
fn serve_does_not_create_a_missing_hermes_home() {
    let env = TestEnv::new();
    let missing = env.dir.path().join("no-such-home");
    let mut cmd = env.cmd();
    cmd.env("HERMES_HOME", &missing);
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let listed = c.request("tools/list", json!({}));
    assert!(listed["result"]["tools"].as_array().unwrap().len() > 3);
    let r = c.call_tool("skills_list", json!({}));
    let text = r.to_string();
    assert!(text.contains("does not exist"), "{text}");
    c.close_stdin();
    c.finish(std::time::Duration::from_secs(10));
    assert!(!missing.exists(), "serve created {}", missing.display());
}

#[test]
fn a_broken_config_yaml_is_named_in_tools_and_in_tool_errors() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "toolsets: [hermes-cli, kanban\n");
    let out = env.cmd().args(["tools", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["config_error"].is_string(), "{v:#}");
    let kanban = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "kanban_list")
        .unwrap();
    let reason = kanban["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("config.yaml could not be used"),
        "{reason}"
    );
    let text = env.cmd().arg("tools").output().unwrap();
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(t.contains("warning:"), "{t}");

    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    let r = c.call_tool("kanban_list", json!({}));
    assert!(is_error(&r), "{r}");
    assert!(
        r.to_string().contains("config.yaml could not be used"),
        "{r}"
    );
}

#[test]
fn migrate_warns_when_hermes_does_not_run_codex() {
    let env = TestEnv::new();
    for (yaml, warns) in [
        ("toolsets: [hermes-cli]\n", true),
        ("model:\n  openai_runtime: auto\n", true),
        ("model:\n  openai_runtime: codex_app_server\n", false),
    ] {
        env.write_hermes("config.yaml", yaml);
        for mode in [&["--json"][..], &["--check", "--json"][..]] {
            let out = env
                .cmd()
                .args(["migrate", "--no-plugins", "--no-hermes-hook"])
                .args(mode)
                .output()
                .unwrap();
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let w = v["warnings"].to_string();
            assert_eq!(w.contains("openai_runtime"), warns, "{yaml} {mode:?}: {w}");
        }
    }
}

#[test]
fn serve_logs_to_hermes_home_logs() {
    let env = TestEnv::new();
    let mut cmd = env.cmd();
    cmd.env("HERMES_MCP_LOG", "debug");
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    c.close_stdin();
    c.finish(std::time::Duration::from_secs(10));
    let log = std::fs::read_to_string(env.hermes_home().join("logs/hermes-mcp.log")).unwrap();
    assert!(log.contains("DEBUG") || log.contains("INFO"), "{log}");
}
