//! The `memory:` section of `config.yaml`, read as Hermes 0.19.0 reads it.
//!
//! * Char limits as `load_on_disk_store()` (`tools/memory_tool.py`) reads them:
//!   Python's `int()` of `memory_char_limit`, then of `user_char_limit` (defaults
//!   2,200 and 1,375), both in one `try`: a value `int()` refuses puts back the
//!   default of that one and of every one not yet read.
//! * `write_approval` as `write_approval_enabled("memory")`
//!   (`tools/write_approval.py`, `_normalize_enabled`): a real boolean, or one
//!   of the strings `on/true/yes/1/approve/enabled`; anything else is off.
//! * Whether there is a memory store at all, as the agent decides
//!   (`agent/agent_init.py`): `memory_enabled` or `user_profile_enabled` is
//!   truthy in Python's sense, over Hermes' defaults (both true).
//!
//! Strings get `${VAR}` expansion, as `load_config()` gives them.

use serde_json::{Map, Value};

use crate::hermes::Context;
use crate::pycompat::py_bool;

/// `DEFAULT_CONFIG["memory"]["memory_char_limit"]`.
pub(crate) const MEMORY_CHAR_LIMIT: i64 = 2200;
/// `DEFAULT_CONFIG["memory"]["user_char_limit"]`.
pub(crate) const USER_CHAR_LIMIT: i64 = 1375;

/// What a memory call needs from the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemoryConfig {
    pub(crate) memory_char_limit: i64,
    pub(crate) user_char_limit: i64,
    pub(crate) write_approval: bool,
}

/// The raw `memory:` value as Hermes' merged config holds it: absent or
/// `null` (the defaults apply), a mapping, or something else.
enum Section<'a> {
    Defaults,
    Map(&'a Map<String, Value>),
    Other(&'a Value),
}

fn section(ctx: &Context) -> Section<'_> {
    match ctx.config().root.get("memory") {
        None | Some(Value::Null) => Section::Defaults,
        Some(Value::Object(m)) => Section::Map(m),
        Some(other) => Section::Other(other),
    }
}

/// A config value with `${VAR}` references in strings expanded.
fn expanded(ctx: &Context, v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(crate::hermes::config::expand_vars(s, |n| {
            ctx.env.get_unlisted(n)
        })),
        other => other.clone(),
    }
}

impl MemoryConfig {
    pub(crate) fn load(ctx: &Context) -> Self {
        let (mut memory_char_limit, mut user_char_limit) = (MEMORY_CHAR_LIMIT, USER_CHAR_LIMIT);
        let mut write_approval = false;
        if let Section::Map(m) = section(ctx) {
            let limit = |key: &str, default: i64| match m.get(key) {
                None => Some(default),
                Some(v) => py_int(&expanded(ctx, v)),
            };
            if let Some(mem) = limit("memory_char_limit", MEMORY_CHAR_LIMIT) {
                memory_char_limit = mem;
                if let Some(user) = limit("user_char_limit", USER_CHAR_LIMIT) {
                    user_char_limit = user;
                }
            }
            write_approval = m
                .get("write_approval")
                .is_some_and(|v| approval_on(&expanded(ctx, v)));
        }
        MemoryConfig {
            memory_char_limit,
            user_char_limit,
            write_approval,
        }
    }
}

/// `None` when Hermes gives the agent a memory store; otherwise why not.
pub(crate) fn unavailable_reason(ctx: &Context) -> Option<String> {
    let config = ctx.home.config_path();
    match section(ctx) {
        Section::Defaults => None,
        Section::Other(v) => Some(format!(
            "`memory:` in {} is {}, not a mapping, so Hermes starts no memory store; make it a mapping (or remove it)",
            config.display(),
            crate::hermes::config::json_type(v)
        )),
        Section::Map(m) => {
            let on = |key: &str| m.get(key).is_none_or(|v| py_bool(&expanded(ctx, v)));
            (!on("memory_enabled") && !on("user_profile_enabled")).then(|| {
                format!(
                    "memory.memory_enabled and memory.user_profile_enabled are both off in {}, so Hermes starts no memory store; set either to true",
                    config.display()
                )
            })
        }
    }
}

/// `(memory_enabled, user_profile_enabled)` as the agent reads them
/// (`agent/agent_init.py`): Python truthiness over Hermes' defaults (both
/// on); a `memory:` that is not a mapping gives no store, so neither.
pub(crate) fn targets_enabled(ctx: &Context) -> (bool, bool) {
    match section(ctx) {
        Section::Defaults => (true, true),
        Section::Other(_) => (false, false),
        Section::Map(m) => {
            let on = |key: &str| m.get(key).is_none_or(|v| py_bool(&expanded(ctx, v)));
            (on("memory_enabled"), on("user_profile_enabled"))
        }
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

/// Python's `int(value)` for a config value, `None` where it raises:
/// integers; floats truncated toward zero (not NaN or infinite); booleans as
/// 0/1; strings of an optionally signed decimal integer with surrounding
/// whitespace and single underscores between digits.
pub(crate) fn py_int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.trunc().clamp(i64::MIN as f64, i64::MAX as f64) as i64)
        }),
        Value::String(s) => parse_py_int(crate::pycompat::py_strip(s)),
        _ => None,
    }
}

/// `int(str)` of an already stripped string.
fn parse_py_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let b = digits.as_bytes();
    let well_placed = |i: usize| i > 0 && i + 1 < b.len() && b[i + 1] != b'_';
    if b.is_empty()
        || !b
            .iter()
            .enumerate()
            .all(|(i, c)| c.is_ascii_digit() || (*c == b'_' && well_placed(i) && b[i - 1] != b'_'))
    {
        return None;
    }
    let n: i64 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::context::test_ctx;
    use serde_json::json;

    fn cfg(yaml: &str) -> MemoryConfig {
        MemoryConfig::load(&test_ctx(yaml, &[("LIMIT", "300")]))
    }

    #[test]
    fn ints_like_python() {
        for (v, want) in [
            (json!(80), Some(80)),
            (json!(80.9), Some(80)),
            (json!(-2.5), Some(-2)),
            (json!(true), Some(1)),
            (json!(" 3_000 "), Some(3000)),
            (json!("+7"), Some(7)),
            (json!("-7"), Some(-7)),
            (json!("3000.0"), None),
            (json!("3__0"), None),
            (json!("_30"), None),
            (json!("30_"), None),
            (json!(""), None),
            (json!(null), None),
            (json!([1]), None),
        ] {
            assert_eq!(py_int(&v), want, "{v}");
        }
    }

    #[test]
    fn limits_fall_back_together_as_in_one_try() {
        let d = (MEMORY_CHAR_LIMIT, USER_CHAR_LIMIT);
        let lim = |c: MemoryConfig| (c.memory_char_limit, c.user_char_limit);
        assert_eq!(lim(cfg("")), d);
        assert_eq!(lim(cfg("memory:\n")), d);
        assert_eq!(lim(cfg("memory: 5\n")), d);
        assert_eq!(
            lim(cfg(
                "memory: {memory_char_limit: 120, user_char_limit: '80'}"
            )),
            (120, 80)
        );
        assert_eq!(
            lim(cfg("memory: {memory_char_limit: x, user_char_limit: 80}")),
            d
        );
        assert_eq!(
            lim(cfg("memory: {memory_char_limit: 120, user_char_limit: x}")),
            (120, d.1)
        );
        assert_eq!(lim(cfg("memory: {memory_char_limit: null}")), d);
        assert_eq!(
            lim(cfg("memory: {memory_char_limit: '${LIMIT}'}")),
            (300, d.1)
        );
    }

    #[test]
    fn write_approval_takes_bools_and_words_only() {
        for (yaml, on) in [
            ("memory: {write_approval: true}", true),
            ("memory: {write_approval: ' Approve '}", true),
            ("memory: {write_approval: 'enabled'}", true),
            ("memory: {write_approval: '1'}", true),
            ("memory: {write_approval: 1}", false),
            ("memory: {write_approval: 'nope'}", false),
            ("memory: {write_approval: null}", false),
            ("memory: true", false),
            ("", false),
        ] {
            assert_eq!(cfg(yaml).write_approval, on, "{yaml}");
        }
    }

    #[test]
    fn available_unless_both_flags_are_falsy() {
        let why = |yaml: &str| unavailable_reason(&test_ctx(yaml, &[]));
        assert!(why("").is_none());
        assert!(why("memory:\n").is_none());
        assert!(why("memory: {memory_enabled: false}").is_none());
        assert!(why("memory: {memory_enabled: false, user_profile_enabled: 'false'}").is_none());
        let off = why("memory: {memory_enabled: false, user_profile_enabled: null}").unwrap();
        assert!(off.contains("both off"), "{off}");
        let bad = why("memory: [1]").unwrap();
        assert!(bad.contains("not a mapping"), "{bad}");
    }
}
