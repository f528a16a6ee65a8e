//! `skill_view` counts as viewing and using the skill, recorded in
//! `$HERMES_HOME/skills/.usage.json` exactly as Hermes' `tools/skill_usage.py` does
//! (`bump_view` then `bump_use`, from `tools/skills_tool.py::_skill_view_with_bump`).
//! Hermes' curator archives skills it thinks unused, so a skill read only through Codex
//! must not look stale.
//!
//! Same file shape (`json.dump(indent=2, sort_keys=True, ensure_ascii=False)`), same record
//! defaults, same lock: an exclusive `flock` on `.usage.json.lock` around each
//! read-modify-write, so Hermes and hermes-mcp processes never lose each other's counts. The
//! write is atomic (`crate::fs::atomic_write`). Best-effort, as in Hermes: a failure is
//! logged, never fails the tool call.

use std::io;
use std::path::Path;

use serde_json::{Map, Value, json};

/// Python's `datetime.now(timezone.utc).isoformat()`: microseconds unless zero, `+00:00`.
fn now_iso() -> String {
    crate::time::utc_isoformat(crate::time::now_micros())
}

/// `_empty_record`.
fn empty_record() -> Map<String, Value> {
    let v = json!({
        "created_by": null, "use_count": 0, "view_count": 0, "last_used_at": null,
        "last_viewed_at": null, "patch_count": 0, "last_patched_at": null,
        "created_at": now_iso(), "state": "active", "pinned": false, "archived_at": null,
    });
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// `load_usage`: the map, `{}` when missing or corrupt, non-object records dropped.
fn load(path: &Path) -> Map<String, Value> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Map::new();
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => m.into_iter().filter(|(_, v)| v.is_object()).collect(),
        _ => Map::new(),
    }
}

/// Python's `json.dump(..., sort_keys=True)`: keys sorted at every level.
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut pairs: Vec<(String, Value)> = m.into_iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(pairs.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// `int(rec.get(key) or 0)`; `None` where Python would raise (Hermes then skips the bump).
fn count(v: Option<&Value>) -> Option<i64> {
    match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => Some(0),
        Some(Value::Bool(true)) => Some(1),
        Some(Value::Number(n)) => n.as_i64().or_else(|| n.as_f64().map(|f| f.trunc() as i64)),
        Some(Value::String(s)) if s.is_empty() => Some(0),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
}

#[derive(Debug, thiserror::Error)]
enum UsageError {
    #[error("cannot lock {0}: {1}")]
    Lock(String, #[source] io::Error),
    #[error("cannot create {0}: {1}")]
    Dir(String, #[source] io::Error),
    #[error("{0}")]
    Write(#[from] crate::fs::FileError),
    #[error("{0}")]
    Encode(#[from] serde_json::Error),
    #[error("the record's {0} is not a number")]
    NotACount(&'static str),
}

/// `_mutate(name, apply)` with `apply` = `rec[count] += 1; rec[stamp] = now`.
fn bump(
    skills_dir: &Path,
    name: &str,
    count_key: &'static str,
    stamp_key: &str,
) -> Result<(), UsageError> {
    std::fs::create_dir_all(skills_dir)
        .map_err(|e| UsageError::Dir(skills_dir.display().to_string(), e))?;
    let lock_path = skills_dir.join(".usage.json.lock");
    let _lock = crate::fs::Flock::take(&lock_path)
        .map_err(|e| UsageError::Lock(lock_path.display().to_string(), e))?;
    let path = skills_dir.join(".usage.json");
    let mut data = load(&path);
    let mut rec = match data.remove(name) {
        Some(Value::Object(m)) => m,
        _ => empty_record(),
    };
    let n = count(rec.get(count_key)).ok_or(UsageError::NotACount(count_key))?;
    rec.insert(count_key.into(), json!(n + 1));
    rec.insert(stamp_key.into(), json!(now_iso()));
    data.insert(name.to_string(), Value::Object(rec));
    let text = serde_json::to_string_pretty(&sorted(Value::Object(data)))?;
    crate::fs::atomic_write(&path, text.as_bytes())?;
    Ok(())
}

/// What `_skill_view_with_bump` does after a successful view: `bump_view` then `bump_use`
/// on the resolved name (the result's `name`, else the requested one).
pub(crate) fn record_view(skills_dir: &Path, result: &Value, requested: &str) {
    let name = result
        .get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(requested);
    if name.is_empty() {
        return;
    }
    for (c, s) in [
        ("view_count", "last_viewed_at"),
        ("use_count", "last_used_at"),
    ] {
        if let Err(e) = bump(skills_dir, name, c, s) {
            tracing::debug!("skill usage for {name}: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_python_int() {
        assert_eq!(count(None), Some(0));
        assert_eq!(count(Some(&json!(null))), Some(0));
        assert_eq!(count(Some(&json!("3"))), Some(3));
        assert_eq!(count(Some(&json!(2.7))), Some(2));
        assert_eq!(count(Some(&json!("x"))), None);
    }

    #[test]
    fn iso_like_python() {
        let s = now_iso();
        assert!(s.ends_with("+00:00") && s.len() >= 25, "{s}");
    }
}
