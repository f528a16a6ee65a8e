//! The `memory` tool's declaration: Hermes' registered schema, verbatim
//! (hermes-agent 0.19.0: `tools/memory_tool.py` `MEMORY_SCHEMA`, as
//! `registry.get_schema("memory")` returns it; `model_tools`' sanitizer leaves it
//! unchanged).

use serde_json::{Value, json};

use crate::server::{Hints, ToolDef};

/// `MEMORY_SCHEMA["description"]`.
pub(super) const DESCRIPTION: &str = "Save durable facts to persistent memory that survive across sessions. Memory is injected into every future turn, so keep entries compact and high-signal.\n\nHOW: make ALL your changes in ONE call via an 'operations' array (each item: {action, content?, old_text?}). The batch applies atomically and the char limit is checked only on the FINAL result — so a single call can remove/replace stale entries to free room AND add new ones, even when an add alone would overflow. The response reports current/limit chars and confirms completion; one batch call finishes the update, so don't repeat it. Use the bare action/content/old_text fields only for a single lone change.\n\nWHEN: save proactively when the user states a preference, correction, or personal detail, or you learn a stable fact about their environment, conventions, or workflow. Priority: user preferences & corrections > environment facts > procedures. The best memory stops the user repeating themselves.\n\nIF FULL: an add is rejected with the current entries shown. Reissue as ONE batch that removes or shortens enough stale entries and adds the new one together.\n\nTARGETS: 'user' = who the user is (name, role, preferences, style). 'memory' = your notes (environment, conventions, tool quirks, lessons).\n\nSKIP: trivial/obvious info, easily re-discovered facts, raw data dumps, task progress, completed-work logs, temporary TODO state (use session_search for those). Reusable procedures belong in a skill, not memory.";

/// `MEMORY_SCHEMA["parameters"]`, keys in Hermes' order.
fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["add", "replace", "remove"],
                "description": "The action to perform (single-op shape). Omit when using 'operations'."
            },
            "target": {
                "type": "string",
                "enum": ["memory", "user"],
                "description": "Which memory store: 'memory' for personal notes, 'user' for user profile."
            },
            "content": {
                "type": "string",
                "description": "The entry content. Required for 'add' and 'replace' (single-op shape)."
            },
            "old_text": {
                "type": "string",
                "description": "REQUIRED for 'replace' and 'remove' (single-op shape): a short unique substring identifying the existing entry to modify. Omit only for 'add'."
            },
            "operations": {
                "type": "array",
                "description": "Batch shape: a list of operations applied atomically in one call against the final char budget. Preferred when making multiple changes or consolidating to make room. Each item is {action, content?, old_text?}.",
                "items": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                        "content": {"type": "string", "description": "Entry content for add/replace."},
                        "old_text": {"type": "string", "description": "Substring identifying the entry for replace/remove."}
                    },
                    "required": ["action"]
                }
            }
        },
        "required": ["target"]
    })
}

/// The toolset's one tool. It writes the user's files (`MEMORY.md`, `USER.md`):
/// `replace` and `remove` destroy entries, and whatever it saves lands in every
/// future prompt, so it is destructive (Codex asks before each call).
pub(super) const DEFS: &[ToolDef] = &[ToolDef {
    name: "memory",
    description: DESCRIPTION,
    schema: parameters,
    hints: Hints::DESTRUCTIVE,
}];
