//! The memory store's operations, as Hermes' `MemoryStore` runs them
//! (hermes-agent 0.19.0: `tools/memory_tool.py`, `add`, `replace`, `remove`,
//! `apply_batch`, `_batch_error`, `_success_response`), with the same result
//! dicts, key order and texts.
//!
//! Each call is a fresh store, as Hermes' `load_on_disk_store()` gives the
//! gateway and the bare CLI: every write re-reads its file under Hermes' lock
//! (see [`super::disk`]), so what another writer saved a moment ago is kept.
//! A fresh store also means Hermes' per-turn consolidation-failure counter
//! never passes 1, so its terminal "failed N times this turn" answer (from the
//! 4th failure on one store) never occurs here, as it never does for Hermes'
//! own stateless callers.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::config::MemoryConfig;
use super::disk::{self, Failure};
use super::format::{
    char_count, commas, dedupe, drifted, parse, percent, previews, serialize, usage,
};
use super::scan::first_threat_message;
use crate::pycompat::{py_bool, py_len, py_str_or_json, py_strip, py_type};

/// A store's answer: Hermes' result dict, or a failure Hermes would raise.
pub(crate) type Outcome = Result<Value, Failure>;

/// Which file: `MEMORY.md` (the agent's notes) or `USER.md` (the user profile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Memory,
    User,
}

impl Target {
    /// `"memory"` / `"user"`: a valid `target` argument.
    pub(crate) fn parse(name: &str) -> Option<Target> {
        match name {
            "memory" => Some(Target::Memory),
            "user" => Some(Target::User),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Target::Memory => "memory",
            Target::User => "user",
        }
    }

    fn file_name(self) -> &'static str {
        match self {
            Target::Memory => "MEMORY.md",
            Target::User => "USER.md",
        }
    }
}

/// `{"success": false, "error": <message>}`: the store's plain refusal.
fn refuse(message: impl Into<String>) -> Value {
    json!({"success": false, "error": message.into()})
}

/// `$HERMES_HOME/memories/` with the configured limits.
pub(crate) struct Store {
    dir: PathBuf,
    config: MemoryConfig,
}

/// One target's entries as re-read under its lock (dropped with it).
struct Locked {
    target: Target,
    path: PathBuf,
    entries: Vec<String>,
    _lock: crate::fs::Flock,
}

impl Store {
    pub(crate) fn new(dir: PathBuf, config: MemoryConfig) -> Self {
        Store { dir, config }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, target: Target) -> PathBuf {
        self.dir.join(target.file_name())
    }

    fn limit(&self, target: Target) -> i64 {
        match target {
            Target::Memory => self.config.memory_char_limit,
            Target::User => self.config.user_char_limit,
        }
    }

    /// `load_from_disk()`'s entries for `target`, read without the lock.
    pub(crate) fn loaded(&self, target: Target) -> Result<Vec<String>, Failure> {
        let text = disk::read_text(&self.path(target))?;
        Ok(dedupe(text.as_deref().map(parse).unwrap_or_default()))
    }

    /// `"<current:,>/<limit:,>"` for `entries` of `target`.
    pub(crate) fn usage(&self, target: Target, entries: &[String]) -> String {
        usage(char_count(entries), self.limit(target))
    }

    /// Take `target`'s lock and re-read it (`_reload_target`). With
    /// `check_drift`, a file that would not round-trip is backed up and the
    /// drift error is the answer (`Err(Ok(..))`).
    fn lock(&self, target: Target, check_drift: bool) -> Result<Locked, Outcome> {
        let path = self.path(target);
        let lock = disk::lock(&path).map_err(Err)?;
        let text = disk::read_text(&path).map_err(Err)?.unwrap_or_default();
        if check_drift && drifted(&text, self.limit(target)) {
            return Err(Ok(drift_error(&path, &disk::backup(&path, &text))));
        }
        Ok(Locked {
            target,
            path,
            entries: dedupe(parse(&text)),
            _lock: lock,
        })
    }

    /// Save `entries` as `held`'s file, then answer `_success_response`.
    fn commit(&self, held: &Locked, entries: &[String], message: &str) -> Outcome {
        disk::write_text(&held.path, &serialize(entries))?;
        Ok(self.success(held.target, entries, message))
    }

    /// `_success_response`: terminal, without the entries.
    fn success(&self, target: Target, entries: &[String], message: &str) -> Value {
        let (current, limit) = (char_count(entries), self.limit(target));
        json!({
            "success": true,
            "done": true,
            "target": target.name(),
            "usage": format!("{}% — {}/{} chars", percent(current, limit), commas(current), commas(limit)),
            "entry_count": entries.len(),
            "message": message,
            "note": "Write saved. This update is complete — do not repeat it.",
        })
    }

    /// An over-budget or no-match answer that lists the live entries.
    fn with_entries(&self, held: &Locked, error: String, with_usage: bool) -> Value {
        let mut v = json!({"success": false, "error": error, "current_entries": held.entries});
        if with_usage {
            v["usage"] = json!(self.usage(held.target, &held.entries));
        }
        v
    }

    /// `MemoryStore.add`: append, unless it is already there or over budget.
    /// No drift check: Hermes lets an add rewrite (and so heal) a drifted file.
    pub(crate) fn add(&self, target: Target, content: &str) -> Outcome {
        let content = py_strip(content);
        if content.is_empty() {
            return Ok(refuse("Content cannot be empty."));
        }
        if let Some(why) = first_threat_message(content) {
            return Ok(refuse(why));
        }
        let held = match self.lock(target, false) {
            Ok(h) => h,
            Err(answer) => return answer,
        };
        if held.entries.iter().any(|e| e == content) {
            let message = "Entry already exists (no duplicate added).";
            return Ok(self.success(target, &held.entries, message));
        }
        let mut entries = held.entries.clone();
        entries.push(content.to_string());
        let limit = self.limit(target);
        if char_count(&entries) > limit {
            let error = format!(
                "Memory at {}/{} chars. Adding this entry ({} chars) would exceed the limit. Consolidate now: use 'replace' to merge overlapping entries into shorter ones or 'remove' stale or less important entries (see current_entries below), then retry this add — all in this turn.",
                commas(char_count(&held.entries)),
                commas(limit),
                py_len(content)
            );
            return Ok(self.with_entries(&held, error, true));
        }
        self.commit(&held, &entries, "Entry added.")
    }

    /// `MemoryStore.replace`: the one entry containing `old_text` becomes `new`.
    pub(crate) fn replace(&self, target: Target, old_text: &str, new: &str) -> Outcome {
        let (old_text, new) = (py_strip(old_text), py_strip(new));
        if old_text.is_empty() {
            return Ok(refuse("old_text cannot be empty."));
        }
        if new.is_empty() {
            return Ok(refuse(
                "new_content cannot be empty. Use 'remove' to delete entries.",
            ));
        }
        if let Some(why) = first_threat_message(new) {
            return Ok(refuse(why));
        }
        let held = match self.lock(target, true) {
            Ok(h) => h,
            Err(answer) => return answer,
        };
        let idx = match self.find_one(&held, old_text, "replace") {
            Ok(i) => i,
            Err(answer) => return Ok(answer),
        };
        let mut entries = held.entries.clone();
        entries[idx] = new.to_string();
        let (total, limit) = (char_count(&entries), self.limit(target));
        if total > limit {
            let error = format!(
                "Replacement would put memory at {}/{} chars. Shorten the new content, or 'remove' other stale or less important entries to make room (see current_entries below), then retry — all in this turn.",
                commas(total),
                commas(limit)
            );
            return Ok(self.with_entries(&held, error, true));
        }
        self.commit(&held, &entries, "Entry replaced.")
    }

    /// `MemoryStore.remove`: drop the one entry containing `old_text`.
    pub(crate) fn remove(&self, target: Target, old_text: &str) -> Outcome {
        let old_text = py_strip(old_text);
        if old_text.is_empty() {
            return Ok(refuse("old_text cannot be empty."));
        }
        let held = match self.lock(target, true) {
            Ok(h) => h,
            Err(answer) => return answer,
        };
        let idx = match self.find_one(&held, old_text, "remove") {
            Ok(i) => i,
            Err(answer) => return Ok(answer),
        };
        let mut entries = held.entries.clone();
        entries.remove(idx);
        self.commit(&held, &entries, "Entry removed.")
    }

    /// The index of the entry `old_text` names (a substring; several identical
    /// entries count as one), or the no-match / ambiguous answer.
    fn find_one(&self, held: &Locked, old_text: &str, verb: &str) -> Result<usize, Value> {
        let matches: Vec<usize> = (0..held.entries.len())
            .filter(|&i| held.entries[i].contains(old_text))
            .collect();
        let Some(&first) = matches.first() else {
            let error = format!(
                "No entry matched '{old_text}'. Check current_entries below and retry with the exact text of the entry you want to {verb}."
            );
            return Err(self.with_entries(held, error, false));
        };
        let texts: Vec<&String> = matches.iter().map(|&i| &held.entries[i]).collect();
        if texts.iter().any(|t| *t != texts[0]) {
            return Err(json!({
                "success": false,
                "error": format!("Multiple entries matched '{old_text}'. Be more specific."),
                "matches": previews(&texts),
            }));
        }
        Ok(first)
    }

    /// `MemoryStore.apply_batch`: every operation or none, the char limit
    /// checked on the final result only.
    pub(crate) fn apply_batch(&self, target: Target, operations: &[Value]) -> Outcome {
        if operations.is_empty() {
            return Ok(refuse("operations list is empty."));
        }
        let ops = operations
            .iter()
            .enumerate()
            .map(|(i, op)| BatchOp::read(i + 1, op))
            .collect::<Result<Vec<_>, _>>()?;
        // Every new content is scanned before the file is touched.
        for op in &ops {
            if let Some(why) = op.scanned_content().and_then(first_threat_message) {
                return Ok(refuse(format!("Operation {}: {why}", op.number)));
            }
        }
        let held = match self.lock(target, true) {
            Ok(h) => h,
            Err(answer) => return answer,
        };
        let mut working = held.entries.clone();
        for op in &ops {
            if let Err(message) = op.apply(&mut working) {
                let error =
                    format!("{message} No operations were applied (batch is all-or-nothing).");
                return Ok(self.with_entries(&held, error, true));
            }
        }
        let (total, limit) = (char_count(&working), self.limit(target));
        if total > limit {
            let error = format!(
                "After applying all {} operations, memory would be at {}/{} chars -- over the limit. Remove or shorten more entries in the same batch (see current_entries below), then retry.",
                operations.len(),
                commas(total),
                commas(limit)
            );
            return Ok(self.with_entries(&held, error, true));
        }
        let message = format!("Applied {} operation(s).", operations.len());
        self.commit(&held, &working, &message)
    }
}

/// `_drift_error`: the write is refused and the snapshot named.
fn drift_error(path: &Path, backup: &str) -> Value {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    json!({
        "success": false,
        "error": format!(
            "Refusing to write {name}: file on disk has content that wouldn't round-trip through the memory tool (likely added by the patch tool, a shell append, a manual edit, or a concurrent session). A snapshot was saved to {backup}. Resolve the drift first — either rewrite the file as a clean §-delimited list of entries, or move the extra content out — then retry. This guard exists to prevent silent data loss (issue #26045)."
        ),
        "drift_backup": backup,
        "remediation": "Open the .bak file, integrate the missing entries into the memory tool one at a time via memory(action=add, content=...), then remove or rewrite the original file to a clean state.",
    })
}

/// One item of `operations`, read as `apply_batch` reads it.
struct BatchOp {
    /// 1-based position.
    number: usize,
    /// `op.get("action")` (absent is `null`).
    action: Value,
    /// `op.get("content")` as given, for the scan.
    raw_content: Option<String>,
    /// `(op.get("content") or "").strip()`.
    content: String,
    /// `(op.get("old_text") or "").strip()`.
    old_text: String,
}

impl BatchOp {
    /// Read item `number`; an item Hermes could not read at all (it raises
    /// on a non-object, or on a `content`/`old_text` that is not a string)
    /// fails the call.
    fn read(number: usize, op: &Value) -> Result<BatchOp, Failure> {
        let empty = Map::new();
        let obj = match op {
            Value::Object(m) => m,
            v if !py_bool(v) => &empty,
            v => {
                return Err(Failure(format!(
                    "Operation {number}: each operation must be an object {{action, content?, old_text?}}, got {}.",
                    py_type(v)
                )));
            }
        };
        let text = |key: &str| -> Result<Option<String>, Failure> {
            match obj.get(key) {
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(v) if py_bool(v) => Err(Failure(format!(
                    "Operation {number}: '{key}' must be a string, got {}.",
                    py_type(v)
                ))),
                _ => Ok(None),
            }
        };
        let raw_content = text("content")?;
        let old_text = text("old_text")?;
        Ok(BatchOp {
            number,
            action: obj.get("action").cloned().unwrap_or(Value::Null),
            content: py_strip(raw_content.as_deref().unwrap_or("")).to_string(),
            raw_content,
            old_text: py_strip(old_text.as_deref().unwrap_or("")).to_string(),
        })
    }

    /// The content the pre-lock scan looks at: an add's or a replace's
    /// non-empty raw content.
    fn scanned_content(&self) -> Option<&str> {
        let scanned = matches!(self.action.as_str(), Some("add" | "replace"));
        self.raw_content
            .as_deref()
            .filter(|c| scanned && !c.is_empty())
    }

    /// `Operation <n> (<action>)`.
    fn pos(&self) -> String {
        let act = if py_bool(&self.action) {
            py_str_or_json(&self.action)
        } else {
            "unknown".to_string()
        };
        format!("Operation {} ({act})", self.number)
    }

    /// Apply to `working`, or say why the batch stops.
    fn apply(&self, working: &mut Vec<String>) -> Result<(), String> {
        let pos = self.pos();
        match self.action.as_str() {
            Some("add") => {
                if self.content.is_empty() {
                    return Err(format!("{pos}: content is required."));
                }
                // A duplicate is skipped, not an error.
                if !working.contains(&self.content) {
                    working.push(self.content.clone());
                }
            }
            Some("replace") => {
                let idx = self.target_index(working, &pos, true)?;
                working[idx] = self.content.clone();
            }
            Some("remove") => {
                let idx = self.target_index(working, &pos, false)?;
                working.remove(idx);
            }
            _ => {
                return Err(format!(
                    "{pos}: unknown action. Use add, replace, or remove."
                ));
            }
        }
        Ok(())
    }

    /// The entry a replace or remove acts on, checked as Hermes checks it.
    fn target_index(&self, working: &[String], pos: &str, replace: bool) -> Result<usize, String> {
        let old = &self.old_text;
        if old.is_empty() {
            return Err(format!("{pos}: old_text is required."));
        }
        if replace && self.content.is_empty() {
            return Err(format!(
                "{pos}: content is required (use action='remove' to delete)."
            ));
        }
        let matches: Vec<usize> = (0..working.len())
            .filter(|&j| working[j].contains(old.as_str()))
            .collect();
        let Some(&first) = matches.first() else {
            return Err(format!("{pos}: no entry matched '{old}'."));
        };
        if matches.iter().any(|&j| working[j] != working[first]) {
            return Err(format!(
                "{pos}: '{old}' matched multiple distinct entries -- be more specific."
            ));
        }
        Ok(first)
    }
}
