//! The `memory` tool's arguments, read as Hermes' registry handler reads them
//! (after the server's schema validation).

use serde_json::{Map, Value};

use crate::pycompat::py_str_or_json;

/// A call's arguments, read as the registry handler reads them.
pub(super) struct Args<'a> {
    /// `args.get("action", "")`.
    pub(super) action: String,
    /// `args.get("target", "memory")`.
    pub(super) target: String,
    pub(super) content: Option<&'a str>,
    pub(super) old_text: Option<&'a str>,
    pub(super) operations: Option<&'a Value>,
}

impl<'a> Args<'a> {
    pub(super) fn read(args: &'a Map<String, Value>) -> Self {
        let text = |k: &str| args.get(k).and_then(Value::as_str);
        Args {
            action: args.get("action").map(py_str_or_json).unwrap_or_default(),
            target: args
                .get("target")
                .filter(|v| !v.is_null())
                .map(py_str_or_json)
                .unwrap_or_else(|| "memory".into()),
            content: text("content"),
            old_text: text("old_text"),
            operations: args.get("operations"),
        }
    }
}
