//! What `skill_view` does to a SKILL.md before returning it, shared by local
//! and plugin skills (hermes-agent: agent/skill_preprocessing.py,
//! tools/skills_tool.py `_INJECTION_PATTERNS`).

use std::path::Path;
use std::sync::LazyLock;

use serde_json::Value;

use crate::hermes::Context;

/// A tool answer: the result, or Hermes' error object.
pub(crate) type Outcome = Result<Value, Value>;

static TEMPLATE_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\$\{(HERMES_SKILL_DIR|HERMES_SESSION_ID)\}").expect("valid regex")
});

/// Compile the pattern now (the toolset's warm-up).
pub(crate) fn warm() {
    LazyLock::force(&TEMPLATE_RE);
}

/// `${HERMES_SKILL_DIR}` / `${HERMES_SESSION_ID}`; tokens without a value stay as written.
pub(crate) fn substitute_template_vars(
    content: &str,
    skill_dir: Option<&Path>,
    session_id: Option<&str>,
) -> String {
    TEMPLATE_RE
        .replace_all(content, |c: &regex::Captures| match &c[1] {
            "HERMES_SKILL_DIR" => skill_dir
                .map(|d| d.display().to_string())
                .unwrap_or_else(|| c[0].to_string()),
            _ => session_id
                .map(str::to_string)
                .unwrap_or_else(|| c[0].to_string()),
        })
        .into_owned()
}

const INJECTION_PATTERNS: &[&str] = &[
    "ignore previous instructions",
    "ignore all previous",
    "you are now",
    "disregard your",
    "forget your instructions",
    "new instructions:",
    "system prompt:",
    "<system>",
    "]]>",
];

/// Hermes' `_INJECTION_PATTERNS` check (it logs, and still serves the skill).
pub(crate) fn looks_injected(content: &str) -> bool {
    let lower = content.to_lowercase();
    INJECTION_PATTERNS.iter().any(|p| lower.contains(p))
}

/// `preprocess_skill_content`: template variables (`skills.template_vars`,
/// default on), then inline shell snippets (`skills.inline_shell`, default off).
pub(crate) fn preprocess(ctx: &Context, content: &str, skill_dir: Option<&Path>) -> String {
    let mut rendered = content.to_string();
    let cfg = &ctx.sections().skills;
    if cfg.template_vars.unwrap_or(true) {
        rendered = substitute_template_vars(&rendered, skill_dir, ctx.session_id().as_deref());
    }
    if cfg.inline_shell.unwrap_or(false) {
        let timeout = cfg
            .inline_shell_timeout
            .filter(|t| *t != 0.0)
            .map_or(10, |t| t.max(1.0) as u64);
        rendered = super::inline_shell::expand(&rendered, skill_dir, timeout);
    }
    rendered
}
