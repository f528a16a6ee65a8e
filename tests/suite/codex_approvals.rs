//! Approvals are honest: each tool's annotations are the README's table, a tool that can
//! delete or overwrite what the user had is destructive, and the real codex (0.169.0 and
//! 0.171.0) asks before `memory` changes an entry under `approval_policy = "on-request"`.
//! FAILS when codex is missing.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use super::support::codex::run_harness;
use super::support::common::TestEnv;
use super::support::prereq::{CODEX_VERSIONS, codex_of};
use super::support::serve::Serve;

/// The README's annotation table: tool -> (readOnlyHint, destructiveHint, openWorldHint).
fn readme_table() -> BTreeMap<String, (bool, bool, bool)> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("| tool | readOnlyHint | destructiveHint | openWorldHint | why |")
        .expect("README has the annotation table");
    let mut out = BTreeMap::new();
    for line in readme[start..].lines().skip(2) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let flag = |c: &str| c.split_whitespace().next() == Some("true");
        let hints = (flag(cells[2]), flag(cells[3]), flag(cells[4]));
        for tool in cells[1].split(',') {
            let tool = tool.trim().trim_matches('`').to_string();
            assert!(out.insert(tool.clone(), hints).is_none(), "{tool} twice");
        }
    }
    out
}

#[test]
fn every_tools_annotations_are_the_readme_table() {
    let table = readme_table();
    let mut s = Serve::new()
        .config("toolsets: [hermes-cli, kanban]\n")
        .start();
    let r = s.client.request("tools/list", json!({}));
    let tools = r["result"]["tools"].as_array().unwrap();
    let mut seen = Vec::new();
    for t in tools {
        let name = t["name"].as_str().unwrap();
        let a = &t["annotations"];
        let got = (
            a["readOnlyHint"] == true,
            a["destructiveHint"] == true,
            a["openWorldHint"] == true,
        );
        let want = table
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in the README's annotation table"));
        assert_eq!(&got, want, "{name}: {a}");
        seen.push(name.to_string());
    }
    for must in [
        "memory",
        "kanban_complete",
        "kanban_unblock",
        "kanban_create",
        "text_to_speech",
        "session_search",
    ] {
        assert!(
            seen.iter().any(|n| n == must),
            "{must} not listed: {seen:?}"
        );
    }
    let destructive: Vec<&String> = table.iter().filter(|(_, h)| h.1).map(|(n, _)| n).collect();
    assert_eq!(
        destructive,
        [
            "kanban_block",
            "kanban_complete",
            "kanban_unblock",
            "memory",
            "text_to_speech"
        ]
    );
    s.finish();
}

#[test]
fn codex_asks_before_memory_changes_an_entry() {
    for v in CODEX_VERSIONS {
        let codex = codex_of(v);
        let env = TestEnv::under_cache("approvals-");
        let root = env.dir.path().join("runs");
        let s: Value = run_harness(
            &env.hermes_home(),
            "memory",
            r#"{"action":"add","target":"memory","content":"likes tea"}"#,
            &[
                "--via",
                "appserver",
                "--codex",
                codex.to_str().unwrap(),
                "--root",
                root.to_str().unwrap(),
            ],
        );
        assert_eq!(s["ok"], true, "codex {v}: {s}");
        let asked = s["elicitations"].as_array().unwrap();
        assert_eq!(asked.len(), 1, "codex {v} did not ask: {s}");
        assert_eq!(asked[0]["_meta"]["tool_name"], "memory", "{s}");
        assert_eq!(
            asked[0]["_meta"]["tool_annotations"]["destructiveHint"],
            true
        );
        let saved = std::fs::read_to_string(env.hermes_home().join("memories/MEMORY.md")).unwrap();
        assert!(saved.contains("likes tea"), "{saved}");
    }
}
