//! Rows and queries on `kanban.db`: how tasks, runs, events, comments,
//! links and attachments are read and appended, with Hermes' column handling
//! (hermes-agent: `hermes_cli/kanban_db.py`, `Task.from_row`, `Run.from_row`,
//! `_append_event`, `_end_run`). The operations in `ops/` compose these;
//! this module knows no state-machine rule and imports nothing from `ops`.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};
use serde_json::{Value, json};

use crate::pycompat::py_json;
use crate::toolsets::kanban::error::{KanbanResult, value_err};
use crate::toolsets::kanban::status::Status;
use crate::toolsets::kanban::util::{now, py_strip};

/// `normalize_profile_name`: strip, `default` case-insensitively, else lower-case.
pub(crate) fn canonical_assignee(a: &str) -> KanbanResult<String> {
    let s = py_strip(a);
    if s.is_empty() {
        return value_err("profile name cannot be empty");
    }
    if s.to_lowercase() == "default" {
        return Ok("default".into());
    }
    Ok(s.to_lowercase())
}

/// A row read by column name, tolerant of missing and unknown columns.
#[derive(Debug, Clone, Default)]
pub(crate) struct Row(pub(crate) BTreeMap<String, Sql>);

impl Row {
    fn from(r: &rusqlite::Row) -> rusqlite::Result<Row> {
        let st = r.as_ref();
        let mut m = BTreeMap::new();
        for i in 0..st.column_count() {
            m.insert(st.column_name(i)?.to_string(), r.get::<_, Sql>(i)?);
        }
        Ok(Row(m))
    }
    pub(crate) fn s(&self, k: &str) -> Option<String> {
        match self.0.get(k)? {
            Sql::Text(t) => Some(t.clone()),
            Sql::Integer(i) => Some(i.to_string()),
            Sql::Real(f) => Some(f.to_string()),
            Sql::Blob(b) => Some(String::from_utf8_lossy(b).to_string()),
            Sql::Null => None,
        }
    }
    pub(crate) fn i(&self, k: &str) -> Option<i64> {
        match self.0.get(k)? {
            Sql::Integer(i) => Some(*i),
            Sql::Real(f) => Some(*f as i64),
            Sql::Text(t) => t.trim().parse().ok(),
            _ => None,
        }
    }
    /// The raw value as JSON (what `json.dumps(row[k])` gives).
    pub(crate) fn j(&self, k: &str) -> Value {
        match self.0.get(k) {
            None | Some(Sql::Null) => Value::Null,
            Some(Sql::Integer(i)) => json!(i),
            Some(Sql::Real(f)) => json!(f),
            Some(Sql::Text(t)) => json!(t),
            Some(Sql::Blob(b)) => json!(String::from_utf8_lossy(b)),
        }
    }
    /// Truthy text, as `Task.from_row` treats `model_override` / `block_kind`.
    fn s_nonempty(&self, k: &str) -> Option<String> {
        self.s(k).filter(|s| !s.is_empty())
    }
}

pub(crate) fn query_rows(
    conn: &Connection,
    sql: &str,
    p: &[&dyn rusqlite::ToSql],
) -> KanbanResult<Vec<Row>> {
    let mut st = conn.prepare_cached(sql)?;
    let rows = st.query_map(p, Row::from)?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

pub(crate) fn query_strings(
    conn: &Connection,
    sql: &str,
    p: &[&dyn rusqlite::ToSql],
) -> KanbanResult<Vec<String>> {
    let mut st = conn.prepare_cached(sql)?;
    let rows = st.query_map(p, |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

#[derive(Debug, Clone)]
pub(crate) struct Task(pub(crate) Row);

impl Task {
    pub(crate) fn id(&self) -> String {
        self.0.s("id").unwrap_or_default()
    }
    pub(crate) fn status(&self) -> Status {
        Status::from(self.0.s("status").unwrap_or_default().as_str())
    }
    pub(crate) fn assignee(&self) -> Option<String> {
        self.0.s("assignee")
    }
    pub(crate) fn goal_mode(&self) -> bool {
        self.0.i("goal_mode").unwrap_or(0) != 0
    }
    /// Column values as `Task.from_row` presents them.
    pub(crate) fn field(&self, k: &str) -> Value {
        match k {
            "model_override" | "block_kind" => self
                .0
                .s_nonempty(k)
                .map(Value::String)
                .unwrap_or(Value::Null),
            "goal_max_turns" => match self.0.i(k) {
                Some(v) if v != 0 => json!(v),
                _ => Value::Null,
            },
            _ => self.0.j(k),
        }
    }
}

pub(crate) fn get_task(conn: &Connection, id: &str) -> KanbanResult<Option<Task>> {
    Ok(
        query_rows(conn, "SELECT * FROM tasks WHERE id = ?", &[&id])?
            .into_iter()
            .next()
            .map(Task),
    )
}

pub(crate) fn task_exists(conn: &Connection, id: &str) -> KanbanResult<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM tasks WHERE id = ?")?
        .exists([id])?)
}

pub(crate) fn parent_ids(conn: &Connection, id: &str) -> KanbanResult<Vec<String>> {
    query_strings(
        conn,
        "SELECT parent_id FROM task_links WHERE child_id = ? ORDER BY parent_id",
        &[&id],
    )
}

pub(crate) fn child_ids(conn: &Connection, id: &str) -> KanbanResult<Vec<String>> {
    query_strings(
        conn,
        "SELECT child_id FROM task_links WHERE parent_id = ? ORDER BY child_id",
        &[&id],
    )
}

pub(crate) fn list_comments(conn: &Connection, id: &str) -> KanbanResult<Vec<Row>> {
    query_rows(
        conn,
        "SELECT * FROM task_comments WHERE task_id = ? ORDER BY created_at ASC",
        &[&id],
    )
}

pub(crate) fn list_events(conn: &Connection, id: &str) -> KanbanResult<Vec<Row>> {
    query_rows(
        conn,
        "SELECT * FROM task_events WHERE task_id = ? ORDER BY created_at ASC, id ASC",
        &[&id],
    )
}

pub(crate) fn list_runs(conn: &Connection, id: &str) -> KanbanResult<Vec<Row>> {
    query_rows(
        conn,
        "SELECT * FROM task_runs WHERE task_id = ? ORDER BY started_at ASC, id ASC",
        &[&id],
    )
}

pub(crate) fn latest_run_id(conn: &Connection, id: &str) -> KanbanResult<Option<i64>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM task_runs WHERE task_id = ? ORDER BY started_at DESC, id DESC LIMIT 1",
        )?
        .query_row([id], |r| r.get::<_, i64>(0))
        .optional()?)
}

/// A run row's `metadata` as `Run.from_row` parses it (invalid JSON → null).
pub(crate) fn run_metadata(r: &Row) -> Value {
    r.s("metadata")
        .filter(|s| !s.is_empty())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

/// An event payload as `list_events` parses it.
pub(crate) fn event_payload(r: &Row) -> Value {
    r.s("payload")
        .filter(|s| !s.is_empty())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

/// `json.dumps(payload, ensure_ascii=False) if payload else None`.
pub(crate) fn payload_text(p: Option<&Value>) -> Option<String> {
    match p {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) if m.is_empty() => None,
        Some(v) => Some(py_json(v)),
    }
}

pub(crate) fn append_event(
    conn: &Connection,
    task_id: &str,
    kind: &str,
    payload: Option<Value>,
    run_id: Option<i64>,
) -> KanbanResult<()> {
    conn.prepare_cached(
        "INSERT INTO task_events (task_id, run_id, kind, payload, created_at) VALUES (?, ?, ?, ?, ?)",
    )?
    .execute(params![task_id, run_id, kind, payload_text(payload.as_ref()), now()])?;
    Ok(())
}

pub(crate) fn current_run_id(conn: &Connection, task_id: &str) -> KanbanResult<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT current_run_id FROM tasks WHERE id = ?")?
        .query_row([task_id], |r| r.get::<_, Option<i64>>(0))
        .optional()?
        .flatten()
        .filter(|v| *v != 0))
}

/// `_end_run`: close the active run and clear the pointer.
pub(crate) fn end_run(
    conn: &Connection,
    task_id: &str,
    outcome: &str,
    status: &str,
    summary: Option<&str>,
    metadata: Option<&Value>,
) -> KanbanResult<Option<i64>> {
    let Some(run_id) = current_run_id(conn, task_id)? else {
        return Ok(None);
    };
    conn.execute(
        "UPDATE task_runs SET status = ?, outcome = ?, summary = ?, error = ?, metadata = ?, ended_at = ?, \
         claim_lock = NULL, claim_expires = NULL, worker_pid = NULL WHERE id = ? AND ended_at IS NULL",
        params![
            status,
            outcome,
            summary,
            Option::<String>::None,
            payload_text(metadata),
            now(),
            run_id
        ],
    )?;
    conn.execute(
        "UPDATE tasks SET current_run_id = NULL WHERE id = ?",
        params![task_id],
    )?;
    Ok(Some(run_id))
}

/// `_synthesize_ended_run`: a zero-length closed run for a never-claimed task.
pub(crate) fn synthesize_ended_run(
    conn: &Connection,
    task_id: &str,
    outcome: &str,
    summary: Option<&str>,
    metadata: Option<&Value>,
) -> KanbanResult<i64> {
    let t = now();
    let row = query_rows(
        conn,
        "SELECT assignee, current_step_key FROM tasks WHERE id = ?",
        &[&task_id],
    )?
    .into_iter()
    .next()
    .unwrap_or_default();
    conn.execute(
        "INSERT INTO task_runs (task_id, profile, step_key, status, outcome, summary, error, metadata, \
         started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        params![
            task_id,
            row.s("assignee"),
            row.s("current_step_key"),
            outcome,
            outcome,
            summary,
            Option::<String>::None,
            payload_text(metadata),
            t,
            t
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

pub(crate) fn find_missing(conn: &Connection, ids: &[String]) -> KanbanResult<Vec<String>> {
    if ids.is_empty() {
        return Ok(vec![]);
    }
    let sql = format!(
        "SELECT id FROM tasks WHERE id IN ({})",
        vec!["?"; ids.len()].join(",")
    );
    let mut st = conn.prepare(&sql)?;
    let present: HashSet<String> = st
        .query_map(params_from_iter(ids.iter()), |r| r.get::<_, String>(0))?
        .collect::<Result<_, _>>()?;
    Ok(ids
        .iter()
        .filter(|p| !present.contains(*p))
        .cloned()
        .collect())
}

/// The task's workspace directory when it is a `scratch` workspace with a
/// path (the only kind completion copies deliverables out of and removes).
pub(crate) fn scratch_workspace(conn: &Connection, task_id: &str) -> KanbanResult<Option<PathBuf>> {
    let row: Option<(Option<String>, Option<String>)> = conn
        .query_row(
            "SELECT workspace_kind, workspace_path FROM tasks WHERE id = ?",
            [task_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok();
    Ok(match row {
        Some((Some(kind), Some(path))) if kind == "scratch" && !path.is_empty() => {
            Some(crate::hermes::home::expand_tilde(Path::new(&path)))
        }
        _ => None,
    })
}

/// Whether a child of `task_id` is still unfinished (and so may still need
/// the parent's scratch workspace). A failed query counts as "yes", so a
/// workspace is never removed on doubt.
pub(crate) fn has_active_child(conn: &Connection, task_id: &str) -> bool {
    const ACTIVE_CHILD: &str = "SELECT 1 FROM task_links l JOIN tasks t ON t.id = l.child_id WHERE l.parent_id = ? \
        AND t.status NOT IN ('done', 'archived', 'failed', 'cancelled') LIMIT 1";
    conn.prepare_cached(ACTIVE_CHILD)
        .and_then(|mut s| s.exists([task_id]))
        .unwrap_or(true)
}

pub(crate) fn list_attachments(conn: &Connection, task_id: &str) -> KanbanResult<Vec<Row>> {
    query_rows(
        conn,
        "SELECT * FROM task_attachments WHERE task_id = ? ORDER BY created_at ASC, id ASC",
        &[&task_id],
    )
}

/// An attachment row kanban_complete uploaded, plus its `attached` event.
pub(crate) fn add_attachment(
    conn: &Connection,
    task_id: &str,
    filename: &str,
    stored_path: &str,
    size: i64,
    at: i64,
) -> KanbanResult<()> {
    conn.execute(
        "INSERT INTO task_attachments (task_id, filename, stored_path, content_type, size, uploaded_by, created_at) \
         VALUES (?, ?, ?, NULL, ?, 'kanban_complete', ?)",
        params![task_id, filename, stored_path, size, at],
    )?;
    append_event(
        conn,
        task_id,
        "attached",
        Some(json!({"filename": filename, "size": size, "by": "kanban_complete"})),
        None,
    )
}

/// The last five runs `profile` completed on other tasks, newest first,
/// with the task's id and title (`build_worker_context`'s "Recent work").
pub(crate) fn recent_work_by(
    conn: &Connection,
    profile: &str,
    task_id: &str,
) -> KanbanResult<Vec<Row>> {
    query_rows(
        conn,
        "SELECT t.id, t.title, r.summary, r.ended_at FROM task_runs r JOIN tasks t ON r.task_id = t.id \
         WHERE r.profile = ? AND r.task_id != ? AND r.outcome = 'completed' ORDER BY r.ended_at DESC LIMIT 5",
        &[&profile, &task_id],
    )
}
