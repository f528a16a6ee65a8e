//! Does the main model accept images? (hermes-agent: agent/image_routing.py
//! `_lookup_supports_vision`, agent/models_dev.py `get_model_capabilities`).
//! Vision's auto mode skips a main model known to be text-only.
//!
//! Order: the user's `supports_vision` override in config.yaml, then the
//! models.dev data Hermes cached at `$HERMES_HOME/models_dev_cache.json`.
//! hermes-mcp never fetches models.dev (nor probes Ollama): with no cache,
//! or a model it does not list, the answer is unknown and the call is
//! attempted, as Hermes does for unknown capabilities.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde_json::Value;

use super::providers;
use crate::hermes::Context;

/// `_coerce_capability_bool`.
fn coerce(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_i64() {
            Some(0) => Some(false),
            Some(1) => Some(true),
            _ => None,
        },
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// `_supports_vision_override`.
fn config_override(ctx: &Context, provider: &str, model: &str) -> Option<bool> {
    let cfg = ctx.config();
    let model_cfg = cfg.get("model").and_then(Value::as_object);
    if let Some(b) = coerce(model_cfg.and_then(|m| m.get("supports_vision"))) {
        return Some(b);
    }
    let config_provider = model_cfg
        .and_then(|m| m.get("provider"))
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or("")
        .to_string();
    let suffix = config_provider
        .strip_prefix("custom:")
        .unwrap_or("")
        .to_string();
    let mut names: Vec<String> = Vec::new();
    for p in [provider.to_string(), config_provider, suffix] {
        if !p.is_empty() && !names.contains(&p) {
            names.push(p);
        }
    }
    if let Some(Value::Object(provs)) = cfg.get("providers") {
        for p in &names {
            let per_model = provs
                .get(p)
                .and_then(|e| e.get("models"))
                .and_then(|m| m.get(model));
            if let Some(b) = coerce(per_model.and_then(|m| m.get("supports_vision"))) {
                return Some(b);
            }
        }
    }
    if let Some(Value::Array(list)) = cfg.get("custom_providers") {
        let mut cands: Vec<String> = Vec::new();
        for p in &names {
            cands.push(p.clone());
            match p.strip_prefix("custom:") {
                Some(s) => cands.push(s.to_string()),
                None => cands.push(format!("custom:{p}")),
            }
        }
        for e in list {
            let name = e.get("name").and_then(Value::as_str).unwrap_or("").trim();
            if !cands.iter().any(|c| c == name) {
                continue;
            }
            let per_model = e.get("models").and_then(|m| m.get(model));
            if let Some(b) = coerce(per_model.and_then(|m| m.get("supports_vision"))) {
                return Some(b);
            }
        }
    }
    None
}

type Cached = (PathBuf, Option<SystemTime>, u64, Arc<Value>);

/// The parsed cache, re-read only when the file changes (it is ~2 MB).
fn models_dev(ctx: &Context) -> Option<Arc<Value>> {
    static CACHE: Mutex<Option<Cached>> = Mutex::new(None);
    let path = ctx.home.path.join("models_dev_cache.json");
    let meta = std::fs::metadata(&path).ok()?;
    let (mtime, len) = (meta.modified().ok(), meta.len());
    let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((p, m, l, v)) = guard.as_ref()
        && *p == path
        && *m == mtime
        && *l == len
    {
        return Some(v.clone());
    }
    let bytes = crate::fs::read_capped(&path, 64 << 20).ok()?;
    let v = Arc::new(serde_json::from_slice::<Value>(&bytes).ok()?);
    *guard = Some((path, mtime, len, v.clone()));
    Some(v)
}

/// `get_model_capabilities(...).supports_vision`: `modalities.input`
/// containing `image`, else the `attachment` flag.
fn models_dev_vision(ctx: &Context, provider: &str, model: &str) -> Option<bool> {
    let id = providers::models_dev_id(provider)?;
    let data = models_dev(ctx)?;
    let models = data.get(id)?.get("models")?.as_object()?;
    let lower = model.to_lowercase();
    let entry = models.get(model).filter(|e| e.is_object()).or_else(|| {
        models
            .iter()
            .find(|(k, e)| k.to_lowercase() == lower && e.is_object())
            .map(|(_, e)| e)
    })?;
    match entry.get("modalities").and_then(|m| m.get("input")) {
        Some(Value::Array(mods)) => Some(mods.iter().any(|m| m.as_str() == Some("image"))),
        _ => Some(
            entry
                .get("attachment")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
    }
}

/// `_lookup_supports_vision`: `Some(false)` only when known text-only.
pub(crate) fn supports_vision(ctx: &Context, provider: &str, model: &str) -> Option<bool> {
    if let Some(b) = config_override(ctx, provider, model) {
        return Some(b);
    }
    if provider.is_empty() || model.is_empty() {
        return None;
    }
    models_dev_vision(ctx, provider, model)
}
