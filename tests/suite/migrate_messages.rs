//! What `migrate` says, and config.yaml floats PyYAML loads (`.inf`, `.nan`):
//! the report's wording (short notes, grammar by count, `-q` keeping what the
//! user must do, `--check`'s one line, the permission hint's codex version),
//! the block's ownership line, and `.inf`/`.nan` read as Hermes' Python reads
//! them (checked against PyYAML in Hermes' venv). FAILS when the venv is missing.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

use serde_json::{Value, json};

use super::support::common::{RawClient, TestEnv, hermes_python, run_ok_with_input};
use super::support::migrate::{START, config, run};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `.inf`/`.nan` spelled every way PyYAML's float resolver takes them, in an
/// unrelated key, in timeouts, in env and args; plus a key that shows whether
/// the rest of the file was used (`toolsets`).
const FLOATS_YAML: &str = "model:\n  openai_runtime: codex_app_server\n  spare: .inf\ntoolsets: [hermes-cli, kanban]\nodd: [.Inf, -.INF, .NaN, .NAN]\nmcp_servers:\n  gh:\n    command: npx\n    timeout: .inf\n    connect_timeout: .nan\n    env:\n      LEVEL: .nan\n  ok:\n    command: ok-mcp\n    timeout: 30\n    args: [+.Inf, -.inf, .nan]\n";

/// What Hermes' Python loads from `path`: the values migrate carries, as
/// Python's `str()` renders them, and whether the timeouts are infinite / NaN.
fn pyyaml_view(path: &std::path::Path) -> Value {
    let script = r#"
import json, math, sys, yaml
cfg = yaml.safe_load(open(sys.argv[1]))
s = cfg["mcp_servers"]
print(json.dumps({
    "spare": str(cfg["model"]["spare"]),
    "odd": [str(v) for v in cfg["odd"]],
    "all_floats": all(isinstance(v, float) for v in cfg["odd"] + s["ok"]["args"]),
    "gh_timeout_inf": math.isinf(s["gh"]["timeout"]),
    "gh_connect_nan": math.isnan(s["gh"]["connect_timeout"]),
    "level": str(s["gh"]["env"]["LEVEL"]),
    "ok_args": [str(a) for a in s["ok"]["args"]],
    "ok_timeout": s["ok"]["timeout"],
}))
"#;
    let out = Command::new(hermes_python("yaml"))
        .args(["-c", script])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn yaml_inf_and_nan_load_like_pyyaml_in_migrate_tools_and_serve() {
    let env = TestEnv::new();
    let path = env.write_hermes("config.yaml", FLOATS_YAML);
    let py = pyyaml_view(&path);
    assert_eq!(py["all_floats"], true, "{py}");
    assert_eq!(py["gh_timeout_inf"], true, "{py}");
    assert_eq!(py["gh_connect_nan"], true, "{py}");

    // migrate: exit 0; the values Codex can take are carried as Hermes' str()
    // renders them, the timeouts it cannot take are reported, not written.
    let out = run(&env, &["--no-plugins", "--no-hermes-hook", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        r["skipped_keys_per_server"]["gh"],
        json!([
            "timeout .inf is not a finite number of seconds; not carried over",
            "connect_timeout .nan is not a finite number of seconds; not carried over"
        ]),
        "{r}"
    );
    let t: toml::Table = config(&env).parse().unwrap();
    let gh = &t["mcp_servers"]["gh"];
    assert!(gh.get("tool_timeout_sec").is_none(), "{gh}");
    assert!(gh.get("startup_timeout_sec").is_none(), "{gh}");
    assert_eq!(gh["env"]["LEVEL"].as_str(), py["level"].as_str());
    let ok = &t["mcp_servers"]["ok"];
    let args: Vec<&str> = ok["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let py_args: Vec<&str> = py["ok_args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args, py_args);
    assert_eq!(ok["tool_timeout_sec"].as_float(), py["ok_timeout"].as_f64());

    // tools: the config is used (no error; toolsets' kanban is on).
    let out = env.cmd().args(["tools", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["config_error"], Value::Null, "{}", doc["config_error"]);
    let kanban_list = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "kanban_list")
        .unwrap();
    assert_eq!(kanban_list["available"], true, "{kanban_list}");

    // serve: the same config, so kanban_list is offered.
    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    let r = c.request("tools/list", json!({}));
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"kanban_list"), "{names:?}");
}

#[test]
fn timeout_too_large_is_one_short_line() {
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        "mcp_servers:\n  gh:\n    command: npx\n    timeout: 1e300\n",
    );
    let out = run(&env, &["--no-plugins", "--no-hermes-hook", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains(
            "Would migrate 2 MCP servers:\n  - gh:\n      timeout 1e300 s is more than Codex accepts (at most about 1.84e19 s); not carried over\n  - hermes-tools\n"
        ),
        "{text}"
    );
    assert!(!text.contains("000000000"), "{text}");
}

#[test]
fn quiet_keeps_what_the_user_must_do() {
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        "mcp_servers:\n  github:\n    command: npx\n    env:\n      GITHUB_PERSONAL_ACCESS_TOKEN: ${GITHUB_TOKEN}\n  linear:\n    url: https://mcp.linear.app/mcp\n    auth: oauth\n",
    );
    let todo = "To do:\n  - export GITHUB_PERSONAL_ACCESS_TOKEN=\"$GITHUB_TOKEN\" in the shell that starts codex, so GITHUB_PERSONAL_ACCESS_TOKEN takes the value $GITHUB_TOKEN (for github)\n  - run `codex mcp login linear` (OAuth)";
    let out = run(&env, &["--no-plugins", "--no-hermes-hook"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(todo), "{}", stdout(&out));
    assert!(stdout(&out).contains("Wrote "), "{}", stdout(&out));
    // The plugin's runs land in Hermes' agent.log, whose redaction masks every `NAME="value"` of a
    // secret-like name: the advice still names the variable to take the value from.
    let mut py = Command::new(hermes_python("agent.redact"));
    py.args([
        "-c",
        "import sys; from agent.redact import redact_sensitive_text as r; sys.stdout.write(r(sys.stdin.read()))",
    ]);
    let logged = run_ok_with_input(py, stdout(&out).as_bytes());
    assert!(
        logged.contains("GITHUB_PERSONAL_ACCESS_TOKEN=\"***\"")
            && logged.contains("so GITHUB_PERSONAL_ACCESS_TOKEN takes the value $GITHUB_TOKEN"),
        "{logged}"
    );
    // -q: the problems and the instructions, not the narrative.
    fs::remove_file(env.codex_home().join("config.toml")).unwrap();
    let out = run(&env, &["--no-plugins", "--no-hermes-hook", "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(todo), "{text}");
    assert!(
        !text.contains("Wrote") && !text.contains("Migrated"),
        "{text}"
    );
    assert!(
        text.lines()
            .all(|l| l.starts_with('⚠') || l == "To do:" || l.starts_with("  - ")),
        "{text}"
    );
}

#[test]
fn moved_entries_are_counted_with_grammar() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers: {}\n");
    assert!(
        run(&env, &["--no-plugins", "--no-hermes-hook"])
            .status
            .success()
    );
    let path = env.codex_home().join("config.toml");
    let end = "# end hermes-agent managed section";
    let with = |tables: &str| config(&env).replace(end, &format!("{tables}\n{end}"));
    let one = with("[mcp_servers.foo]\ncommand = \"x\"\n");
    fs::write(&path, &one).unwrap();
    let out = run(&env, &["--no-plugins", "--no-hermes-hook"]);
    assert!(
        stdout(&out).contains(
            "Moved 1 entry that was added inside the old managed block out of it (kept as yours):"
        ),
        "{}",
        stdout(&out)
    );
    let two = with("[mcp_servers.a]\ncommand = \"x\"\n\n[mcp_servers.b]\ncommand = \"y\"\n");
    fs::write(&path, &two).unwrap();
    let out = run(&env, &["--no-plugins", "--no-hermes-hook"]);
    assert!(
        stdout(&out).contains("Moved 2 entries that were added inside the old managed block"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn block_says_hermes_mcp_writes_it() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers: {}\n");
    assert!(
        run(&env, &["--no-plugins", "--no-hermes-hook"])
            .status
            .success()
    );
    let text = config(&env);
    // Hermes' marker stays byte for byte (its migrator finds the block by it);
    // the next line says who owns the block and how to take it out.
    assert!(
        text.contains(&format!(
            "{START}\n# `hermes-mcp migrate` writes this section (not the command above); `hermes-mcp migrate --remove` takes it out\n"
        )),
        "{text}"
    );
    // A block written before this line existed is replaced by one with it.
    let old = text.replace(
        "# `hermes-mcp migrate` writes this section (not the command above); `hermes-mcp migrate --remove` takes it out\n",
        "",
    );
    fs::write(env.codex_home().join("config.toml"), &old).unwrap();
    let out = run(&env, &["--no-plugins", "--no-hermes-hook", "--check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        run(&env, &["--no-plugins", "--no-hermes-hook"])
            .status
            .success()
    );
    assert_eq!(config(&env), text);
    assert!(
        run(&env, &["--no-plugins", "--no-hermes-hook", "--remove"])
            .status
            .success()
    );
    assert!(!config(&env).contains("hermes-mcp"), "{}", config(&env));
}

#[test]
fn check_says_in_one_line_what_is_stale() {
    let env = TestEnv::new();
    let target = env.codex_home().join("config.toml");
    let t = target.display().to_string();
    env.write_hermes("config.yaml", "mcp_servers:\n  a:\n    command: x\n");
    let check = |extra: &[&str]| {
        let mut args = vec!["--no-plugins", "--no-hermes-hook", "--check"];
        args.extend_from_slice(extra);
        run(&env, &args)
    };
    let expect = |why: &str| {
        let out = check(&[]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!("{t} is out of date: {why}; run `hermes-mcp migrate`\n")
        );
        // -q: the exit status alone.
        let out = check(&["-q"]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stderr(&out), "");
    };
    expect("it does not exist yet");
    fs::write(&target, "model = \"m\"\n").unwrap();
    expect("it has no managed block yet");
    assert!(
        run(&env, &["--no-plugins", "--no-hermes-hook"])
            .status
            .success()
    );
    let out = check(&[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), "");
    let good = config(&env);

    env.write_hermes(
        "config.yaml",
        "mcp_servers:\n  a:\n    command: y\n  b:\n    command: z\n",
    );
    expect("migrate would add [mcp_servers.b]; change [mcp_servers.a]");
    env.write_hermes("config.yaml", "mcp_servers: {}\n");
    expect("migrate would remove [mcp_servers.a]");
    env.write_hermes("config.yaml", "mcp_servers:\n  a:\n    command: x\n");

    // Hermes' /codex-runtime put its Python server back.
    let python = good.replace(
        &format!(
            "command = {:?}\nargs = [\"serve\"]",
            fs::canonicalize(super::support::common::bin())
                .unwrap()
                .display()
                .to_string()
        ),
        "command = \"/opt/hermes-venv/bin/python\"\nargs = [\"-m\", \"agent.transports.hermes_tools_mcp_server\"]",
    );
    assert_ne!(python, good);
    fs::write(&target, &python).unwrap();
    expect("Hermes' /codex-runtime replaced hermes-tools with its Python server");

    // Two blocks, a stray end marker, an entry added inside the block, layout only.
    let end = "# end hermes-agent managed section";
    fs::write(
        &target,
        format!(
            "{good}\n{START}\n# (no MCP servers, plugins, or permissions configured by Hermes)\n{end}\n"
        ),
    )
    .unwrap();
    expect("it has 2 managed blocks instead of one");
    fs::write(&target, format!("{good}\n{end}\n")).unwrap();
    expect("it has a stray end marker of the managed block");
    fs::write(
        &target,
        good.replace(end, &format!("[mcp_servers.own]\ncommand = \"o\"\n\n{end}")),
    )
    .unwrap();
    expect("1 entry was added inside the managed block");
    fs::write(
        &target,
        good.replace("\n\n[mcp_servers.a]", "\n[mcp_servers.a]"),
    )
    .unwrap();
    expect("the managed block is not laid out as migrate writes it");

    // --remove --check names its own command.
    fs::write(&target, &good).unwrap();
    let out = run(
        &env,
        &["--no-plugins", "--no-hermes-hook", "--check", "--remove"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "{t} is out of date: it still has the managed block; run `hermes-mcp migrate --remove`\n"
        )
    );
}

#[test]
fn permission_hint_names_the_codex_version_found() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "mcp_servers: {}\n");
    let fake = env.home().join("codex-0.172");
    fs::write(&fake, "#!/bin/sh\necho 'codex-cli 0.172.0'\n").unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let fake = fake.display().to_string();
    let out = run(
        &env,
        &[
            "--no-plugins",
            "--codex-bin",
            &fake,
            "--permissions",
            ":bogus",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!(
            "hint: hermes-mcp knows the built-ins of codex 0.169 and 0.171, :read-only, :workspace, :danger-full-access; the codex found ({fake}) is 0.172.0;"
        )),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("codex 0.172.0 knows"),
        "{}",
        stderr(&out)
    );
    // No codex to ask: no version claimed.
    let out = run(
        &env,
        &[
            "--no-plugins",
            "--codex-bin",
            "/nonexistent/codex",
            "--permissions",
            ":bogus",
        ],
    );
    assert!(
        stderr(&out).contains(
            "hint: the built-ins of codex 0.169 and 0.171 are :read-only, :workspace, :danger-full-access;"
        ),
        "{}",
        stderr(&out)
    );
}
