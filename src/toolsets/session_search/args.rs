//! `session_search`'s arguments, read as Hermes' registry handler reads them
//! (`args.get(k, default)`), after the server's schema validation.

use serde_json::{Map, Value};

/// The arguments, read as the registry handler reads them (`args.get(k, default)`).
#[derive(Debug, Default)]
pub(crate) struct Args {
    pub(super) query: String,
    pub(super) role_filter: Option<String>,
    pub(super) limit: i64,
    pub(super) session_id: Option<String>,
    /// Present: `Some(anchor)`, the anchor `None` when it does not fit an i64.
    pub(super) around: Option<Option<i64>>,
    pub(super) window: i64,
    pub(super) sort: Option<String>,
    pub(super) profile: Option<String>,
}

impl Args {
    /// From validated arguments (strings and integers already coerced).
    pub(crate) fn parse(args: &Map<String, Value>) -> Args {
        let s = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
        let int = |k: &str, default: i64| args.get(k).map_or(default, saturating_int);
        Args {
            query: s("query").unwrap_or_default(),
            role_filter: s("role_filter"),
            limit: int("limit", 3),
            session_id: s("session_id"),
            around: args.get("around_message_id").map(Value::as_i64),
            window: int("window", 5),
            sort: s("sort"),
            profile: s("profile"),
        }
    }
}

/// An integer argument; one beyond i64 (JSON allows up to u64) saturates.
fn saturating_int(v: &Value) -> i64 {
    v.as_i64()
        .or_else(|| v.as_u64().map(|_| i64::MAX))
        .or_else(|| v.as_f64().map(|f| f as i64))
        .unwrap_or(0)
}
