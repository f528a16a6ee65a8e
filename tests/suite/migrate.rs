//! `hermes-mcp migrate` end to end (the binary, temp homes; no codex needed here).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::support::common::{TestEnv, bin, poll_until};
use super::support::migrate::{END, START, config, run};

pub const HERMES_YAML: &str = r#"
defaults: &slow
  timeout: 300
mcp_servers:
  fs:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
    env:
      DEBUG: "1"
      GITHUB_TOKEN: ${GITHUB_TOKEN}
      ALIAS: ${SOMETHING_ELSE}
    timeout: 120
  remote:
    <<: *slow
    url: https://mcp.example.com/mcp
    headers:
      Authorization: Bearer ${API_TOKEN}
      X-Key: ${env:X_KEY}
      X-Team: core
    connect_timeout: 20
    sampling: {enabled: true}
  off:
    command: off-mcp
    enabled: no
    tools:
      include: [a, b]
      exclude: [c]
  "bad name":
    command: x
"#;

pub const USER_TOML: &str =
    "# my codex settings\nmodel = \"gpt-5.5\"\n\n# features\n[features]\nplugins = false\n";

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exit code")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The text outside the block, with the whitespace next to it trimmed.
pub fn outside(text: &str) -> (String, String) {
    let s = text.find(START).expect("start marker");
    let e = text.find(END).expect("end marker") + END.len();
    (
        text[..s].trim_end().to_string(),
        text[e..].trim_start().to_string(),
    )
}

fn setup(env: &TestEnv, user: Option<&str>) {
    env.write_hermes("config.yaml", HERMES_YAML);
    if let Some(u) = user {
        fs::write(env.codex_home().join("config.toml"), u).unwrap();
    }
}

#[test]
fn migrate_dry_run_prints_diff_and_writes_nothing() {
    let env = TestEnv::new();
    setup(&env, Some(USER_TOML));
    let out = run(&env, &["--no-plugins", "--dry-run", "--color", "never"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let diff = String::from_utf8(out.stdout.clone()).unwrap();
    let path = env.codex_home().join("config.toml");
    let p = path.to_str().unwrap().trim_start_matches('/');
    assert!(
        diff.starts_with(&format!("--- a/{p}\n+++ b/{p}\n@@ ")),
        "{diff}"
    );
    assert!(diff.contains(&format!("+{START}\n")), "{diff}");
    assert!(diff.contains("+[mcp_servers.fs]\n"), "{diff}");
    assert!(!diff.contains('\u{1b}'), "colour with --color never");
    assert!(
        stderr(&out).contains("(dry run) Would write"),
        "{}",
        stderr(&out)
    );
    assert_eq!(config(&env), USER_TOML, "dry run wrote the file");
    assert!(!env.codex_home().join(".hermes-mcp.lock").exists());

    let out = run(&env, &["--no-plugins", "--dry-run", "--color", "always"]);
    let diff = String::from_utf8(out.stdout).unwrap();
    assert!(diff.contains("\u{1b}[32m+[mcp_servers.fs]"), "{diff:?}");
    // NO_COLOR with auto (and a pipe) stays plain.
    let out = env
        .cmd()
        .args(["migrate", "--no-plugins", "--dry-run"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains('\u{1b}'));
}

#[test]
fn migrate_writes_block_idempotently_and_check_tracks_changes() {
    let env = TestEnv::new();
    setup(&env, Some(USER_TOML));
    assert_eq!(code(&run(&env, &["--no-plugins", "--check"])), 1);
    let out = run(&env, &["--no-plugins"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let first = config(&env);
    // The user's bytes are all still there, in place.
    let (pre, post) = outside(&first);
    assert_eq!(pre, "# my codex settings\nmodel = \"gpt-5.5\"");
    assert_eq!(post, "# features\n[features]\nplugins = false\n");
    assert_eq!(first.matches(START).count(), 1);
    let t: toml::Table = first.parse().unwrap();
    assert_eq!(t["default_permissions"].as_str(), Some(":workspace"));
    let fs_srv = &t["mcp_servers"]["fs"];
    assert_eq!(fs_srv["command"].as_str(), Some("npx"));
    assert_eq!(fs_srv["tool_timeout_sec"].as_float(), Some(120.0));
    assert_eq!(t["mcp_servers"]["off"]["enabled"].as_bool(), Some(false));
    let ht = &t["mcp_servers"]["hermes-tools"];
    assert_eq!(ht["args"].as_array().unwrap()[0].as_str(), Some("serve"));
    let exe = fs::canonicalize(bin()).unwrap();
    assert_eq!(ht["command"].as_str(), exe.to_str());
    assert_eq!(ht["startup_timeout_sec"].as_float(), Some(30.0));
    assert_eq!(ht["tool_timeout_sec"].as_float(), Some(600.0));
    assert_eq!(
        ht["tools"]["kanban_complete"]["approval_mode"].as_str(),
        Some("approve")
    );
    // env_vars lists only what this setup needs (none here: nothing is set,
    // no kanban, no profiles); every name is one `serve` reads.
    let vars: Vec<&str> = ht
        .get("env_vars")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
        .unwrap_or_default();
    for v in &vars {
        assert!(
            hermes_mcp::hermes::envvars::serve_vars().any(|s| s.name == *v),
            "{v} is not read by serve"
        );
    }
    assert!(!vars.contains(&"HERMES_HOME"), "HERMES_HOME is in env");
    assert_eq!(
        ht["env"]["HERMES_HOME"].as_str(),
        env.hermes_home().to_str()
    );

    // Second run: not a byte changes; --check agrees.
    let out = run(&env, &["--no-plugins", "--json"]);
    let r = json(&out);
    assert_eq!(r["written"], false);
    assert_eq!(r["changed"], false);
    assert_eq!(config(&env), first);
    assert_eq!(code(&run(&env, &["--no-plugins", "--check"])), 0);

    // A change in config.yaml makes --check fail without writing.
    env.write_hermes(
        "config.yaml",
        &format!("{HERMES_YAML}  added:\n    command: new-mcp\n"),
    );
    let out = run(&env, &["--no-plugins", "--check"]);
    assert_eq!(code(&out), 1);
    // --check answers with its exit status and one line saying what is stale;
    // its report only with -v.
    assert!(
        stderr(&out).starts_with(&format!(
            "{} is out of date: migrate would add [mcp_servers.added]",
            env.codex_home().join("config.toml").display()
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let out = run(&env, &["--no-plugins", "--check", "-v"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("out of date"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("Wrote"), "{}", stderr(&out));
    // A dry run never says it wrote anything either.
    let out = run(&env, &["--no-plugins", "--dry-run"]);
    assert!(!stderr(&out).contains("Wrote"), "{}", stderr(&out));
    assert!(stderr(&out).contains("Would"), "{}", stderr(&out));
    assert_eq!(config(&env), first);
    // Warnings are coloured like the diff, and NO_COLOR / --color never wins as documented.
    let out = run(&env, &["--no-plugins", "--dry-run", "--color", "always"]);
    assert!(
        stderr(&out).contains("\u{1b}[1m\u{1b}[33m⚠"),
        "{}",
        stderr(&out)
    );
    let out = run(&env, &["--no-plugins", "--dry-run"]);
    assert!(!stderr(&out).contains('\u{1b}'), "{}", stderr(&out));
    // -q keeps only the warnings and what the user must do.
    let out = run(&env, &["--no-plugins", "-q"]);
    assert_eq!(code(&out), 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .all(|l| l.starts_with('⚠') || l == "To do:" || l.starts_with("  - ")),
        "{text}"
    );
    assert!(
        text.contains(
            "  - export ALIAS=\"$SOMETHING_ELSE\" in the shell that starts codex, so ALIAS takes the value $SOMETHING_ELSE (for fs)"
        ),
        "{text}"
    );
}

#[test]
fn migrate_json_report_lists_everything() {
    let env = TestEnv::new();
    setup(
        &env,
        Some("model = \"m\"\n\n[mcp_servers.remote]\nurl = \"https://mine/mcp\"\n"),
    );
    let out = run(&env, &["--no-plugins", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let r = json(&out);
    let path = env.codex_home().join("config.toml");
    assert_eq!(r["target_path"].as_str(), path.to_str());
    assert_eq!(r["written"], true);
    assert_eq!(
        r["migrated"],
        serde_json::json!(["fs", "hermes-tools", "off"])
    );
    assert_eq!(r["preserved_user_servers"], serde_json::json!(["remote"]));
    assert!(
        r["preserved_user_entries"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("[mcp_servers.remote]"))
    );
    let fs_notes = r["skipped_keys_per_server"]["fs"].as_array().unwrap();
    assert!(
        fs_notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("env.ALIAS")),
        "{fs_notes:?}"
    );
    assert!(
        r["skipped_keys_per_server"]["remote"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("sampling (no codex equivalent)"))
    );
    let errors = r["errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e.as_str().unwrap().starts_with("server 'bad name' skipped")),
        "{errors:?}"
    );
    assert_eq!(r["permissions"]["written"], ":workspace");
    assert_eq!(r["wrote_permissions_default"], ":workspace");
    assert_eq!(r["plugins"]["discovery"], "skipped");
    assert_eq!(r["plugin_query_error"], "--no-plugins");
    let servers = r["servers"].as_array().unwrap();
    let bad = servers.iter().find(|s| s["name"] == "bad name").unwrap();
    assert_eq!(bad["status"], "skipped");
    // The user's remote server is untouched and not duplicated.
    let text = config(&env);
    assert_eq!(text.matches("[mcp_servers.remote]").count(), 1);
    assert!(text.contains("url = \"https://mine/mcp\""));
}

#[test]
fn migrate_keeps_secrets_out_of_config_toml() {
    let env = TestEnv::new();
    setup(&env, None);
    let out = env
        .cmd()
        .args(["migrate", "--no-plugins"])
        .env("GITHUB_TOKEN", "ghp_s3cret")
        .env("API_TOKEN", "tok_s3cret")
        .env("X_KEY", "xk_s3cret")
        .env("SOMETHING_ELSE", "else_s3cret")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = config(&env);
    assert!(!text.contains("s3cret"), "{text}");
    assert!(!text.contains("${"), "{text}");
    let t: toml::Table = text.parse().unwrap();
    let fs_srv = &t["mcp_servers"]["fs"];
    // ALIAS: ${SOMETHING_ELSE} is passed through under its own name (the user exports ALIAS).
    assert_eq!(
        fs_srv["env_vars"],
        toml::Value::Array(vec!["GITHUB_TOKEN".into(), "ALIAS".into()])
    );
    assert_eq!(fs_srv["env"]["DEBUG"].as_str(), Some("1"));
    assert!(fs_srv["env"].get("ALIAS").is_none());
    let remote = &t["mcp_servers"]["remote"];
    assert_eq!(remote["bearer_token_env_var"].as_str(), Some("API_TOKEN"));
    assert_eq!(remote["env_http_headers"]["X-Key"].as_str(), Some("X_KEY"));
    assert_eq!(remote["http_headers"]["X-Team"].as_str(), Some("core"));
    assert_eq!(remote["tool_timeout_sec"].as_float(), Some(300.0));
    assert_eq!(remote["startup_timeout_sec"].as_float(), Some(20.0));
    let off = &t["mcp_servers"]["off"];
    assert_eq!(
        off["enabled_tools"],
        toml::Value::Array(vec!["a".into(), "b".into()])
    );
    assert_eq!(off["disabled_tools"], toml::Value::Array(vec!["c".into()]));
    assert!(t["mcp_servers"].get("bad name").is_none());
}

#[test]
fn migrate_user_settings_outside_the_block_win() {
    for setting in [
        "default_permissions = \":danger-full-access\"",
        "sandbox_mode = \"danger-full-access\"",
    ] {
        let env = TestEnv::new();
        let user = format!(
            "{setting}\n\n[mcp_servers.hermes-tools]\ncommand = \"/opt/my/hermes-mcp\"\nargs = [\"serve\"]\n\n[mcp_servers.fs]\ncommand = \"my-fs\"\n"
        );
        setup(&env, Some(&user));
        let r = json(&run(&env, &["--no-plugins", "--json"]));
        let text = config(&env);
        let t: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(t["mcp_servers"]["fs"]["command"].as_str(), Some("my-fs"));
        assert_eq!(
            t["mcp_servers"]["hermes-tools"]["command"].as_str(),
            Some("/opt/my/hermes-mcp")
        );
        assert_eq!(r["permissions"]["written"], Value::Null);
        assert!(
            r["permissions"]["preserved"]
                .as_str()
                .unwrap()
                .starts_with(setting.split(' ').next().unwrap())
        );
        assert_eq!(
            r["preserved_user_servers"],
            serde_json::json!(["fs", "hermes-tools"])
        );
        assert_eq!(r["hermes_tools"], Value::Null);
        let (pre, post) = outside(&text);
        assert_eq!(format!("{pre}\n\n{post}"), user);
        assert_eq!(code(&run(&env, &["--no-plugins", "--check"])), 0);
    }
}

#[test]
fn migrate_refuses_invalid_toml_and_writes_nothing() {
    let env = TestEnv::new();
    setup(&env, Some("model = \"m\"\nbroken = [\n"));
    let out = run(&env, &["--no-plugins"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("is not valid TOML"), "{err}");
    assert!(err.contains("hint: fix"), "{err}");
    assert_eq!(config(&env), "model = \"m\"\nbroken = [\n");
    // --json still says what happened, on stdout.
    let r = json(&run(&env, &["--no-plugins", "--json"]));
    assert_eq!(r["written"], false);
    assert!(r["errors"][0].as_str().unwrap().contains("not valid TOML"));
    // A broken managed block gets a hint pointing at it.
    let broken = format!("model = \"m\"\n\n{START}\nx = [\n{END}\n");
    setup(&env, Some(&broken));
    let err = stderr(&run(&env, &["--no-plugins"]));
    assert!(err.contains("inside the managed block"), "{err}");
    assert_eq!(config(&env), broken);
}

#[test]
fn migrate_bad_input_exits_2_with_a_hint() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers: [a, b]\n");
    let out = run(&env, &["--no-plugins"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("not a mapping"), "{}", stderr(&out));
    assert!(stderr(&out).contains("hint:"));
    env.write_hermes("config.yaml", "mcp_servers:\n  a: [1, 2\n");
    let out = run(&env, &["--no-plugins"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("not valid YAML"), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).matches("error:").count(),
        1,
        "one `error:` per message:\n{}",
        stderr(&out)
    );
    assert!(!env.codex_home().join("config.toml").exists());
}

#[test]
fn migrate_permission_profiles_are_checked() {
    let env = TestEnv::new();
    setup(&env, Some("model = \"m\"\n"));
    let out = run(
        &env,
        &["--no-plugins", "--permissions", ":danger-no-sandbox"],
    );
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains(":read-only, :workspace, :danger-full-access"));
    let out = run(&env, &["--no-plugins", "--permissions", "workspace"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("did you mean the built-in `--permissions :workspace`"),
        "{}",
        stderr(&out)
    );
    let out = run(&env, &["--no-plugins", "--permissions", "mine"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("[permissions.mine]"));
    assert_eq!(config(&env), "model = \"m\"\n");

    let user = "model = \"m\"\n\n[permissions.mine]\nextends = \":workspace\"\n";
    setup(&env, Some(user));
    let out = run(&env, &["--no-plugins", "--permissions", "mine"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let t: toml::Table = config(&env).parse().unwrap();
    assert_eq!(t["default_permissions"].as_str(), Some("mine"));
    for p in [":read-only", ":danger-full-access"] {
        assert_eq!(code(&run(&env, &["--no-plugins", "--permissions", p])), 0);
        let t: toml::Table = config(&env).parse().unwrap();
        assert_eq!(t["default_permissions"].as_str(), Some(p));
    }
    // Without default_permissions, codex refuses a file that defines [permissions.*]
    // profiles: migrate says so and writes nothing.
    let before = config(&env);
    let out = run(&env, &["--no-plugins", "--no-permissions"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("does not set `default_permissions`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(config(&env), before);
    setup(&env, Some("model = \"m\"\n"));
    assert_eq!(code(&run(&env, &["--no-plugins", "--no-permissions"])), 0);
    let t: toml::Table = config(&env).parse().unwrap();
    assert!(t.get("default_permissions").is_none());
}

#[test]
fn migrate_remove_restores_the_users_file() {
    let env = TestEnv::new();
    setup(&env, Some(USER_TOML));
    assert_eq!(code(&run(&env, &["--no-plugins"])), 0);
    assert!(config(&env).contains(START));
    let out = run(&env, &["--remove", "--dry-run", "--color", "never"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("-{START}")));
    assert!(config(&env).contains(START));
    assert_eq!(code(&run(&env, &["--remove", "--check"])), 1);
    let out = run(&env, &["--remove"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(config(&env), USER_TOML);
    assert_eq!(code(&run(&env, &["--remove", "--check"])), 0);
    let r = json(&run(&env, &["--remove", "--json"]));
    assert_eq!(r["written"], false);
}

/// Both streams of a run, for report-text checks.
fn all_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `--remove --dry-run` and `--remove --check` say what would be removed
/// (nothing is), and `--check -v` names `migrate --remove` as what would
/// change the file; only the real `--remove` says "Removed".
#[test]
fn migrate_remove_dry_run_and_check_say_what_would_happen() {
    let env = TestEnv::new();
    setup(&env, Some(USER_TOML));
    assert_eq!(code(&run(&env, &["--no-plugins"])), 0);
    let plugin = env.hermes_home().join("plugins").join("hermes-mcp");
    assert!(plugin.is_dir(), "migrate installed no Hermes plugin");
    let out = all_text(&run(&env, &["--remove", "--dry-run", "--color", "never"]));
    assert!(
        out.contains("Would remove the Hermes plugin hermes-mcp"),
        "{out}"
    );
    assert!(!out.contains("Removed"), "{out}");
    let out = run(&env, &["--remove", "--check", "-v"]);
    assert_eq!(code(&out), 1);
    let out = all_text(&out);
    assert!(
        out.contains("Would remove the Hermes plugin hermes-mcp"),
        "{out}"
    );
    assert!(
        out.contains(
            "is out of date: it still has the managed block; run `hermes-mcp migrate --remove`"
        ),
        "{out}"
    );
    assert!(!out.contains("Removed"), "{out}");
    assert!(plugin.is_dir(), "a dry run removed the plugin");
    let out = all_text(&run(&env, &["--remove"]));
    assert!(
        out.contains("Removed the Hermes plugin hermes-mcp"),
        "{out}"
    );
    assert!(!plugin.exists());
}

#[test]
fn migrate_keeps_symlink_mode_crlf_and_bom() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", HERMES_YAML);
    let real = env.dir.path().join("dotfiles/codex.toml");
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    let user = "\u{feff}model = \"m\"\r\n\r\n[features]\r\nplugins = false\r\n";
    fs::write(&real, user).unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
    let link = env.codex_home().join("config.toml");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = run(&env, &["--no-plugins"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let text = fs::read_to_string(&real).unwrap();
    assert!(
        text.starts_with("\u{feff}model = \"m\"\r\n\r\n# managed by"),
        "{text:?}"
    );
    assert!(
        !text.replace("\r\n", "").contains('\n'),
        "LF in a CRLF file"
    );
    assert!(text.ends_with("\r\n[features]\r\nplugins = false\r\n"));
    assert_eq!(
        fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(code(&run(&env, &["--no-plugins", "--check"])), 0);
    assert_eq!(code(&run(&env, &["--remove"])), 0);
    assert_eq!(fs::read_to_string(&real).unwrap(), user);
}

#[test]
fn migrate_missing_config_yaml_is_reported() {
    let env = TestEnv::new();
    let r = json(&run(&env, &["--no-plugins", "--json"]));
    assert_eq!(r["written"], true);
    assert!(
        r["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("no config.yaml at"),
        "{r}"
    );
    assert_eq!(r["migrated"], serde_json::json!(["hermes-tools"]));
}

#[test]
fn migrate_creates_codex_home() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", HERMES_YAML);
    let home = env.dir.path().join("new/nested/codex");
    let out = run(
        &env,
        &["--no-plugins", "--codex-home", home.to_str().unwrap()],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = fs::read_to_string(home.join("config.toml")).unwrap();
    assert!(text.starts_with(START));
    assert_eq!(
        fs::metadata(home.join("config.toml"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
}

#[test]
fn migrate_hermes_home_env_only_when_explicit() {
    let env = TestEnv::new();
    // Default home (~/.hermes under the temp HOME): not written into env.
    let default_home = env.home().join(".hermes");
    fs::create_dir_all(&default_home).unwrap();
    fs::write(default_home.join("config.yaml"), "mcp_servers: {}\n").unwrap();
    let out = env
        .cmd()
        .env_remove("HERMES_HOME")
        .args(["migrate", "--no-plugins", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let t: toml::Table = config(&env).parse().unwrap();
    let ht = &t["mcp_servers"]["hermes-tools"];
    assert!(ht.get("env").is_none(), "{ht}");
    // The default home without profiles needs no HERMES_HOME pass-through.
    assert!(ht.get("env_vars").is_none(), "{ht}");
    // A profile is explicit, and must exist.
    let out = env
        .cmd()
        .env_remove("HERMES_HOME")
        .args(["migrate", "--no-plugins", "--profile", "coder"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    fs::create_dir_all(default_home.join("profiles/coder")).unwrap();
    // With profiles under the default root, HERMES_HOME passes through
    // (Hermes' `-p NAME` points codex's servers at a profile with it).
    let out = env
        .cmd()
        .env_remove("HERMES_HOME")
        .args(["migrate", "--no-plugins"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let t: toml::Table = config(&env).parse().unwrap();
    assert_eq!(
        t["mcp_servers"]["hermes-tools"]["env_vars"],
        toml::Value::Array(vec!["HERMES_HOME".into()])
    );
    let out = env
        .cmd()
        .env_remove("HERMES_HOME")
        .args(["migrate", "--no-plugins", "--profile", "coder"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let t: toml::Table = config(&env).parse().unwrap();
    assert_eq!(
        t["mcp_servers"]["hermes-tools"]["env"]["HERMES_HOME"].as_str(),
        default_home.join("profiles/coder").to_str()
    );
    // --no-hermes-tools leaves it out.
    assert_eq!(code(&run(&env, &["--no-plugins", "--no-hermes-tools"])), 0);
    assert!(!config(&env).contains("hermes-tools"));
}

#[test]
fn migrate_replaces_legacy_block_and_orphan_end_marker() {
    let env = TestEnv::new();
    setup(&env, None);
    // Legacy block (no end marker) followed by a user table.
    let legacy = format!(
        "model = \"m\"\n\n{START}\n\ndefault_permissions = \":workspace\"\n\n[mcp_servers.old]\ncommand = \"old\"\n\n[providers]\nname = \"p\"\n"
    );
    fs::write(env.codex_home().join("config.toml"), &legacy).unwrap();
    assert_eq!(code(&run(&env, &["--no-plugins"])), 0);
    let text = config(&env);
    assert!(!text.contains("[mcp_servers.old]"), "{text}");
    assert_eq!(text.matches(START).count(), 1);
    assert_eq!(text.matches(END).count(), 1);
    assert!(text.ends_with("[providers]\nname = \"p\"\n"));
    // Codex's permissions picker dropped the start marker: the rest is the user's now.
    let orphan = "approval_policy = \"never\"\n\n[mcp_servers.hermes-tools]\ncommand = \"x\"\n\n# end hermes-agent managed section\n";
    fs::write(env.codex_home().join("config.toml"), orphan).unwrap();
    let r = json(&run(&env, &["--no-plugins", "--json"]));
    assert_eq!(r["removed_orphan_end_markers"], 1);
    assert_eq!(
        r["preserved_user_servers"],
        serde_json::json!(["hermes-tools"])
    );
    let text = config(&env);
    assert_eq!(text.matches(START).count(), 1);
    assert_eq!(text.matches(END).count(), 1);
    assert_eq!(text.matches("[mcp_servers.hermes-tools]").count(), 1);
    text.parse::<toml::Table>().unwrap();
}

fn temp_files(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".hermes-tmp"))
        .collect()
}

#[test]
fn migrate_killed_mid_write_leaves_old_or_new_file() {
    let env = TestEnv::new();
    setup(&env, Some(USER_TOML));
    let path = env.codex_home().join("config.toml");
    // Killed after the temp file is written and fsynced, before the rename.
    let mut child = env
        .cmd()
        .args(["migrate", "--no-plugins"])
        .env("HERMES_MCP_TEST_PAUSE_BEFORE_RENAME_MS", "20000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    poll_until(
        "the temp file",
        20,
        || temp_files(&env.codex_home()),
        |t| !t.is_empty(),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), USER_TOML);
    assert_eq!(temp_files(&env.codex_home()).len(), 1);
    // The next run cleans up and writes.
    assert_eq!(code(&run(&env, &["--no-plugins"])), 0);
    let new = config(&env);
    assert!(new.contains(START));
    assert!(temp_files(&env.codex_home()).is_empty());

    // Killed at arbitrary moments: always the old or the new file, never a mix.
    for i in 0..25u64 {
        fs::write(&path, USER_TOML).unwrap();
        let mut child = env
            .cmd()
            .args(["migrate", "--no-plugins"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The moment of the kill is the input: a sleep, 0 to 17 ms in.
        std::thread::sleep(Duration::from_micros(i * 700));
        let _ = child.kill();
        child.wait().unwrap();
        let now = fs::read_to_string(&path).unwrap();
        assert!(
            now == USER_TOML || now == new,
            "torn file after kill #{i}:\n{now}"
        );
    }
}

#[test]
fn migrate_parallel_processes_serialize() {
    let env = TestEnv::new();
    let user = "# keep me\nmodel = \"m\"\n\n[features]\nplugins = false\n";
    fs::write(env.codex_home().join("config.toml"), user).unwrap();
    // Eight Hermes homes, each with its own server.
    let homes: Vec<_> = (0..8)
        .map(|i| {
            let h = env.dir.path().join(format!("hermes{i}"));
            fs::create_dir_all(&h).unwrap();
            fs::write(
                h.join("config.yaml"),
                format!("mcp_servers:\n  srv{i}:\n    command: cmd{i}\n"),
            )
            .unwrap();
            h
        })
        .collect();
    let children: Vec<_> = homes
        .iter()
        .map(|h| {
            let mut c = env.cmd();
            c.env("HERMES_HOME", h);
            // Each process migrates three times in a row.
            let script = format!(
                "for i in 1 2 3; do {} migrate --no-plugins || exit 9; done",
                bin().display()
            );
            let mut sh = Command::new("sh");
            sh.arg("-c").arg(script).env_clear();
            for (k, v) in c.get_envs() {
                if let Some(v) = v {
                    sh.env(k, v);
                }
            }
            sh.stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = config(&env);
    let t: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(text.matches(START).count(), 1);
    assert_eq!(text.matches(END).count(), 1);
    let (pre, post) = outside(&text);
    assert_eq!(format!("{pre}\n\n{post}"), user);
    let servers = t["mcp_servers"].as_table().unwrap();
    assert_eq!(servers.len(), 2, "{text}");
    // The block is exactly one process's complete output.
    let up_to_date = homes
        .iter()
        .filter(|h| {
            env.cmd()
                .env("HERMES_HOME", h)
                .args(["migrate", "--no-plugins", "--check"])
                .output()
                .unwrap()
                .status
                .code()
                == Some(0)
        })
        .count();
    assert_eq!(up_to_date, 1);
    assert!(temp_files(&env.codex_home()).is_empty());
}

#[test]
fn migrate_codex_bin_comes_from_config_yaml_and_failure_is_not_fatal() {
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        "model:\n  codex_bin: /nonexistent/codex-from-yaml\nmcp_servers:\n  a:\n    command: a-mcp\n",
    );
    let r = json(&run(&env, &["--json"]));
    assert_eq!(r["written"], true);
    assert_eq!(r["plugins"]["discovery"], "failed");
    let e = r["plugins"]["error"].as_str().unwrap();
    assert!(e.contains("/nonexistent/codex-from-yaml"), "{e}");
    assert!(e.contains("--codex-bin"), "{e}");
    // --codex-bin wins over config.yaml.
    let r = json(&run(
        &env,
        &["--json", "--codex-bin", "/nonexistent/flag-codex"],
    ));
    assert!(
        r["plugins"]["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/flag-codex")
    );
    // The text report says why discovery was skipped.
    let out = run(&env, &[]);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("Codex plugin discovery skipped: codex not found"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
