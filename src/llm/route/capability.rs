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

/// `_supports_vision_override`: `model.supports_vision`, then per model
/// under `providers.<name>` and `custom_providers`, for the runtime provider,
/// `model.provider` and the `<name>` of a `custom:<name>` there.
fn config_override(ctx: &Context, provider: &str, model: &str) -> Option<bool> {
    let s = ctx.sections();
    if let Some(b) = s.model.supports_vision {
        return Some(b);
    }
    let config_provider = s.model.provider.as_deref().unwrap_or("").trim();
    let suffix = config_provider.strip_prefix("custom:").unwrap_or("");
    let mut names: Vec<String> = Vec::new();
    for p in [provider, config_provider, suffix] {
        if !p.is_empty() && !names.iter().any(|n| n == p) {
            names.push(p.to_string());
        }
    }
    if let Some(b) = names
        .iter()
        .find_map(|p| s.providers.supports_vision(p, model))
    {
        return Some(b);
    }
    let mut cands: Vec<String> = Vec::new();
    for p in &names {
        cands.push(p.clone());
        match p.strip_prefix("custom:") {
            Some(s) => cands.push(s.to_string()),
            None => cands.push(format!("custom:{p}")),
        }
    }
    s.providers.custom_supports_vision(&cands, model)
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
