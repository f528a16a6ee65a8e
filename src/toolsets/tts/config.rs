//! Reading the `tts` section of config.yaml. Hermes reads it as a plain dict
//! (hermes-agent: `tools/tts_tool.py`, `_load_tts_config`), so values of the
//! wrong type read as absent here too rather than failing the call.

use serde_json::{Map, Value};

use crate::hermes::Context;

pub(crate) fn positive_int(v: Option<&Value>) -> Option<usize> {
    match v? {
        Value::Number(n) => n.as_u64().filter(|n| *n > 0).map(|n| n as usize),
        _ => None,
    }
}

/// The `tts` section of config.yaml (empty when missing or not a mapping),
/// read once per context.
pub(crate) fn tts_config(ctx: &Context) -> &Map<String, Value> {
    ctx.sections().tts.map()
}

pub(crate) fn section<'a>(
    cfg: &'a Map<String, Value>,
    name: &str,
) -> Option<&'a Map<String, Value>> {
    cfg.get(name).and_then(Value::as_object)
}

pub(crate) fn section_str(cfg: &Map<String, Value>, sec: &str, key: &str) -> Option<String> {
    section(cfg, sec)
        .and_then(|s| s.get(key))
        .and_then(|v| match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
}

pub(crate) fn num(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}
