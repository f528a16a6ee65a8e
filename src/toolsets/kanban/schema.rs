//! The nine tool schemas, copied from Hermes' `tools/kanban_tools.py`
//! (hermes-agent 0.19.0): names, descriptions, enums and required lists as
//! Hermes registers them. All flat: no `$ref`/`anyOf`, arrays have typed items.

use serde_json::json;

use crate::server::{Hints, ToolDef};

/// Hints for tools that write but converge: `kanban_list` promotes todo tasks whose
/// parents finished (`recompute_ready`); heartbeat and link repeat harmlessly.
const IDEMPOTENT_WRITE: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: true,
    open_world: false,
};

/// The nine tools in Hermes' registration order. `kanban_complete`,
/// `kanban_block` and `kanban_unblock` overwrite a task's state (the board
/// keeps no undo): destructive. The others add (a task, a comment, a link),
/// read, or refresh the caller's own heartbeat.
pub(crate) const DEFS: &[ToolDef] = &[
    ToolDef {
        name: "kanban_show",
        description: "Read a task's full state — title, body, assignee, parent task handoffs, your prior attempts on this task if any, comments, and recent events. Use this to (re)orient yourself before starting work, especially on retries. The response includes a pre-formatted ``worker_context`` string suitable for inclusion verbatim in your reasoning.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "task_id": {
                        "type": "string",
                        "description": "Task id. If omitted, defaults to HERMES_KANBAN_TASK from the env (the task the dispatcher spawned you to work on)."
                    },
                    "board": {
                        "type": "string",
                        "description": "Kanban board slug to target. When omitted, the call resolves the active board the usual way: HERMES_KANBAN_DB env → HERMES_KANBAN_BOARD env → the 'current' symlink under the kanban home → 'default'. Pass an explicit slug only when the caller (e.g. a Telegram routing layer) needs to override the env-pinned active board for this one call."
                    }
                },
                "required": []
            })
        },
        hints: Hints::READ_ONLY,
    },
    ToolDef {
        name: "kanban_list",
        description: "List Kanban task summaries so an orchestrator profile can discover work to route. Supports the same core filters as the CLI: assignee, status, tenant, include_archived, and limit. Returns compact rows with ids, title, status, assignee, priority, parent/child ids, and counts. Bounded to 50 rows by default, 200 max, with truncation metadata. Also recomputes ready tasks before listing, matching the CLI. Orchestrator-only — dispatcher-spawned task workers never see this tool.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "assignee": {
                        "type": "string",
                        "description": "Optional assignee/profile filter."
                    },
                    "status": {
                        "type": "string",
                        "enum": [
                            "triage",
                            "todo",
                            "ready",
                            "running",
                            "blocked",
                            "done",
                            "archived"
                        ],
                        "description": "Optional task status filter."
                    },
                    "tenant": {
                        "type": "string",
                        "description": "Optional tenant/project namespace filter."
                    },
                    "include_archived": {
                        "type": "boolean",
                        "description": "Include archived tasks. Defaults to false."
                    },
                    "limit": {
                        "type": "integer",
                        "description": "Optional maximum rows to return (default 50, max 200)."
                    },
                    "board": {
                        "type": "string",
                        "description": "Kanban board slug to target. When omitted, the call resolves the active board the usual way: HERMES_KANBAN_DB env → HERMES_KANBAN_BOARD env → the 'current' symlink under the kanban home → 'default'. Pass an explicit slug only when the caller (e.g. a Telegram routing layer) needs to override the env-pinned active board for this one call."
                    }
                },
                "required": []
            })
        },
        hints: IDEMPOTENT_WRITE,
    },
    ToolDef {
        name: "kanban_complete",
        description: "Mark your current task done with a structured handoff for downstream workers and humans. Prefer ``summary`` for a human-readable 1-3 sentence description of what you did; put machine-readable facts in ``metadata`` (changed_files, tests_run, decisions, findings, etc). At least one of ``summary`` or ``result`` is required. If you created new tasks via ``kanban_create`` during this run, list their ids in ``created_cards`` — the kernel verifies them so phantom references are caught before they leak into downstream automation. If you produced deliverable files (charts, PDFs, spreadsheets, generated images), list their absolute paths in ``artifacts`` — the gateway notifier will upload them as native attachments to the human who subscribed to the task, so the deliverable lands in their chat alongside the summary instead of being a path they have to fetch by hand.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "task_id": {
                        "type": "string",
                        "description": "Task id. If omitted, defaults to HERMES_KANBAN_TASK from the env (the task the dispatcher spawned you to work on)."
                    },
                    "summary": {
                        "type": "string",
                        "description": "Human-readable handoff, 1-3 sentences. Appears in Run History on the dashboard and in downstream workers' context."
                    },
                    "metadata": {
                        "type": "object",
                        "description": "Free-form dict of structured facts about this attempt — {\"changed_files\": [...], \"tests_run\": 12, \"findings\": [...]}. Surfaced to downstream workers alongside ``summary``."
                    },
                    "result": {
                        "type": "string",
                        "description": "Short result log line (legacy field, maps to task.result). Use ``summary`` instead when possible; this exists for compatibility with callers that still set --result on the CLI."
                    },
                    "created_cards": {
                        "type": "array",
                        "items": {
                            "type": "string"
                        },
                        "description": "Optional structured manifest of task ids you created via ``kanban_create`` during this run. The kernel verifies each id exists and was created by this worker's profile; any phantom id blocks the completion with an error listing what went wrong (auditable in the task's events). Only list ids you got back from a successful ``kanban_create`` call — do not invent or remember ids from prose. Omit the field if you did not create any cards."
                    },
                    "artifacts": {
                        "type": "array",
                        "items": {
                            "type": "string"
                        },
                        "description": "Optional list of absolute paths to deliverable files you produced during this run — generated charts, PDFs, spreadsheets, images, archives. Examples: [\"/tmp/q3-revenue.png\", \"/tmp/report.pdf\"]. The gateway notifier uploads each path as a native attachment to the subscribed chat (images embed inline, everything else uploads as a file) so the deliverable lands with the completion notification. Skip intermediate scratch files and references that are not the deliverable. The path must exist on disk at completion. Files inside a managed scratch workspace are copied to durable task attachments before cleanup; a missing declared scratch artifact keeps the task in-flight so you can fix the path and retry."
                    },
                    "board": {
                        "type": "string",
                        "description": "Kanban board slug to target. When omitted, the call resolves the active board the usual way: HERMES_KANBAN_DB env → HERMES_KANBAN_BOARD env → the 'current' symlink under the kanban home → 'default'. Pass an explicit slug only when the caller (e.g. a Telegram routing layer) needs to override the env-pinned active board for this one call."
                    }
                },
                "required": []
            })
        },
        hints: Hints::DESTRUCTIVE,
    },
    ToolDef {
        name: "kanban_block",
        description: "Stop work on this task and route it according to WHY you're stuck. Set ``kind`` to say which: 'dependency' (waiting on another task — goes to todo and auto-resumes when that task finishes, no human needed), 'needs_input' (you need a human decision/answer), 'capability' (a hard wall: no access, missing credentials, an action no agent can do), or 'transient' (a flaky failure that may clear). ``reason`` is shown to the human on the board. If a task keeps getting unblocked and re-blocked for the same reason, it is auto-escalated to triage. Use for genuine blockers only — don't block on things you can resolve yourself.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "task_id": {
                        "type": "string",
                        "description": "Task id. If omitted, defaults to HERMES_KANBAN_TASK from the env (the task the dispatcher spawned you to work on)."
                    },
                    "reason": {
                        "type": "string",
                        "description": "What you need answered or what stopped you, in one or two sentences. Don't paste the whole conversation; the human has the board and can ask follow-ups via comments."
                    },
                    "kind": {
                        "type": "string",
                        "enum": [
                            "dependency",
                            "needs_input",
                            "capability",
                            "transient"
                        ],
                        "description": "Why you're blocked. 'dependency' waits in todo and resumes automatically; the others surface to a human. Omit only if none apply."
                    },
                    "board": {
                        "type": "string",
                        "description": "Kanban board slug to target. When omitted, the call resolves the active board the usual way: HERMES_KANBAN_DB env → HERMES_KANBAN_BOARD env → the 'current' symlink under the kanban home → 'default'. Pass an explicit slug only when the caller (e.g. a Telegram routing layer) needs to override the env-pinned active board for this one call."
                    }
                },
                "required": [
                    "reason"
                ]
            })
        },
        hints: Hints::DESTRUCTIVE,
    },
    ToolDef {
        name: "kanban_heartbeat",
        description: "Signal that you're still alive during a long operation (training, encoding, large crawls). Call every few minutes so humans see liveness separately from PID checks. Pure side effect — no work changes.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "task_id": {
                        "type": "string",
                        "description": "Task id. If omitted, defaults to HERMES_KANBAN_TASK from the env (the task the dispatcher spawned you to work on)."
                    },
                    "note": {
                        "type": "string",
                        "description": "Optional short note describing current progress. Shown in the event log."
                    },
                    "board": {
                        "type": "string",
                        "description": "Kanban board slug to target. When omitted, the call resolves the active board the usual way: HERMES_KANBAN_DB env → HERMES_KANBAN_BOARD env → the 'current' symlink under the kanban home → 'default'. Pass an explicit slug only when the caller (e.g. a Telegram routing layer) needs to override the env-pinned active board for this one call."
                    }
                },
                "required": []
            })
        },
        hints: IDEMPOTENT_WRITE,
    },
    ToolDef {
        name: "kanban_comment",
        description: "Append a comment to a task's thread. Use for durable notes that should outlive this run (questions for the next worker, partial findings, rationale). Ephemeral reasoning doesn't belong here — use your normal response instead.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "task_id": {
                        "type": "string",
                        "description": "Task id. Required (may be your own task or another's — comment threads are per-task)."
                    },
                    "body": {
                        "type": "string",
                        "description": "Markdown-supported comment body."
                    },
                    "board": {
                        "type": "string",
                        "description": "Kanban board slug to target. When omitted, the call resolves the active board the usual way: HERMES_KANBAN_DB env → HERMES_KANBAN_BOARD env → the 'current' symlink under the kanban home → 'default'. Pass an explicit slug only when the caller (e.g. a Telegram routing layer) needs to override the env-pinned active board for this one call."
                    }
                },
                "required": [
                    "task_id",
                    "body"
                ]
            })
        },
        hints: Hints::WRITE,
    },
    ToolDef {
        name: "kanban_create",
        description: "Create a new kanban task, optionally as a child of the current one (pass the current task id in ``parents``). Used by orchestrator workers to fan out — decompose work into child tasks with specific assignees, link them into a pipeline, then complete your own task. The dispatcher picks up the new tasks on its next tick and spawns the assigned profiles.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "title": {
                        "type": "string",
                        "description": "Short task title (required)."
                    },
                    "assignee": {
                        "type": "string",
                        "description": "Profile name that should execute this task (e.g. 'researcher-a', 'reviewer', 'writer'). Required — tasks without an assignee are never dispatched."
                    },
                    "body": {
                        "type": "string",
                        "description": "Opening post: full spec, acceptance criteria, links. The assigned worker reads this as part of its context."
                    },
                    "parents": {
                        "type": "array",
                        "items": {
                            "type": "string"
                        },
                        "description": "Parent task ids. The new task stays in 'todo' until every parent reaches 'done'; then it auto-promotes to 'ready'. Typical fan-in: list all the researcher task ids when creating a synthesizer task."
                    },
                    "tenant": {
                        "type": "string",
                        "description": "Optional namespace for multi-project isolation. Defaults to HERMES_TENANT env if set."
                    },
                    "priority": {
                        "type": "integer",
                        "description": "Dispatcher tiebreaker. Higher = picked sooner when multiple ready tasks share an assignee."
                    },
                    "workspace_kind": {
                        "type": "string",
                        "enum": [
                            "scratch",
                            "dir",
                            "worktree"
                        ],
                        "description": "Workspace flavor: 'scratch' (fresh tmp dir, default), 'dir' (shared directory, requires absolute workspace_path), 'worktree' (git worktree)."
                    },
                    "workspace_path": {
                        "type": "string",
                        "description": "Absolute path for 'dir' or 'worktree' workspace. Relative paths are rejected at dispatch."
                    },
                    "project": {
                        "type": "string",
                        "description": "Optional project id or slug to link the task to. When set, the task becomes a git worktree under the project's primary repo with a deterministic branch (project slug + task id), instead of a random branch."
                    },
                    "triage": {
                        "type": "boolean",
                        "description": "If true, task lands in 'triage' instead of 'todo' — a specifier profile is expected to flesh out the body before work starts."
                    },
                    "idempotency_key": {
                        "type": "string",
                        "description": "If a non-archived task with this key already exists, return that task's id instead of creating a duplicate. Useful for retry-safe automation."
                    },
                    "max_runtime_seconds": {
                        "type": "integer",
                        "description": "Per-task runtime cap. When exceeded, the dispatcher SIGTERMs the worker and re-queues the task with outcome='timed_out'."
                    },
                    "initial_status": {
                        "type": "string",
                        "enum": [
                            "running",
                            "blocked"
                        ],
                        "description": "Initial card status. Use 'blocked' for tasks that require immediate human ops (R3 gate) to skip the brief running-to-blocked transition. Defaults to 'running', which preserves the usual dispatch path."
                    },
                    "skills": {
                        "type": "array",
                        "items": {
                            "type": "string"
                        },
                        "description": "Skill names to force-load into the dispatched worker. The kanban lifecycle is already injected automatically; use this to pin a task to a specialist context — e.g. ['translation'] for a translation task, ['github-code-review'] for a reviewer task. The names must match skills installed on the assignee's profile."
                    },
                    "goal_mode": {
                        "type": "boolean",
                        "description": "Run the dispatched worker in a goal loop. When true, after each turn an auxiliary judge checks the worker's response against this card's title/body; if the work isn't done and budget remains, the worker keeps going in the same session until the judge agrees it's complete (or the goal-turn budget is exhausted, which blocks the task for human review). Use this for open-ended cards where one shot rarely finishes the work. Defaults to false (classic single-shot worker)."
                    },
                    "goal_max_turns": {
                        "type": "integer",
                        "description": "Turn budget for goal_mode workers. Caps how many continuation turns the worker may take before the task is blocked for review. Ignored unless goal_mode is true. Defaults to the goal-engine default (20)."
                    },
                    "board": {
                        "type": "string",
                        "description": "Kanban board slug to target. When omitted, the call resolves the active board the usual way: HERMES_KANBAN_DB env → HERMES_KANBAN_BOARD env → the 'current' symlink under the kanban home → 'default'. Pass an explicit slug only when the caller (e.g. a Telegram routing layer) needs to override the env-pinned active board for this one call."
                    }
                },
                "required": [
                    "title",
                    "assignee"
                ]
            })
        },
        hints: Hints::WRITE,
    },
    ToolDef {
        name: "kanban_unblock",
        description: "Unblock a Kanban task. It moves to ready when all parents are done, or todo while any parent remains open. Orchestrator-only — only profiles with the kanban toolset can unblock routed work; dispatcher-spawned task workers never see this tool.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "task_id": {
                        "type": "string",
                        "description": "Blocked task id to move to ready or parent-gated todo."
                    },
                    "board": {
                        "type": "string",
                        "description": "Kanban board slug to target. When omitted, the call resolves the active board the usual way: HERMES_KANBAN_DB env → HERMES_KANBAN_BOARD env → the 'current' symlink under the kanban home → 'default'. Pass an explicit slug only when the caller (e.g. a Telegram routing layer) needs to override the env-pinned active board for this one call."
                    }
                },
                "required": [
                    "task_id"
                ]
            })
        },
        hints: Hints::DESTRUCTIVE,
    },
    ToolDef {
        name: "kanban_link",
        description: "Add a parent→child dependency edge after both tasks already exist. The child won't promote to 'ready' until all parents are 'done'. Cycles and self-links are rejected.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "parent_id": {
                        "type": "string",
                        "description": "Parent task id."
                    },
                    "child_id": {
                        "type": "string",
                        "description": "Child task id."
                    },
                    "board": {
                        "type": "string",
                        "description": "Kanban board slug to target. When omitted, the call resolves the active board the usual way: HERMES_KANBAN_DB env → HERMES_KANBAN_BOARD env → the 'current' symlink under the kanban home → 'default'. Pass an explicit slug only when the caller (e.g. a Telegram routing layer) needs to override the env-pinned active board for this one call."
                    }
                },
                "required": [
                    "parent_id",
                    "child_id"
                ]
            })
        },
        hints: IDEMPOTENT_WRITE,
    },
];
