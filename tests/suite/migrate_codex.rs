//! The real codex (0.171 and 0.169) reads what `migrate` writes; plugin discovery against
//! a local marketplace (no network). These tests FAIL when codex is missing.

use std::fs;
use std::path::Path;

use serde_json::Value;

use super::support::common::bin;
use super::support::migrate::{CodexEnv, END, START, ok};

/// codex 0.171.0 and 0.169.0 both load config.toml with their strict loader.
fn strict_check(env: &CodexEnv) {
    env.assert_every_codex_loads();
}

fn mcp_list(env: &CodexEnv) -> Vec<Value> {
    let out = ok(
        &env.codex(&["mcp", "list", "--json"]),
        "codex mcp list --json",
    );
    serde_json::from_str::<Vec<Value>>(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn by_name<'a>(list: &'a [Value], name: &str) -> &'a Value {
    list.iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in codex mcp list: {list:?}"))
}

const YAML: &str = r#"
toolsets: [hermes-cli, kanban]
mcp_servers:
  filesystem:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
    env: {DEBUG: "1", GITHUB_TOKEN: "${GITHUB_TOKEN}"}
    cwd: /srv
    timeout: 120
    connect_timeout: 15
    tools: {include: [read_file, list_directory], exclude: [write_file]}
  linear:
    url: https://mcp.linear.app/mcp
    headers:
      Authorization: Bearer ${LINEAR_API_KEY}
      X-Workspace: ${env:LINEAR_WORKSPACE}
      X-Client: hermes
  sentry:
    url: https://mcp.sentry.dev/sse
    transport: sse
    enabled: false
  "weird.name@v2":
    command: "C:\\tools\\mcp.exe"
    args: ["--quote=\"x\"", "tab\there"]
"#;

#[test]
fn codex_accepts_migrated_config_and_lists_servers() {
    let env = CodexEnv::new();
    fs::write(env.hermes_home().join("config.yaml"), YAML).unwrap();
    env.write_config("model = \"gpt-5.5\"\n\n[features]\nplugins = false\n");
    ok(&env.migrate(&["--no-plugins"]), "migrate");
    strict_check(&env);
    let list = mcp_list(&env);
    let fs_ = by_name(&list, "filesystem");
    assert_eq!(fs_["transport"]["type"], "stdio");
    assert_eq!(fs_["transport"]["command"], "npx");
    assert_eq!(
        fs_["transport"]["args"],
        serde_json::json!(["-y", "@modelcontextprotocol/server-filesystem", "/srv"])
    );
    assert_eq!(fs_["transport"]["env"], serde_json::json!({"DEBUG": "1"}));
    assert_eq!(
        fs_["transport"]["env_vars"],
        serde_json::json!(["GITHUB_TOKEN"])
    );
    assert_eq!(fs_["transport"]["cwd"], "/srv");
    assert_eq!(fs_["tool_timeout_sec"].as_f64(), Some(120.0));
    assert_eq!(fs_["startup_timeout_sec"].as_f64(), Some(15.0));
    let get: Value = serde_json::from_str(&ok(
        &env.codex(&["mcp", "get", "filesystem", "--json"]),
        "codex mcp get",
    ))
    .unwrap();
    assert_eq!(
        get["enabled_tools"],
        serde_json::json!(["read_file", "list_directory"])
    );
    assert_eq!(get["disabled_tools"], serde_json::json!(["write_file"]));

    let lin = by_name(&list, "linear");
    assert_eq!(lin["transport"]["type"], "streamable_http");
    assert_eq!(lin["transport"]["url"], "https://mcp.linear.app/mcp");
    assert_eq!(lin["transport"]["bearer_token_env_var"], "LINEAR_API_KEY");
    assert_eq!(
        lin["transport"]["http_headers"],
        serde_json::json!({"X-Client": "hermes"})
    );
    assert_eq!(
        lin["transport"]["env_http_headers"],
        serde_json::json!({"X-Workspace": "LINEAR_WORKSPACE"})
    );
    assert_eq!(lin["auth_status"], "bearer_token");
    assert_eq!(by_name(&list, "sentry")["enabled"], false);
    let weird = by_name(&list, "weird.name@v2");
    assert_eq!(weird["transport"]["command"], "C:\\tools\\mcp.exe");
    assert_eq!(
        weird["transport"]["args"],
        serde_json::json!(["--quote=\"x\"", "tab\there"])
    );

    let ht = by_name(&list, "hermes-tools");
    let exe = fs::canonicalize(bin()).unwrap();
    assert_eq!(ht["transport"]["command"].as_str(), exe.to_str());
    assert_eq!(ht["transport"]["args"], serde_json::json!(["serve"]));
    assert_eq!(
        ht["transport"]["env"]["HERMES_HOME"].as_str(),
        env.hermes_home().to_str()
    );
    let vars = ht["transport"]["env_vars"].as_array().unwrap();
    assert!(vars.contains(&"HERMES_KANBAN_TASK".into()));
    assert!(vars.contains(&"HERMES_KANBAN_CLAIM_LOCK".into()));
    assert_eq!(ht["startup_timeout_sec"].as_f64(), Some(30.0));
    assert_eq!(ht["tool_timeout_sec"].as_f64(), Some(600.0));

    // Every permission choice also loads.
    for p in [":read-only", ":danger-full-access", ":workspace"] {
        ok(
            &env.migrate(&["--no-plugins", "--permissions", p]),
            "migrate",
        );
        strict_check(&env);
    }
}

#[test]
fn codex_accepts_the_examples() {
    let env = CodexEnv::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/migrate");
    fs::copy(
        root.join("config.yaml"),
        env.hermes_home().join("config.yaml"),
    )
    .unwrap();
    let user = fs::read_to_string(root.join("config.toml"))
        .unwrap()
        .replace("[features]\n", "[features]\nplugins = false\n");
    env.write_config(&user);
    let out = env.migrate(&["--no-plugins", "--json"]);
    let r: Value = serde_json::from_str(&ok(&out, "migrate")).unwrap();
    assert_eq!(r["preserved_user_servers"], serde_json::json!(["github"]));
    strict_check(&env);
    let list = mcp_list(&env);
    assert_eq!(
        by_name(&list, "github")["transport"]["command"],
        "github-mcp-server",
        "the user's own github server must win"
    );
    assert!(list.iter().all(|e| e["name"] != "my notes"));
}

/// A local marketplace with plugins `hello`, `other`, `third`, all installed
/// through codex itself.
fn local_marketplace(env: &CodexEnv) {
    let mkt = env.dir.path().join("mkt");
    fs::create_dir_all(mkt.join(".agents/plugins")).unwrap();
    let mut entries = Vec::new();
    for p in ["hello", "other", "third"] {
        let d = mkt.join(format!("plugins/{p}/.codex-plugin"));
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join("plugin.json"),
            format!(r#"{{"name":"{p}","version":"1.0.0","description":"{p} plugin"}}"#),
        )
        .unwrap();
        entries.push(format!(
            r#"{{"name":"{p}","source":{{"source":"local","path":"./plugins/{p}"}},"policy":{{"installation":"AVAILABLE","authentication":"ON_INSTALL"}},"category":"Productivity"}}"#
        ));
    }
    fs::write(
        mkt.join(".agents/plugins/marketplace.json"),
        format!(
            r#"{{"name":"localmkt","interface":{{"displayName":"Local"}},"plugins":[{}]}}"#,
            entries.join(",")
        ),
    )
    .unwrap();
    ok(
        &env.codex(&["plugin", "marketplace", "add", mkt.to_str().unwrap()]),
        "codex plugin marketplace add",
    );
    for p in ["hello", "other", "third"] {
        ok(
            &env.codex(&["plugin", "add", &format!("{p}@localmkt")]),
            "codex plugin add",
        );
    }
}

#[test]
fn codex_plugin_discovery_with_local_marketplace() {
    let env = CodexEnv::new();
    fs::write(env.hermes_home().join("config.yaml"), "mcp_servers: {}\n").unwrap();
    local_marketplace(&env);
    // As Hermes' migrator leaves it: hello/other inside the managed block
    // (other disabled), third configured by the user outside it; gone was
    // uninstalled since the block was written.
    let text = env.config();
    let marketplace = &text[..text.find("[plugins.").unwrap()];
    env.write_config(&format!(
        "model = \"m\"\n\n{START}\n\n[plugins.\"hello@localmkt\"]\nenabled = true\n\n[plugins.\"other@localmkt\"]\nenabled = false\n\n[plugins.\"gone@localmkt\"]\nenabled = true\n\n{END}\n\n{}\n[plugins.\"third@localmkt\"]\nenabled = true\n",
        marketplace.trim_end()
    ));
    let before = env.config();

    // The dry run discovers too: its preview is faithful.
    let out = env.migrate(&["--dry-run", "--json"]);
    let r: Value = serde_json::from_str(&ok(&out, "migrate --dry-run")).unwrap();
    assert_eq!(r["plugins"]["discovery"], "discovered", "{r}");
    assert_eq!(
        r["plugins"]["migrated"],
        serde_json::json!(["hello@localmkt", "other@localmkt"])
    );
    assert_eq!(
        r["plugins"]["preserved"],
        serde_json::json!(["third@localmkt"])
    );
    assert_eq!(
        r["plugins"]["removed"],
        serde_json::json!(["gone@localmkt"])
    );
    // A dry run prints the diff on stdout and the report on stderr.
    let out = env.migrate(&["--dry-run"]);
    ok(&out, "migrate --dry-run");
    let text_report = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        text_report
            .contains("Would remove 1 plugin entry no longer installed in codex: gone@localmkt"),
        "{text_report}"
    );
    assert!(
        r["diff"]
            .as_str()
            .unwrap()
            .contains("+[mcp_servers.hermes-tools]")
    );
    assert_eq!(env.config(), before);

    let r: Value = serde_json::from_str(&ok(&env.migrate(&["--json"]), "migrate")).unwrap();
    assert_eq!(
        r["migrated_plugins"],
        serde_json::json!(["hello@localmkt", "other@localmkt"])
    );
    assert_eq!(r["plugin_query_error"], Value::Null);
    let text = env.config();
    let block = &text[text.find(START).unwrap()..text.find(END).unwrap()];
    assert!(
        block.contains("[plugins.\"hello@localmkt\"]\nenabled = true\n"),
        "{text}"
    );
    assert!(
        block.contains("[plugins.\"other@localmkt\"]\nenabled = false\n"),
        "{text}"
    );
    assert!(!block.contains("third@localmkt"));
    assert_eq!(text.matches("[plugins.\"third@localmkt\"]").count(), 1);
    strict_check(&env);
    // Codex still sees all three installed, with the same enabled states.
    let out = ok(
        &env.codex(&["plugin", "list", "--json"]),
        "codex plugin list",
    );
    let pl: Value = serde_json::from_str(&out).unwrap();
    let state = |id: &str| {
        pl["installed"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pluginId"] == id)
            .map(|p| p["enabled"].as_bool().unwrap())
    };
    assert_eq!(state("hello@localmkt"), Some(true));
    assert_eq!(state("other@localmkt"), Some(false));
    assert_eq!(state("third@localmkt"), Some(true));
    // Idempotent with discovery in the loop.
    let out = env.migrate(&["--check"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Discovery failing (no codex there) does not abort, and keeps the block's plugins.
    let out = env.migrate(&[
        "--json",
        "--codex-bin",
        "/nonexistent/codex",
        "--permissions",
        ":read-only",
    ]);
    let r: Value = serde_json::from_str(&ok(&out, "migrate with a bad --codex-bin")).unwrap();
    assert_eq!(r["written"], true);
    assert_eq!(r["plugins"]["discovery"], "failed");
    assert!(
        r["plugins"]["error"]
            .as_str()
            .unwrap()
            .contains("--codex-bin"),
        "{r}"
    );
    assert_eq!(
        r["plugins"]["kept_from_previous_block"],
        serde_json::json!(["hello@localmkt", "other@localmkt"])
    );
    assert!(
        env.config()
            .contains("[plugins.\"other@localmkt\"]\nenabled = false\n")
    );

    // --remove keeps the plugins installed: their entries move out of the block.
    let out = env.migrate(&["--remove", "--json"]);
    let r: Value = serde_json::from_str(&ok(&out, "migrate --remove")).unwrap();
    assert_eq!(
        r["plugins"]["kept_from_previous_block"],
        serde_json::json!(["hello@localmkt", "other@localmkt"])
    );
    let text = env.config();
    assert!(!text.contains(START) && !text.contains(END), "{text}");
    strict_check(&env);
    let out = ok(
        &env.codex(&["plugin", "list", "--json"]),
        "codex plugin list",
    );
    let pl: Value = serde_json::from_str(&out).unwrap();
    let installed: Vec<(&str, bool)> = pl["installed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["pluginId"].as_str().unwrap(),
                p["enabled"].as_bool().unwrap(),
            )
        })
        .collect();
    for want in [
        ("hello@localmkt", true),
        ("other@localmkt", false),
        ("third@localmkt", true),
    ] {
        assert!(installed.contains(&want), "{want:?} not in {installed:?}");
    }
}

#[test]
fn codex_unloadable_config_is_reported_not_fatal() {
    let env = CodexEnv::new();
    fs::write(env.hermes_home().join("config.yaml"), "mcp_servers: {}\n").unwrap();
    // Valid TOML that codex refuses (notify must be a list of strings).
    env.write_config("notify = [[\"a\"]]\n\n[features]\nplugins = false\n");
    let out = env.migrate(&["--json"]);
    let r: Value = serde_json::from_str(&ok(&out, "migrate")).unwrap();
    assert_eq!(r["written"], true);
    assert_eq!(r["plugins"]["discovery"], "failed");
    let e = r["plugins"]["error"].as_str().unwrap();
    assert!(e.contains("config"), "{e}");
    assert!(e.contains("run migrate again"), "{e}");
}

#[test]
fn codex_mcp_add_into_our_block_is_kept() {
    let env = CodexEnv::new();
    fs::write(
        env.hermes_home().join("config.yaml"),
        "mcp_servers:\n  mine:\n    command: mine-mcp\n",
    )
    .unwrap();
    // No user tables: our block is the last thing in the file, so codex
    // appends its new table just before our end marker.
    env.write_config("model = \"m\"\n");
    ok(&env.migrate(&["--no-plugins"]), "migrate");
    ok(
        &env.codex(&[
            "mcp", "add", "added", "--env", "A=B", "--", "python3", "-m", "srv",
        ]),
        "codex mcp add",
    );
    let text = env.config();
    let end = text.find(END).unwrap();
    assert!(
        text[..end].contains("[mcp_servers.added]"),
        "codex wrote it elsewhere:\n{text}"
    );
    let out = env.migrate(&["--no-plugins", "--json"]);
    let r: Value = serde_json::from_str(&ok(&out, "migrate")).unwrap();
    assert_eq!(r["kept_from_old_block"].as_array().unwrap().len(), 2, "{r}");
    let text = env.config();
    let end = text.find(END).unwrap();
    assert!(text[end..].contains("[mcp_servers.added]"), "{text}");
    strict_check(&env);
    let list = mcp_list(&env);
    assert_eq!(
        by_name(&list, "added")["transport"]["env"],
        serde_json::json!({"A": "B"})
    );
    by_name(&list, "mine");
    assert_eq!(
        env.migrate(&["--no-plugins", "--check"]).status.code(),
        Some(0)
    );
}
