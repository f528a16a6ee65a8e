//! Property test: every tool `serve` lists, called with arbitrary Unicode
//! (multi-byte, combining marks, RTL and bidi controls, emoji, BOMs; never
//! NUL) in every string argument of its schema, answers without a caught
//! panic ("internal error in …", the text `src/server/mod.rs` gives one).
//! Byte-index slicing of user text is the class this guards against.
//!
//! Seeded (a fixed ChaCha seed; `PROPTEST_CASES` sets the cases per tool,
//! 8 by default) so it runs in seconds. Network stays loopback-only: no API
//! keys are set, URL-shaped strings point at 127.0.0.1 port 9 (closed), and
//! the suite runs in a loopback-only namespace. The `browser_*` tools are
//! skipped: each call would launch Chromium, which takes longer than the
//! whole test; their URL handling is covered by the browser suites. The
//! profile enables `kanban`; `image_generate` is not listed without a
//! provider key, so it is not called.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value, json};

use super::support::common::*;

/// Characters that break byte-index slicing, plus the ASCII that steers
/// parsers (`data:`, `file://`, `~/`, `%`).
const CHARS: &[char] = &[
    'a',
    'Z',
    '0',
    ' ',
    '/',
    '.',
    ':',
    '%',
    '~',
    '-',
    '_',
    '#',
    '?',
    '\n',
    'é',
    'ß',
    '日',
    '本',
    '語',
    'ب',
    'ע',
    '\u{0301}',
    '\u{0489}',
    '\u{202E}',
    '\u{200D}',
    '\u{FEFF}',
    '😀',
    '👩',
    '🏽',
    '\u{10FFFF}',
    'ـ',
    '\u{1F1EF}',
];

/// Prefixes that send a string down a parser's interesting branches.
const PREFIXES: &[&str] = &[
    "",
    "",
    "",
    "",
    "data:",
    "file://",
    "~/",
    "http://127.0.0.1:9/",
    "https://127.0.0.1:9/",
    "/",
];

fn unicode() -> impl Strategy<Value = String> {
    let picked = prop::collection::vec(prop::sample::select(CHARS), 0..12)
        .prop_map(|v| v.into_iter().collect::<String>());
    let any = prop::collection::vec(any::<char>().prop_filter("no NUL", |c| *c != '\0'), 0..8)
        .prop_map(|v| v.into_iter().collect::<String>());
    (
        prop::sample::select(PREFIXES),
        prop_oneof![3 => picked, 1 => any],
    )
        .prop_map(|(p, s)| format!("{p}{s}"))
}

/// Arguments for `schema`: every string (and list of strings) arbitrary,
/// enums their first value, numbers 1, booleans false, objects empty.
fn arguments(schema: &Value, s: &mut impl FnMut() -> String) -> Value {
    let mut args = Map::new();
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (name, p) in props {
        let ty = p["type"].as_str().unwrap_or("string");
        let v = if let Some(first) = p["enum"].as_array().and_then(|e| e.first()) {
            first.clone()
        } else {
            match ty {
                "integer" | "number" => json!(1),
                "boolean" => json!(false),
                "object" => json!({}),
                "array" if p["items"]["type"] == "string" => json!([s(), s()]),
                "array" => json!([]),
                _ => json!(s()),
            }
        };
        args.insert(name, v);
    }
    Value::Object(args)
}

#[test]
fn every_tool_takes_arbitrary_unicode_without_a_panic() {
    let env = TestEnv::new();
    // An orchestrator profile, so the kanban tools are listed too.
    // Every endpoint a keyless tool would call is a closed loopback port, so
    // no input can reach the outside even without a network namespace; no
    // pacing between DuckDuckGo calls (64 cases in CI).
    env.write_hermes(
        "config.yaml",
        "toolsets:\n  - hermes-cli\n  - kanban\n\
         web:\n  ddgs:\n    base_url: http://127.0.0.1:9\n    min_interval: 0\n\
         tts:\n  edge:\n    base_url: ws://127.0.0.1:9/edge\n",
    );
    let mut c = client(&env, &[("HERMES_PROFILE", "orch")]);
    let list = c.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools").clone();
    assert!(!tools.is_empty(), "{list}");
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = prop::collection::vec(unicode(), 8);
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        if name.starts_with("browser_") {
            continue;
        }
        for _ in 0..cases {
            let pool = strategy.new_tree(&mut runner).unwrap().current();
            let mut it = pool.into_iter().cycle();
            let args = arguments(&tool["inputSchema"], &mut || it.next().unwrap());
            let r = c.request("tools/call", json!({"name": name, "arguments": args}));
            let text = r.to_string();
            assert!(
                !text.contains("internal error"),
                "{name} with {args}: {text}"
            );
        }
    }
    let st = c.finish(std::time::Duration::from_secs(10));
    assert!(st.success(), "{st:?}");
}
