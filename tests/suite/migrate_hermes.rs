//! Interop with Hermes' own migrator (hermes-agent 0.19.0,
//! `hermes_cli/codex_runtime_plugin_migration.py`): each replaces the other's
//! block. FAILS when the Hermes venv is missing.

use std::fs;
use std::process::Command;

use super::common::{TestEnv, bin, hermes_python};
use super::migrate::{END, START, config, run};

/// Run Hermes' `migrate()` on this env's config.yaml and CODEX_HOME.
fn hermes_migrate(env: &TestEnv) {
    let script = r#"
import json, pathlib, sys, yaml
from hermes_cli.codex_runtime_plugin_migration import migrate
cfg = yaml.safe_load(open(sys.argv[1])) or {}
r = migrate(cfg, codex_home=pathlib.Path(sys.argv[2]), discover_plugins=False)
assert r.written and not r.errors, (r.written, r.errors)
import tomllib
tomllib.loads(open(pathlib.Path(sys.argv[2]) / "config.toml").read())
"#;
    let out = Command::new(hermes_python("hermes_cli.codex_runtime_plugin_migration"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .args(["-c", script])
        .arg(env.hermes_home().join("config.yaml"))
        .arg(env.codex_home())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Hermes' migrator failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const YAML: &str = "mcp_servers:\n  fs:\n    command: npx\n    args: [\"-y\", \"fs-mcp\"]\n    timeout: 60\n  web:\n    url: http://127.0.0.1:9/mcp\n";
const USER: &str = "# mine\nmodel = \"m\"\n\n[features]\nplugins = false\n";

fn one_valid_block(text: &str) -> toml::Table {
    assert_eq!(text.matches(START).count(), 1, "{text}");
    assert_eq!(text.matches(END).count(), 1, "{text}");
    let t: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(t["model"].as_str(), Some("m"));
    assert_eq!(t["features"]["plugins"].as_bool(), Some(false));
    assert!(text.starts_with("# mine\nmodel = \"m\"\n"));
    assert!(text.ends_with("[features]\nplugins = false\n"));
    t
}

#[test]
fn hermes_interop_we_replace_hermes_block() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", YAML);
    fs::write(env.codex_home().join("config.toml"), USER).unwrap();
    hermes_migrate(&env);
    assert!(config(&env).contains("agent.transports.hermes_tools_mcp_server"));
    let out = run(&env, &["--no-plugins"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = config(&env);
    let t = one_valid_block(&text);
    assert!(
        !text.contains("agent.transports.hermes_tools_mcp_server"),
        "{text}"
    );
    let exe = fs::canonicalize(bin()).unwrap();
    assert_eq!(
        t["mcp_servers"]["hermes-tools"]["command"].as_str(),
        exe.to_str()
    );
    assert_eq!(
        t["mcp_servers"]["fs"]["tool_timeout_sec"].as_float(),
        Some(60.0)
    );
    assert_eq!(
        t["mcp_servers"]["web"]["url"].as_str(),
        Some("http://127.0.0.1:9/mcp")
    );
    assert_eq!(t["default_permissions"].as_str(), Some(":workspace"));
    // And again: stable.
    assert!(run(&env, &["--no-plugins", "--check"]).status.success());
}

#[test]
fn hermes_interop_hermes_replaces_our_block() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", YAML);
    fs::write(env.codex_home().join("config.toml"), USER).unwrap();
    let out = run(&env, &["--no-plugins"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(config(&env).contains("kanban_complete"));
    // Our block names its owner on the line after Hermes' marker ...
    assert!(
        config(&env).contains(&format!(
            "{START}\n# `hermes-mcp migrate` writes this section"
        )),
        "{}",
        config(&env)
    );
    hermes_migrate(&env);
    let text = config(&env);
    let t = one_valid_block(&text);
    assert!(
        !text.contains("kanban_complete"),
        "our block survived: {text}"
    );
    // ... and Hermes' migrator still finds the block and replaces all of it, that line included.
    assert!(!text.contains("hermes-mcp"), "{text}");
    assert!(text.contains("agent.transports.hermes_tools_mcp_server"));
    assert_eq!(t["mcp_servers"]["fs"]["command"].as_str(), Some("npx"));
    // Round trip back to ours.
    assert!(run(&env, &["--no-plugins"]).status.success());
    one_valid_block(&config(&env));
}
