//! Codex reads hermes-tools' tool list once, when it starts: a key added to `.env` later
//! makes no tool appear in that Codex. `hermes-mcp tools` and `doctor` say which tools are
//! available now but were not listed by the running server (its log line), and to restart
//! codex.

use std::time::Duration;

use serde_json::{Value, json};

use super::support::common::TestEnv;
use super::support::serve::Serve;

fn tools_json(env: &TestEnv) -> Value {
    let out = env.cmd().args(["tools", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_tool_added_after_codex_started_is_named_with_restart_codex() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "toolsets: [hermes-cli]\n");
    let mut client = Serve::new().client(&env);
    let listed = client.request("tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"image_generate"), "{names:?}");
    let pid = client.child.id();
    // Nothing new yet.
    assert_eq!(tools_json(&env)["new_since_codex_started"], json!([]));

    // The user adds a key while Codex runs.
    env.write_hermes(".env", "FAL_KEY=fal-test-key\n");
    let doc = tools_json(&env);
    assert_eq!(
        doc["new_since_codex_started"],
        json!([{"name": "image_generate", "pids": [pid]}]),
        "{doc}"
    );
    let out = env.cmd().arg("tools").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "Available now, but not when the running hermes-tools (pid {pid}) started: image_generate. Restart codex to get them"
        )),
        "{text}"
    );
    // The TOOLSET column is as wide as its longest name (session_search).
    let header = text.lines().find(|l| l.starts_with("TOOL ")).unwrap();
    let status_at = header.find("STATUS").unwrap();
    for l in text.lines().filter(|l| l.contains("session_search")) {
        assert_eq!(
            l.find("session_search").map(|i| i < status_at),
            Some(true),
            "{text}"
        );
        assert!(
            l[status_at - 2..status_at].trim().is_empty(),
            "misaligned: {l:?}\n{text}"
        );
    }

    // Once that server is gone, nothing is said.
    client.finish(Duration::from_secs(20));
    assert_eq!(tools_json(&env)["new_since_codex_started"], json!([]));
}
