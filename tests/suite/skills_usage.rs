//! `skill_view` records use in `$HERMES_HOME/skills/.usage.json` as Hermes'
//! `tools/skill_usage.py` does: checked against Hermes' own functions (run by Hermes' Python)
//! on the same skills dir, including Hermes and hermes-mcp bumping at the same time.

use std::process::Command;

use serde_json::{Value, json};

use super::support::common::*;

fn skill(env: &TestEnv, name: &str) {
    env.write_hermes(
        &format!("skills/tools/{name}/SKILL.md"),
        &format!(
            "---\nname: {name}\ndescription: A test skill.\n---\n\n# {name}\n\nDo the thing.\n"
        ),
    );
}

fn usage(env: &TestEnv) -> (String, Value) {
    let text = std::fs::read_to_string(env.hermes_home().join("skills/.usage.json")).unwrap();
    let v = serde_json::from_str(&text).unwrap();
    (text, v)
}

fn hermes(env: &TestEnv, code: &str) -> String {
    let py = hermes_python("tools.skill_usage");
    let out = Command::new(py)
        .args(["-c", code])
        .env("HERMES_HOME", env.hermes_home())
        .env("HOME", env.home())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn skill_view_bumps_usage_like_hermes() {
    let env = TestEnv::new();
    skill(&env, "demo");
    skill(&env, "other");
    let mut rc = RawClient::spawn(env.cmd());
    rc.initialize();
    let r = rc.call_tool("skill_view", json!({"name": "demo"}));
    assert_eq!(result_json(&r)["success"], true, "{r}");
    // A failed view records nothing.
    let r = rc.call_tool("skill_view", json!({"name": "missing"}));
    assert!(is_error(&r));

    let (text, v) = usage(&env);
    let rec = &v["demo"];
    assert_eq!(v.as_object().unwrap().len(), 1, "{v}");
    assert_eq!(rec["view_count"], 1);
    assert_eq!(rec["use_count"], 1);
    assert_eq!(rec["state"], "active");
    // Same keys as Hermes' fresh record, and the file is byte for byte what Hermes' json.dump
    // writes for this data.
    let theirs = hermes(
        &env,
        r#"
import json, sys
from tools import skill_usage as u
print(json.dumps(sorted(u._empty_record().keys())))
"#,
    );
    let keys: Vec<String> = serde_json::from_str(theirs.trim()).unwrap();
    let mut ours: Vec<String> = rec.as_object().unwrap().keys().cloned().collect();
    ours.sort();
    assert_eq!(ours, keys);
    let redump = hermes(
        &env,
        r#"
import json, sys
from tools import skill_usage as u
sys.stdout.write(json.dumps(u.load_usage(), indent=2, sort_keys=True, ensure_ascii=False))
"#,
    );
    assert_eq!(text, redump);
    // Hermes reads our timestamps as its own.
    let parsed = hermes(
        &env,
        r#"
from tools import skill_usage as u
r = u.get_record("demo")
print(u._parse_iso_timestamp(r["last_used_at"]) is not None, u.activity_count(r), u.latest_activity_at(r) == r["last_used_at"] or u.latest_activity_at(r) == r["last_viewed_at"])
"#,
    );
    assert_eq!(parsed.trim(), "True 2 True", "{parsed}");

    // Hermes bumps and we bump the same file at the same time: no count is lost.
    let py = hermes_python("tools.skill_usage");
    let mut child = Command::new(py)
        .args([
            "-c",
            "from tools import skill_usage as u\nfor _ in range(30): u.bump_view('demo')\n",
        ])
        .env("HERMES_HOME", env.hermes_home())
        .env("HOME", env.home())
        .spawn()
        .unwrap();
    for _ in 0..30 {
        let r = rc.call_tool("skill_view", json!({"name": "demo"}));
        assert_eq!(result_json(&r)["success"], true);
    }
    assert!(child.wait().unwrap().success());
    let (_, v) = usage(&env);
    assert_eq!(v["demo"]["view_count"], 1 + 30 + 30, "{v}");
    assert_eq!(v["demo"]["use_count"], 1 + 30, "{v}");
    // Records we do not touch are kept as they are.
    hermes(
        &env,
        "from tools import skill_usage as u\nu.bump_patch('other')\n",
    );
    rc.call_tool("skill_view", json!({"name": "demo"}));
    let (_, v) = usage(&env);
    assert_eq!(v["other"]["patch_count"], 1);
    assert_eq!(v["demo"]["use_count"], 32);
}
