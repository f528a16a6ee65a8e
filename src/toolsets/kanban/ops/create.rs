//! Operations that add to the board: `create_task` (with its idempotency key,
//! skill checks and initial status), `link_tasks`, `add_comment` and
//! `add_notify_sub` (hermes-agent: `hermes_cli/kanban_db.py`).

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension, params, params_from_iter};
use serde_json::{Value, json};

use crate::pycompat::py_json;
use crate::toolsets::kanban::error::{KanbanError, KanbanResult, value_err};
use crate::toolsets::kanban::status::Status;
use crate::toolsets::kanban::store::{
    append_event, canonical_assignee, find_missing, query_strings, task_exists,
};
use crate::toolsets::kanban::txn::write_txn;
use crate::toolsets::kanban::util::{new_task_id, now, py_len, py_repr, py_strip};

/// Hermes' `get_toolset_names()` at 0.19.0: skill names equal to one of these
/// are refused by `create_task` (agents confuse skills with toolsets).
const TOOLSET_NAMES: &[&str] = &[
    "browser",
    "clarify",
    "code_execution",
    "coding",
    "computer_use",
    "context_engine",
    "cronjob",
    "debugging",
    "delegation",
    "discord",
    "discord_admin",
    "feishu_doc",
    "feishu_drive",
    "file",
    "hermes-acp",
    "hermes-api-server",
    "hermes-bluebubbles",
    "hermes-cli",
    "hermes-cron",
    "hermes-dingtalk",
    "hermes-discord",
    "hermes-email",
    "hermes-feishu",
    "hermes-gateway",
    "hermes-homeassistant",
    "hermes-matrix",
    "hermes-mattermost",
    "hermes-qqbot",
    "hermes-signal",
    "hermes-slack",
    "hermes-sms",
    "hermes-telegram",
    "hermes-webhook",
    "hermes-wecom",
    "hermes-wecom-callback",
    "hermes-weixin",
    "hermes-whatsapp",
    "hermes-yuanbao",
    "homeassistant",
    "image_gen",
    "kanban",
    "memory",
    "project",
    "safe",
    "search",
    "session_search",
    "skills",
    "spotify",
    "terminal",
    "todo",
    "tts",
    "video",
    "video_gen",
    "vision",
    "web",
    "x_search",
    "yuanbao",
];

#[derive(Debug, Default, Clone)]
pub(crate) struct NewTask {
    pub(crate) title: String,
    pub(crate) body: Option<String>,
    pub(crate) assignee: Option<String>,
    pub(crate) created_by: Option<String>,
    pub(crate) workspace_kind: String,
    pub(crate) workspace_path: Option<String>,
    pub(crate) tenant: Option<String>,
    pub(crate) priority: i64,
    pub(crate) parents: Vec<String>,
    pub(crate) triage: bool,
    pub(crate) idempotency_key: Option<String>,
    pub(crate) max_runtime_seconds: Option<i64>,
    pub(crate) skills: Option<Vec<String>>,
    pub(crate) goal_mode: bool,
    pub(crate) goal_max_turns: Option<i64>,
    pub(crate) initial_status: Status,
    pub(crate) session_id: Option<String>,
    /// The board's `default_workdir` (for `dir`/`worktree` without a path).
    pub(crate) board_default_workdir: Option<String>,
}

/// `create_task`. Returns `(task_id, created)`; `created` is false when the
/// idempotency key matched an existing non-archived task.
pub(crate) fn create_task(conn: &Connection, t: NewTask) -> KanbanResult<(String, bool)> {
    let v = validate(&t)?;
    // A fresh random id can collide with an existing one: retry once.
    let mut attempt = 0;
    loop {
        let task_id = new_task_id();
        match write_txn(conn, |c| insert(c, &task_id, &t, &v)) {
            Err(KanbanError::Sqlite(e))
                if attempt == 0
                    && e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) =>
            {
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// A [`NewTask`]'s values after Hermes' checks and normalization.
struct Validated {
    title: String,
    assignee: Option<String>,
    parents: Vec<String>,
    skills: Option<Vec<String>>,
    workspace_path: Option<String>,
}

/// `create_task`'s argument checks, in Hermes' order, before any write.
fn validate(t: &NewTask) -> KanbanResult<Validated> {
    let assignee = match &t.assignee {
        Some(a) => Some(canonical_assignee(a)?),
        None => None,
    };
    if py_strip(&t.title).is_empty() {
        return value_err("title is required");
    }
    if !matches!(t.initial_status, Status::Running | Status::Blocked) {
        return value_err("initial_status must be one of ['blocked', 'running']");
    }
    if !["scratch", "worktree", "dir"].contains(&t.workspace_kind.as_str()) {
        return value_err(format!(
            "workspace_kind must be one of ['dir', 'scratch', 'worktree'], got {}",
            py_repr(&t.workspace_kind)
        ));
    }
    let parents: Vec<String> = t
        .parents
        .iter()
        .filter(|p| !p.is_empty())
        .cloned()
        .collect();
    let skills = match &t.skills {
        None => None,
        Some(list) => Some(clean_skills(list)?),
    };
    let mut workspace_path = t.workspace_path.clone();
    if workspace_path.is_none() && (t.workspace_kind == "dir" || t.workspace_kind == "worktree") {
        workspace_path = t.board_default_workdir.clone();
    }
    Ok(Validated {
        title: py_strip(&t.title).to_string(),
        assignee,
        parents,
        skills,
        workspace_path,
    })
}

/// Skill names stripped and de-duplicated; comma-joined names and toolset
/// names are refused (agents confuse skills with toolsets).
fn clean_skills(list: &[String]) -> KanbanResult<Vec<String>> {
    let mut cleaned: Vec<String> = Vec::new();
    let mut typos: Vec<String> = Vec::new();
    for s in list {
        let name = py_strip(s);
        if name.is_empty() {
            continue;
        }
        if name.contains(',') {
            return value_err(format!(
                "skill name cannot contain comma: {} (pass a list of separate names instead of a comma-joined string)",
                py_repr(name)
            ));
        }
        if TOOLSET_NAMES.contains(&name.to_lowercase().as_str()) {
            typos.push(name.to_string());
            continue;
        }
        if !cleaned.iter().any(|c| c == name) {
            cleaned.push(name.to_string());
        }
    }
    if !typos.is_empty() {
        let quoted: Vec<String> = typos.iter().map(|n| py_repr(n)).collect();
        let noun = if typos.len() == 1 {
            "is a toolset name"
        } else {
            "are toolset names"
        };
        return value_err(format!(
            "{} {noun}, not skill name(s). Put toolsets in the assignee profile's `toolsets:` config instead of per-task skills. Skills are named skill bundles (e.g. `blogwatcher`, `github-code-review`); toolsets are runtime capabilities (e.g. `web`, `browser`, `terminal`).",
            quoted.join(", ")
        ));
    }
    Ok(cleaned)
}

/// `blocked` when asked, else `triage`, else `ready` unless a parent is not
/// yet done (`todo`).
fn initial_status(c: &Connection, t: &NewTask, parents: &[String]) -> KanbanResult<Status> {
    Ok(if t.initial_status == Status::Blocked {
        Status::Blocked
    } else if t.triage {
        Status::Triage
    } else if parents.is_empty() {
        Status::Ready
    } else {
        let sql = format!(
            "SELECT status FROM tasks WHERE id IN ({})",
            vec!["?"; parents.len()].join(",")
        );
        let mut st = c.prepare(&sql)?;
        let statuses: Vec<Status> = st
            .query_map(params_from_iter(parents.iter()), |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        if statuses.iter().any(|s| *s != Status::Done) {
            Status::Todo
        } else {
            Status::Ready
        }
    })
}

/// The row, its parent links and its events, inside the write transaction.
fn insert(
    c: &Connection,
    task_id: &str,
    t: &NewTask,
    v: &Validated,
) -> KanbanResult<(String, bool)> {
    // Inside the write lock: concurrent creators with one key get one task.
    if let Some(key) = t.idempotency_key.as_deref().filter(|k| !k.is_empty()) {
        let existing: Option<String> = c
            .prepare_cached(
                "SELECT id FROM tasks WHERE idempotency_key = ? AND status != 'archived' \
                 ORDER BY created_at DESC LIMIT 1",
            )?
            .query_row([key], |r| r.get(0))
            .optional()?;
        if let Some(id) = existing {
            return Ok((id, false));
        }
    }
    let missing = find_missing(c, &v.parents)?;
    if !missing.is_empty() {
        return value_err(format!("unknown parent task(s): {}", missing.join(", ")));
    }
    let status = initial_status(c, t, &v.parents)?;
    c.execute(
        "INSERT INTO tasks (id, title, body, assignee, status, priority, created_by, created_at, \
         workspace_kind, workspace_path, branch_name, project_id, tenant, idempotency_key, \
         max_runtime_seconds, skills, max_retries, goal_mode, goal_max_turns, session_id) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        params![
            task_id,
            v.title,
            t.body,
            v.assignee,
            status,
            t.priority,
            t.created_by,
            now(),
            t.workspace_kind,
            v.workspace_path,
            Option::<String>::None,
            Option::<String>::None,
            t.tenant,
            t.idempotency_key,
            t.max_runtime_seconds,
            v.skills.as_ref().map(|s| py_json(&json!(s))),
            Option::<i64>::None,
            t.goal_mode as i64,
            t.goal_max_turns,
            t.session_id,
        ],
    )?;
    for p in &v.parents {
        c.execute(
            "INSERT OR IGNORE INTO task_links (parent_id, child_id) VALUES (?, ?)",
            params![p, task_id],
        )?;
    }
    append_event(
        c,
        task_id,
        "created",
        Some(json!({
            "assignee": v.assignee,
            "status": status,
            "parents": v.parents,
            "tenant": t.tenant,
            "branch_name": null,
            "skills": v.skills.as_ref().filter(|s| !s.is_empty()),
            "goal_mode": if t.goal_mode { json!(true) } else { Value::Null },
        })),
        None,
    )?;
    if status == Status::Blocked {
        // Sticky: recompute_ready leaves it until an explicit unblock.
        append_event(
            c,
            task_id,
            "blocked",
            Some(
                json!({"reason": "created blocked (initial_status=blocked)", "kind": null, "recurrences": 0}),
            ),
            None,
        )?;
    }
    Ok((task_id.to_string(), true))
}

/// `add_notify_sub` (auto-subscribe on create).
pub(crate) fn add_notify_sub(
    conn: &Connection,
    task_id: &str,
    platform: &str,
    chat_id: &str,
    thread_id: Option<&str>,
    user_id: Option<&str>,
    notifier_profile: Option<&str>,
) -> KanbanResult<()> {
    write_txn(conn, |c| {
        c.execute(
            "INSERT OR IGNORE INTO kanban_notify_subs (task_id, platform, chat_id, thread_id, user_id, \
             notifier_profile, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            params![task_id, platform, chat_id, thread_id.unwrap_or(""), user_id, notifier_profile, now()],
        )?;
        if let Some(np) = notifier_profile.filter(|s| !s.is_empty()) {
            c.execute(
                "UPDATE kanban_notify_subs SET notifier_profile = ? WHERE task_id = ? AND platform = ? \
                 AND chat_id = ? AND thread_id = ? AND (notifier_profile IS NULL OR notifier_profile = '')",
                params![np, task_id, platform, chat_id, thread_id.unwrap_or("")],
            )?;
        }
        Ok(())
    })
}

fn would_cycle(conn: &Connection, parent: &str, child: &str) -> KanbanResult<bool> {
    let mut seen = HashSet::new();
    let mut stack = vec![child.to_string()];
    while let Some(node) = stack.pop() {
        if node == parent {
            return Ok(true);
        }
        if !seen.insert(node.clone()) {
            continue;
        }
        stack.extend(query_strings(
            conn,
            "SELECT child_id FROM task_links WHERE parent_id = ?",
            &[&node],
        )?);
    }
    Ok(false)
}

pub(crate) fn link_tasks(conn: &Connection, parent: &str, child: &str) -> KanbanResult<()> {
    if parent == child {
        return value_err("a task cannot depend on itself");
    }
    write_txn(conn, |c| {
        let missing = find_missing(c, &[parent.to_string(), child.to_string()])?;
        if !missing.is_empty() {
            return value_err(format!("unknown task(s): {}", missing.join(", ")));
        }
        if would_cycle(c, parent, child)? {
            return value_err(format!("linking {parent} -> {child} would create a cycle"));
        }
        c.execute(
            "INSERT OR IGNORE INTO task_links (parent_id, child_id) VALUES (?, ?)",
            params![parent, child],
        )?;
        let pstatus: Status =
            c.query_row("SELECT status FROM tasks WHERE id = ?", [parent], |r| {
                r.get(0)
            })?;
        if pstatus != Status::Done {
            c.execute(
                "UPDATE tasks SET status = 'todo' WHERE id = ? AND status = 'ready'",
                [child],
            )?;
        }
        append_event(
            c,
            child,
            "linked",
            Some(json!({"parent": parent, "child": child})),
            None,
        )
    })
}

pub(crate) fn add_comment(
    conn: &Connection,
    task_id: &str,
    author: &str,
    body: &str,
) -> KanbanResult<i64> {
    if py_strip(body).is_empty() {
        return value_err("comment body is required");
    }
    if py_strip(author).is_empty() {
        return value_err("comment author is required");
    }
    write_txn(conn, |c| {
        if !task_exists(c, task_id)? {
            return value_err(format!("unknown task {task_id}"));
        }
        c.execute(
            "INSERT INTO task_comments (task_id, author, body, created_at) VALUES (?, ?, ?, ?)",
            params![task_id, py_strip(author), py_strip(body), now()],
        )?;
        let id = c.last_insert_rowid();
        append_event(
            c,
            task_id,
            "commented",
            Some(json!({"author": author, "len": py_len(body)})),
            None,
        )?;
        Ok(id)
    })
}
