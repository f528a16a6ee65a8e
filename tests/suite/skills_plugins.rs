//! Plugin skills (`skill_view("plugin:skill")`): a user plugin in
//! `$HERMES_HOME/plugins/` registers skills from its `register(ctx)`; ours must
//! answer exactly as Hermes' own `skill_view` does on the same home (the
//! skill with its bundle banner, "not found in plugin", the fall-through to
//! `category/skill` when no plugin matches), using Hermes' Python to load the
//! plugin as Hermes does.

use std::process::Command;

use serde_json::{Value, json};

use super::support::common::*;
use super::support::serve::Serve;

const INIT: &str = r#"
from pathlib import Path

def register(ctx):
    here = Path(__file__).parent
    ctx.register_skill("writing-plans", here / "skills" / "writing-plans" / "SKILL.md", "Plans")
    ctx.register_skill("review", here / "skills" / "review" / "SKILL.md")
"#;

fn plugin_home(env: &TestEnv, enabled: bool) {
    env.write_hermes(
        "plugins/superpowers/plugin.yaml",
        "name: superpowers\nversion: 1.0.0\ndescription: test plugin\n",
    );
    env.write_hermes("plugins/superpowers/__init__.py", INIT);
    env.write_hermes(
        "plugins/superpowers/skills/writing-plans/SKILL.md",
        "---\nname: writing-plans\ndescription: Write a plan first.\n---\n\n# Plans\n\nDir: ${HERMES_SKILL_DIR}\n",
    );
    env.write_hermes(
        "plugins/superpowers/skills/review/SKILL.md",
        "---\nname: review\ndescription: Review it.\n---\n\nReview.\n",
    );
    // A local categorized skill with the same `ns/skill` shape.
    env.write_hermes(
        "skills/local/thing/SKILL.md",
        "---\nname: thing\ndescription: Local.\n---\n\nLocal thing.\n",
    );
    let enabled = if enabled { "[superpowers]" } else { "[]" };
    env.write_hermes("config.yaml", &format!("plugins:\n  enabled: {enabled}\n"));
}

fn python() -> std::path::PathBuf {
    hermes_python("hermes_cli.plugins")
}

fn hermes_view(env: &TestEnv, name: &str) -> Value {
    let mut c = Command::new(python());
    env.apply(&mut c);
    let out = c
        .args([
            "-c",
            &format!(
                "import json\nfrom tools.skills_tool import skill_view\nprint(json.dumps(json.loads(skill_view({name:?}))))"
            ),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap()
}

fn client(env: &TestEnv) -> RawClient {
    Serve::new().var("HERMES_PYTHON", python()).client(env)
}

fn ours(rc: &mut RawClient, name: &str) -> Value {
    result_json(&rc.call_tool("skill_view", json!({"name": name})))
}

#[test]
fn plugin_skills_are_served_as_hermes_serves_them() {
    let env = TestEnv::new();
    plugin_home(&env, true);
    let mut rc = client(&env);
    for name in [
        "superpowers:writing-plans",
        "superpowers:review",
        "superpowers:missing",
        "local:thing",
        "nosuch:thing",
    ] {
        let (o, h) = (ours(&mut rc, name), hermes_view(&env, name));
        assert_eq!(o, h, "{name}");
    }
    let v = ours(&mut rc, "superpowers:writing-plans");
    let content = v["content"].as_str().unwrap();
    assert!(
        content.starts_with("[Bundle context: This skill is part of the 'superpowers' plugin.\nSibling skills: review.\n"),
        "{content}"
    );
    assert!(
        content.contains("/plugins/superpowers/skills/writing-plans\n"),
        "{content}"
    );
    assert_eq!(
        ours(&mut rc, "superpowers:missing")["available_skills"],
        json!(["superpowers:review", "superpowers:writing-plans"])
    );
    // Use is recorded under the qualified name, as Hermes' bump does.
    let usage: Value = serde_json::from_str(
        &std::fs::read_to_string(env.hermes_home().join("skills/.usage.json")).unwrap(),
    )
    .unwrap();
    assert!(
        usage["superpowers:writing-plans"]["view_count"].as_i64() >= Some(2),
        "{usage}"
    );
}

#[test]
fn a_plugin_that_is_not_enabled_serves_nothing() {
    let env = TestEnv::new();
    plugin_home(&env, false);
    let mut rc = client(&env);
    let (o, h) = (
        ours(&mut rc, "superpowers:writing-plans"),
        hermes_view(&env, "superpowers:writing-plans"),
    );
    assert_eq!(o, h);
    assert_eq!(o["success"], false, "{o}");
}

#[test]
fn without_hermes_python_qualified_names_fall_through_to_local_skills() {
    let env = TestEnv::new();
    plugin_home(&env, true);
    let mut c = env.cmd();
    c.env("HERMES_PYTHON", "/nonexistent/python3");
    let mut rc = RawClient::spawn(c);
    rc.initialize();
    assert_eq!(ours(&mut rc, "local:thing")["success"], true);
    let v = ours(&mut rc, "superpowers:writing-plans");
    assert_eq!(
        v["error"], "Skill 'superpowers:writing-plans' not found.",
        "{v}"
    );
}
