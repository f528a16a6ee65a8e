//! Surviving Hermes' `/codex-runtime` (hermes-agent 0.19.0, real code): the
//! switch re-runs Hermes' migrator, which puts its Python hermes-tools back;
//! the plugin `migrate` installs (src/migrate/hermes_plugin/) restores
//! hermes-mcp at the next session start, before Hermes would spawn codex.
//! FAILS when the Hermes venv or codex is missing.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use hermes_mcp::migrate::hermes_plugin;
use serde_json::Value;

use super::support::common::{TestEnv, bin, hermes_python, poll_until};
use super::support::migrate::{END, START};
use super::support::prereq::{CODEX_VERSIONS, codex_bin, codex_of};

/// Hermes 0.19's `/codex-runtime` writes `~/.codex/config.toml` whatever
/// CODEX_HOME says, so this test's Codex home is `$HOME/.codex`.
fn codex_home(env: &TestEnv) -> PathBuf {
    env.home().join(".codex")
}

fn run_hermes(env: &TestEnv, script: &str) -> Output {
    let py = hermes_python("hermes_cli.codex_runtime_switch");
    let mut c = Command::new(py);
    env.apply(&mut c);
    let out = c
        .env("CODEX_HOME", codex_home(env))
        .args(["-c", script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hermes script failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `/codex-runtime codex_app_server` as the CLI and gateway run it.
const SWITCH: &str = r#"
from hermes_cli.config import load_config, save_config
from hermes_cli.codex_runtime_switch import apply
st = apply(load_config(), "codex_app_server", persist_callback=save_config)
assert st.success, st.message
"#;

/// Hermes' logging (agent.log) and plugin discovery as `hermes chat` does
/// them (hermes_cli/main.py), and an agent whose session is brand new.
const SESSION_SETUP: &str = r#"
import types
from hermes_logging import setup_logging
setup_logging(mode="cli")
from hermes_cli.plugins import discover_plugins, get_plugin_manager
discover_plugins()
loaded = get_plugin_manager()._plugins.get("hermes-mcp")
assert loaded is not None and loaded.enabled, (loaded and loaded.error)
assert "on_session_start" in loaded.hooks_registered, loaded.hooks_registered
from agent.conversation_loop import _restore_or_build_system_prompt
agent = types.SimpleNamespace(
    session_id="s-1", model="gpt-5.5", platform="cli", provider="openai",
    _session_db=None, _cached_system_prompt=None,
    _build_system_prompt=lambda system_message: "system prompt",
)
"#;

/// A new session's first turn: [`SESSION_SETUP`], then the conversation
/// loop's system-prompt step, which fires `on_session_start` for a brand-new
/// session; then the plugin's background run is waited for (its event).
fn session_start() -> String {
    format!(
        "{SESSION_SETUP}\n_restore_or_build_system_prompt(agent, None, [])\n\
         assert agent._cached_system_prompt == \"system prompt\"\n\
         assert loaded.module.DONE.wait(120), \"the plugin's background run never ended\"\n"
    )
}

fn hermes_tools(env: &TestEnv) -> Value {
    let mut c = Command::new(codex_bin());
    env.apply(&mut c);
    let out = c
        .env("CODEX_HOME", codex_home(env))
        .args(["mcp", "get", "hermes-tools", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn config(env: &TestEnv) -> String {
    fs::read_to_string(codex_home(env).join("config.toml")).unwrap()
}

fn command_of(v: &Value) -> PathBuf {
    let c = v["transport"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"));
    fs::canonicalize(c).unwrap_or_else(|_| PathBuf::from(c))
}

#[test]
fn codex_runtime_switch_is_undone_at_next_session_start() {
    let env = TestEnv::under_cache("hermes-runtime-");
    let codex = codex_home(&env);
    fs::create_dir_all(&codex).unwrap();
    env.write_hermes(
        "config.yaml",
        "# my Hermes config\nmodel:\n  default: gpt-5.5\nmcp_servers:\n  fs:\n    command: npx\n    args: [\"-y\", \"fs-mcp\"]\n",
    );
    let user_toml = "# mine\nmodel = \"m\"\n\n[features]\nplugins = false\n";
    fs::write(codex.join("config.toml"), user_toml).unwrap();

    // The user's migrate: their own permission profile, no plugin discovery.
    let codex_arg = codex.to_str().unwrap();
    let user_args = [
        "--codex-home",
        codex_arg,
        "--no-plugins",
        "--permissions",
        ":read-only",
    ];
    let out = migrate(&env, &user_args);
    let ours = config(&env);
    let exe = fs::canonicalize(bin()).unwrap();
    assert_eq!(command_of(&hermes_tools(&env)), exe);

    // migrate set up the plugin and said so.
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("Hermes plugin hermes-mcp"), "{report}");
    let plugin = env.hermes_home().join("plugins/hermes-mcp");
    assert!(plugin.join("plugin.yaml").is_file());
    let yaml = fs::read_to_string(env.hermes_home().join("config.yaml")).unwrap();
    assert!(yaml.starts_with("# my Hermes config\n"), "{yaml}");

    // A try-out against a scratch Codex home leaves the plugin as it is, and says what it watches.
    let settings = fs::read(plugin.join("settings.json")).unwrap();
    let scratch = env.dir.path().join("scratch-codex");
    let out = migrate(
        &env,
        &["--codex-home", scratch.to_str().unwrap(), "--no-plugins"],
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains(&format!(
            "Hermes plugin hermes-mcp ({}) left as it is: it keeps {} current",
            plugin.display(),
            codex.join("config.toml").display()
        )),
        "{report}"
    );
    assert_eq!(fs::read(plugin.join("settings.json")).unwrap(), settings);

    // /codex-runtime codex_app_server: Hermes' migrator puts its Python server back.
    run_hermes(&env, SWITCH);
    let switched = config(&env);
    assert!(
        hermes_plugin::replaced_by_hermes(&switched).is_some(),
        "Hermes did not replace hermes-tools:\n{switched}"
    );
    assert!(
        !switched.contains("default_permissions = \":read-only\""),
        "{switched}"
    );
    let yaml = fs::read_to_string(env.hermes_home().join("config.yaml")).unwrap();
    assert!(yaml.contains("codex_app_server"), "{yaml}");
    assert!(
        yaml.contains("hermes-mcp"),
        "save_config dropped plugins.enabled:\n{yaml}"
    );

    // The next session starts: hermes-tools is hermes-mcp again, with the user's settings.
    let out = run_hermes(&env, &session_start());
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let restored = config(&env);
    // What it did is in agent.log, each line of migrate's report a record of its own.
    let log = plugin_log(&env);
    assert!(
        log.iter().any(|l| l.contains(hermes_plugin::REPLACED)),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.ends_with("hermes-mcp plugin:   - fs")),
        "{log:?}"
    );
    assert_eq!(
        hermes_plugin::replaced_by_hermes(&restored),
        None,
        "{restored}"
    );
    // The user's block again, plus what the switch itself calls for: Hermes now runs Codex, so
    // migrate passes HERMES_SESSION_ID (session_search leaves the current conversation out).
    let env_line = ours
        .lines()
        .find(|l| l.starts_with("env = { HERMES_HOME"))
        .expect("hermes-tools names its home");
    let want = ours.replacen(
        &format!("{env_line}\n"),
        &format!("{env_line}\nenv_vars = [\"HERMES_SESSION_ID\"]\n"),
        1,
    );
    assert_eq!(restored, want, "not the user's block again");
    assert_eq!(command_of(&hermes_tools(&env)), exe);
    assert_eq!(restored.matches(START).count(), 1);
    assert_eq!(restored.matches(END).count(), 1);
    assert!(
        restored.starts_with("# mine\nmodel = \"m\"\n"),
        "{restored}"
    );
    assert!(
        restored.contains("default_permissions = \":read-only\""),
        "{restored}"
    );
    assert!(restored.contains("[mcp_servers.fs]"), "{restored}");

    // Nothing replaced: the hook leaves the file alone (same bytes, same mtime).
    let before = fs::metadata(codex.join("config.toml"))
        .unwrap()
        .modified()
        .unwrap();
    let out = run_hermes(&env, &session_start());
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(config(&env), restored);
    let after = fs::metadata(codex.join("config.toml"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after, "the hook rewrote an up-to-date config.toml");
    assert_eq!(plugin_log(&env), log, "the hook logged with nothing to do");
}

/// `hermes-mcp migrate ARGS` as the user runs it, in the environment Hermes
/// runs in (CODEX_HOME is the Codex home Hermes' runtime reads).
fn migrate(env: &TestEnv, args: &[&str]) -> Output {
    let out = env
        .cmd()
        .env("CODEX_HOME", codex_home(env))
        .arg("migrate")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The plugin's lines in Hermes' agent.log. Every line of the file must be a
/// record of its own (a timestamp first): none is a bare continuation line.
fn plugin_log(env: &TestEnv) -> Vec<String> {
    let text = fs::read_to_string(env.hermes_home().join("logs/agent.log")).unwrap_or_default();
    for line in text.lines() {
        let b = line.as_bytes();
        assert!(
            b.len() > 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b' ' && b[13] == b':',
            "a line of agent.log is not a record of its own: {line:?}\n{text}"
        );
    }
    text.lines()
        .filter(|l| l.contains("hermes-mcp plugin:"))
        .map(String::from)
        .collect()
}

/// The Python plugin's own detector on Hermes' real block and on ours.
#[test]
fn plugin_detector_matches_rust_detector_on_real_blocks() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers: {}\n");
    let script = r#"
import pathlib, sys
from hermes_cli.codex_runtime_plugin_migration import migrate
r = migrate({}, codex_home=pathlib.Path(sys.argv[1]), discover_plugins=False)
assert r.written, r.errors
"#;
    let mut c = Command::new(hermes_python("hermes_cli.codex_runtime_plugin_migration"));
    env.apply(&mut c);
    let out = c
        .args(["-c", script])
        .arg(env.codex_home())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hermes_text = fs::read_to_string(env.codex_home().join("config.toml")).unwrap();

    let out = env
        .cmd()
        .args(["migrate", "--no-plugins"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let our_text = fs::read_to_string(env.codex_home().join("config.toml")).unwrap();

    let plugin_dir = env.dir.path().join("plugin");
    fs::create_dir_all(&plugin_dir).unwrap();
    fs::write(plugin_dir.join("__init__.py"), hermes_plugin::PLUGIN_PY).unwrap();
    let check = |text: &str| -> bool {
        let f = env.dir.path().join("probe.toml");
        fs::write(&f, text).unwrap();
        let out = Command::new(hermes_python("tomllib"))
            .arg("-c")
            .arg("import sys; sys.path.insert(0, sys.argv[1]); import __init__ as p; print(p.python_server_in_block(p.managed_block(open(sys.argv[2]).read())))")
            .arg(&plugin_dir)
            .arg(&f)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim() == "True"
    };
    assert!(hermes_plugin::replaced_by_hermes(&hermes_text).is_some());
    assert!(check(&hermes_text), "{hermes_text}");
    assert!(hermes_plugin::replaced_by_hermes(&our_text).is_none());
    assert!(!check(&our_text), "{our_text}");
    let crlf = hermes_text.replace('\n', "\r\n");
    assert!(check(&crlf) && hermes_plugin::replaced_by_hermes(&crlf).is_some());
}

/// A config.yaml changed after `migrate` (a new MCP server, kanban in use):
/// the next session start brings the block up to date through Hermes' real
/// plugin loader and hook, and says nothing while the block is current.
#[test]
fn session_start_brings_a_stale_block_up_to_date() {
    let env = TestEnv::under_cache("hermes-stale-");
    let codex = codex_home(&env);
    fs::create_dir_all(&codex).unwrap();
    let yaml = "model:\n  default: gpt-5.5\n  openai_runtime: codex_app_server\nmcp_servers:\n  fs:\n    command: npx\n    args: [\"-y\", \"fs-mcp\"]\n";
    env.write_hermes("config.yaml", yaml);
    migrate(&env, &["--no-plugins"]);
    let current = config(&env);
    assert!(!current.contains("HERMES_KANBAN_TASK"), "{current}");

    // Up to date: the hook neither writes nor logs.
    run_hermes(&env, &session_start());
    assert_eq!(config(&env), current);
    assert_eq!(plugin_log(&env), Vec::<String>::new());

    // The user adds a server and starts using kanban, without running migrate.
    let yaml = fs::read_to_string(env.hermes_home().join("config.yaml")).unwrap();
    let yaml = yaml.replace(
        "mcp_servers:\n",
        "toolsets: [hermes-cli, kanban]\nmcp_servers:\n  web:\n    url: http://127.0.0.1:9/mcp\n",
    );
    fs::write(env.hermes_home().join("config.yaml"), yaml).unwrap();
    let out = run_hermes(&env, &session_start());
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let updated = config(&env);
    let t: toml::Table = updated.parse().unwrap();
    let servers = t["mcp_servers"].as_table().unwrap();
    assert_eq!(
        servers["web"]["url"].as_str(),
        Some("http://127.0.0.1:9/mcp"),
        "{updated}"
    );
    let env_vars: Vec<&str> = servers["hermes-tools"]["env_vars"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for v in [
        "HERMES_KANBAN_TASK",
        "HERMES_KANBAN_DB",
        "HERMES_SESSION_ID",
    ] {
        assert!(env_vars.contains(&v), "{v} missing: {updated}");
    }
    let log = plugin_log(&env);
    assert!(
        log.iter().any(|l| l.contains("the managed block is stale")),
        "{log:?}"
    );
    // It is the block `migrate` itself writes now: the shell's check agrees.
    let out = env
        .cmd()
        .env("CODEX_HOME", &codex)
        .args(["migrate", "--check", "--no-plugins"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // And quiet again.
    run_hermes(&env, &session_start());
    assert_eq!(config(&env), updated);
    assert_eq!(plugin_log(&env), log);
}

/// A hung `hermes-mcp` (its check never answers) holds a session start up
/// for about a second at most, through Hermes' real plugin loader and hook;
/// as Hermes exits, the hung process is stopped and agent.log says so.
#[test]
fn a_hung_hermes_mcp_does_not_hold_up_session_start() {
    let env = TestEnv::under_cache("hermes-hung-");
    let codex = codex_home(&env);
    fs::create_dir_all(&codex).unwrap();
    env.write_hermes("config.yaml", "model:\n  default: gpt-5.5\n");
    migrate(&env, &["--no-plugins"]);
    // The plugin's hermes-mcp is now one that never answers.
    let pid_file = env.dir.path().join("hung.pid");
    let hung = env.dir.path().join("hung-hermes-mcp");
    fs::write(
        &hung,
        format!(
            "#!/bin/sh\necho $$ > '{}'\nexec sleep 600\n",
            pid_file.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&hung, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let settings_path = env.hermes_home().join("plugins/hermes-mcp/settings.json");
    let mut settings: Value = serde_json::from_slice(&fs::read(&settings_path).unwrap()).unwrap();
    settings["argv"][0] = Value::from(hung.to_str().unwrap());
    fs::write(&settings_path, settings.to_string()).unwrap();

    // Session start, timed; then (before exiting) wait until the hung check runs.
    let script = format!(
        "{SESSION_SETUP}\nimport os, time\nt = time.monotonic()\n\
         _restore_or_build_system_prompt(agent, None, [])\n\
         print(f\"{{time.monotonic() - t:.3f}}\")\n\
         while not os.path.exists({pid:?}):\n    time.sleep(0.01)\n",
        pid = pid_file.to_str().unwrap()
    );
    let out = run_hermes(&env, &script);
    let took: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(took < 2.0, "session start took {took} s");
    // Hermes has exited: the hung process is gone (or a zombie for its new parent to reap).
    let pid = fs::read_to_string(&pid_file).unwrap().trim().to_string();
    poll_until(
        "the hung hermes-mcp stopped",
        10,
        || fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default(),
        |stat| stat.is_empty() || stat.contains(") Z "),
    );
    let log = plugin_log(&env);
    assert!(
        log.iter()
            .any(|l| l.contains("was still running as Hermes exited; stopped it")),
        "{log:?}"
    );
}

/// A user's per-tool table for hermes-tools outside the block, then a Hermes session start
/// whose plugin brings the stale block up to date: hermes-tools stays, the user's table
/// too, and codex 0.169 and 0.171 load the file.
#[test]
fn session_start_keeps_hermes_tools_and_the_users_tool_table() {
    let env = TestEnv::under_cache("hermes-tooltable-");
    let codex = codex_home(&env);
    fs::create_dir_all(&codex).unwrap();
    let yaml = "model:\n  default: gpt-5.5\n  openai_runtime: codex_app_server\nmcp_servers: {}\n";
    env.write_hermes("config.yaml", yaml);
    migrate(&env, &["--no-plugins"]);
    let mine = "[mcp_servers.hermes-tools.tools.memory]\napproval_mode = \"prompt\"\n";
    let text = format!("{}\n[features]\nplugins = false\n\n{mine}", config(&env));
    fs::write(codex.join("config.toml"), text).unwrap();
    // The block goes stale: the user adds a server to config.yaml.
    let now = fs::read_to_string(env.hermes_home().join("config.yaml")).unwrap();
    assert!(now.contains("mcp_servers: {}\n"), "{now}");
    env.write_hermes(
        "config.yaml",
        &now.replace(
            "mcp_servers: {}\n",
            "mcp_servers:\n  web:\n    url: http://127.0.0.1:9/mcp\n",
        ),
    );
    run_hermes(&env, &session_start());
    let log = plugin_log(&env);
    assert!(
        log.iter().any(|l| l.contains("the managed block is stale")),
        "{log:?}"
    );
    let updated = config(&env);
    let t: toml::Table = updated.parse().unwrap();
    let servers = t["mcp_servers"].as_table().unwrap();
    assert!(servers["web"].get("url").is_some(), "{updated}");
    let ht = servers["hermes-tools"].as_table().unwrap();
    assert!(ht.get("command").is_some(), "{updated}");
    assert_eq!(
        ht["tools"]["memory"]["approval_mode"].as_str(),
        Some("prompt")
    );
    assert_eq!(updated.matches(mine).count(), 1, "{updated}");
    for v in CODEX_VERSIONS {
        let mut c = Command::new(codex_of(v));
        env.apply(&mut c);
        let out = c
            .env("CODEX_HOME", &codex)
            .args(["app-server", "--strict-config", "--print-startup-config"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "codex {v} cannot load it: {}\n{updated}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
