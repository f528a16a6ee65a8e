//! `plugins:` (hermes-agent: hermes_cli/plugins.py): the plugins the user
//! enabled and disabled by name.

use serde_json::{Map, Value};

/// `plugins:`.
#[derive(Debug, Clone, Default)]
pub struct Plugins {
    /// `plugins.enabled`: the list's strings (other items skipped; not a list reads as none).
    pub enabled: Vec<String>,
    /// `plugins.disabled`, read alike.
    pub disabled: Vec<String>,
}

fn names(sec: Option<&Map<String, Value>>, key: &str) -> Vec<String> {
    let Some(Value::Array(items)) = sec.and_then(|s| s.get(key)) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

impl Plugins {
    pub(crate) fn read(sec: Option<&Map<String, Value>>) -> Self {
        Plugins {
            enabled: names(sec, "enabled"),
            disabled: names(sec, "disabled"),
        }
    }
}
