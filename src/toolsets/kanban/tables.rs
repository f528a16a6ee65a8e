//! `kanban.db`'s schema and its additive migrations, as hermes-agent's
//! `hermes_cli/kanban_db.py` creates and upgrades it (`SCHEMA_SQL`,
//! `_migrate_add_optional_columns`, `_rebuild_drifted_tables`): only ever
//! add what an older database lacks, so Hermes and this server can share a
//! file whichever of them opened it first.

use std::collections::HashSet;

use rusqlite::{Connection, params};

use crate::toolsets::kanban::error::KanbanResult;
use crate::toolsets::kanban::txn::write_txn;
use crate::toolsets::kanban::util::now;

pub(crate) const SCHEMA_SQL: &str = r#"
CREATE TABLE IF NOT EXISTS tasks (
    id                   TEXT PRIMARY KEY,
    title                TEXT NOT NULL,
    body                 TEXT,
    assignee             TEXT,
    status               TEXT NOT NULL,
    priority             INTEGER DEFAULT 0,
    created_by           TEXT,
    created_at           INTEGER NOT NULL,
    started_at           INTEGER,
    completed_at         INTEGER,
    workspace_kind       TEXT NOT NULL DEFAULT 'scratch',
    workspace_path       TEXT,
    branch_name          TEXT,
    project_id           TEXT,
    claim_lock           TEXT,
    claim_expires        INTEGER,
    tenant               TEXT,
    result               TEXT,
    idempotency_key      TEXT,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    worker_pid           INTEGER,
    last_failure_error   TEXT,
    max_runtime_seconds  INTEGER,
    last_heartbeat_at    INTEGER,
    current_run_id       INTEGER,
    workflow_template_id TEXT,
    current_step_key     TEXT,
    skills               TEXT,
    model_override       TEXT,
    max_retries          INTEGER,
    goal_mode            INTEGER NOT NULL DEFAULT 0,
    goal_max_turns       INTEGER,
    session_id           TEXT,
    block_kind           TEXT,
    block_recurrences    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS task_links (
    parent_id  TEXT NOT NULL,
    child_id   TEXT NOT NULL,
    PRIMARY KEY (parent_id, child_id)
);

CREATE TABLE IF NOT EXISTS task_comments (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id    TEXT NOT NULL,
    author     TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS task_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id    TEXT NOT NULL,
    run_id     INTEGER,
    kind       TEXT NOT NULL,
    payload    TEXT,
    created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS task_runs (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id             TEXT NOT NULL,
    profile             TEXT,
    step_key            TEXT,
    status              TEXT NOT NULL,
    claim_lock          TEXT,
    claim_expires       INTEGER,
    worker_pid          INTEGER,
    max_runtime_seconds INTEGER,
    last_heartbeat_at   INTEGER,
    started_at          INTEGER NOT NULL,
    ended_at            INTEGER,
    outcome             TEXT,
    summary             TEXT,
    metadata            TEXT,
    error               TEXT
);

CREATE TABLE IF NOT EXISTS task_attachments (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id      TEXT NOT NULL,
    filename     TEXT NOT NULL,
    stored_path  TEXT NOT NULL,
    content_type TEXT,
    size         INTEGER NOT NULL DEFAULT 0,
    uploaded_by  TEXT,
    created_at   INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS kanban_notify_subs (
    task_id       TEXT NOT NULL,
    platform      TEXT NOT NULL,
    chat_id       TEXT NOT NULL,
    thread_id     TEXT NOT NULL DEFAULT '',
    user_id       TEXT,
    notifier_profile TEXT,
    created_at    INTEGER NOT NULL,
    last_event_id INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (task_id, platform, chat_id, thread_id)
);

CREATE INDEX IF NOT EXISTS idx_tasks_assignee_status ON tasks(assignee, status);
CREATE INDEX IF NOT EXISTS idx_tasks_status          ON tasks(status);
CREATE INDEX IF NOT EXISTS idx_links_child           ON task_links(child_id);
CREATE INDEX IF NOT EXISTS idx_links_parent          ON task_links(parent_id);
CREATE INDEX IF NOT EXISTS idx_comments_task         ON task_comments(task_id, created_at);
CREATE INDEX IF NOT EXISTS idx_events_task           ON task_events(task_id, created_at);
CREATE INDEX IF NOT EXISTS idx_runs_task             ON task_runs(task_id, started_at);
CREATE INDEX IF NOT EXISTS idx_runs_status           ON task_runs(status);
CREATE INDEX IF NOT EXISTS idx_attachments_task      ON task_attachments(task_id, created_at);
CREATE INDEX IF NOT EXISTS idx_notify_task           ON kanban_notify_subs(task_id);
"#;

pub(crate) fn table_columns(
    conn: &Connection,
    table: &str,
) -> KanbanResult<Vec<(String, String, bool)>> {
    let mut st = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, String>("name")?,
            r.get::<_, Option<String>>("type")?.unwrap_or_default(),
            r.get::<_, i64>("pk")? != 0,
        ))
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

fn add_column(conn: &Connection, table: &str, ddl: &str) -> KanbanResult<bool> {
    match conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {ddl}")) {
        Ok(()) => Ok(true),
        Err(e)
            if e.to_string()
                .to_lowercase()
                .contains("duplicate column name") =>
        {
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

/// `_migrate_add_optional_columns`: add only the columns an older DB lacks,
/// never drop or rename; unknown extra columns are left alone.
pub(crate) fn migrate_add_optional_columns(conn: &Connection) -> KanbanResult<()> {
    add_task_columns(conn)?;
    conn.execute_batch(
        "CREATE INDEX IF NOT EXISTS idx_tasks_tenant ON tasks(tenant);
         CREATE INDEX IF NOT EXISTS idx_tasks_idempotency ON tasks(idempotency_key);
         CREATE INDEX IF NOT EXISTS idx_tasks_session_id ON tasks(session_id);",
    )?;
    if !column_names(conn, "task_events")?.contains("run_id") {
        add_column(conn, "task_events", "run_id INTEGER")?;
    }
    conn.execute_batch("CREATE INDEX IF NOT EXISTS idx_events_run ON task_events(run_id, id)")?;
    let notify = column_names(conn, "kanban_notify_subs")?;
    if !notify.is_empty() && !notify.contains("notifier_profile") {
        add_column(conn, "kanban_notify_subs", "notifier_profile TEXT")?;
    }
    synthesize_runs(conn)?;
    rename_event_kinds(conn)?;
    rebuild_drifted_tables(conn)
}

/// The names of `table`'s columns (empty when the table does not exist).
fn column_names(conn: &Connection, table: &str) -> KanbanResult<HashSet<String>> {
    Ok(table_columns(conn, table)?
        .into_iter()
        .map(|c| c.0)
        .collect())
}

/// The `tasks` columns added over time, in Hermes' order; the two renamed
/// counters (`spawn_failures`, `last_spawn_error`) are copied into their new
/// columns when those are added.
fn add_task_columns(conn: &Connection) -> KanbanResult<()> {
    let cols = column_names(conn, "tasks")?;
    for (c, ddl) in [
        ("tenant", "tenant TEXT"),
        ("result", "result TEXT"),
        ("branch_name", "branch_name TEXT"),
        ("project_id", "project_id TEXT"),
        ("idempotency_key", "idempotency_key TEXT"),
    ] {
        if !cols.contains(c) {
            add_column(conn, "tasks", ddl)?;
        }
    }
    let cols = column_names(conn, "tasks")?;
    if !cols.contains("consecutive_failures")
        && add_column(
            conn,
            "tasks",
            "consecutive_failures INTEGER NOT NULL DEFAULT 0",
        )?
        && cols.contains("spawn_failures")
    {
        conn.execute_batch("UPDATE tasks SET consecutive_failures = COALESCE(spawn_failures, 0)")?;
    }
    if !cols.contains("worker_pid") {
        add_column(conn, "tasks", "worker_pid INTEGER")?;
    }
    if !cols.contains("last_failure_error")
        && add_column(conn, "tasks", "last_failure_error TEXT")?
        && cols.contains("last_spawn_error")
    {
        conn.execute_batch("UPDATE tasks SET last_failure_error = last_spawn_error")?;
    }
    for (c, ddl) in [
        ("max_runtime_seconds", "max_runtime_seconds INTEGER"),
        ("last_heartbeat_at", "last_heartbeat_at INTEGER"),
        ("current_run_id", "current_run_id INTEGER"),
        ("workflow_template_id", "workflow_template_id TEXT"),
        ("current_step_key", "current_step_key TEXT"),
        ("skills", "skills TEXT"),
        ("max_retries", "max_retries INTEGER"),
        ("model_override", "model_override TEXT"),
        ("goal_mode", "goal_mode INTEGER NOT NULL DEFAULT 0"),
        ("goal_max_turns", "goal_max_turns INTEGER"),
        ("session_id", "session_id TEXT"),
        ("block_kind", "block_kind TEXT"),
        (
            "block_recurrences",
            "block_recurrences INTEGER NOT NULL DEFAULT 0",
        ),
    ] {
        if !cols.contains(c) {
            add_column(conn, "tasks", ddl)?;
        }
    }
    Ok(())
}

/// Running tasks from before runs existed get a synthesized run row (marked
/// reclaimed when another process gave the task a run meanwhile).
fn synthesize_runs(conn: &Connection) -> KanbanResult<()> {
    write_txn(conn, |c| {
        let mut st = c.prepare(
            "SELECT id, assignee, claim_lock, claim_expires, worker_pid, max_runtime_seconds, \
             last_heartbeat_at, started_at FROM tasks WHERE status = 'running' AND current_run_id IS NULL",
        )?;
        type Row = (
            String,
            Option<String>,
            Option<String>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
        );
        let rows: Vec<Row> = st
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        let now = now();
        for (id, assignee, lock, exp, pid, maxrt, hb, started) in rows {
            c.execute(
                "INSERT INTO task_runs (task_id, profile, status, claim_lock, claim_expires, worker_pid, \
                 max_runtime_seconds, last_heartbeat_at, started_at) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?)",
                params![id, assignee, lock, exp, pid, maxrt, hb, started.filter(|s| *s != 0).unwrap_or(now)],
            )?;
            let run_id = c.last_insert_rowid();
            let n = c.execute(
                "UPDATE tasks SET current_run_id = ? WHERE id = ? AND current_run_id IS NULL",
                params![run_id, id],
            )?;
            if n != 1 {
                c.execute(
                    "UPDATE task_runs SET status = 'reclaimed', outcome = 'reclaimed', ended_at = ? WHERE id = ?",
                    params![now, run_id],
                )?;
            }
        }
        Ok(())
    })
}

/// Event kinds Hermes renamed: old rows get the current names.
fn rename_event_kinds(conn: &Connection) -> KanbanResult<()> {
    for (old, new) in [
        ("ready", "promoted"),
        ("priority", "reprioritized"),
        ("spawn_auto_blocked", "gave_up"),
    ] {
        conn.execute(
            "UPDATE task_events SET kind = ? WHERE kind = ?",
            params![new, old],
        )?;
    }
    Ok(())
}

const REBUILD_SPECS: &[(&str, &str, &[&str])] = &[
    (
        "task_events",
        "CREATE TABLE task_events ( id INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL, run_id INTEGER, kind TEXT NOT NULL, payload TEXT, created_at INTEGER NOT NULL)",
        &[
            "CREATE INDEX idx_events_task ON task_events(task_id, created_at)",
            "CREATE INDEX idx_events_run ON task_events(run_id, id)",
        ],
    ),
    (
        "task_comments",
        "CREATE TABLE task_comments ( id INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL, author TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL)",
        &["CREATE INDEX idx_comments_task ON task_comments(task_id, created_at)"],
    ),
    (
        "task_runs",
        "CREATE TABLE task_runs ( id INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL, profile TEXT, step_key TEXT, status TEXT NOT NULL, claim_lock TEXT, claim_expires INTEGER, worker_pid INTEGER, max_runtime_seconds INTEGER, last_heartbeat_at INTEGER, started_at INTEGER NOT NULL, ended_at INTEGER, outcome TEXT, summary TEXT, metadata TEXT, error TEXT)",
        &[
            "CREATE INDEX idx_runs_task ON task_runs(task_id, started_at)",
            "CREATE INDEX idx_runs_status ON task_runs(status)",
        ],
    ),
    (
        "kanban_notify_subs",
        "CREATE TABLE kanban_notify_subs ( task_id TEXT NOT NULL, platform TEXT NOT NULL, chat_id TEXT NOT NULL, thread_id TEXT NOT NULL DEFAULT '', user_id TEXT, notifier_profile TEXT, created_at INTEGER NOT NULL, last_event_id INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (task_id, platform, chat_id, thread_id))",
        &["CREATE INDEX idx_notify_task ON kanban_notify_subs(task_id)"],
    ),
];

fn table_drifted(conn: &Connection, table: &str) -> KanbanResult<bool> {
    let info = table_columns(conn, table)?;
    if info.is_empty() {
        return Ok(false);
    }
    if table == "kanban_notify_subs" {
        return Ok(info
            .iter()
            .find(|c| c.0 == "last_event_id")
            .is_some_and(|c| !c.1.eq_ignore_ascii_case("INTEGER")));
    }
    Ok(match info.iter().find(|c| c.0 == "id") {
        None => false,
        Some(c) => !(c.1.eq_ignore_ascii_case("INTEGER") && c.2),
    })
}

/// Legacy tables with a TEXT id (or a text notify cursor) are rebuilt in one
/// transaction, copying the shared columns (Hermes' `_rebuild_drifted_tables`).
fn rebuild_drifted_tables(conn: &Connection) -> KanbanResult<()> {
    let mut drifted = Vec::new();
    for spec in REBUILD_SPECS {
        if table_drifted(conn, spec.0)? {
            drifted.push(spec);
        }
    }
    if drifted.is_empty() {
        return Ok(());
    }
    write_txn(conn, |c| {
        for (table, create, indexes) in drifted {
            let old: Vec<String> = table_columns(c, table)?.into_iter().map(|x| x.0).collect();
            tracing::info!("kanban migration: rebuilding {table} to match current schema");
            c.execute_batch(&format!("ALTER TABLE {table} RENAME TO {table}_legacy"))?;
            c.execute_batch(create)?;
            let new: HashSet<String> = table_columns(c, table)?.into_iter().map(|x| x.0).collect();
            // Copy the shared columns. Rebuilt tables re-assign `id`; the notify
            // table keeps its rows' `last_event_id`, cast to the current type.
            let (skip, extra_col, extra_val) = if *table == "kanban_notify_subs" {
                (
                    "last_event_id",
                    ", last_event_id",
                    ", COALESCE(CAST(last_event_id AS INTEGER), 0)",
                )
            } else {
                ("id", "", "")
            };
            let csv = old
                .iter()
                .filter(|x| new.contains(*x) && *x != skip)
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ");
            c.execute_batch(&format!(
                "INSERT INTO {table} ({csv}{extra_col}) SELECT {csv}{extra_val} FROM {table}_legacy"
            ))?;
            c.execute_batch(&format!("DROP TABLE {table}_legacy"))?;
            for idx in *indexes {
                c.execute_batch(idx)?;
            }
        }
        Ok(())
    })
}
