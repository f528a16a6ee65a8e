//! `memory:`, read as Hermes 0.19.0 reads it.
//!
//! * Char limits as `load_on_disk_store()` (hermes-agent: tools/memory_tool.py)
//!   reads them: Python's `int()` of `memory_char_limit`, then of
//!   `user_char_limit` (defaults 2,200 and 1,375), both in one `try`: a value
//!   `int()` refuses puts back the default of that one and of every one not
//!   yet read.
//! * `write_approval` as `write_approval_enabled("memory")`
//!   (tools/write_approval.py, `_normalize_enabled`): a real boolean, or one
//!   of the strings `on/true/yes/1/approve/enabled`; anything else is off.
//! * Whether there is a memory store at all, as the agent decides
//!   (agent/agent_init.py): `memory_enabled` or `user_profile_enabled` is
//!   truthy in Python's sense, over Hermes' defaults (both true); a `memory:`
//!   that is not a mapping gives no store.
//!
//! Strings get `${VAR}` expansion, as `load_config()` gives them.

use serde_json::Value;

use super::Reader;
use crate::pycompat::{py_bool, py_int};

/// `DEFAULT_CONFIG["memory"]["memory_char_limit"]`.
pub(crate) const MEMORY_CHAR_LIMIT: i64 = 2200;
/// `DEFAULT_CONFIG["memory"]["user_char_limit"]`.
pub(crate) const USER_CHAR_LIMIT: i64 = 1375;

/// `memory:`.
#[derive(Debug, Clone)]
pub struct Memory {
    /// What `memory:` is when it is neither absent, `null` nor a mapping
    /// (`a list`, `a number`, …): Hermes then starts no memory store.
    pub not_a_mapping: Option<&'static str>,
    pub memory_char_limit: i64,
    pub user_char_limit: i64,
    pub write_approval: bool,
    /// `memory.memory_enabled` (Python truthiness, default on).
    pub memory_enabled: bool,
    /// `memory.user_profile_enabled` (Python truthiness, default on).
    pub user_profile_enabled: bool,
}

impl Default for Memory {
    fn default() -> Self {
        Memory {
            not_a_mapping: None,
            memory_char_limit: MEMORY_CHAR_LIMIT,
            user_char_limit: USER_CHAR_LIMIT,
            write_approval: false,
            memory_enabled: true,
            user_profile_enabled: true,
        }
    }
}

impl Memory {
    pub(crate) fn read(r: &Reader<'_>, whole: Option<&Value>) -> Self {
        let m = match whole {
            None => return Memory::default(),
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Memory {
                    not_a_mapping: Some(crate::hermes::config::json_type(other)),
                    memory_enabled: false,
                    user_profile_enabled: false,
                    ..Memory::default()
                };
            }
        };
        let mut out = Memory::default();
        let limit = |key: &str, default: i64| match m.get(key) {
            None => Some(default),
            Some(v) => py_int(&r.expanded(v)),
        };
        if let Some(mem) = limit("memory_char_limit", MEMORY_CHAR_LIMIT) {
            out.memory_char_limit = mem;
            if let Some(user) = limit("user_char_limit", USER_CHAR_LIMIT) {
                out.user_char_limit = user;
            }
        }
        out.write_approval = m
            .get("write_approval")
            .is_some_and(|v| approval_on(&r.expanded(v)));
        let on = |key: &str| m.get(key).is_none_or(|v| py_bool(&r.expanded(v)));
        out.memory_enabled = on("memory_enabled");
        out.user_profile_enabled = on("user_profile_enabled");
        out
    }
}

/// `_normalize_enabled`: a bool as it is, a string from the list, else off
/// (the integer 1 too).
fn approval_on(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => matches!(
            s.trim().to_lowercase().as_str(),
            "on" | "true" | "yes" | "1" | "approve" | "enabled"
        ),
        _ => false,
    }
}
