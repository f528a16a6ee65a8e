//! One `memory` call, in the order Hermes' registry handler runs it
//! (hermes-agent 0.19.0: `tools/memory_tool.py`, the registered lambda and
//! `memory_tool()`, with `store=load_on_disk_store()`): the store is built
//! (the memories directory made), the target checked, then either the batch
//! path or the single operation's validation, the write-approval gate, and the
//! store operation.
//!
//! Arguments reach here after the server's schema validation, which already
//! refuses a missing `target` and values outside the `action`/`target` enums
//! (as it does for every tool); the checks below keep Hermes' own texts for
//! everything the schema lets through.

use std::path::Path;

use super::approval;
use super::args::Args;
use super::config::MemoryConfig;
use super::disk::{self, Failure};
use super::store::{Outcome, Store, Target};
use crate::pycompat::py_bool;
use serde_json::{Map, Value, json};

/// Hermes' `tool_error(message, success=False)`: `error` first.
pub(crate) fn tool_error(message: impl Into<String>) -> Value {
    json!({"error": message.into(), "success": false})
}

/// Run one call against the Hermes home `home`: Hermes' result value.
pub(crate) fn run(home: &Path, config: MemoryConfig, args: &Map<String, Value>) -> Value {
    let store = Store::new(home.join("memories"), config.clone());
    let answer = disk::ensure_dir(home, store.dir())
        .and_then(|()| dispatch(home, &store, &config, &Args::read(args)));
    answer.unwrap_or_else(|Failure(message)| tool_error(message))
}

/// `memory_tool()` once the store exists.
fn dispatch(home: &Path, store: &Store, config: &MemoryConfig, a: &Args) -> Outcome {
    let Some(target) = Target::parse(&a.target) else {
        return Ok(tool_error(format!(
            "Invalid target '{}'. Use 'memory' or 'user'.",
            a.target
        )));
    };
    if let Some(ops) = a.operations.filter(|v| py_bool(v)) {
        let Value::Array(ops) = ops else {
            return Ok(tool_error(
                "operations must be a list of {action, content?, old_text?} objects.",
            ));
        };
        if config.write_approval {
            return approval::stage_batch(home, target, ops);
        }
        return store.apply_batch(target, ops);
    }
    // Required fields are checked before the gate, so nothing invalid is staged.
    let (content, old_text) = (
        a.content.filter(|s| !s.is_empty()),
        a.old_text.filter(|s| !s.is_empty()),
    );
    match a.action.as_str() {
        "add" if content.is_none() => {
            return Ok(tool_error("Content is required for 'add' action."));
        }
        "replace" | "remove" if old_text.is_none() => {
            return missing_old_text(store, target, &a.action);
        }
        "replace" if content.is_none() => {
            return Ok(tool_error("content is required for 'replace' action."));
        }
        _ => {}
    }
    let known = matches!(a.action.as_str(), "add" | "replace" | "remove");
    if known && config.write_approval {
        return approval::stage_single(home, &a.action, target, a.content, a.old_text);
    }
    match a.action.as_str() {
        "add" => store.add(target, content.unwrap_or("")),
        "replace" => store.replace(target, old_text.unwrap_or(""), content.unwrap_or("")),
        "remove" => store.remove(target, old_text.unwrap_or("")),
        other => Ok(tool_error(format!(
            "Unknown action '{other}'. Use: add, replace, remove"
        ))),
    }
}

/// `_missing_old_text_error`: the entries as loaded (no lock) and how to retry.
fn missing_old_text(store: &Store, target: Target, action: &str) -> Outcome {
    let entries = store.loaded(target)?;
    Ok(json!({
        "success": false,
        "error": format!(
            "'{action}' needs old_text -- a short unique substring of the entry to {action}. None was provided. Reissue the {action} with old_text set to part of one of the current_entries below."
        ),
        "current_entries": entries,
        "usage": store.usage(target, &entries),
    }))
}
