//! `build_worker_context` (hermes-agent: `hermes_cli/kanban_db.py`): the
//! markdown a dispatcher hands a worker and kanban_show returns as
//! `worker_context`. Built section by section, each a function below, with
//! Hermes' headings, caps and wording so a worker sees the same text whether
//! Hermes or this server rendered it.

use rusqlite::Connection;
use serde_json::Value;

use crate::toolsets::kanban::error::{KanbanResult, value_err};
use crate::toolsets::kanban::status::Status;
use crate::toolsets::kanban::store::{
    Row, Task, get_task, list_attachments, list_comments, list_runs, parent_ids, recent_work_by,
    run_metadata,
};
use crate::toolsets::kanban::util::{
    first_line, local_ts, now, py_json_sorted, py_len, py_strip, take_chars, truthy,
};

const CTX_MAX_PRIOR_ATTEMPTS: usize = 10;
const CTX_MAX_COMMENTS: usize = 30;
const CTX_MAX_FIELD: usize = 4 * 1024;
const CTX_MAX_BODY: usize = 8 * 1024;
const CTX_MAX_COMMENT: usize = 2 * 1024;
/// Seconds of `max_runtime_seconds` left for the worker to wrap up after its
/// terminal commands time out.
const TERMINAL_TIMEOUT_GRACE: i64 = 30;

/// `build_worker_context`: the text a dispatcher hands a worker.
pub(crate) fn build_worker_context(
    conn: &Connection,
    task_id: &str,
    terminal_timeout: Option<&str>,
) -> KanbanResult<String> {
    let Some(task) = get_task(conn, task_id)? else {
        return value_err(format!("unknown task {task_id}"));
    };
    let now = now();
    let mut lines: Vec<String> = vec![];
    header(&mut lines, &task, terminal_timeout);
    body(&mut lines, &task);
    attachments(&mut lines, &list_attachments(conn, task_id)?);
    prior_attempts(&mut lines, list_runs(conn, task_id)?, now);
    parent_results(&mut lines, conn, task_id, now)?;
    if let Some(assignee) = task.assignee().filter(|a| !a.is_empty()) {
        let rows = recent_work_by(conn, &assignee, task_id)?;
        recent_work(&mut lines, &assignee, &rows, now);
    }
    comment_thread(&mut lines, &list_comments(conn, task_id)?, now);
    let text = lines.join("\n");
    Ok(format!("{}\n", text.trim_end()))
}

/// Title line and the task's fields (assignee, status, workspace, limits).
fn header(lines: &mut Vec<String>, task: &Task, terminal_timeout: Option<&str>) {
    let r = &task.0;
    lines.push(format!(
        "# Kanban task {}: {}",
        task.id(),
        r.s("title").unwrap_or_default()
    ));
    lines.push(String::new());
    lines.push(format!(
        "Assignee: {}",
        task.assignee()
            .filter(|a| !a.is_empty())
            .unwrap_or("(unassigned)".into())
    ));
    lines.push(format!("Status:   {}", task.status()));
    if let Some(t) = r.s("tenant").filter(|t| !t.is_empty()) {
        lines.push(format!("Tenant:   {t}"));
    }
    lines.push(format!(
        "Workspace: {} @ {}",
        r.s("workspace_kind").unwrap_or_default(),
        r.s("workspace_path")
            .filter(|p| !p.is_empty())
            .unwrap_or("(unresolved)".into())
    ));
    if let Some(mr) = r.i("max_runtime_seconds") {
        lines.push(format!("Max runtime: {mr}s"));
        if let Some(e) = effective_terminal_timeout(mr, terminal_timeout) {
            lines.push(format!("Terminal timeout: {e}s"));
        }
    }
    if let Some(b) = r.s("branch_name").filter(|b| !b.is_empty()) {
        lines.push(format!("Branch:   {b}"));
    }
    lines.push(String::new());
}

/// The terminal timeout the dispatcher gives a worker with a runtime limit:
/// `TERMINAL_TIMEOUT` lowered to leave [`TERMINAL_TIMEOUT_GRACE`] seconds of
/// the limit, never raised.
fn effective_terminal_timeout(max_runtime: i64, terminal_timeout: Option<&str>) -> Option<String> {
    let existing: i64 = terminal_timeout
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let desired = (max_runtime - TERMINAL_TIMEOUT_GRACE).max(1);
    let override_ = (max_runtime > 0 && existing < desired).then(|| desired.to_string());
    override_
        .or(terminal_timeout.map(str::to_string))
        .filter(|e| !e.is_empty())
}

fn body(lines: &mut Vec<String>, task: &Task) {
    if let Some(body) = task.0.s("body").filter(|b| !py_strip(b).is_empty()) {
        lines.push("## Body".into());
        lines.push(cap(Some(&body), CTX_MAX_BODY));
        lines.push(String::new());
    }
}

fn attachments(lines: &mut Vec<String>, atts: &[Row]) {
    if atts.is_empty() {
        return;
    }
    lines.push("## Attachments".into());
    lines.push(
        "Files attached to this task. Read them with the file/terminal tools at the absolute paths below:"
            .into(),
    );
    for a in atts {
        let size = a.i("size").unwrap_or(0);
        let kb = if size != 0 {
            ((size + 1023) / 1024).max(1)
        } else {
            0
        };
        let size_str = if kb != 0 {
            format!(", {kb} KB")
        } else {
            String::new()
        };
        let ctype = a
            .s("content_type")
            .filter(|c| !c.is_empty())
            .map(|c| format!(", {c}"))
            .unwrap_or_default();
        lines.push(format!(
            "- `{}`{ctype}{size_str} → `{}`",
            a.s("filename").unwrap_or_default(),
            a.s("stored_path").unwrap_or_default()
        ));
    }
    lines.push(String::new());
}

/// The task's own ended runs, the most recent [`CTX_MAX_PRIOR_ATTEMPTS`].
fn prior_attempts(lines: &mut Vec<String>, runs: Vec<Row>, now: i64) {
    let prior: Vec<Row> = runs
        .into_iter()
        .filter(|r| r.i("ended_at").is_some())
        .collect();
    let omitted = prior.len().saturating_sub(CTX_MAX_PRIOR_ATTEMPTS);
    let shown = &prior[omitted..];
    if shown.is_empty() {
        return;
    }
    lines.push("## Prior attempts on this task".into());
    if omitted > 0 {
        lines.push(omitted_note(omitted, "attempt", shown.len()));
    }
    for (off, run) in shown.iter().enumerate() {
        let ts_disp = when(run.i("started_at").unwrap_or(0), now);
        let profile = run
            .s("profile")
            .filter(|p| !p.is_empty())
            .unwrap_or("(unknown)".into());
        let outcome = run
            .s("outcome")
            .filter(|o| !o.is_empty())
            .or(run.s("status"))
            .unwrap_or_default();
        lines.push(format!(
            "### Attempt {} — {outcome} ({profile}, {ts_disp})",
            omitted + 1 + off
        ));
        if let Some(s) = run.s("summary").filter(|s| !py_strip(s).is_empty()) {
            lines.push(cap(Some(&s), CTX_MAX_FIELD));
        }
        if let Some(e) = run.s("error").filter(|s| !py_strip(s).is_empty()) {
            lines.push(format!("_error_: {}", cap(Some(&e), CTX_MAX_FIELD)));
        }
        let meta = run_metadata(run);
        if truthy(&meta) {
            lines.push(metadata_line(&meta));
        }
        lines.push(String::new());
    }
}

/// Each finished parent's handoff: its latest completed run's summary and
/// metadata, else the task's `result`.
fn parent_results(
    lines: &mut Vec<String>,
    conn: &Connection,
    task_id: &str,
    now: i64,
) -> KanbanResult<()> {
    let mut wrote_header = false;
    for pid in parent_ids(conn, task_id)? {
        let Some(pt) = get_task(conn, &pid)? else {
            continue;
        };
        if pt.status() != Status::Done {
            continue;
        }
        let mut runs: Vec<Row> = list_runs(conn, &pid)?
            .into_iter()
            .filter(|r| r.s("outcome").as_deref() == Some("completed"))
            .collect();
        // Python: stable sort by started_at descending.
        runs.sort_by_key(|r| std::cmp::Reverse(r.i("started_at").unwrap_or(0)));
        let run = runs.first();
        if !wrote_header {
            lines.push("## Parent task results".into());
            lines.push("_Handoffs from upstream tasks, captured when each parent completed (see age below). These are point-in-time snapshots, not live state — if a result drives your current work and it's not recent, re-verify against the source before acting on it as current._".into());
            wrote_header = true;
        }
        let done_ts = run
            .and_then(|r| r.i("ended_at").filter(|v| *v != 0))
            .or(pt.0.i("completed_at").filter(|v| *v != 0));
        let age = relative_age(done_ts, now);
        lines.push(if age.is_empty() {
            format!("### {pid}")
        } else {
            format!("### {pid} (completed {age})")
        });
        if let Some(s) = run
            .and_then(|r| r.s("summary"))
            .filter(|s| !py_strip(s).is_empty())
        {
            lines.push(cap(Some(&s), CTX_MAX_FIELD));
        } else if let Some(res) = pt.0.s("result").filter(|s| !s.is_empty()) {
            lines.push(cap(Some(&res), CTX_MAX_FIELD));
        } else {
            lines.push("(no result recorded)".into());
        }
        if let Some(meta) = run.map(run_metadata).filter(truthy) {
            lines.push(metadata_line(&meta));
        }
        lines.push(String::new());
    }
    Ok(())
}

/// What the assignee recently finished elsewhere (one line per run).
fn recent_work(lines: &mut Vec<String>, assignee: &str, rows: &[Row], now: i64) {
    if rows.is_empty() {
        return;
    }
    lines.push(format!("## Recent work by @{assignee}"));
    for row in rows {
        let ts_disp = when(row.i("ended_at").unwrap_or(0), now);
        let s = row.s("summary").unwrap_or_default();
        let s = py_strip(&s);
        let first = if s.is_empty() {
            "(no summary)".to_string()
        } else {
            take_chars(first_line(s), 200)
        };
        lines.push(format!(
            "- {} — {} ({ts_disp}): {first}",
            row.s("id").unwrap_or_default(),
            row.s("title").unwrap_or_default()
        ));
    }
    lines.push(String::new());
}

/// The most recent [`CTX_MAX_COMMENTS`] comments, oldest first.
fn comment_thread(lines: &mut Vec<String>, comments: &[Row], now: i64) {
    let omitted = comments.len().saturating_sub(CTX_MAX_COMMENTS);
    let shown = &comments[omitted..];
    if shown.is_empty() {
        return;
    }
    lines.push("## Comment thread".into());
    if omitted > 0 {
        lines.push(omitted_note(omitted, "comment", shown.len()));
    }
    for c in shown {
        let ts_disp = when(c.i("created_at").unwrap_or(0), now);
        let author = c.s("author").unwrap_or_default().replace('`', "");
        lines.push(format!("comment from worker `{author}` at {ts_disp}:"));
        lines.push(cap(c.s("body").as_deref(), CTX_MAX_COMMENT));
        lines.push(String::new());
    }
}

/// `_(3 earlier attempts omitted; showing most recent 10)_`.
fn omitted_note(omitted: usize, noun: &str, shown: usize) -> String {
    format!(
        "_({omitted} earlier {noun}{} omitted; showing most recent {shown})_",
        if omitted != 1 { "s" } else { "" }
    )
}

fn metadata_line(meta: &Value) -> String {
    format!(
        "_metadata_: `{}`",
        cap(Some(&py_json_sorted(meta)), CTX_MAX_FIELD)
    )
}

/// `2025-01-31 14:05, 3h ago`: local time and age.
fn when(ts: i64, now: i64) -> String {
    let age = relative_age(Some(ts), now);
    let ts = local_ts(ts);
    if age.is_empty() {
        ts
    } else {
        format!("{ts}, {age}")
    }
}

fn relative_age(ts: Option<i64>, now: i64) -> String {
    let Some(ts) = ts else { return String::new() };
    let d = now - ts;
    if d < 60 {
        "just now".into()
    } else if d < 3600 {
        format!("{}m ago", d / 60)
    } else if d < 86400 {
        format!("{}h ago", d / 3600)
    } else {
        format!("{}d ago", d / 86400)
    }
}

/// A stripped field cut to `limit` characters with Hermes' truncation marker.
fn cap(s: Option<&str>, limit: usize) -> String {
    let Some(s) = s else { return String::new() };
    let s = py_strip(s);
    let n = py_len(s);
    if n <= limit {
        return s.to_string();
    }
    format!(
        "{}… [truncated, {} chars omitted]",
        take_chars(s, limit),
        n - limit
    )
}
