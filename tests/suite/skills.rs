//! The `skills` toolset (`skills_list`, `skill_view`) through the real server,
//! against the fixture tree in `tests/fixtures/skills/`, plus a differential
//! run against Python Hermes' own `tools/skills_tool.py`.

use std::process::Command;

use serde_json::{Value, json};

use super::support::common::*;
use super::support::serve::Serve;
use super::support::skills::{install_skill_fixtures, skills_config_yaml};

fn client(env: &TestEnv) -> RawClient {
    Serve::new().client(env)
}

fn client_with(cmd: Command) -> RawClient {
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    c
}

/// Call a tool; return (isError, parsed JSON text).
fn call(c: &mut RawClient, name: &str, args: Value) -> (bool, Value) {
    let r = c.call_tool(name, args);
    (is_error(&r), result_json(&r))
}

fn names(list: &Value) -> Vec<String> {
    list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tools_are_listed_read_only_with_hermes_schemas() {
    let env = TestEnv::new();
    let mut c = client(&env);
    let r = c.request("tools/list", json!({}));
    let tools = r["result"]["tools"].as_array().unwrap();
    let pos = |n: &str| tools.iter().position(|t| t["name"] == n).unwrap();
    assert!(pos("skill_view") < pos("skills_list"), "Hermes order");
    let view = &tools[pos("skill_view")];
    assert_eq!(view["inputSchema"]["required"], json!(["name"]));
    assert!(view["inputSchema"]["properties"]["file_path"].is_object());
    assert!(
        view["description"]
            .as_str()
            .unwrap()
            .starts_with("Skills allow for loading information")
    );
    let list = &tools[pos("skills_list")];
    assert_eq!(
        list["description"],
        "List available skills (name + description). Use skill_view(name) to load full content."
    );
    for t in [view, list] {
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
        assert_eq!(t["annotations"]["destructiveHint"], false, "{t}");
    }
    // Listing touched no disk: the skills directory was not created.
    assert!(!env.hermes_home().join("skills").exists());
}

#[test]
fn skills_list_covers_the_tree() {
    let env = TestEnv::new();
    install_skill_fixtures(&env);
    let mut c = client(&env);
    let (err, list) = call(&mut c, "skills_list", json!({}));
    assert!(!err, "{list}");
    // Sorted by (category, name); disabled, macOS-only, legacy flat files,
    // support-dir packages and node_modules are not listed; the local
    // `summarize` wins over the external one.
    assert_eq!(
        names(&list),
        [
            "deploy",
            "axolotl",
            "lora",
            "arxiv",
            "ext-lint",
            "broken-yaml",
            "plain-notes",
            "summarize"
        ]
    );
    assert_eq!(
        list["categories"],
        json!(["devops", "mlops", "research", "tools", "writing"])
    );
    assert_eq!(list["count"], 8);
    assert_eq!(
        list["hint"],
        "Use skill_view(name) to see full content, tags, and linked files"
    );
    let by_name = |n: &str| {
        list["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .cloned()
            .unwrap()
    };
    // Nested category: the first path component.
    assert_eq!(by_name("lora")["category"], "mlops");
    // No frontmatter: the first non-heading body line.
    assert_eq!(
        by_name("plain-notes")["description"],
        "Keep short notes without any frontmatter."
    );
    // Malformed YAML: the key: value fallback.
    assert_eq!(
        by_name("broken-yaml")["description"],
        "Frontmatter: with a colon that breaks YAML"
    );
    assert_eq!(
        by_name("summarize")["description"],
        "Summarize documents (local copy)."
    );

    let (_, mlops) = call(&mut c, "skills_list", json!({"category": "mlops"}));
    assert_eq!(names(&mlops), ["axolotl", "lora"]);
    assert_eq!(mlops["categories"], json!(["mlops"]));
    let (_, none) = call(&mut c, "skills_list", json!({"category": "nope"}));
    assert_eq!(none["count"], 0);
}

#[test]
fn skills_list_creates_a_missing_skills_dir() {
    let env = TestEnv::new();
    let mut c = client(&env);
    let (err, r) = call(&mut c, "skills_list", json!({}));
    assert!(!err);
    assert_eq!(r["skills"], json!([]));
    let msg = r["message"].as_str().unwrap();
    assert!(
        msg.starts_with("No skills found. Skills directory created at ")
            && msg.ends_with("/skills/"),
        "{msg}"
    );
    assert!(env.hermes_home().join("skills").is_dir());
    // An existing but empty directory.
    let (_, r) = call(&mut c, "skills_list", json!({}));
    assert_eq!(r["message"], "No skills found in skills/ directory.");
}

#[test]
fn skill_view_returns_content_metadata_and_linked_files() {
    let env = TestEnv::new();
    let fx = install_skill_fixtures(&env);
    let mut c = client(&env);
    for name in ["axolotl", "mlops/axolotl", "mlops:axolotl"] {
        let (err, v) = call(&mut c, "skill_view", json!({"name": name}));
        assert!(!err, "{name}: {v}");
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "success",
                "name",
                "description",
                "tags",
                "related_skills",
                "content",
                "path",
                "skill_dir",
                "linked_files",
                "usage_hint",
                "required_environment_variables",
                "required_commands",
                "missing_required_environment_variables",
                "missing_credential_files",
                "missing_required_commands",
                "setup_needed",
                "setup_skipped",
                "readiness_status",
                "compatibility",
                "metadata"
            ]
        );
        assert_eq!(v["name"], "axolotl");
        assert_eq!(v["tags"], json!(["fine-tuning", "llm", "lora"]));
        assert_eq!(v["related_skills"], json!(["lora", "deploy"]));
        assert_eq!(v["path"], "mlops/axolotl/SKILL.md");
        assert_eq!(
            v["skill_dir"],
            fx.skills_dir.join("mlops/axolotl").display().to_string()
        );
        assert!(
            v["content"]
                .as_str()
                .unwrap()
                .starts_with("---\nname: axolotl\n")
        );
        assert_eq!(
            v["linked_files"],
            json!({
                "references": ["references/api.md", "references/dataset-formats.md"],
                "templates": ["templates/nested/train.py", "templates/config.yaml"],
                "assets": ["assets/config.yaml", "assets/logo.png"],
                "scripts": ["scripts/validate.py", "scripts/run.sh"],
            })
        );
        assert!(
            v["usage_hint"]
                .as_str()
                .unwrap()
                .contains("skill_view(name, file_path)")
        );
        assert_eq!(v["readiness_status"], "available");
        assert_eq!(v["compatibility"], "Requires Python 3.10+ and a CUDA GPU");
        assert_eq!(v["metadata"]["hermes"]["tags"][0], "fine-tuning");
    }
    // Top-level tags/related_skills (comma string form).
    let (_, lora) = call(&mut c, "skill_view", json!({"name": "lora"}));
    assert_eq!(lora["tags"], json!(["peft", "adapters"]));
    assert_eq!(lora["related_skills"], json!(["axolotl", "qlora"]));
    assert_eq!(lora["linked_files"], Value::Null);
    assert_eq!(lora["path"], "mlops/training/lora/SKILL.md");
    // External skill: path relative to its parent's parent.
    let (err, ext) = call(&mut c, "skill_view", json!({"name": "ext-lint"}));
    assert!(!err, "{ext}");
    assert_eq!(ext["path"], "ext-lint/SKILL.md");
    assert_eq!(
        ext["skill_dir"],
        std::fs::canonicalize(fx.external_dir.join("tools/ext-lint"))
            .unwrap()
            .display()
            .to_string()
    );
    // Legacy flat file: no skill dir, name from the frontmatter.
    let (err, legacy) = call(&mut c, "skill_view", json!({"name": "legacy-tips"}));
    assert!(!err, "{legacy}");
    assert_eq!(legacy["path"], "legacy-tips.md");
    assert_eq!(legacy["skill_dir"], Value::Null);
    // A file_path on a legacy skill is ignored, as in Hermes.
    let (err, legacy2) = call(
        &mut c,
        "skill_view",
        json!({"name": "legacy-tips", "file_path": "references/x.md"}),
    );
    assert!(!err);
    assert_eq!(legacy2["content"], legacy["content"]);
}

#[test]
fn skill_view_linked_files_text_binary_and_missing() {
    let env = TestEnv::new();
    let fx = install_skill_fixtures(&env);
    let mut c = client(&env);
    let (err, f) = call(
        &mut c,
        "skill_view",
        json!({"name": "axolotl", "file_path": "references/api.md"}),
    );
    assert!(!err, "{f}");
    assert_eq!(
        f,
        json!({"success": true, "name": "axolotl", "file": "references/api.md",
               "content": "# API\n\nCLI: `axolotl train config.yaml`\n", "file_type": ".md"})
    );
    let png_len = std::fs::metadata(fx.skills_dir.join("mlops/axolotl/assets/logo.png"))
        .unwrap()
        .len();
    let (err, b) = call(
        &mut c,
        "skill_view",
        json!({"name": "axolotl", "file_path": "assets/logo.png"}),
    );
    assert!(!err, "{b}");
    assert_eq!(b["is_binary"], true);
    assert_eq!(
        b["content"],
        format!("[Binary file: logo.png, size: {png_len} bytes]")
    );
    let (err, m) = call(
        &mut c,
        "skill_view",
        json!({"name": "axolotl", "file_path": "references/missing.md"}),
    );
    assert!(err);
    assert_eq!(
        m["error"],
        "File 'references/missing.md' not found in skill 'axolotl'."
    );
    assert_eq!(m["success"], false);
    assert_eq!(
        m["available_files"],
        json!({
            "references": ["references/api.md", "references/dataset-formats.md", "references/notes.txt"],
            "templates": ["templates/config.yaml", "templates/nested/train.py"],
            "assets": ["assets/config.yaml", "assets/logo.png"],
            "scripts": ["scripts/README.txt", "scripts/run.sh", "scripts/validate.py"],
            "other": ["examples.md"],
        })
    );
    let (err, d) = call(
        &mut c,
        "skill_view",
        json!({"name": "axolotl", "file_path": "templates/nested"}),
    );
    assert!(err);
    assert!(
        d["error"].as_str().unwrap().contains("is a directory"),
        "{d}"
    );
}

#[test]
fn no_name_or_file_path_escapes_the_skills_roots() {
    let env = TestEnv::new();
    let fx = install_skill_fixtures(&env);
    // Outside material and symlinks pointing at it.
    let outside = env.dir.path().join("outside");
    write(&outside.join("secret.txt"), "TOP SECRET");
    write(
        &outside.join("evil/SKILL.md"),
        "---\nname: evil\ndescription: outside\n---\nsecret skill\n",
    );
    std::os::unix::fs::symlink(outside.join("evil"), fx.skills_dir.join("evil")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("secret.txt"),
        fx.skills_dir.join("mlops/axolotl/references/leak.md"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, fx.skills_dir.join("mlops/axolotl/assets/up")).unwrap();
    // A symlink that stays inside the root is fine.
    std::os::unix::fs::symlink(
        fx.skills_dir.join("mlops/axolotl/references/api.md"),
        fx.skills_dir.join("mlops/axolotl/references/api-alias.md"),
    )
    .unwrap();

    let mut c = client(&env);
    let name_cases = [
        (
            "/etc/passwd",
            "Skill name must be a relative path within the skills directory.",
        ),
        (
            "C:\\skills\\x",
            "Skill name must be a relative path within the skills directory.",
        ),
        (
            "C:/skills/x",
            "Skill name must be a relative path within the skills directory.",
        ),
        (
            "\\\\server\\share\\x",
            "Skill name must be a relative path within the skills directory.",
        ),
        (
            "../outside/evil",
            "Skill name cannot contain '..' path traversal components.",
        ),
        (
            "mlops/../../outside/evil",
            "Skill name cannot contain '..' path traversal components.",
        ),
        (
            "ns:../outside/evil",
            "Skill name cannot contain '..' path traversal components.",
        ),
    ];
    for (name, msg) in name_cases {
        let (err, r) = call(&mut c, "skill_view", json!({"name": name}));
        assert!(err, "{name}: {r}");
        assert_eq!(r["error"], msg, "{name}");
        assert_eq!(r["success"], false);
    }
    // The symlinked skill dir pointing outside: refused, and never listed.
    let (err, r) = call(&mut c, "skill_view", json!({"name": "evil"}));
    assert!(err, "{r}");
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("resolves outside the skills directories"),
        "{r}"
    );
    assert!(!r.to_string().contains("secret skill"));
    let (_, list) = call(&mut c, "skills_list", json!({}));
    assert!(!names(&list).contains(&"evil".to_string()));

    let file_cases = [
        ("../lora/SKILL.md", "Path traversal ('..') is not allowed."),
        (
            "references/../../../config.yaml",
            "Path traversal ('..') is not allowed.",
        ),
        (
            "..\\..\\config.yaml",
            "Path traversal ('..') is not allowed.",
        ),
    ];
    for (fp, msg) in file_cases {
        let (err, r) = call(
            &mut c,
            "skill_view",
            json!({"name": "axolotl", "file_path": fp}),
        );
        assert!(err, "{fp}: {r}");
        assert_eq!(r["error"], msg, "{fp}");
    }
    for fp in [
        "/etc/passwd",
        "C:\\Windows\\win.ini",
        "C:/Windows/win.ini",
        "\\\\server\\share\\f",
        "references/leak.md",
        "assets/up/secret.txt",
    ] {
        let (err, r) = call(
            &mut c,
            "skill_view",
            json!({"name": "axolotl", "file_path": fp}),
        );
        assert!(err, "{fp}: {r}");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .starts_with("Path escapes allowed directory"),
            "{fp}: {r}"
        );
        assert!(!r.to_string().contains("TOP SECRET"));
    }
    let (err, ok) = call(
        &mut c,
        "skill_view",
        json!({"name": "axolotl", "file_path": "references/api-alias.md"}),
    );
    assert!(!err, "{ok}");
    // Symlinks escaping the skill dir are not offered as linked files either.
    let (_, v) = call(&mut c, "skill_view", json!({"name": "axolotl"}));
    assert!(!v["linked_files"].to_string().contains("leak.md"), "{v}");
    assert!(!v["linked_files"].to_string().contains("secret"), "{v}");
}

#[test]
fn ambiguous_not_found_disabled_and_platform_answers() {
    let env = TestEnv::new();
    let fx = install_skill_fixtures(&env);
    let mut c = client(&env);
    let (err, r) = call(&mut c, "skill_view", json!({"name": "summarize"}));
    assert!(err);
    assert_eq!(
        r["error"],
        "Ambiguous skill name 'summarize': 2 skills match across your local skills dir and external_dirs. Refusing to guess — load one explicitly by its categorized path."
    );
    let matches = r["matches"].as_array().unwrap();
    assert_eq!(
        matches[0],
        fx.skills_dir
            .join("writing/summarize/SKILL.md")
            .display()
            .to_string()
    );
    assert!(
        matches[1]
            .as_str()
            .unwrap()
            .ends_with("team-skills/summarize/SKILL.md")
    );
    assert!(r["hint"].as_str().unwrap().contains("category/skill-name"));
    let (err, r) = call(&mut c, "skill_view", json!({"name": "writing/summarize"}));
    assert!(!err, "{r}");
    assert!(r["content"].as_str().unwrap().contains("(local)"));

    let (err, r) = call(&mut c, "skill_view", json!({"name": "nope"}));
    assert!(err);
    assert_eq!(r["error"], "Skill 'nope' not found.");
    assert_eq!(
        r["available_skills"],
        json!([
            "deploy",
            "axolotl",
            "lora",
            "arxiv",
            "ext-lint",
            "broken-yaml",
            "plain-notes",
            "summarize"
        ])
    );
    assert_eq!(r["hint"], "Use skills_list to see all available skills");

    let (err, r) = call(&mut c, "skill_view", json!({"name": "old-helper"}));
    assert!(err);
    assert_eq!(
        r["error"],
        "Skill 'old-helper' is disabled. Enable it with `hermes skills` or inspect the files directly on disk."
    );
    let (err, r) = call(&mut c, "skill_view", json!({"name": "imessage"}));
    assert!(err);
    assert_eq!(
        r["error"],
        "Skill 'imessage' is not supported on this platform."
    );
    assert_eq!(r["readiness_status"], "unsupported");
    // Support-dir packages are not skills.
    let (err, _) = call(&mut c, "skill_view", json!({"name": "archived-axolotl"}));
    assert!(err);
    let (err, r) = call(&mut c, "skill_view", json!({"name": "bad ns:x"}));
    assert!(err);
    assert_eq!(
        r["error"],
        "Invalid namespace 'bad ns' in 'bad ns:x'. Namespaces must match [a-zA-Z0-9_-]+."
    );
}

#[test]
fn platform_disabled_applies_for_hermes_platform() {
    let env = TestEnv::new();
    let fx = install_skill_fixtures(&env);
    env.write_hermes(
        "config.yaml",
        &format!(
            "{}  platform_disabled:\n    telegram: [lora]\n",
            skills_config_yaml(&fx.external_dir)
        ),
    );
    let mut plain = client(&env);
    let (_, list) = call(&mut plain, "skills_list", json!({}));
    assert!(names(&list).contains(&"lora".to_string()));
    let mut cmd = env.cmd();
    cmd.env("HERMES_PLATFORM", "telegram");
    let mut tg = client_with(cmd);
    let (_, list) = call(&mut tg, "skills_list", json!({}));
    assert!(!names(&list).contains(&"lora".to_string()));
    assert!(
        !names(&list).contains(&"old-helper".to_string()),
        "global list still applies"
    );
    let (err, r) = call(&mut tg, "skill_view", json!({"name": "lora"}));
    assert!(err);
    assert!(r["error"].as_str().unwrap().contains("is disabled"));
}

#[test]
fn readiness_reports_env_vars_and_commands() {
    let env = TestEnv::new();
    install_skill_fixtures(&env);
    let mut c = client(&env);
    let (err, v) = call(&mut c, "skill_view", json!({"name": "arxiv"}));
    assert!(!err, "{v}");
    assert_eq!(
        v["required_environment_variables"],
        json!([
            {"name": "ARXIV_API_KEY", "prompt": "arXiv API key", "help": "Get a key at https://arxiv.example/keys"},
            {"name": "ARXIV_MIRROR", "prompt": "Enter value for ARXIV_MIRROR", "optional": true}
        ])
    );
    assert_eq!(
        v["missing_required_environment_variables"],
        json!(["ARXIV_API_KEY"])
    );
    assert_eq!(
        v["required_commands"],
        json!(["sh", "hermes-missing-command-xyz"])
    );
    assert_eq!(
        v["missing_required_commands"],
        json!(["hermes-missing-command-xyz"])
    );
    assert_eq!(v["setup_needed"], true);
    assert_eq!(v["readiness_status"], "setup_needed");
    assert_eq!(v["setup_help"], "Get a key at https://arxiv.example/keys");
    let note = v["setup_note"].as_str().unwrap();
    assert!(
        note.starts_with("Setup needed before using this skill: missing env $ARXIV_API_KEY. Get a key at https://arxiv.example/keys"),
        "{note}"
    );
    assert!(note.contains("env_vars"), "{note}");
    drop(c);

    // From $HERMES_HOME/.env ...
    env.write_hermes(".env", "ARXIV_API_KEY=from-dotenv\n");
    let mut c = client(&env);
    let (_, v) = call(&mut c, "skill_view", json!({"name": "arxiv"}));
    assert_eq!(v["readiness_status"], "available", "{v}");
    assert_eq!(v["missing_required_environment_variables"], json!([]));
    assert!(v.get("setup_note").is_none());
    drop(c);
    // ... or from the process environment.
    std::fs::remove_file(env.hermes_home().join(".env")).unwrap();
    let mut cmd = env.cmd();
    cmd.env("ARXIV_API_KEY", "from-process");
    let mut c = client_with(cmd);
    let (_, v) = call(&mut c, "skill_view", json!({"name": "arxiv"}));
    assert_eq!(v["readiness_status"], "available", "{v}");
}

#[test]
fn template_vars_are_substituted() {
    let env = TestEnv::new();
    let fx = install_skill_fixtures(&env);
    let dir = fx.skills_dir.join("devops/deploy").display().to_string();
    let mut cmd = env.cmd();
    cmd.env("HERMES_SESSION_ID", "sess-42");
    let mut c = client_with(cmd);
    let (_, v) = call(&mut c, "skill_view", json!({"name": "deploy"}));
    assert!(
        v["content"]
            .as_str()
            .unwrap()
            .contains(&format!("Run `{dir}/scripts/deploy.sh --session sess-42`.")),
        "{v}"
    );
    drop(c);
    // Without a session id the token stays; with template_vars off nothing changes.
    let mut c = client(&env);
    let (_, v) = call(&mut c, "skill_view", json!({"name": "deploy"}));
    assert!(
        v["content"].as_str().unwrap().contains(&format!(
            "{dir}/scripts/deploy.sh --session ${{HERMES_SESSION_ID}}"
        )),
        "{v}"
    );
    drop(c);
    env.write_hermes(
        "config.yaml",
        &format!(
            "{}  template_vars: false\n",
            skills_config_yaml(&fx.external_dir)
        ),
    );
    let mut c = client(&env);
    let (_, v) = call(&mut c, "skill_view", json!({"name": "deploy"}));
    assert!(
        v["content"]
            .as_str()
            .unwrap()
            .contains("${HERMES_SKILL_DIR}/scripts/deploy.sh --session ${HERMES_SESSION_ID}"),
        "{v}"
    );
}

#[test]
fn inline_shell_runs_only_when_enabled() {
    let env = TestEnv::new();
    let fx = install_skill_fixtures(&env);
    let mut c = client(&env);
    let (_, v) = call(&mut c, "skill_view", json!({"name": "deploy"}));
    assert!(
        v["content"]
            .as_str()
            .unwrap()
            .contains("Preflight: !`echo inline-$((40+2)) in $(basename \"$PWD\")`"),
        "off by default: {v}"
    );
    drop(c);
    env.write_hermes(
        "config.yaml",
        &format!(
            "{}  inline_shell: true\n  inline_shell_timeout: 5\n",
            skills_config_yaml(&fx.external_dir)
        ),
    );
    let mut c = client(&env);
    let (_, v) = call(&mut c, "skill_view", json!({"name": "deploy"}));
    // Runs in the skill directory.
    assert!(
        v["content"]
            .as_str()
            .unwrap()
            .contains("Preflight: inline-42 in deploy\n"),
        "{v}"
    );
}

// ── Differential run against Python Hermes ───────────────────────────────

const PY_DRIVER: &str = r#"
import json, sys, logging
logging.disable(logging.CRITICAL)
from tools.skills_tool import skills_list, skill_view
out = []
for name, args in json.loads(sys.stdin.read()):
    if name == "skills_list":
        out.append(json.loads(skills_list(category=args.get("category"))))
    else:
        out.append(json.loads(skill_view(args["name"], file_path=args.get("file_path"))))
print(json.dumps(out))
"#;

/// Sort the lists whose order Hermes leaves to the filesystem.
fn normalize(mut v: Value) -> Value {
    for key in ["linked_files", "available_files"] {
        if let Some(Value::Object(groups)) = v.get_mut(key) {
            for (_, list) in groups.iter_mut() {
                if let Value::Array(a) = list {
                    a.sort_by_key(|x| x.to_string());
                }
            }
        }
    }
    v
}

#[test]
fn results_match_python_hermes() {
    let python = hermes_python("tools.skills_tool");
    let env = TestEnv::new();
    install_skill_fixtures(&env);
    let calls = json!([
        ["skills_list", {}],
        ["skills_list", {"category": "mlops"}],
        ["skills_list", {"category": "writing"}],
        ["skill_view", {"name": "axolotl"}],
        ["skill_view", {"name": "mlops/axolotl"}],
        ["skill_view", {"name": "mlops:axolotl"}],
        ["skill_view", {"name": "lora"}],
        ["skill_view", {"name": "deploy"}],
        ["skill_view", {"name": "imessage"}],
        ["skill_view", {"name": "old-helper"}],
        ["skill_view", {"name": "legacy-tips"}],
        ["skill_view", {"name": "summarize"}],
        ["skill_view", {"name": "writing/summarize"}],
        ["skill_view", {"name": "nope"}],
        ["skill_view", {"name": ""}],
        ["skill_view", {"name": "plain-notes"}],
        ["skill_view", {"name": "broken-yaml"}],
        ["skill_view", {"name": "ext-lint"}],
        ["skill_view", {"name": "archived-axolotl"}],
        ["skill_view", {"name": "from-node-modules"}],
        ["skill_view", {"name": "axolotl", "file_path": "references/api.md"}],
        ["skill_view", {"name": "axolotl", "file_path": "assets/logo.png"}],
        ["skill_view", {"name": "axolotl", "file_path": "references/missing.md"}],
        ["skill_view", {"name": "axolotl", "file_path": "../lora/SKILL.md"}],
        ["skill_view", {"name": "axolotl", "file_path": "/etc/passwd"}],
        ["skill_view", {"name": "../x"}],
        ["skill_view", {"name": "/etc"}],
        ["skill_view", {"name": "C:\\x"}],
        ["skill_view", {"name": "bad ns:x"}],
    ]);
    let mut py = Command::new(python);
    env.apply(&mut py);
    py.arg("-c")
        .arg(PY_DRIVER)
        .current_dir(env.dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = py.spawn().expect("run Python Hermes");
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(calls.to_string().as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "Python Hermes failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();

    let mut c = client(&env);
    for (i, spec) in calls.as_array().unwrap().iter().enumerate() {
        let (tool, args) = (spec[0].as_str().unwrap(), spec[1].clone());
        let (err, ours) = call(&mut c, tool, args.clone());
        let expected = normalize(theirs[i].clone());
        assert_eq!(
            err,
            expected.get("success") == Some(&json!(false)),
            "isError for {tool} {args}: {ours}"
        );
        let ours = normalize(ours);
        assert_eq!(ours, expected, "{tool} {args}");
        // Key order too (Python dicts keep insertion order).
        let keys = |v: &Value| -> Vec<String> {
            v.as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        };
        assert_eq!(keys(&ours), keys(&expected), "key order of {tool} {args}");
    }
}
