//! `model:` (hermes-agent: hermes_cli/config.py, agent/auxiliary_client.py
//! `_read_main_model` / `_read_main_provider`): the main model, its provider
//! and endpoint, and the headers sent with every call to it. `model:` may
//! also be a plain string naming the model.

use serde_json::{Map, Value};

use super::Reader;

/// `model:`.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// `model.default`, or `model: <string>`: a string only (no `str()` of
    /// other scalars, no `${VAR}`), trimmed and non-empty.
    pub default: Option<String>,
    /// `model.provider`.
    pub provider: Option<String>,
    /// `model.base_url`.
    pub base_url: Option<String>,
    /// `model.api_key`.
    pub api_key: Option<String>,
    /// `model.openai_runtime` (`codex_app_server` when Hermes runs codex): a
    /// non-blank scalar as Python's `str()` renders it, `${VAR}` kept as written.
    pub openai_runtime: Option<String>,
    /// `model.codex_bin` (the codex Hermes runs), read as `openai_runtime`.
    pub codex_bin: Option<String>,
    /// `model.supports_vision` ([`super::providers::capability_bool`]).
    pub supports_vision: Option<bool>,
    /// `model.default_headers` then `model.extra_headers`, in order (a later
    /// name wins): string values as written, other values as JSON, nulls skipped.
    pub headers: Vec<(String, String)>,
}

fn trimmed(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn headers(sec: Option<&Map<String, Value>>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for key in ["default_headers", "extra_headers"] {
        let Some(Value::Object(m)) = sec.and_then(|s| s.get(key)) else {
            continue;
        };
        for (k, v) in m {
            let v = match v {
                Value::Null => continue,
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push((k.clone(), v));
        }
    }
    out
}

impl Model {
    /// `whole` is the `model:` value itself (a mapping or a string).
    pub(crate) fn read(r: &Reader<'_>, whole: Option<&Value>) -> Self {
        let sec = whole.and_then(Value::as_object);
        let default = match whole {
            Some(Value::String(s)) => trimmed(s),
            _ => r
                .value(sec, "default")
                .and_then(Value::as_str)
                .and_then(trimmed),
        };
        Model {
            default,
            provider: r.text(sec, "provider"),
            base_url: r.text(sec, "base_url"),
            api_key: r.text(sec, "api_key"),
            openai_runtime: r.scalar(sec, "openai_runtime"),
            codex_bin: r.scalar(sec, "codex_bin"),
            supports_vision: super::providers::capability_bool(
                sec.and_then(|m| m.get("supports_vision")),
            ),
            headers: headers(sec),
        }
    }
}
