//! The shape of a browser tool's answer, shared by every tool module and the
//! dispatcher: Hermes' `{"success": true, ...}` / `{"success": false,
//! "error": ...}` objects (hermes-agent: tools/browser_tool.py), plus the
//! screenshot that `browser_vision` may attach. A leaf module, so that the
//! tool modules and `mod.rs` can both use it without importing each other.

use std::fmt::Display;

use serde_json::{Map, Value, json};

/// A tool failure in Hermes' shape: `{"success": false, "error": ...}`.
pub(crate) struct Fail(pub(crate) Value);

impl Fail {
    pub(crate) fn msg(m: impl Display) -> Self {
        Fail(json!({"success": false, "error": m.to_string()}))
    }
}

/// A tool's JSON result.
pub(crate) type R = Result<Value, Fail>;

/// What a tool hands back to the dispatcher.
pub(crate) enum Reply {
    Json(Value),
    /// JSON plus an image: base64 data and its MIME type.
    Image(Value, String, &'static str),
}

/// `{"success": true}` first, then the tool's fields.
pub(crate) fn ok(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        let mut m = Map::new();
        m.insert("success".into(), Value::Bool(true));
        m.extend(std::mem::take(o));
        *o = m;
    }
    v
}
