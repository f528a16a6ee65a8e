//! Generated Hermes configs (extreme numbers, odd strings, control characters,
//! odd names) must give a config.toml that codex 0.169 loads, not only one
//! that parses as TOML. Many cases are checked in process against codex's
//! rules; a sample goes through the binary and the real
//! `codex app-server --strict-config --print-startup-config`.

use std::process::{Command, Stdio};
use std::time::Duration;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value};

use hermes_mcp::migrate::block::{self, BlockContent};
use hermes_mcp::migrate::translate::{self, TomlVal, Translation};

use super::support::common::TestEnv;
use super::support::prereq::codex_bin;

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop_oneof![
            Just(1.9e19),
            Just(1e300),
            Just(-1.0),
            Just(0.0),
            Just(-0.0),
            Just(1.8e19),
            Just(18446744073709551615.0),
            Just(18446744073709549568.0),
            Just(5e-324),
            Just(f64::MAX),
            Just(f64::NAN),
            Just(f64::INFINITY),
            any::<f64>(),
            0.0..1e6f64,
        ]
        .prop_map(Value::from),
        (any::<i64>()).prop_map(Value::from),
        prop_oneof![
            Just("nan"),
            Just("inf"),
            Just("-inf"),
            Just("1e400"),
            Just("1e19"),
            Just(" 42 "),
            Just("soon"),
        ]
        .prop_map(Value::from),
    ]
}

fn odd_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 /._-]{0,12}",
        "\\PC{0,8}",
        prop::collection::vec(any::<char>(), 0..8).prop_map(|v| v.into_iter().collect()),
        prop::collection::vec(0u8..0x20, 1..4)
            .prop_map(|v| v.into_iter().map(char::from).collect()),
        Just("a\u{0}b".to_string()),
        Just("${TOKEN}".to_string()),
        Just("Bearer ${API_TOKEN}".to_string()),
        Just("x-${Y}".to_string()),
        Just("C:\\path\\\"q\"\n\t\u{1}\u{7f}'".to_string()),
        Just("\u{2028}\u{feff}\u{fffe}".to_string()),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => odd_string().prop_map(Value::from),
        1 => number(),
        1 => any::<bool>().prop_map(Value::from),
        1 => Just(Value::Null),
    ]
}

fn string_map() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(prop_oneof!["[A-Z_]{1,6}", odd_string()], scalar(), 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn server() -> impl Strategy<Value = Value> {
    (
        prop::option::of(scalar()),
        prop::option::of(prop::collection::vec(scalar(), 0..4)),
        prop::option::of(string_map()),
        prop::option::of(scalar()),
        prop::option::of(scalar()),
        prop::option::of(string_map()),
        prop::option::of(number()),
        prop::option::of(number()),
        prop::option::of(scalar()),
        prop::option::of((
            prop::collection::vec(scalar(), 0..3),
            prop::collection::vec(scalar(), 0..3),
        )),
        prop::option::of(scalar()),
    )
        .prop_map(
            |(command, args, env, cwd, url, headers, timeout, connect, enabled, tools, par)| {
                let mut m = Map::new();
                let mut put = |k: &str, v: Option<Value>| {
                    if let Some(v) = v {
                        m.insert(k.into(), v);
                    }
                };
                put("command", command);
                put("args", args.map(Value::from));
                put("env", env);
                put("cwd", cwd);
                put("url", url);
                put("headers", headers);
                put("timeout", timeout);
                put("connect_timeout", connect);
                put("enabled", enabled);
                put(
                    "tools",
                    tools.map(|(i, e)| serde_json::json!({"include": i, "exclude": e})),
                );
                put("supports_parallel_tool_calls", par);
                Value::Object(m)
            },
        )
}

fn hermes_config() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(
        prop_oneof![
            4 => "[a-z][a-z0-9_.:@/-]{0,8}",
            1 => odd_string(),
        ],
        server(),
        1..5,
    )
    .prop_map(|servers| serde_json::json!({ "mcp_servers": Value::Object(servers.into_iter().collect()) }))
}

/// JSON is YAML, once characters YAML does not allow raw (C0/C1 controls,
/// DEL, U+FFFE/FFFF) are escaped; they only occur inside strings.
fn to_yaml(v: &Value) -> String {
    let json = serde_json::to_string_pretty(v).unwrap();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        let printable = matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{7e}' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..);
        if printable {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{:04X}", c as u32));
        }
    }
    out
}

/// What codex 0.169 refuses at load or cannot use at run time.
fn codex_problem(name: &str, s: &translate::CodexServer) -> Option<String> {
    if !translate::is_valid_codex_server_name(name) {
        return Some(format!("server name {name:?}"));
    }
    for (k, v) in &s.pairs() {
        match v {
            TomlVal::Float(f) if Duration::try_from_secs_f64(*f).is_err() => {
                return Some(format!("{name}.{k} = {f} is not a Duration"));
            }
            TomlVal::Str(t) if t.contains('\0') => return Some(format!("{name}.{k} has NUL")),
            TomlVal::List(l) if l.iter().any(|t| t.contains('\0')) => {
                return Some(format!("{name}.{k} has NUL"));
            }
            TomlVal::Map(m) if m.iter().any(|(a, b)| a.contains('\0') || b.contains('\0')) => {
                return Some(format!("{name}.{k} has NUL"));
            }
            _ => {}
        }
    }
    None
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new_with_rng(
        Config {
            cases,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    )
}

#[test]
fn migrate_props_generated_configs_give_what_codex_accepts() {
    let mut r = runner(400);
    r.run(&hermes_config(), |cfg| {
        let mut content = BlockContent::default();
        for (name, v) in cfg["mcp_servers"].as_object().unwrap() {
            if let Translation::Ok { server, .. } = translate::translate(name, v) {
                prop_assert!(
                    codex_problem(name, &server).is_none(),
                    "{:?}",
                    codex_problem(name, &server)
                );
                content.servers.push((name.clone(), server));
            }
        }
        let rendered = block::render(&content);
        let out = block::insert("model = \"m\"\n", &rendered, block::detect_framing(""));
        prop_assert!(block::validate(&out, "model = \"m\"\n", &rendered, &content).is_ok());
        Ok(())
    })
    .unwrap();
}

#[test]
fn migrate_props_sample_loads_in_real_codex() {
    codex_bin();
    let mut r = runner(8);
    let strategy = hermes_config();
    let mut envs = Vec::new();
    for i in 0..8 {
        let cfg = strategy.new_tree(&mut r).unwrap().current();
        let env = TestEnv::under_cache("props-");
        let yaml = to_yaml(&cfg);
        env.write_hermes("config.yaml", &yaml);
        let out = env
            .cmd()
            .args(["migrate", "--no-plugins"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(0),
            "case {i}: {stderr}\nconfig.yaml:\n{yaml}"
        );
        envs.push((env, yaml));
    }
    // codex takes seconds to start: check the sample in parallel.
    let children: Vec<_> = envs
        .iter()
        .map(|(env, _)| {
            let mut c = Command::new("codex");
            env.apply(&mut c);
            c.args(["app-server", "--strict-config", "--print-startup-config"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run codex")
        })
        .collect();
    for (i, (child, (env, yaml))) in children.into_iter().zip(&envs).enumerate() {
        let out = child.wait_with_output().unwrap();
        let toml = std::fs::read_to_string(env.codex_home().join("config.toml")).unwrap();
        assert!(
            out.status.success(),
            "case {i}: codex refused what migrate wrote: {}\nconfig.yaml:\n{yaml}\nconfig.toml:\n{toml}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
