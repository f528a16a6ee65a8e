//! Hermes' `kanban` toolset (`tools/kanban_tools.py`) on Hermes' own
//! `kanban.db`: the nine tools a dispatcher-spawned worker or an orchestrator
//! profile uses, with Hermes' schemas, gating, defaults, results and errors.
//!
//! The database is opened on the first kanban call (never in `tools()`), one
//! connection per DB path kept for the server's life; every SQLite call runs
//! on tokio's blocking pool.

pub mod db;
pub mod ops;
pub mod paths;
mod schemas;
pub mod workspace;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use crate::hermes::Context;
use crate::hermes::envvars as ev;
use crate::redact::{redact_json_value, redact_sensitive_text};
use crate::server::args::ArgsExt;
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};
use db::{DbError, DbResult};
use ops::py_strip;
use paths::KanbanPaths;

pub const LIST_DEFAULT_LIMIT: i64 = 50;
pub const LIST_MAX_LIMIT: i64 = 200;

/// Tools hidden from dispatcher-spawned workers.
const ORCHESTRATOR_TOOLS: &[&str] = &["kanban_list", "kanban_unblock"];

#[derive(Default)]
pub struct KanbanToolset {
    /// One connection per DB path, opened on first use on the blocking pool.
    conns: Mutex<HashMap<PathBuf, Arc<Mutex<Option<OpenDb>>>>>,
}

impl KanbanToolset {
    pub fn new() -> Self {
        Self::default()
    }
}

/// A cached connection and the file identity it was opened on.
struct OpenDb {
    conn: Connection,
    id: Option<(u64, u64)>,
    /// `(PRAGMA data_version, total_changes)` after the last `recompute_ready`
    /// that kanban_list ran: while both are unchanged, nobody (other
    /// connections or this one) has written, so nothing new can be promoted.
    recomputed_at: Option<(i64, u64)>,
}

fn file_id(p: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// `"kanban" in config["toolsets"]` with Python's `in` semantics.
pub fn profile_has_kanban_toolset(ctx: &Context) -> bool {
    match ctx.config().get("toolsets") {
        Some(Value::Array(a)) => a.iter().any(|v| v == "kanban"),
        Some(Value::String(s)) => s.contains("kanban"),
        Some(Value::Object(m)) => m.contains_key("kanban"),
        _ => false,
    }
}

fn orchestrator_only(tool: &str) -> String {
    format!(
        "{tool} is orchestrator-only; dispatcher-spawned workers must use kanban_complete, kanban_block, kanban_heartbeat, or kanban_comment for their assigned task."
    )
}

/// Everything a call reads from the environment, snapshotted on the async side.
#[derive(Debug, Clone, Default)]
pub struct KEnv {
    pub task: Option<String>,
    pub run_id: Option<String>,
    pub claim_lock: Option<String>,
    pub profile: Option<String>,
    pub session_id: Option<String>,
    pub tenant: Option<String>,
    pub claim_ttl: i64,
    pub busy_timeout_ms: u64,
    pub terminal_timeout: Option<String>,
    pub session_platform: Option<String>,
    pub session_chat_id: Option<String>,
    pub session_thread_id: Option<String>,
    pub session_user_id: Option<String>,
    pub session_key: Option<String>,
    pub session_profile: Option<String>,
    pub auto_subscribe: bool,
}

fn positive(v: Option<String>) -> Option<i64> {
    v.and_then(|s| s.trim().parse::<i64>().ok())
        .filter(|n| *n > 0)
}

impl KEnv {
    pub fn from_ctx(ctx: &Context) -> Self {
        let g = |n: &str| ctx.env.get(n);
        let auto = match ctx.config().get("kanban.auto_subscribe_on_create") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Number(n)) => n.as_f64() != Some(0.0),
            Some(Value::Array(a)) => !a.is_empty(),
            Some(Value::Object(m)) => !m.is_empty(),
            Some(Value::Null) => false,
        };
        KEnv {
            task: g(ev::HERMES_KANBAN_TASK),
            run_id: g(ev::HERMES_KANBAN_RUN_ID),
            claim_lock: g(ev::HERMES_KANBAN_CLAIM_LOCK),
            profile: g(ev::HERMES_PROFILE),
            session_id: g(ev::HERMES_SESSION_ID),
            tenant: g(ev::HERMES_TENANT),
            claim_ttl: positive(g(ev::HERMES_KANBAN_CLAIM_TTL_SECONDS))
                .unwrap_or(ops::DEFAULT_CLAIM_TTL_SECONDS),
            busy_timeout_ms: positive(g(ev::HERMES_KANBAN_BUSY_TIMEOUT_MS))
                .map(|v| v as u64)
                .unwrap_or(db::DEFAULT_BUSY_TIMEOUT_MS),
            terminal_timeout: g(ev::TERMINAL_TIMEOUT),
            session_platform: g(ev::HERMES_SESSION_PLATFORM),
            session_chat_id: g(ev::HERMES_SESSION_CHAT_ID),
            session_thread_id: g(ev::HERMES_SESSION_THREAD_ID),
            session_user_id: g(ev::HERMES_SESSION_USER_ID),
            session_key: g(ev::HERMES_SESSION_KEY),
            session_profile: g(ev::HERMES_SESSION_PROFILE),
            auto_subscribe: auto,
        }
    }

    /// `_default_task_id`: the argument when non-empty, else `HERMES_KANBAN_TASK`.
    fn task_id(&self, arg: Option<&str>) -> Option<String> {
        arg.filter(|a| !a.is_empty())
            .map(str::to_string)
            .or_else(|| self.task.clone())
    }

    /// `_enforce_worker_task_ownership`.
    fn ownership(&self, tid: &str) -> Result<(), ToolOutput> {
        match &self.task {
            Some(own) if own != tid => Err(ToolOutput::error(format!(
                "worker is scoped to task {own}; refusing to mutate {tid}. Use kanban_comment to hand off information to other tasks, or kanban_create to spawn follow-up work."
            ))),
            _ => Ok(()),
        }
    }

    /// `_worker_run_id`: the dispatcher's run id, only for the worker's own task.
    fn worker_run_id(&self, tid: &str) -> Option<i64> {
        if self.task.as_deref() != Some(tid) {
            return None;
        }
        self.run_id.as_deref().and_then(|r| r.trim().parse().ok())
    }

    fn author(&self) -> String {
        self.profile.clone().unwrap_or_else(|| "worker".into())
    }
}

fn ok(fields: Value) -> ToolOutput {
    let mut m = Map::new();
    m.insert("ok".into(), Value::Bool(true));
    if let Value::Object(f) = fields {
        m.extend(f);
    }
    ToolOutput::json(Value::Object(m))
}

fn fail(tool: &str, e: DbError) -> ToolOutput {
    if !matches!(e, DbError::Value(_)) {
        tracing::warn!("{tool} failed: {e}");
    }
    ToolOutput::error(format!("{tool}: {e}"))
}

impl Toolset for KanbanToolset {
    fn name(&self) -> &'static str {
        "kanban"
    }

    fn defs(&self) -> &'static [ToolDef] {
        schemas::DEFS
    }

    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        let name = def.name;
        let worker = ctx.env.get(ev::HERMES_KANBAN_TASK).is_some();
        let has_toolset = profile_has_kanban_toolset(ctx);
        let config = ctx.home.config_path();
        let availability = if ORCHESTRATOR_TOOLS.contains(&name) {
            if worker {
                Availability::Unavailable(orchestrator_only(name))
            } else if has_toolset {
                Availability::Available
            } else {
                Availability::Unavailable(format!(
                    "orchestrator tool: add `kanban` to `toolsets:` in {}",
                    config.display()
                ))
            }
        } else if worker || has_toolset {
            Availability::Available
        } else {
            Availability::Unavailable(format!(
                "set HERMES_KANBAN_TASK (a dispatcher-spawned worker) or add `kanban` to `toolsets:` in {}",
                config.display()
            ))
        };
        def.entry(availability)
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let kenv = KEnv::from_ctx(ctx);
            let paths = KanbanPaths::from_env(&ctx.env, &ctx.home);
            let tool = call.name;
            let args = call.args;
            // Checks that need no database come first, as in Hermes' handlers.
            let pre = match precheck(&tool, &args, &kenv) {
                Ok(p) => p,
                Err(out) => return out,
            };
            let db_path = match paths.db_path(args.str_arg("board")) {
                Ok(p) => p,
                Err(e) => return ToolOutput::error(format!("{tool}: {e}")),
            };
            let conn = {
                let mut map = self.conns.lock().unwrap();
                map.entry(db_path.clone()).or_default().clone()
            };
            let busy = kenv.busy_timeout_ms;
            let res = tokio::task::spawn_blocking(move || {
                let mut guard = conn.lock().unwrap_or_else(|p| p.into_inner());
                // A board file that was removed or replaced (archived board,
                // re-initialized DB) is reopened, never written through a
                // handle to the old inode.
                let now_id = file_id(&db_path);
                if guard
                    .as_ref()
                    .is_some_and(|o| o.id != now_id || now_id.is_none())
                {
                    *guard = None;
                    db::forget(&db_path);
                }
                if guard.is_none() {
                    match db::open(&db_path, busy) {
                        Ok(conn) => {
                            *guard = Some(OpenDb {
                                conn,
                                id: file_id(&db_path),
                                recomputed_at: None,
                            })
                        }
                        Err(e) => return fail(&tool, e),
                    }
                }
                let open = guard.as_mut().expect("connection");
                let out = run(
                    &tool,
                    &open.conn,
                    &args,
                    &kenv,
                    &paths,
                    pre,
                    &mut open.recomputed_at,
                );
                let c = &open.conn;
                if !c.is_autocommit() {
                    // Never carry a snapshot or lock into the next call.
                    tracing::warn!("{tool} left a transaction open; rolling it back");
                    let _ = c.execute_batch("ROLLBACK");
                }
                out
            })
            .await;
            res.unwrap_or_else(|e| ToolOutput::error(format!("kanban call failed: {e}")))
        })
    }
}

/// Values prepared before the database is touched.
struct Pre {
    tid: String,
}

fn precheck(tool: &str, args: &Map<String, Value>, kenv: &KEnv) -> Result<Pre, ToolOutput> {
    let need_tid = |kenv: &KEnv| -> Result<String, ToolOutput> {
        kenv.task_id(args.str_arg("task_id")).ok_or_else(|| {
            ToolOutput::error("task_id is required (or set HERMES_KANBAN_TASK in the env)")
        })
    };
    let tid = match tool {
        "kanban_show" => need_tid(kenv)?,
        "kanban_complete" | "kanban_block" | "kanban_heartbeat" => {
            let t = need_tid(kenv)?;
            kenv.ownership(&t)?;
            t
        }
        "kanban_comment" => {
            let t = args.str_arg("task_id").filter(|t| !t.is_empty()).ok_or_else(|| {
                ToolOutput::error(
                    "task_id is required (use the current task id if that's what you mean — pulls from env but kept explicit here)",
                )
            })?;
            if args.str_arg("body").is_none_or(|b| py_strip(b).is_empty()) {
                return Err(ToolOutput::error("body is required"));
            }
            t.to_string()
        }
        "kanban_list" => {
            if kenv.task.is_some() {
                return Err(ToolOutput::error(orchestrator_only(tool)));
            }
            String::new()
        }
        "kanban_unblock" => {
            if kenv.task.is_some() {
                return Err(ToolOutput::error(orchestrator_only(tool)));
            }
            let t = args
                .str_arg("task_id")
                .filter(|t| !t.is_empty())
                .ok_or_else(|| ToolOutput::error("task_id is required"))?;
            kenv.ownership(t)?;
            t.to_string()
        }
        "kanban_create" => {
            if args.str_arg("title").is_none_or(|t| py_strip(t).is_empty()) {
                return Err(ToolOutput::error("title is required"));
            }
            if args.str_arg("assignee").is_none_or(str::is_empty) {
                return Err(ToolOutput::error(
                    "assignee is required — name the profile that should execute this task (the dispatcher will only spawn tasks with an assignee)",
                ));
            }
            String::new()
        }
        "kanban_link" => {
            if args.str_arg("parent_id").is_none_or(str::is_empty)
                || args.str_arg("child_id").is_none_or(str::is_empty)
            {
                return Err(ToolOutput::error(
                    "both parent_id and child_id are required",
                ));
            }
            String::new()
        }
        other => return Err(ToolOutput::error(format!("Unknown tool: {other}"))),
    };
    if tool == "kanban_block"
        && args
            .str_arg("reason")
            .is_none_or(|r| py_strip(r).is_empty())
    {
        return Err(ToolOutput::error(
            "reason is required — explain what input you need",
        ));
    }
    Ok(Pre { tid })
}

fn run(
    tool: &str,
    c: &Connection,
    args: &Map<String, Value>,
    kenv: &KEnv,
    paths: &KanbanPaths,
    pre: Pre,
    recomputed_at: &mut Option<(i64, u64)>,
) -> ToolOutput {
    let r = match tool {
        "kanban_show" => show(c, &pre.tid, kenv),
        "kanban_list" => list(c, args, recomputed_at),
        "kanban_complete" => complete(c, &pre.tid, args, kenv, paths),
        "kanban_block" => block(c, &pre.tid, args, kenv),
        "kanban_heartbeat" => heartbeat(c, &pre.tid, args, kenv),
        "kanban_comment" => {
            let body = redact_sensitive_text(args.str_arg("body").unwrap_or_default());
            ops::add_comment(c, &pre.tid, &kenv.author(), &body)
                .map(|id| ok(json!({"task_id": pre.tid, "comment_id": id})))
        }
        "kanban_create" => create(c, args, kenv, paths),
        "kanban_unblock" => ops::unblock_task(c, &pre.tid).map(|st| match st {
            None => ToolOutput::error(format!(
                "could not unblock {} (not blocked or unknown)",
                pre.tid
            )),
            Some(s) => ok(json!({"task_id": pre.tid, "status": s})),
        }),
        "kanban_link" => {
            let p = args.str_arg("parent_id").unwrap_or_default();
            let ch = args.str_arg("child_id").unwrap_or_default();
            ops::link_tasks(c, p, ch).map(|()| ok(json!({"parent_id": p, "child_id": ch})))
        }
        other => Ok(ToolOutput::error(format!("Unknown tool: {other}"))),
    };
    r.unwrap_or_else(|e| fail(tool, e))
}

fn show(c: &Connection, tid: &str, kenv: &KEnv) -> DbResult<ToolOutput> {
    let Some(task) = ops::get_task(c, tid)? else {
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
    let comments: Vec<Value> = ops::list_comments(c, tid)?
        .iter()
        .map(|r| json!({"author": r.j("author"), "body": r.j("body"), "created_at": r.j("created_at")}))
        .collect();
    let events = ops::list_events(c, tid)?;
    let skip = events.len().saturating_sub(50);
    let events: Vec<Value> = events[skip..]
        .iter()
        .map(|r| {
            json!({"kind": r.j("kind"), "payload": ops::event_payload(r),
                   "created_at": r.j("created_at"), "run_id": r.j("run_id")})
        })
        .collect();
    let runs: Vec<Value> = ops::list_runs(c, tid)?
        .iter()
        .map(|r| {
            json!({"id": r.j("id"), "profile": r.j("profile"), "status": r.j("status"),
                   "outcome": r.j("outcome"), "summary": r.j("summary"), "error": r.j("error"),
                   "metadata": ops::run_metadata(r), "started_at": r.j("started_at"),
                   "ended_at": r.j("ended_at")})
        })
        .collect();
    let ctx_text = ops::build_worker_context(c, tid, kenv.terminal_timeout.as_deref())?;
    Ok(ToolOutput::json(json!({
        "task": t,
        "parents": ops::parent_ids(c, tid)?,
        "children": ops::child_ids(c, tid)?,
        "comments": comments,
        "events": events,
        "runs": runs,
        "worker_context": ctx_text,
    })))
}

fn list(
    c: &Connection,
    args: &Map<String, Value>,
    recomputed_at: &mut Option<(i64, u64)>,
) -> DbResult<ToolOutput> {
    let limit = match args.get("limit") {
        None => LIST_DEFAULT_LIMIT,
        Some(v) => match v.as_i64() {
            Some(n) => n,
            None => return Ok(ToolOutput::error("limit must be an integer")),
        },
    };
    if limit < 1 {
        return Ok(ToolOutput::error("limit must be >= 1"));
    }
    if limit > LIST_MAX_LIMIT {
        return Ok(ToolOutput::error(format!(
            "limit must be <= {LIST_MAX_LIMIT}"
        )));
    }
    let version = |c: &Connection| -> DbResult<(i64, u64)> {
        let dv: i64 = c.query_row("PRAGMA data_version", [], |r| r.get(0))?;
        Ok((dv, c.total_changes()))
    };
    let promoted = if *recomputed_at == Some(version(c)?) {
        0
    } else {
        let n = ops::recompute_ready(c)?;
        *recomputed_at = Some(version(c)?);
        n
    };
    let rows = ops::list_tasks(
        c,
        &ops::ListFilter {
            assignee: args.str_arg("assignee"),
            status: args.str_arg("status"),
            tenant: args.str_arg("tenant"),
            include_archived: args.bool_arg("include_archived").unwrap_or(false),
            limit: limit + 1,
        },
    )?;
    let truncated = rows.len() as i64 > limit;
    let mut tasks = Vec::new();
    for t in rows.iter().take(limit as usize) {
        let id = t.id();
        let parents = ops::parent_ids(c, &id)?;
        let children = ops::child_ids(c, &id)?;
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
        m.insert("parent_count".into(), json!(parents.len()));
        m.insert("child_count".into(), json!(children.len()));
        m.insert("parents".into(), json!(parents));
        m.insert("children".into(), json!(children));
        // Hermes' key order: ..., parents, children, parent_count, child_count.
        let pc = m.shift_remove("parent_count").unwrap();
        let cc = m.shift_remove("child_count").unwrap();
        m.insert("parent_count".into(), pc);
        m.insert("child_count".into(), cc);
        tasks.push(Value::Object(m));
    }
    Ok(ToolOutput::json(json!({
        "tasks": tasks,
        "count": tasks.len(),
        "limit": limit,
        "truncated": truncated,
        "next_limit": if truncated && limit < LIST_MAX_LIMIT { json!((limit * 2).min(LIST_MAX_LIMIT)) } else { Value::Null },
        "promoted": promoted,
    })))
}

fn complete(
    c: &Connection,
    tid: &str,
    args: &Map<String, Value>,
    kenv: &KEnv,
    paths: &KanbanPaths,
) -> DbResult<ToolOutput> {
    let summary = args.str_arg("summary").map(|s| {
        if s.is_empty() {
            String::new()
        } else {
            redact_sensitive_text(s)
        }
    });
    let result = args.str_arg("result").map(|s| {
        if s.is_empty() {
            String::new()
        } else {
            redact_sensitive_text(s)
        }
    });
    let mut metadata = args.get("metadata").map(|m| match m {
        Value::Object(_) => redact_json_value(m),
        other => other.clone(),
    });
    let created_cards = args.get("created_cards").map(|_| {
        args.str_list_arg("created_cards")
            .into_iter()
            .map(|s| py_strip(&s).to_string())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
    });
    if args.contains_key("artifacts") {
        let artifacts: Vec<String> = args
            .str_list_arg("artifacts")
            .into_iter()
            .map(|s| py_strip(&s).to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if !artifacts.is_empty() {
            let meta = metadata.get_or_insert_with(|| json!({}));
            let Value::Object(m) = meta else {
                return Ok(ToolOutput::error("metadata must be an object/dict"));
            };
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
    let out = match ops::complete_task(
        c,
        tid,
        ops::Completion {
            result: result.as_deref(),
            summary: summary.as_deref(),
            metadata,
            created_cards,
            expected_run_id: kenv.worker_run_id(tid),
            paths: Some(paths),
        },
    ) {
        Err(DbError::Artifact(e)) => {
            return Ok(ToolOutput::error(format!(
                "kanban_complete could not preserve the declared artifacts: {e}. Your task is still in-flight and its scratch workspace was kept. Fix the artifact path or storage error, then retry kanban_complete with the same handoff."
            )));
        }
        other => other?,
    };
    Ok(match out {
        ops::CompleteOutcome::Phantom(ids) => ToolOutput::error(format!(
            "kanban_complete blocked: the following created_cards do not exist or were not created by this worker: {}. Your task is still in-flight (no state change). Retry kanban_complete with the same summary/metadata and either drop these ids from created_cards, or pass created_cards=[] to skip the card-claim check entirely.",
            ids.join(", ")
        )),
        ops::CompleteOutcome::NotApplied => ToolOutput::error(format!(
            "could not complete {tid} (unknown id or already terminal)"
        )),
        ops::CompleteOutcome::Done => {
            ok(json!({"task_id": tid, "run_id": ops::latest_run_id(c, tid)?}))
        }
    })
}

fn block(
    c: &Connection,
    tid: &str,
    args: &Map<String, Value>,
    kenv: &KEnv,
) -> DbResult<ToolOutput> {
    let reason = redact_sensitive_text(args.str_arg("reason").unwrap_or_default());
    let kind = args.str_arg("kind");
    if let Some(k) = kind
        && !ops::VALID_BLOCK_KINDS.contains(&k)
    {
        return Ok(ToolOutput::error(format!(
            "kind must be one of {} (or omit it)",
            ops::py_list(ops::VALID_BLOCK_KINDS)
        )));
    }
    if let Some(task) = ops::get_task(c, tid)?
        && task.goal_mode()
        && !matches!(kind, Some("dependency") | Some("needs_input"))
    {
        let got = kind.map(paths::py_repr).unwrap_or_else(|| "None".into());
        return Ok(ToolOutput::error(format!(
            "goal_mode tasks can only block with kind in ['dependency', 'needs_input'] (got {got}). If the task is actually finished or cannot proceed for another reason, call kanban_complete instead — the completion judge will evaluate it."
        )));
    }
    match ops::block_task(c, tid, Some(&reason), kind, kenv.worker_run_id(tid))? {
        None => Ok(ToolOutput::error(format!(
            "could not block {tid} (unknown id or not in running/ready)"
        ))),
        Some(landed) => Ok(ok(json!({
            "task_id": tid,
            "run_id": ops::latest_run_id(c, tid)?,
            "status": ops::get_task(c, tid)?.map(|t| t.status()).unwrap_or(landed),
            "block_kind": kind,
        }))),
    }
}

fn heartbeat(
    c: &Connection,
    tid: &str,
    args: &Map<String, Value>,
    kenv: &KEnv,
) -> DbResult<ToolOutput> {
    let note = args
        .str_arg("note")
        .filter(|n| !n.is_empty())
        .map(redact_sensitive_text);
    let claimer = kenv.claim_lock.clone().unwrap_or_else(ops::claimer_id);
    let extended = ops::heartbeat_claim(c, tid, &claimer, kenv.claim_ttl)?;
    if !ops::heartbeat_worker(c, tid, note.as_deref(), kenv.worker_run_id(tid))? {
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
    args: &Map<String, Value>,
    kenv: &KEnv,
    paths: &KanbanPaths,
) -> DbResult<ToolOutput> {
    let mut workspace_kind = args.str_arg("workspace_kind").map(str::to_string);
    let mut workspace_path = args.str_arg("workspace_path").map(str::to_string);
    if workspace_kind.is_none()
        && workspace_path.is_none()
        && let Some(own) = &kenv.task
        && let Some(t) = ops::get_task(c, own)?
        && let Some(k) = t.0.s("workspace_kind").filter(|k| !k.is_empty())
    {
        workspace_kind = Some(k);
        workspace_path = t.0.s("workspace_path");
    }
    let board = paths
        .board_slug(args.str_arg("board"))
        .map_err(DbError::Value)?;
    let new = ops::NewTask {
        title: args.str_arg("title").unwrap_or_default().to_string(),
        body: args.str_arg("body").map(str::to_string),
        assignee: args.str_arg("assignee").map(str::to_string),
        created_by: Some(kenv.author()),
        workspace_kind: workspace_kind.unwrap_or_else(|| "scratch".into()),
        workspace_path,
        tenant: args
            .str_arg("tenant")
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .or_else(|| kenv.tenant.clone()),
        priority: args.i64_arg("priority").unwrap_or(0),
        parents: args.str_list_arg("parents"),
        triage: args.bool_arg("triage").unwrap_or(false),
        idempotency_key: args.str_arg("idempotency_key").map(str::to_string),
        max_runtime_seconds: args.i64_arg("max_runtime_seconds"),
        skills: args.get("skills").map(|_| args.str_list_arg("skills")),
        goal_mode: args.bool_arg("goal_mode").unwrap_or(false),
        goal_max_turns: args.i64_arg("goal_max_turns"),
        initial_status: args
            .str_arg("initial_status")
            .filter(|s| !s.is_empty())
            .unwrap_or("running")
            .to_string(),
        session_id: kenv.session_id.clone(),
        board_default_workdir: paths.board_default_workdir(&board),
    };
    let (id, _created) = ops::create_task(c, new)?;
    let status = ops::get_task(c, &id)?.map(|t| t.status());
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
    match ops::add_notify_sub(
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
