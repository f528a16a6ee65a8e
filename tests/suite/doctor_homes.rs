//! `hermes-mcp doctor` with the homes the user names (`--hermes-home`,
//! `--profile`, `--codex-home`): the hints it prints act on those homes;
//! `--json`'s structured `plugin`; a handshake step slower than codex's
//! start-up timeout. The real codex 0.169 judges config.toml.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use super::support::common::bin;
use super::support::doctor::{doctor_json, finding};
use super::support::migrate::CodexEnv;

fn doctor_with(env: &CodexEnv, args: &[&str]) -> (Output, Value) {
    doctor_json(env, args, &[])
}

fn hints(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["hint"].as_str().unwrap().to_string())
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `--hermes-home` / `--profile` mean what they mean on migrate, serve and
/// tools: a home that cannot be one is an error (exit 2) that says why; one
/// that hermes-tools does not serve is a finding; and every `migrate` a hint
/// suggests carries the homes passed, so it acts on what doctor examined.
#[test]
fn doctor_takes_the_hermes_home_and_profile_and_its_hints_keep_the_homes() {
    let env = CodexEnv::new();
    env.write_hermes(
        "config.yaml",
        "model:\n  openai_runtime: codex_app_server\n",
    );
    assert!(env.migrate(&["--no-plugins"]).status.success());
    let codex = env.codex_home();

    // A file, and a missing directory, are refused as on the other subcommands.
    let file = env.dir.path().join("a-file");
    fs::write(&file, "x").unwrap();
    for (home, why) in [
        (file.clone(), "is not a directory"),
        (env.dir.path().join("missing"), "does not exist"),
    ] {
        let mut c = Command::new(bin());
        env.apply(&mut c);
        let out = c
            .args(["doctor", "--hermes-home", s(&home)])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("the Hermes home {} {why}", home.display())),
            "{err}"
        );
    }

    // The home hermes-tools serves: healthy, and the plugin looked for there.
    let (out, v) = doctor_with(&env, &["--hermes-home", s(&env.hermes_home())]);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    assert_eq!(v["plugin"]["hermes_home"], s(&env.hermes_home()));

    // Another home (a profile): a finding whose hint migrates that home into this Codex home.
    let work = env.hermes_home().join("profiles/work");
    fs::create_dir_all(&work).unwrap();
    fs::write(work.join("config.yaml"), "model:\n  default: m\n").unwrap();
    for args in [
        vec!["--profile", "work", "--codex-home", s(&codex)],
        vec!["--hermes-home", s(&work), "--codex-home", s(&codex)],
    ] {
        let (out, v) = doctor_with(&env, &args);
        assert_eq!(out.status.code(), Some(1), "{v:#}");
        let f = finding(&v, "hermes_home_differs").unwrap_or_else(|| panic!("{v:#}"));
        assert!(
            f["message"]
                .as_str()
                .unwrap()
                .contains(&format!("not {} that you named", work.display())),
            "{f}"
        );
        let want = format!("`hermes-mcp migrate {}`", args.join(" "));
        assert!(f["hint"].as_str().unwrap().contains(&want), "{f}");
        // The plugin is looked for in the named home (none there).
        assert_eq!(v["plugin"]["hermes_home"], s(&work), "{v:#}");
        assert_eq!(v["plugin"]["installed"], false);
    }

    // Every migrate a hint names carries the homes: here config.toml lost its entry.
    env.write_config("model = \"m\"\n");
    let args = ["--profile", "work", "--codex-home", s(&codex)];
    let (_, v) = doctor_with(&env, &args);
    let hs = hints(&v);
    assert!(
        hs.iter().any(|h| h.contains("hermes-mcp migrate")),
        "{hs:?}"
    );
    for h in hs.iter().filter(|h| h.contains("hermes-mcp migrate")) {
        assert!(
            h.contains(&format!("hermes-mcp migrate {}", args.join(" "))),
            "{h}"
        );
    }
}

/// `doctor --json` describes the Hermes plugin as data: where it is, whether
/// it is installed and enabled, the command line it re-runs, and whether it
/// can do its job, with why not.
#[test]
fn doctor_json_has_a_structured_plugin_object() {
    let env = CodexEnv::new();
    env.write_hermes(
        "config.yaml",
        "model:\n  openai_runtime: codex_app_server\n",
    );
    assert!(env.migrate(&["--no-plugins"]).status.success());
    let (_, v) = doctor_with(&env, &[]);
    let p = &v["plugin"];
    let dir = env.hermes_home().join("plugins/hermes-mcp");
    assert_eq!(p["path"], s(&dir), "{p:#}");
    assert_eq!(p["installed"], true);
    assert_eq!(p["enabled"], true);
    assert_eq!(p["argv"][1], "migrate", "{p:#}");
    assert!(
        p["argv"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "--no-plugins"),
        "{p:#}"
    );
    assert_eq!(p["runs_this_binary"], true);
    assert_eq!(p["code_current"], true);
    assert_eq!(p["state"], "works");
    assert_eq!(p["current"], true);
    assert_eq!(p["keeps_current"], s(&env.codex_home().join("config.toml")));
    assert_eq!(p["why"], serde_json::json!([]));

    // Out of plugins.enabled, and older code: not current, and why.
    let yaml_path = env.hermes_home().join("config.yaml");
    let yaml = fs::read_to_string(&yaml_path).unwrap();
    fs::write(&yaml_path, yaml.replace("- hermes-mcp", "- other")).unwrap();
    fs::write(dir.join("__init__.py"), "# older\n").unwrap();
    let (_, v) = doctor_with(&env, &[]);
    let p = &v["plugin"];
    assert_eq!(p["enabled"], false, "{p:#}");
    assert_eq!(p["code_current"], false, "{p:#}");
    assert_eq!(p["state"], "broken");
    assert_eq!(p["current"], false);
    let why = p["why"].to_string();
    assert!(why.contains("is not in plugins.enabled"), "{why}");
    assert!(why.contains("is not this hermes-mcp's version"), "{why}");

    // Removed: not installed.
    assert!(
        env.migrate(&["--no-plugins", "--no-hermes-hook"])
            .status
            .success()
    );
    let (_, v) = doctor_with(&env, &[]);
    let p = &v["plugin"];
    assert_eq!(p["installed"], false, "{p:#}");
    assert_eq!(p["state"], "missing");
    assert!(p["argv"].is_null());
}

/// A server that answers `initialize` after `delay` seconds, then `tools/list`
/// (a shell script: it starts in milliseconds even on a loaded machine, so
/// the time doctor sees is the delay). doctor's requests are ids 0 and 1.
fn slow_server(env: &CodexEnv, delay: f64) -> std::path::PathBuf {
    let script = env.dir.path().join("slow.sh");
    fs::write(
        &script,
        format!(
            r#"#!/bin/sh
sleep {delay}
echo '{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"slow","version":"1"}}}}}}'
echo '{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"t","inputSchema":{{"type":"object"}}}}]}}}}'
exec cat >/dev/null
"#
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// codex stops waiting for `initialize` after the entry's start-up timeout
/// (`startup_timeout_sec`, the legacy `startup_timeout_ms`, else 30 s) and
/// shows the server as failed; doctor waits longer, so a server that
/// answers late is named with the time it took and the setting to raise.
#[test]
fn an_initialize_slower_than_codexs_startup_timeout_is_named() {
    let env = CodexEnv::new();
    let script = slow_server(&env, 1.5);
    for (setting, source) in [
        ("startup_timeout_sec = 1.0", "its startup_timeout_sec"),
        ("startup_timeout_ms = 1000", "its startup_timeout_ms"),
    ] {
        env.write_config(&format!(
            "[mcp_servers.hermes-tools]\ncommand = \"{}\"\n{setting}\n",
            script.display()
        ));
        let (out, v) = doctor_with(&env, &[]);
        assert_eq!(out.status.code(), Some(1), "{v:#}");
        let f = finding(&v, "startup_timeout_exceeded").unwrap_or_else(|| panic!("{v:#}"));
        let msg = f["message"].as_str().unwrap();
        let took: f64 = msg
            .split("answered initialize after ")
            .nth(1)
            .and_then(|t| t.split(" s,").next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{msg}"));
        assert!(took > 1.0, "{msg}");
        assert!(
            msg.contains(&format!("over codex's start-up timeout of 1 s ({source})")),
            "{msg}"
        );
        assert!(
            f["hint"]
                .as_str()
                .unwrap()
                .contains("set startup_timeout_sec = "),
            "{f}"
        );
        assert!(finding(&v, "server_failed").is_none(), "{v:#}");
    }
    // Within the timeout: no finding.
    env.write_config(&format!(
        "[mcp_servers.hermes-tools]\ncommand = \"{}\"\nstartup_timeout_sec = 5.0\n",
        script.display()
    ));
    let (out, v) = doctor_with(&env, &[]);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
}

/// What doctor shows of a failed server's stderr is redacted, but a
/// variable's name is never eaten: `export GH_TOKEN="$GITHUB_TOKEN"` (the
/// line `migrate` itself tells users to run) is shown as it is, while a
/// key's value is still masked.
#[test]
fn doctor_shows_a_reference_to_a_variable_and_masks_a_key() {
    let env = CodexEnv::new();
    let script = env.dir.path().join("fails.sh");
    fs::write(
        &script,
        "#!/bin/sh\necho 'run: export GH_TOKEN=\"$GITHUB_TOKEN\"' >&2\necho 'had GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123' >&2\nexit 3\n",
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    env.write_config(&format!(
        "[mcp_servers.hermes-tools]\ncommand = \"{}\"\n",
        script.display()
    ));
    let (out, v) = doctor_with(&env, &[]);
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    let msg = finding(&v, "server_failed").unwrap_or_else(|| panic!("{v:#}"))["message"]
        .as_str()
        .unwrap();
    assert!(
        msg.contains("run: export GH_TOKEN=\"$GITHUB_TOKEN\""),
        "{msg}"
    );
    assert!(msg.contains("had GH_TOKEN=***"), "{msg}");
    assert!(!msg.contains("ghp_abcdefghij"), "{msg}");
}
