//! `hermes-mcp doctor`: starts hermes-tools as codex would, times it, and
//! names every problem (exit 1) or none (exit 0). codex itself judges
//! config.toml, so these tests need the real codex 0.169.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::support::common::{TIME_SCALE, bin};
use super::support::doctor::{doctor_json, finding as support_finding, json_of};
use super::support::migrate::{CodexEnv, END, START};

fn doctor(env: &CodexEnv, extra: &[(&str, &str)]) -> (Output, Value) {
    doctor_json(env, &[], extra)
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
    // The order that works with or without the plugin: Hermes' command
    // first (its migrator writes Hermes' Python server), then migrate.
    assert!(
        notes.contains("`/codex-runtime codex_app_server` first and `hermes-mcp migrate` after it")
            && notes.contains("puts Hermes' Python server back as hermes-tools"),
        "{notes}"
    );
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

/// The managed block as Hermes' migrator leaves it: its Python server as
/// `hermes-tools` (`python -m agent.transports.hermes_tools_mcp_server`).
/// doctor tells it by those arguments; the command is a stub that answers
/// the handshake, because Hermes' own server takes seconds of CPU to start
/// in each of doctor's checks and its start is not what these tests ask.
fn hermes_python_server_block(env: &CodexEnv) -> String {
    format!(
        "{START}\n[mcp_servers.hermes-tools]\ncommand = \"{}\"\nargs = [\"-m\", \"agent.transports.hermes_tools_mcp_server\"]\n{END}\n",
        env_server(env, false).display()
    )
}

#[test]
fn hermes_python_server_in_the_block_is_named() {
    let env = CodexEnv::new();
    env.write_config(&hermes_python_server_block(&env));
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

/// The real-time test of doctor's handshake waits: it runs unscaled (no
/// [`TIME_SCALE`]), so a server that never answers costs codex's start-up
/// timeout (1 s here), doctor's least extra wait past it (3 s) and, as it
/// ignores its closed stdin, the exit grace (2 s): 6 s, and then doctor ends.
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
    let took = t.elapsed();
    assert!(
        took >= Duration::from_secs(6) && took < Duration::from_secs(20),
        "{took:?}"
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(codes(&v), ["server_failed"], "{v:#}");
    let msg = v["findings"][0]["message"].as_str().unwrap();
    assert!(msg.contains("did not answer within 1 s"), "{msg}");
}

// ------------------------------------------------------------ a server that misbehaves

/// Answers `initialize` and `tools/list` (one tool) like a stdio MCP server.
const ANSWER_PY: &str = r#"import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m: continue
    r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}} if m["method"] == "initialize" else {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"#;

/// The handshake answered, as `serve` would.
const ANSWERS: &str = "exec python3 \"$(dirname \"$0\")/answer.py\"";
/// A `tools --json` that works (nothing unavailable).
const TOOLS_OK: &str = r#"echo '{"tools": [], "providers": []}'; exit 0"#;

/// hermes-tools as a shell script with `args = ["serve"]` (so doctor also
/// runs its `tools --json`): `serve` runs the `serve` snippet, `tools` the
/// `tools` one.
fn fake_hermes_tools(env: &CodexEnv, serve: &str, tools: &str) {
    fs::write(env.dir.path().join("answer.py"), ANSWER_PY).unwrap();
    let script = env.dir.path().join("hermes-tools.sh");
    fs::write(
        &script,
        format!("#!/bin/sh\nif [ \"$1\" = tools ]; then\n{tools}\nfi\n{serve}\n"),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    env.write_config(&format!(
        "[mcp_servers.hermes-tools]\ncommand = \"{}\"\nargs = [\"serve\"]\nstartup_timeout_sec = 10.0\n",
        script.display()
    ));
}

/// A finished doctor run and the most memory it held (VmHWM, KiB).
struct Bounded {
    out: Output,
    peak_kib: u64,
}

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Run `hermes-mcp doctor args` and wait at most `limit`; killed (and the
/// test failed) when it takes longer or holds more than 1 GiB.
fn doctor_bounded(
    env: &CodexEnv,
    extra: &[(&str, &str)],
    args: &[&str],
    limit: Duration,
) -> Bounded {
    let mut c = Command::new(bin());
    env.apply(&mut c);
    c.envs(extra.iter().copied())
        .arg("doctor")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let pid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut b).ok();
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut b).ok();
        b
    });
    let start = Instant::now();
    let mut peak_kib = 0;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        peak_kib = vm_hwm_kib(pid).unwrap_or(0).max(peak_kib);
        if peak_kib > 1 << 20 || start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "doctor was killed after {:?} holding {peak_kib} KiB: it must end within {limit:?} with bounded memory",
                start.elapsed()
            );
        }
        // The sampling interval of the peak-memory watch, until the exit.
        std::thread::sleep(Duration::from_millis(20));
    };
    Bounded {
        out: Output {
            status,
            stdout: out_t.join().unwrap(),
            stderr: err_t.join().unwrap(),
        },
        peak_kib,
    }
}

fn finding_message<'a>(v: &'a Value, code: &str) -> &'a str {
    finding(v, code)["message"]
        .as_str()
        .unwrap_or_else(|| panic!("no {code} finding: {v:#}"))
}

/// Processes whose command line holds `marker` and that still run (not zombies).
fn alive_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let p = e.path();
        let Ok(cmd) = fs::read(p.join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let state = fs::read_to_string(p.join("stat")).unwrap_or_default();
        let zombie = matches!(
            state.rsplit(") ").next().and_then(|r| r.chars().next()),
            Some('Z' | 'X')
        );
        if cmd.contains(marker) && !zombie {
            found.push(format!("{}: {cmd}", p.display()));
        }
    }
    found
}

/// Ends what the test started (found by its unique marker) when dropped,
/// also when an assertion fails first.
struct KillOnDrop(&'static str);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        kill_marked(self.0);
    }
}

/// End what the test started (by its unique marker).
fn kill_marked(marker: &str) {
    for line in alive_with(marker) {
        let pid = line
            .trim_start_matches("/proc/")
            .split(':')
            .next()
            .and_then(|p| p.parse::<i32>().ok());
        if let Some(pid) = pid {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

#[test]
fn endless_output_without_a_newline_ends_doctor_with_bounded_memory() {
    let _cleanup = KillOnDrop("yes 10020");
    let env = CodexEnv::new();
    for (serve, tools, code, marker) in [
        (
            "yes 100201 | tr -d '\\n'",
            TOOLS_OK,
            "server_failed",
            "yes 100201",
        ),
        (
            ANSWERS,
            "yes 100202 | tr -d '\\n'",
            "tools_check_failed",
            "yes 100202",
        ),
    ] {
        fake_hermes_tools(&env, serve, tools);
        let b = doctor_bounded(&env, &[], &["--json"], Duration::from_secs(90));
        let alive = alive_with(marker);
        kill_marked(marker);
        let v = json_of(&b.out);
        assert_eq!(b.out.status.code(), Some(1), "{v:#}");
        let msg = finding_message(&v, code);
        assert!(msg.contains("wrote more than 16 MiB on stdout"), "{msg}");
        eprintln!("{code}: doctor held at most {} KiB", b.peak_kib);
        // The cap is 16 MiB; everything else doctor holds is far less.
        assert!(b.peak_kib < 256 << 10, "doctor held {} KiB", b.peak_kib);
        assert_eq!(alive, Vec::<String>::new(), "the writer survived doctor");
    }
}

/// doctor's own waits at a twentieth: the `tools --json` step is cut after
/// 0.5 s instead of 10 s (its text still says 10 s), so a run that waited
/// 10 s fails [`SCALED_RUN`]. codex's start-up timeout (10 s in
/// `fake_hermes_tools`) is the entry's and is not scaled.
const SCALED: [(&str, &str); 1] = [(TIME_SCALE, "0.05")];
/// The longest a doctor run with [`SCALED`] waits may take: a second for the
/// scaled codex check, the handshake with a Python fake, half a second for
/// `tools --json`, and room for a busy machine.
const SCALED_RUN: Duration = Duration::from_secs(8);

#[test]
fn a_step_that_never_ends_or_whose_grandchild_holds_the_pipes_is_cut_and_its_group_killed() {
    let _cleanup = KillOnDrop("sleep 10010");
    let env = CodexEnv::new();
    // `tools --json` never answers.
    fake_hermes_tools(&env, ANSWERS, "exec sleep 100101");
    let b = doctor_bounded(&env, &SCALED, &["--json"], SCALED_RUN);
    kill_marked("sleep 100101");
    let v = json_of(&b.out);
    assert_eq!(b.out.status.code(), Some(1), "{v:#}");
    let msg = finding_message(&v, "tools_check_failed");
    assert!(msg.contains("did not answer within 10 s"), "{msg}");
    assert_eq!(alive_with("sleep 100101"), Vec::<String>::new());

    // The server and `tools --json` each leave a background sleep holding
    // stdout and stderr after they are done.
    fake_hermes_tools(
        &env,
        &format!("sleep 100102 &\n{ANSWERS}"),
        &format!("sleep 100103 &\n{TOOLS_OK}"),
    );
    let b = doctor_bounded(&env, &SCALED, &["--json"], SCALED_RUN);
    kill_marked("sleep 10010");
    let v = json_of(&b.out);
    assert_eq!(b.out.status.code(), Some(0), "{v:#}");
    assert_eq!(v["server"]["tools_listed"], serde_json::json!(["t"]));
    for m in ["sleep 100102", "sleep 100103"] {
        assert_eq!(alive_with(m), Vec::<String>::new(), "{m} survived doctor");
    }
}

#[test]
fn what_doctor_shows_of_a_childs_stderr_is_redacted() {
    const SECRET: &str = "sk-abc123def456ghi789jkl0";
    let env = CodexEnv::new();
    let leak =
        format!("echo 'Authorization: Bearer {SECRET}' >&2; echo 'key={SECRET}' >&2; exit 3");
    // The server fails (a finding with its stderr), then `tools --json`
    // fails (a note with its stderr).
    for (serve, tools) in [(leak.as_str(), TOOLS_OK), (ANSWERS, leak.as_str())] {
        fake_hermes_tools(&env, serve, tools);
        for args in [&["--json"][..], &[][..]] {
            let b = doctor_bounded(&env, &[], args, Duration::from_secs(90));
            let text = String::from_utf8_lossy(&b.out.stdout);
            assert!(text.contains("Authorization"), "stderr not shown: {text}");
            assert!(!text.contains(SECRET), "secret shown: {text}");
        }
    }
}

#[test]
fn a_key_exported_only_in_the_shell_is_a_finding_with_the_fix() {
    let env = migrated("toolsets: [hermes-cli]\n");
    let key = [("FAL_KEY", "fal-test-key-123")];
    let (out, v) = doctor(&env, &key);
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    assert_eq!(codes(&v), ["shell_only_key"], "{v:#}");
    let f = &v["findings"][0];
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("FAL_KEY is set in this shell")
            && msg.contains("image_generate is unavailable"),
        "{msg}"
    );
    let hint = f["hint"].as_str().unwrap();
    let dotenv = env.hermes_home().join(".env");
    assert!(
        hint.contains(&format!("put FAL_KEY in {}", dotenv.display()))
            && hint.contains("run `hermes-mcp migrate` again"),
        "{hint}"
    );
    // Without the key in the shell, doctor and `tools` agree: no finding.
    let (out, v) = doctor(&env, &[]);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    // Each fix ends it: the key in .env ...
    fs::write(&dotenv, "FAL_KEY=fal-test-key-123\n").unwrap();
    let (out, v) = doctor(&env, &key);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
    fs::remove_file(&dotenv).unwrap();
    // ... or migrate run again with it exported (env_vars lists it).
    let mut c = Command::new(bin());
    env.apply(&mut c);
    let out = c
        .envs(key)
        .args(["migrate", "--no-plugins", "--no-hermes-hook"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(env.config().contains("\"FAL_KEY\""), "{}", env.config());
    let (out, v) = doctor(&env, &key);
    assert_eq!(out.status.code(), Some(0), "{v:#}");
}

/// The shell-environment comparison re-runs `tools --json` with this shell's
/// keys only when hermes-tools is this very binary: a configured program of
/// another kind never sees a key codex would not give it.
#[test]
fn a_configured_program_never_gets_the_shells_keys() {
    let env = CodexEnv::new();
    env.write_hermes("config.yaml", "toolsets: [hermes-cli]\n");
    let seen = env.dir.path().join("tools-env.txt");
    fake_hermes_tools(
        &env,
        ANSWERS,
        &format!(
            "env >> '{}'\necho ---- >> '{}'\n{TOOLS_OK}",
            seen.display(),
            seen.display()
        ),
    );
    let (_, v) = doctor(&env, &[("FAL_KEY", "fal-shell-only-key")]);
    let seen = fs::read_to_string(&seen).unwrap();
    assert!(seen.contains("PATH="), "`tools --json` never ran: {v:#}");
    assert!(!seen.contains("FAL_KEY"), "{seen}");
    assert!(
        notes(&v).contains("this shell's keys were not compared"),
        "{v:#}"
    );
}

/// Deepest nesting of parentheses in `s`.
fn paren_depth(s: &str) -> usize {
    let (mut d, mut max) = (0usize, 0usize);
    for c in s.chars() {
        match c {
            '(' => {
                d += 1;
                max = max.max(d);
            }
            ')' => d = d.saturating_sub(1),
            _ => {}
        }
    }
    max
}

#[test]
fn kanban_tools_take_one_line_and_snapshot_summaries_one_level_of_parentheses() {
    // No kanban in toolsets: all nine unavailable. ChatGPT as the main
    // provider without a sign-in: the summaries line once nested four deep.
    let env = migrated(
        "model:\n  provider: openai-codex\n  default: gpt-5.4-mini\ntoolsets: [hermes-cli]\n",
    );
    let mut c = Command::new(bin());
    env.apply(&mut c);
    let doctor_text = String::from_utf8(c.arg("doctor").output().unwrap().stdout).unwrap();
    let tools_text = String::from_utf8(env.cmd().arg("tools").output().unwrap().stdout).unwrap();
    let tools_quiet =
        String::from_utf8(env.cmd().args(["tools", "-q"]).output().unwrap().stdout).unwrap();
    for t in [&doctor_text, &tools_text, &tools_quiet] {
        let kanban: Vec<&str> = t.lines().filter(|l| l.contains("kanban_")).collect();
        assert_eq!(kanban.len(), 1, "{t}");
        assert!(
            kanban[0].trim_start().starts_with("kanban_* (9 tools)"),
            "{t}"
        );
    }
    for t in [&doctor_text, &tools_text] {
        let line = t
            .lines()
            .find(|l| l.contains("browser_snapshot summaries"))
            .unwrap_or_else(|| panic!("{t}"));
        assert!(paren_depth(line) <= 1, "{line}");
        assert!(
            line.contains("truncated") && line.contains("no ChatGPT sign-in"),
            "{line}"
        );
    }
    // --json keeps one entry per tool.
    let (_, v) = doctor(&env, &[]);
    let kanban = v["unavailable_tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["toolset"] == "kanban")
        .count();
    assert_eq!(kanban, 9, "{v:#}");
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
    support_finding(v, code).unwrap_or_else(|| panic!("no {code}: {v:#}"))
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
    env.write_config(&hermes_python_server_block(&env));
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
