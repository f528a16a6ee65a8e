//! One handler per kanban tool: run the operation for a parsed [`Call`] and
//! shape Hermes' result JSON or error text (hermes-agent:
//! `tools/kanban_tools.py`, `_handle_*`). Checks Hermes makes after the
//! database is open live here; the earlier ones are in `args::parse`.

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use crate::redact::{redact_json_value, redact_sensitive_text};
use crate::server::ToolOutput;
use crate::toolsets::kanban::args::{BlockArgs, Call, CompleteArgs, CreateArgs, ListArgs};
use crate::toolsets::kanban::env::KEnv;
use crate::toolsets::kanban::error::{KanbanError, KanbanResult};
use crate::toolsets::kanban::ops::VALID_BLOCK_KINDS;
use crate::toolsets::kanban::ops::complete::{CompleteOutcome, Completion, complete_task};
use crate::toolsets::kanban::ops::context::build_worker_context;
use crate::toolsets::kanban::ops::create::{
    NewTask, add_comment, add_notify_sub, create_task, link_tasks,
};
use crate::toolsets::kanban::ops::lifecycle::{
    block_task, heartbeat_claim, heartbeat_worker, recompute_ready, unblock_task,
};
use crate::toolsets::kanban::ops::read::{ListFilter, list_tasks};
use crate::toolsets::kanban::paths::KanbanPaths;
use crate::toolsets::kanban::status::Status;
use crate::toolsets::kanban::store::{
    child_ids, event_payload, get_task, latest_run_id, list_comments, list_events, list_runs,
    parent_ids, run_metadata,
};
use crate::toolsets::kanban::util::{claimer_id, py_list, py_repr, py_strip};

const LIST_DEFAULT_LIMIT: i64 = 50;
const LIST_MAX_LIMIT: i64 = 200;

/// What a handler needs besides its arguments.
pub(crate) struct Env<'a> {
    pub(crate) kenv: &'a KEnv,
    pub(crate) paths: &'a KanbanPaths,
    /// See `OpenDb::recomputed_at` in `mod.rs`.
    pub(crate) recomputed_at: &'a mut Option<(i64, u64)>,
}

/// Run `call` on `c`.
pub(crate) fn run(c: &Connection, call: Call, env: Env) -> KanbanResult<ToolOutput> {
    let kenv = env.kenv;
    match call {
        Call::Show { task_id } => show(c, &task_id, kenv),
        Call::List(a) => list(c, a, env.recomputed_at),
        Call::Complete { task_id, args } => complete(c, &task_id, args, kenv, env.paths),
        Call::Block(a) => block(c, a, kenv),
        Call::Heartbeat { task_id, note } => heartbeat(c, &task_id, note, kenv),
        Call::Comment { task_id, body } => {
            let body = redact_sensitive_text(&body);
            let id = add_comment(c, &task_id, &kenv.author(), &body)?;
            Ok(ok(json!({"task_id": task_id, "comment_id": id})))
        }
        Call::Create(a) => create(c, a, kenv, env.paths),
        Call::Unblock { task_id } => Ok(match unblock_task(c, &task_id)? {
            None => ToolOutput::error(format!(
                "could not unblock {task_id} (not blocked or unknown)"
            )),
            Some(s) => ok(json!({"task_id": task_id, "status": s})),
        }),
        Call::Link {
            parent_id,
            child_id,
        } => {
            link_tasks(c, &parent_id, &child_id)?;
            Ok(ok(json!({"parent_id": parent_id, "child_id": child_id})))
        }
    }
}

/// `{"ok": true, ...fields}`.
fn ok(fields: Value) -> ToolOutput {
    let mut m = Map::new();
    m.insert("ok".into(), Value::Bool(true));
    if let Value::Object(f) = fields {
        m.extend(f);
    }
    ToolOutput::json(Value::Object(m))
}

fn show(c: &Connection, tid: &str, kenv: &KEnv) -> KanbanResult<ToolOutput> {
    let Some(task) = get_task(c, tid)? else {
        return Ok(ToolOutput::error(format!("task {tid} not found")));
    };
    let mut t = Map::new();
    for k in [
        "id",
        "title",
        "body",
        "assignee",
        "status",
        "tenant",
        "priority",
        "workspace_kind",
        "workspace_path",
        "created_by",
        "created_at",
        "started_at",
        "completed_at",
        "result",
        "current_run_id",
        "model_override",
    ] {
        t.insert(k.into(), task.field(k));
    }
    let comments: Vec<Value> = list_comments(c, tid)?
        .iter()
        .map(|r| json!({"author": r.j("author"), "body": r.j("body"), "created_at": r.j("created_at")}))
        .collect();
    let events = list_events(c, tid)?;
    let skip = events.len().saturating_sub(50);
    let events: Vec<Value> = events[skip..]
        .iter()
        .map(|r| {
            json!({"kind": r.j("kind"), "payload": event_payload(r),
                   "created_at": r.j("created_at"), "run_id": r.j("run_id")})
        })
        .collect();
    let runs: Vec<Value> = list_runs(c, tid)?
        .iter()
        .map(|r| {
            json!({"id": r.j("id"), "profile": r.j("profile"), "status": r.j("status"),
                   "outcome": r.j("outcome"), "summary": r.j("summary"), "error": r.j("error"),
                   "metadata": run_metadata(r), "started_at": r.j("started_at"),
                   "ended_at": r.j("ended_at")})
        })
        .collect();
    let ctx_text = build_worker_context(c, tid, kenv.terminal_timeout.as_deref())?;
    Ok(ToolOutput::json(json!({
        "task": t,
        "parents": parent_ids(c, tid)?,
        "children": child_ids(c, tid)?,
        "comments": comments,
        "events": events,
        "runs": runs,
        "worker_context": ctx_text,
    })))
}

fn list(
    c: &Connection,
    a: ListArgs,
    recomputed_at: &mut Option<(i64, u64)>,
) -> KanbanResult<ToolOutput> {
    let limit = match a.limit {
        None => LIST_DEFAULT_LIMIT,
        Some(Some(n)) => n,
        Some(None) => return Ok(ToolOutput::error("limit must be an integer")),
    };
    if limit < 1 {
        return Ok(ToolOutput::error("limit must be >= 1"));
    }
    if limit > LIST_MAX_LIMIT {
        return Ok(ToolOutput::error(format!(
            "limit must be <= {LIST_MAX_LIMIT}"
        )));
    }
    let promoted = promote_if_changed(c, recomputed_at)?;
    let rows = list_tasks(
        c,
        &ListFilter {
            assignee: a.assignee.as_deref(),
            status: a.status.as_ref(),
            tenant: a.tenant.as_deref(),
            include_archived: a.include_archived,
            limit: limit + 1,
        },
    )?;
    let truncated = rows.len() as i64 > limit;
    let mut tasks = Vec::new();
    for t in rows.iter().take(limit as usize) {
        let id = t.id();
        let parents = parent_ids(c, &id)?;
        let children = child_ids(c, &id)?;
        let mut m = Map::new();
        for k in [
            "id",
            "title",
            "assignee",
            "status",
            "priority",
            "tenant",
            "workspace_kind",
            "workspace_path",
            "project_id",
            "created_by",
            "created_at",
            "started_at",
            "completed_at",
            "current_run_id",
            "model_override",
        ] {
            m.insert(k.into(), t.field(k));
        }
        // Hermes' key order: ..., parents, children, parent_count, child_count.
        m.insert("parent_count".into(), json!(parents.len()));
        m.insert("child_count".into(), json!(children.len()));
        m.insert("parents".into(), json!(parents));
        m.insert("children".into(), json!(children));
        for k in ["parent_count", "child_count"] {
            if let Some(v) = m.shift_remove(k) {
                m.insert(k.into(), v);
            }
        }
        tasks.push(Value::Object(m));
    }
    // The rows are done with; the tasks move into the answer (`json!` would
    // copy them: it serializes what it is given).
    drop(rows);
    let count = tasks.len();
    let mut out = Map::new();
    out.insert("tasks".into(), Value::Array(tasks));
    let next_limit = if truncated && limit < LIST_MAX_LIMIT {
        json!((limit * 2).min(LIST_MAX_LIMIT))
    } else {
        Value::Null
    };
    for (k, v) in [
        ("count", json!(count)),
        ("limit", json!(limit)),
        ("truncated", json!(truncated)),
        ("next_limit", next_limit),
        ("promoted", json!(promoted)),
    ] {
        out.insert(k.into(), v);
    }
    Ok(ToolOutput::json(Value::Object(out)))
}

/// `recompute_ready`, skipped while `(PRAGMA data_version, total_changes)`
/// is what it was after the last run: nobody has written since, so nothing
/// new can be promoted.
fn promote_if_changed(c: &Connection, recomputed_at: &mut Option<(i64, u64)>) -> KanbanResult<i64> {
    let version = |c: &Connection| -> KanbanResult<(i64, u64)> {
        let dv: i64 = c.query_row("PRAGMA data_version", [], |r| r.get(0))?;
        Ok((dv, c.total_changes()))
    };
    if *recomputed_at == Some(version(c)?) {
        return Ok(0);
    }
    let n = recompute_ready(c)?;
    *recomputed_at = Some(version(c)?);
    Ok(n)
}

/// Redacted text; an empty string stays empty.
fn redacted(s: Option<String>) -> Option<String> {
    s.map(|s| {
        if s.is_empty() {
            String::new()
        } else {
            redact_sensitive_text(&s)
        }
    })
}

/// Stripped, non-empty entries.
fn stripped(list: Vec<String>) -> Vec<String> {
    list.into_iter()
        .map(|s| py_strip(&s).to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn complete(
    c: &Connection,
    tid: &str,
    a: CompleteArgs,
    kenv: &KEnv,
    paths: &KanbanPaths,
) -> KanbanResult<ToolOutput> {
    let summary = redacted(a.summary);
    let result = redacted(a.result);
    let mut metadata = a.metadata.map(|m| match m {
        Value::Object(_) => redact_json_value(&m),
        other => other,
    });
    let created_cards = a.created_cards.map(stripped);
    let artifacts = a.artifacts.map(stripped).unwrap_or_default();
    if !artifacts.is_empty() {
        let meta = metadata.get_or_insert_with(|| json!({}));
        let Value::Object(m) = meta else {
            return Ok(ToolOutput::error("metadata must be an object/dict"));
        };
        merge_artifacts(m, artifacts);
    }
    let has = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.is_empty());
    if !(has(&summary) || has(&result)) {
        return Ok(ToolOutput::error(
            "provide at least one of: summary (preferred), result",
        ));
    }
    if kenv.task.as_deref() == Some(tid)
        && let Some(sid) = &kenv.session_id
    {
        let meta = metadata.get_or_insert_with(|| json!({}));
        if let Value::Object(m) = meta {
            m.insert("worker_session_id".into(), json!(sid));
        }
    }
    // Goal-mode tasks: Hermes asks an auxiliary judge when one is reachable and
    // fails open otherwise; this server has no judge model, so it fails open.
    let out = match complete_task(
        c,
        tid,
        Completion {
            result: result.as_deref(),
            summary: summary.as_deref(),
            metadata,
            created_cards,
            expected_run_id: kenv.worker_run_id(tid),
            paths: Some(paths),
        },
    ) {
        Err(KanbanError::Artifact(e)) => {
            return Ok(ToolOutput::error(format!(
                "kanban_complete could not preserve the declared artifacts: {e}. Your task is still in-flight and its scratch workspace was kept. Fix the artifact path or storage error, then retry kanban_complete with the same handoff."
            )));
        }
        other => other?,
    };
    Ok(match out {
        CompleteOutcome::Phantom(ids) => ToolOutput::error(format!(
            "kanban_complete blocked: the following created_cards do not exist or were not created by this worker: {}. Your task is still in-flight (no state change). Retry kanban_complete with the same summary/metadata and either drop these ids from created_cards, or pass created_cards=[] to skip the card-claim check entirely.",
            ids.join(", ")
        )),
        CompleteOutcome::NotApplied => ToolOutput::error(format!(
            "could not complete {tid} (unknown id or already terminal)"
        )),
        CompleteOutcome::Done => ok(json!({"task_id": tid, "run_id": latest_run_id(c, tid)?})),
    })
}

/// The `artifacts` argument joins `metadata.artifacts` (stripped, de-duplicated,
/// existing entries first).
fn merge_artifacts(m: &mut Map<String, Value>, artifacts: Vec<String>) {
    match m.get("artifacts") {
        Some(Value::Array(existing)) => {
            let mut merged: Vec<String> = Vec::new();
            for item in existing
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .chain(artifacts)
            {
                let s = py_strip(&item).to_string();
                if !s.is_empty() && !merged.contains(&s) {
                    merged.push(s);
                }
            }
            m.insert("artifacts".into(), json!(merged));
        }
        _ => {
            m.insert("artifacts".into(), json!(artifacts));
        }
    }
}

fn block(c: &Connection, a: BlockArgs, kenv: &KEnv) -> KanbanResult<ToolOutput> {
    let tid = a.task_id.as_str();
    let reason = redact_sensitive_text(&a.reason);
    let kind = a.kind.as_deref();
    if let Some(k) = kind
        && !VALID_BLOCK_KINDS.contains(&k)
    {
        return Ok(ToolOutput::error(format!(
            "kind must be one of {} (or omit it)",
            py_list(VALID_BLOCK_KINDS)
        )));
    }
    if let Some(task) = get_task(c, tid)?
        && task.goal_mode()
        && !matches!(kind, Some("dependency") | Some("needs_input"))
    {
        let got = kind.map(py_repr).unwrap_or_else(|| "None".into());
        return Ok(ToolOutput::error(format!(
            "goal_mode tasks can only block with kind in ['dependency', 'needs_input'] (got {got}). If the task is actually finished or cannot proceed for another reason, call kanban_complete instead — the completion judge will evaluate it."
        )));
    }
    match block_task(c, tid, Some(&reason), kind, kenv.worker_run_id(tid))? {
        None => Ok(ToolOutput::error(format!(
            "could not block {tid} (unknown id or not in running/ready)"
        ))),
        Some(landed) => Ok(ok(json!({
            "task_id": tid,
            "run_id": latest_run_id(c, tid)?,
            "status": get_task(c, tid)?.map(|t| t.status()).unwrap_or(landed),
            "block_kind": kind,
        }))),
    }
}

fn heartbeat(
    c: &Connection,
    tid: &str,
    note: Option<String>,
    kenv: &KEnv,
) -> KanbanResult<ToolOutput> {
    let note = note
        .filter(|n| !n.is_empty())
        .map(|n| redact_sensitive_text(&n));
    let claimer = kenv.claim_lock.clone().unwrap_or_else(claimer_id);
    let extended = heartbeat_claim(c, tid, &claimer, kenv.claim_ttl)?;
    if !heartbeat_worker(c, tid, note.as_deref(), kenv.worker_run_id(tid))? {
        return Ok(ToolOutput::error(format!(
            "could not heartbeat {tid} (unknown id or not running)"
        )));
    }
    let mut fields = json!({
        "task_id": tid,
        "claim_extended": extended.is_some(),
        "claim_expires": extended,
    });
    if extended.is_none() {
        fields["claim_note"] = json!(if kenv.claim_lock.is_none() {
            "claim not extended: HERMES_KANBAN_CLAIM_LOCK is not set in this server's environment, so the dispatcher may reclaim the task when its claim expires"
        } else {
            "claim not extended: HERMES_KANBAN_CLAIM_LOCK does not match the task's current claim (it was reclaimed or claimed by someone else)"
        });
    }
    Ok(ok(fields))
}

fn create(
    c: &Connection,
    a: CreateArgs,
    kenv: &KEnv,
    paths: &KanbanPaths,
) -> KanbanResult<ToolOutput> {
    let mut workspace_kind = a.workspace_kind;
    let mut workspace_path = a.workspace_path;
    // A worker's follow-up task inherits the worker's workspace by default.
    if workspace_kind.is_none()
        && workspace_path.is_none()
        && let Some(own) = &kenv.task
        && let Some(t) = get_task(c, own)?
        && let Some(k) = t.0.s("workspace_kind").filter(|k| !k.is_empty())
    {
        workspace_kind = Some(k);
        workspace_path = t.0.s("workspace_path");
    }
    let board = paths.board_slug(a.board.as_deref())?;
    let new = NewTask {
        title: a.title,
        body: a.body,
        assignee: Some(a.assignee),
        created_by: Some(kenv.author()),
        workspace_kind: workspace_kind.unwrap_or_else(|| "scratch".into()),
        workspace_path,
        tenant: a
            .tenant
            .filter(|t| !t.is_empty())
            .or_else(|| kenv.tenant.clone()),
        priority: a.priority.unwrap_or(0),
        parents: a.parents,
        triage: a.triage,
        idempotency_key: a.idempotency_key,
        max_runtime_seconds: a.max_runtime_seconds,
        skills: a.skills,
        goal_mode: a.goal_mode,
        goal_max_turns: a.goal_max_turns,
        initial_status: a
            .initial_status
            .filter(|s| !s.is_empty())
            .map_or(Status::Running, |s| Status::from(s.as_str())),
        session_id: kenv.session_id.clone(),
        board_default_workdir: paths.board_default_workdir(&board),
    };
    let (id, _created) = create_task(c, new)?;
    let status = get_task(c, &id)?.map(|t| t.status());
    let subscribed = maybe_auto_subscribe(c, &id, kenv);
    Ok(ok(
        json!({"task_id": id, "status": status, "subscribed": subscribed}),
    ))
}

/// `_maybe_auto_subscribe`: a gateway session (platform + chat id) or a TUI
/// session (`HERMES_SESSION_KEY`) is subscribed to the new task's events.
fn maybe_auto_subscribe(c: &Connection, id: &str, kenv: &KEnv) -> bool {
    if !kenv.auto_subscribe {
        return false;
    }
    let (platform, chat) = match (&kenv.session_platform, &kenv.session_chat_id) {
        (Some(p), Some(ch)) => (p.clone(), ch.clone()),
        _ => match &kenv.session_key {
            Some(k) => ("tui".to_string(), k.clone()),
            None => return false,
        },
    };
    let notifier = kenv
        .session_profile
        .clone()
        .or_else(|| kenv.profile.clone());
    match add_notify_sub(
        c,
        id,
        &platform,
        &chat,
        kenv.session_thread_id.as_deref(),
        kenv.session_user_id.as_deref(),
        notifier.as_deref(),
    ) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!("kanban auto-subscribe failed: {e}");
            false
        }
    }
}
