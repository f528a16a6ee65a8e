//! `skills:` (hermes-agent: tools/skills_tool.py, agent/skill_utils.py):
//! rendering switches, and the lists that hide or add skills. The lists stay
//! raw values: the skills toolset reads their entries with Python's `str()`
//! of each item, which lives with it.

use serde_json::{Map, Value};

use super::Reader;
use crate::hermes::config::bool_value;

/// `skills:`.
#[derive(Debug, Clone, Default)]
pub struct Skills {
    /// `skills.template_vars` as a boolean (YAML 1.1 words, numbers), if it reads as one.
    pub template_vars: Option<bool>,
    /// `skills.inline_shell`, read alike.
    pub inline_shell: Option<bool>,
    /// `skills.inline_shell_timeout` in seconds.
    pub inline_shell_timeout: Option<f64>,
    /// `skills.disabled`, as written.
    pub disabled: Option<Value>,
    /// `skills.platform_disabled`, when a mapping.
    pub platform_disabled: Option<Map<String, Value>>,
    /// `skills.external_dirs`, as written.
    pub external_dirs: Option<Value>,
}

impl Skills {
    pub(crate) fn read(r: &Reader<'_>, sec: Option<&Map<String, Value>>) -> Self {
        Skills {
            template_vars: r.value(sec, "template_vars").and_then(bool_value),
            inline_shell: r.value(sec, "inline_shell").and_then(bool_value),
            inline_shell_timeout: r.float(sec, "inline_shell_timeout"),
            disabled: r.value(sec, "disabled").cloned(),
            platform_disabled: r.section(sec, "platform_disabled").cloned(),
            external_dirs: r.value(sec, "external_dirs").cloned(),
        }
    }
}
