//! `memory.write_approval: true`: a write is staged for the user's approval
//! instead of being made, exactly as Hermes stages it (hermes-agent 0.19.0:
//! `tools/memory_tool.py` `_apply_write_gate`, `_apply_batch_write_gate`;
//! `tools/write_approval.py` `evaluate_gate`, `stage_write`), so it shows up in
//! Hermes' `/memory pending` and `/memory approve` applies it.
//!
//! A server has no inline approval prompt, so Hermes' gate always stages here.
//! The record is `$HERMES_HOME/pending/memory/<8 hex>.json`, Python's
//! `json.dumps(record, ensure_ascii=False, indent=2)` written to `<id>.json.tmp`
//! and renamed into place. Nothing is scanned or stripped before staging:
//! Hermes checks a staged write when it is approved.
//!
//! One difference: when the record cannot be written Hermes logs it and still
//! answers "Staged" (the write is lost); here the call fails and says so.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::disk::Failure;
use super::store::Target;
use crate::pycompat::py_str_or_json;

/// `GateDecision.message` for a memory write staged from the foreground.
const STAGED: &str = "Staged for approval (memory.write_approval is on). Not yet saved — review with /memory pending.";

/// `"user profile"` / `"memory"`, as the summaries name a target.
fn label(target: Target) -> &'static str {
    match target {
        Target::User => "user profile",
        Target::Memory => "memory",
    }
}

/// Stage one `add` / `replace` / `remove` (already validated), arguments as given.
pub(crate) fn stage_single(
    home: &Path,
    action: &str,
    target: Target,
    content: Option<&str>,
    old_text: Option<&str>,
) -> Result<Value, Failure> {
    let label = label(target);
    let (summary, detail) = match action {
        "add" => (format!("add to {label}"), content.unwrap_or("").to_string()),
        "replace" => (
            format!("replace in {label}"),
            format!(
                "old: {}\nnew: {}",
                old_text.unwrap_or("None"),
                content.unwrap_or("None")
            ),
        ),
        _ => (
            format!("remove from {label}"),
            old_text.unwrap_or("").to_string(),
        ),
    };
    let payload = json!({
        "action": action,
        "target": target.name(),
        "content": content,
        "old_text": old_text,
    });
    stage(home, payload, &summary, &detail)
}

/// Stage a whole batch as one unit, without validating it.
pub(crate) fn stage_batch(
    home: &Path,
    target: Target,
    operations: &[Value],
) -> Result<Value, Failure> {
    let summary = format!("apply {} op(s) to {}", operations.len(), label(target));
    let field = |op: &Value, key: &str| op.get(key).map(py_str_or_json).unwrap_or_default();
    let detail: Vec<String> = operations
        .iter()
        .map(|op| {
            let act = op
                .get("action")
                .map(py_str_or_json)
                .unwrap_or_else(|| "?".into());
            match act.as_str() {
                "remove" => format!("- remove: {}", field(op, "old_text")),
                "replace" => format!(
                    "- replace: {} -> {}",
                    field(op, "old_text"),
                    field(op, "content")
                ),
                _ => format!("- {act}: {}", field(op, "content")),
            }
        })
        .collect();
    let payload = json!({"action": "batch", "target": target.name(), "operations": operations});
    stage(home, payload, &summary, &detail.join("\n"))
}

/// `stage_write("memory", payload, summary=f"{summary}: {detail[:120]}")`, and
/// the tool's answer.
fn stage(home: &Path, payload: Value, summary: &str, detail: &str) -> Result<Value, Failure> {
    let cut: String = detail.chars().take(120).collect();
    let id = crate::fs::short_id();
    let created_at = crate::time::now();
    let record = json!({
        "id": id,
        "subsystem": "memory",
        "action": payload.get("action").cloned().unwrap_or(json!("")),
        "summary": crate::pycompat::py_strip(&format!("{summary}: {cut}")),
        "origin": "foreground",
        "created_at": created_at,
        "payload": payload,
    });
    write_record(&pending_dir(home), &id, &record)?;
    Ok(json!({"success": true, "staged": true, "pending_id": id, "message": STAGED}))
}

/// `<home>/pending/memory`.
pub(crate) fn pending_dir(home: &Path) -> PathBuf {
    home.join("pending").join("memory")
}

/// `<dir>/<id>.json` via `<id>.json.tmp`, as Hermes' `write_text` and
/// `os.replace` write it (the umask's mode, no fsync). serde_json's pretty
/// printer writes what Python's `indent=2, ensure_ascii=False` writes.
fn write_record(dir: &Path, id: &str, record: &Value) -> Result<(), Failure> {
    let fail = |e: &dyn std::fmt::Display| {
        Failure(format!(
            "cannot stage the memory write in {}: {e}. Nothing was saved.",
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    let text = serde_json::to_string_pretty(record).expect("a JSON value serialises");
    let opts = crate::fs::WriteOptions {
        temp: crate::fs::TempName::Suffix(".tmp"),
        perms: crate::fs::Perms::Umask,
        links: crate::fs::Links::NoFollow,
        durability: crate::fs::Durability::AsHermes,
    };
    crate::fs::write_atomic(&dir.join(format!("{id}.json")), text.as_bytes(), &opts)
        .map(|_| ())
        .map_err(|e| match e.io_error() {
            Some(io) => fail(io),
            None => fail(&e),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_json_is_pythons_indent_2() {
        let v =
            json!({"a": [], "b": {}, "c": [1, {"d": null}], "é": "x\ny", "f": 1795709621.5239387});
        assert_eq!(
            serde_json::to_string_pretty(&v).unwrap(),
            "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": null\n    }\n  ],\n  \"é\": \"x\\ny\",\n  \"f\": 1795709621.5239387\n}"
        );
    }

    #[test]
    fn stages_a_record_hermes_can_read() {
        let d = tempfile::tempdir().unwrap();
        let r = stage_single(
            d.path(),
            "add",
            Target::User,
            Some("Prefers dark mode"),
            None,
        )
        .unwrap();
        let id = r["pending_id"].as_str().unwrap();
        assert_eq!(id.len(), 8);
        let text =
            std::fs::read_to_string(pending_dir(d.path()).join(format!("{id}.json"))).unwrap();
        let rec: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(rec["summary"], "add to user profile: Prefers dark mode");
        assert_eq!(
            rec["payload"],
            json!({"action": "add", "target": "user", "content": "Prefers dark mode", "old_text": null})
        );
        let ops = [
            json!({"action": "remove", "old_text": "delta"}),
            json!({"action": "add", "content": "epsilon"}),
        ];
        let r = stage_batch(d.path(), Target::Memory, &ops).unwrap();
        let id = r["pending_id"].as_str().unwrap();
        let text =
            std::fs::read_to_string(pending_dir(d.path()).join(format!("{id}.json"))).unwrap();
        let rec: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            rec["summary"],
            "apply 2 op(s) to memory: - remove: delta\n- add: epsilon"
        );
    }
}
