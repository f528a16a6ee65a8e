//! Per-tool settings of `hermes-tools` (`[mcp_servers.hermes-tools.tools.TOOL]`) live
//! beside the managed block: the user's own outside it and the ones Codex's "Always allow"
//! writes inside it survive `migrate`; `migrate` never writes a config.toml codex cannot
//! load (checked with the real codex 0.169.0 and 0.171.0); `doctor`'s hint for the broken
//! file earlier releases wrote repairs it. FAILS when codex is missing.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use super::support::codex::run_harness;
use super::support::common::{TestEnv, bin};
use super::support::migrate::{CodexEnv, END, START, ok};
use super::support::prereq::{CODEX_VERSIONS, codex_of};

fn json(out: &Output, what: &str) -> Value {
    let text = ok(out, what);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn refused(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const MEMORY_PROMPT: &str = "[mcp_servers.hermes-tools.tools.memory]\napproval_mode = \"prompt\"\n";

fn no_servers(env: &TestEnv) {
    fs::write(env.hermes_home().join("config.yaml"), "mcp_servers: {}\n").unwrap();
}

fn hermes_tools(text: &str) -> toml::Table {
    let t: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
    t["mcp_servers"]["hermes-tools"].as_table().unwrap().clone()
}

#[test]
fn a_tool_table_of_the_user_outside_the_block_keeps_hermes_tools() {
    let env = CodexEnv::new();
    no_servers(&env);
    let user = format!("model = \"m\"\n\n[features]\nplugins = false\n\n{MEMORY_PROMPT}");
    env.write_config(&user);
    let r = json(&env.migrate(&["--no-plugins", "--json"]), "migrate");
    let text = env.config();
    let ht = hermes_tools(&text);
    assert_eq!(
        Path::new(ht["command"].as_str().unwrap()),
        fs::canonicalize(bin()).unwrap()
    );
    assert_eq!(
        ht["tools"]["memory"]["approval_mode"].as_str(),
        Some("prompt")
    );
    assert_eq!(text.matches(MEMORY_PROMPT).count(), 1, "{text}");
    assert!(text.find(MEMORY_PROMPT) > text.find(END), "{text}");
    let status = r["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "hermes-tools")
        .unwrap()["status"]
        .clone();
    assert_eq!(status, "migrated", "{r}");
    let kept = r["preserved_user_entries"].to_string();
    assert!(
        kept.contains("[mcp_servers.hermes-tools.tools.memory]"),
        "{r}"
    );
    env.assert_every_codex_loads();
    assert_eq!(
        env.migrate(&["--no-plugins", "--check"]).status.code(),
        Some(0)
    );

    // The user's setting for one of the tools migrate sets itself wins (written before
    // the first migrate: inside a file with the block, TOML allows no second table).
    let mine = "[mcp_servers.hermes-tools.tools.kanban_complete]\napproval_mode = \"prompt\"\n";
    env.write_config(&format!("{user}\n{mine}"));
    let out = ok(&env.migrate(&["--no-plugins"]), "migrate");
    assert!(
        out.contains(
            "[mcp_servers.hermes-tools.tools.kanban_complete] (instead of hermes-mcp's own setting"
        ),
        "{out}"
    );
    let text = env.config();
    let ht = hermes_tools(&text);
    assert_eq!(
        ht["tools"]["kanban_complete"]["approval_mode"].as_str(),
        Some("prompt")
    );
    assert_eq!(
        ht["tools"]["kanban_block"]["approval_mode"].as_str(),
        Some("approve")
    );
    env.assert_every_codex_loads();
    assert_eq!(
        env.migrate(&["--no-plugins", "--check"]).status.code(),
        Some(0)
    );
}

/// What earlier releases wrote for a user tool table outside the block: a block without
/// hermes-tools, which every codex command refuses ("invalid transport").
fn broken(user_tail: &str) -> String {
    format!(
        "model = \"m\"\n\n{START}\n# hermes-mcp entries = [[\"default_permissions\"]]\n\ndefault_permissions = \":workspace\"\n\n{END}\n\n[features]\nplugins = false\n\n{user_tail}"
    )
}

#[test]
fn doctor_leads_to_the_migrate_that_repairs_a_server_left_without_transport() {
    let env = CodexEnv::new();
    no_servers(&env);
    env.write_config(&broken(MEMORY_PROMPT));
    let codex_home = env.codex_home();
    let home = codex_home.to_str().unwrap();
    let out = env
        .cmd()
        .args(["doctor", "--json", "--codex-home", home])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "codex_rejects_config")
        .unwrap_or_else(|| panic!("{v}"));
    let hint = f["hint"].as_str().unwrap();
    let cmd = format!("hermes-mcp migrate --codex-home {home}");
    assert!(hint.contains(&format!("`{cmd}`")), "{hint}");
    // The command it names repairs the file.
    ok(
        &env.migrate(&["--codex-home", home, "--no-plugins"]),
        "migrate",
    );
    env.assert_every_codex_loads();
    let text = env.config();
    assert_eq!(
        hermes_tools(&text)["tools"]["memory"]["approval_mode"].as_str(),
        Some("prompt")
    );
}

#[test]
fn a_server_table_codex_cannot_load_is_refused_with_the_reason() {
    let env = TestEnv::new();
    no_servers(&env);
    fs::create_dir_all(env.codex_home()).unwrap();
    let path = env.codex_home().join("config.toml");
    // The server's own table without a transport: the block cannot complete it.
    let user = "[mcp_servers.hermes-tools]\nenabled = false\n";
    fs::write(&path, user).unwrap();
    let err = refused(&super::support::migrate::run(&env, &["--no-plugins"]));
    assert!(
        err.contains("[mcp_servers.hermes-tools] has neither `command` nor `url`"),
        "{err}"
    );
    assert!(err.contains("invalid transport"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), user);

    // Settings for a server nobody defines: structurally broken, refused.
    let user = "[mcp_servers.gone.tools.x]\napproval_mode = \"approve\"\n";
    fs::write(&path, user).unwrap();
    let err = refused(&super::support::migrate::run(&env, &["--no-plugins"]));
    assert!(
        err.contains("[mcp_servers.gone] would have neither"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), user);

    // --remove would leave the user's tool table without its server.
    fs::write(&path, format!("model = \"m\"\n\n{MEMORY_PROMPT}")).unwrap();
    ok(
        &super::support::migrate::run(&env, &["--no-plugins"]),
        "migrate",
    );
    let before = fs::read_to_string(&path).unwrap();
    let err = refused(&super::support::migrate::run(&env, &["--remove"]));
    assert!(err.contains("[mcp_servers.hermes-tools]"), "{err}");
    assert!(err.contains("delete their tables"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), before);
}

/// A stand-in for codex whose strict loader refuses any config.toml naming `refuse`.
fn picky_codex(env: &TestEnv, refuse: &str) -> std::path::PathBuf {
    let p = env.dir.path().join("picky-codex");
    fs::write(
        &p,
        format!(
            "#!/bin/sh\nif grep -q '{refuse}' \"$CODEX_HOME/config.toml\"; then\n  echo '{{\"error\":{{\"code\":-32600,\"data\":{{\"detail\":\"config.toml:9:1: picky says no\"}},\"message\":\"failed\"}}}}'\n  exit 1\nfi\necho '{{}}'\n"
        ),
    )
    .unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn a_result_codex_refuses_is_not_written() {
    let env = TestEnv::new();
    no_servers(&env);
    fs::create_dir_all(env.codex_home()).unwrap();
    let path = env.codex_home().join("config.toml");
    fs::write(&path, "model = \"m\"\n").unwrap();
    let picky = picky_codex(&env, "hermes-tools");
    let args = ["--no-plugins", "--codex-bin", picky.to_str().unwrap()];
    let err = refused(&super::support::migrate::run(&env, &args));
    assert!(
        err.contains("could not load the result: config.toml:9:1: picky says no"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "model = \"m\"\n");
    // When codex refuses the current file just the same, migrate is not the cause: it
    // writes, and says what codex objects to.
    fs::write(&path, "model = \"m\"\n# hermes-tools\n").unwrap();
    let out = super::support::migrate::run(&env, &args);
    let said = format!(
        "{}{}",
        ok(&out, "migrate"),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("refuses")
            && said.contains("before and after this change: config.toml:9:1: picky says no"),
        "{said}"
    );
    assert!(
        fs::read_to_string(&path)
            .unwrap()
            .contains("[mcp_servers.hermes-tools]")
    );
}

#[test]
fn always_allow_written_by_codex_survives_migrate() {
    for version in CODEX_VERSIONS {
        let codex = codex_of(version);
        let env = TestEnv::under_cache("always-allow-");
        let root = env.dir.path().join("runs");
        let s = run_harness(
            &env.hermes_home(),
            "text_to_speech",
            r#"{"text":"hi"}"#,
            &[
                "--via",
                "appserver",
                "--persist",
                "always",
                "--keep",
                "--codex",
                codex.to_str().unwrap(),
                "--root",
                root.to_str().unwrap(),
            ],
        );
        assert_eq!(s["elicitations"].as_array().map(Vec::len), Some(1), "{s}");
        let after = s["config_toml_after"].as_str().unwrap();
        let added =
            "[mcp_servers.hermes-tools.tools.text_to_speech]\napproval_mode = \"approve\"\n";
        let end = after.find(END).unwrap();
        assert!(
            after[..end].contains(added),
            "codex {version} wrote it elsewhere:\n{after}"
        );

        let run = Path::new(s["run_dir"].as_str().unwrap());
        let codex_home = run.join("codex_home");
        let mut c = Command::new(bin());
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", run.join("home"))
            .args(["migrate", "--no-plugins", "--json", "--codex-home"])
            .arg(&codex_home)
            .arg("--hermes-home")
            .arg(env.hermes_home());
        let r = json(&c.output().unwrap(), "migrate");
        let kept = r["kept_from_old_block"].to_string();
        assert!(kept.contains("text_to_speech"), "{r}");
        let text = fs::read_to_string(codex_home.join("config.toml")).unwrap();
        assert!(text.find(added) > text.find(END), "{text}");
        assert_eq!(
            hermes_tools(&text)["tools"]["text_to_speech"]["approval_mode"].as_str(),
            Some("approve")
        );
        for v in CODEX_VERSIONS {
            let mut c = Command::new(codex_of(v));
            c.env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .env("HOME", run.join("home"))
                .env("CODEX_HOME", &codex_home)
                .current_dir(run)
                .args(["app-server", "--strict-config", "--print-startup-config"]);
            ok(&c.output().unwrap(), &format!("codex {v} loads"));
        }
        let _ = fs::remove_dir_all(run);
    }
}
