//! The skills fixture tree (`tests/fixtures/skills/`) installed into an env, for the
//! skills suites and the codex end-to-end runs that view a skill.

use std::path::{Path, PathBuf};

use super::common::TestEnv;
use super::fs::copy_tree;

/// `tests/fixtures/skills`.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skills")
}

/// Where [`install_skill_fixtures`] put things.
pub struct SkillFixtures {
    /// `$HERMES_HOME/skills`
    pub skills_dir: PathBuf,
    /// The directory listed in `skills.external_dirs`.
    pub external_dir: PathBuf,
}

/// The YAML `skills:` section the fixtures expect (disabled skill, external dir).
pub fn skills_config_yaml(external_dir: &Path) -> String {
    format!(
        "skills:\n  disabled: [old-helper]\n  external_dirs:\n    - {}\n",
        external_dir.display()
    )
}

/// Copy the fixture tree into `env`: `home/` becomes `$HERMES_HOME/skills`,
/// `external/` a sibling directory listed in `skills.external_dirs`, and
/// `config.yaml` gets [`skills_config_yaml`] (overwrite it to add more keys).
///
/// The tree: categories `mlops` (with `axolotl`, whose references/templates/
/// assets/scripts include a binary PNG, and nested `training/lora`),
/// `research/arxiv` (required env vars and commands), `devops/deploy`
/// (`${HERMES_SKILL_DIR}` / `${HERMES_SESSION_ID}`), `writing/` (`summarize`,
/// which is also in the external dir: ambiguous; `plain-notes` without
/// frontmatter; `broken-yaml`), top-level `imessage` (macOS only) and
/// `old-helper` (disabled), the legacy flat `legacy-tips.md`, and
/// `external/tools/ext-lint`.
pub fn install_skill_fixtures(env: &TestEnv) -> SkillFixtures {
    let skills_dir = env.hermes_home().join("skills");
    let external_dir = env.dir.path().join("team-skills");
    copy_tree(&fixtures_dir().join("home"), &skills_dir);
    copy_tree(&fixtures_dir().join("external"), &external_dir);
    env.write_hermes("config.yaml", &skills_config_yaml(&external_dir));
    SkillFixtures {
        skills_dir,
        external_dir,
    }
}
