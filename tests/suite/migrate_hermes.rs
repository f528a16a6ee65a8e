//! Interop with Hermes' own migrator (hermes-agent 0.19.0,
//! `hermes_cli/codex_runtime_plugin_migration.py`): each replaces the other's
//! block. FAILS when the Hermes venv is missing.

use std::fs;
use std::process::Command;

use super::support::common::{TestEnv, bin, hermes_python};
use super::support::migrate::{END, START, config, run};

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

fn text_of(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn plugin_dir(env: &TestEnv) -> std::path::PathBuf {
    env.hermes_home().join("plugins/hermes-mcp")
}

fn enabled_plugins(env: &TestEnv) -> String {
    fs::read_to_string(env.hermes_home().join("config.yaml")).unwrap()
}

/// Opting out removes an installed plugin and takes it out of
/// `plugins.enabled`; previews say "Would remove" and `--check` counts it.
#[test]
fn no_hermes_hook_removes_an_installed_plugin() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", YAML);
    assert!(run(&env, &["--no-plugins"]).status.success());
    assert!(plugin_dir(&env).join("plugin.yaml").is_file());
    assert!(enabled_plugins(&env).contains("- hermes-mcp"));

    let out = text_of(&run(
        &env,
        &[
            "--no-plugins",
            "--no-hermes-hook",
            "--dry-run",
            "--color",
            "never",
        ],
    ));
    assert!(
        out.contains("Would remove the Hermes plugin hermes-mcp")
            && out.contains("and take it out of plugins.enabled")
            && out.contains("--no-hermes-hook"),
        "{out}"
    );
    let out = run(&env, &["--no-plugins", "--no-hermes-hook", "--check", "-v"]);
    assert_eq!(out.status.code(), Some(1), "{}", text_of(&out));
    assert!(text_of(&out).contains("Would remove the Hermes plugin"));
    assert!(plugin_dir(&env).is_dir(), "a preview removed the plugin");

    let out = text_of(&run(&env, &["--no-plugins", "--no-hermes-hook"]));
    assert!(
        out.contains("Removed the Hermes plugin hermes-mcp")
            && out.contains("and took it out of plugins.enabled"),
        "{out}"
    );
    assert!(!plugin_dir(&env).exists());
    assert!(!enabled_plugins(&env).contains("hermes-mcp"));
    let out = run(&env, &["--no-plugins", "--no-hermes-hook", "--check"]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
}

/// A plugin out of date is something `migrate` would change, even when
/// config.toml is current.
#[test]
fn check_counts_a_stale_plugin() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", YAML);
    assert!(run(&env, &["--no-plugins"]).status.success());
    let toml = config(&env);
    fs::write(plugin_dir(&env).join("__init__.py"), "# an older plugin\n").unwrap();
    let out = run(&env, &["--no-plugins", "--check", "-v"]);
    assert_eq!(out.status.code(), Some(1), "{}", text_of(&out));
    assert!(
        text_of(&out).contains("is up to date, the Hermes plugin is not"),
        "{}",
        text_of(&out)
    );
    assert_eq!(config(&env), toml);
    let out = text_of(&run(
        &env,
        &["--no-plugins", "--dry-run", "--color", "never"],
    ));
    assert!(
        out.contains("Would update the Hermes plugin hermes-mcp"),
        "{out}"
    );
    assert!(run(&env, &["--no-plugins"]).status.success());
    assert_eq!(
        fs::read_to_string(plugin_dir(&env).join("__init__.py")).unwrap(),
        hermes_mcp::migrate::hermes_plugin::PLUGIN_PY
    );
    assert!(run(&env, &["--no-plugins", "--check"]).status.success());
}

/// A plugin installed by a `migrate` with discovery is current for a quick
/// `--check --no-plugins` (what the plugin itself runs): the check does not
/// judge the plugin's stored argv by its own `--no-plugins`. A plugin that
/// stored `--no-plugins` is current too, and a plain `--check` still sees the
/// difference in the other direction.
#[test]
fn check_no_plugins_calls_a_current_plugin_current() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", YAML);
    let codex = "--codex-bin=/nonexistent/codex";
    let out = run(&env, &[codex]);
    assert!(out.status.success(), "{}", text_of(&out));
    let settings = fs::read_to_string(plugin_dir(&env).join("settings.json")).unwrap();
    assert!(!settings.contains("--no-plugins"), "{settings}");
    let out = run(&env, &[codex, "--no-plugins", "--check"]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    let out = text_of(&run(&env, &[codex, "--no-plugins", "--check", "-v"]));
    assert!(out.contains("Hermes plugin hermes-mcp"), "{out}");
    assert!(!out.contains("Would update the Hermes plugin"), "{out}");
    assert!(run(&env, &[codex, "--check"]).status.success());

    assert!(run(&env, &[codex, "--no-plugins"]).status.success());
    let out = run(&env, &[codex, "--no-plugins", "--check"]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    let out = run(&env, &[codex, "--check"]);
    assert_eq!(out.status.code(), Some(1), "{}", text_of(&out));
}

/// A symlink where a plugin file (or the plugin directory) goes is refused:
/// its target is never written, and config.toml is still migrated.
#[test]
fn plugin_files_are_not_written_through_symlinks() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", YAML);
    let victim = env.dir.path().join("precious.py");
    fs::write(&victim, "precious\n").unwrap();
    fs::create_dir_all(plugin_dir(&env)).unwrap();
    let link = plugin_dir(&env).join("__init__.py");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let out = text_of(&run(&env, &["--no-plugins"]));
    assert!(
        out.contains(&format!("{} is a symbolic link", link.display()))
            && out.contains(&format!("rm {}", link.display())),
        "{out}"
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(config(&env).contains("[mcp_servers.hermes-tools]"));

    // The plugin directory itself a link: nothing is written into its target.
    fs::remove_dir_all(plugin_dir(&env)).unwrap();
    let elsewhere = env.dir.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, plugin_dir(&env)).unwrap();
    let out = text_of(&run(&env, &["--no-plugins"]));
    assert!(
        out.contains(&format!(
            "{} is a symbolic link",
            plugin_dir(&env).display()
        )),
        "{out}"
    );
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// A try-out against another Codex home installs nothing and says which
/// config.toml the plugin would keep current.
#[test]
fn migrate_against_another_codex_home_does_not_install_the_plugin() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", YAML);
    let scratch = env.dir.path().join("scratch");
    let out = run(
        &env,
        &["--no-plugins", "--codex-home", scratch.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text_of(&out));
    let out = text_of(&out);
    assert!(
        out.contains(&format!(
            "Hermes plugin hermes-mcp not installed: it would keep {} current",
            env.codex_home().join("config.toml").display()
        )) && out.contains("$CODEX_HOME in Hermes' environment, else ~/.codex"),
        "{out}"
    );
    assert!(!plugin_dir(&env).exists());
    assert!(!enabled_plugins(&env).contains("hermes-mcp"));
}

/// `--no-hermes-tools` takes the plugin out (it would put hermes-tools
/// back), and `--remove` against another Codex home leaves it.
#[test]
fn no_hermes_tools_removes_the_plugin_and_a_scratch_remove_keeps_it() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", YAML);
    assert!(run(&env, &["--no-plugins"]).status.success());
    let scratch = env.dir.path().join("scratch");
    let out = text_of(&run(
        &env,
        &["--remove", "--codex-home", scratch.to_str().unwrap()],
    ));
    assert!(
        out.contains("Hermes plugin hermes-mcp (") && out.contains("left as it is"),
        "{out}"
    );
    assert!(plugin_dir(&env).is_dir());
    let out = text_of(&run(&env, &["--no-plugins", "--no-hermes-tools"]));
    assert!(
        out.contains("Removed the Hermes plugin hermes-mcp") && out.contains("--no-hermes-tools"),
        "{out}"
    );
    assert!(!plugin_dir(&env).exists());
}
