//! The kanban state machine, ported from `hermes_cli/kanban_db.py`: the same
//! SQL, compare-and-swap conditions, run rows and event payloads, so the
//! Python dispatcher and `hermes kanban` read our writes as their own.
//!
//! Deliberate differences (hermes-reference §7):
//! * the `idempotency_key` lookup runs inside the create transaction (#26);
//! * `initial_status="blocked"` records a `blocked` event so the block is
//!   sticky and `recompute_ready` does not promote it (#32);
//! * `recompute_ready` finds candidates with one query and only opens a write
//!   transaction when something can be promoted (#26);
//! * `heartbeat_claim`'s result is reported to the caller (#28).

use std::collections::{BTreeMap, HashSet};
use std::io::Read;

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};
use serde_json::{Map, Value, json};

use super::db::{DbError, DbResult, value_err, write_txn};
use crate::pycompat::py_json;

pub const VALID_STATUSES: &[&str] = &[
    "triage",
    "todo",
    "scheduled",
    "ready",
    "running",
    "blocked",
    "review",
    "done",
    "archived",
];
pub const VALID_BLOCK_KINDS: &[&str] = &["capability", "dependency", "needs_input", "transient"];
pub const BLOCK_RECURRENCE_LIMIT: i64 = 2;
pub const DEFAULT_FAILURE_LIMIT: i64 = 2;
pub const DEFAULT_CLAIM_TTL_SECONDS: i64 = 15 * 60;
const CTX_MAX_PRIOR_ATTEMPTS: usize = 10;
const CTX_MAX_COMMENTS: usize = 30;
const CTX_MAX_FIELD: usize = 4 * 1024;
const CTX_MAX_BODY: usize = 8 * 1024;
const CTX_MAX_COMMENT: usize = 2 * 1024;
const TERMINAL_TIMEOUT_GRACE: i64 = 30;

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

pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_err()
    {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
            ^ (std::process::id() as u128) << 64;
        for (i, x) in b.iter_mut().enumerate() {
            *x = (t >> ((i % 16) * 8)) as u8;
        }
    }
    b
}

pub fn random_u32() -> u32 {
    u32::from_le_bytes(random_bytes::<4>())
}

/// `"t_" + secrets.token_hex(4)`.
pub fn new_task_id() -> String {
    let b = random_bytes::<4>();
    format!("t_{:02x}{:02x}{:02x}{:02x}", b[0], b[1], b[2], b[3])
}

/// `"<hostname>:<pid>"`, Hermes' `_claimer_id()` for this process.
pub fn claimer_id() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buffer and length are valid; gethostname NUL-terminates or truncates.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    let host = if rc == 0 {
        let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).to_string()
    } else {
        String::new()
    };
    let host = if host.is_empty() {
        "unknown".into()
    } else {
        host
    };
    format!("{host}:{}", std::process::id())
}

/// Python's `str.strip()`.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
}

/// Python's `str.splitlines()[0]` (empty when there are no lines).
fn first_line(s: &str) -> &str {
    let end = s
        .find(|c: char| {
            matches!(
                c,
                '\n' | '\r'
                    | '\x0b'
                    | '\x0c'
                    | '\x1c'
                    | '\x1d'
                    | '\x1e'
                    | '\u{85}'
                    | '\u{2028}'
                    | '\u{2029}'
            )
        })
        .unwrap_or(s.len());
    &s[..end]
}

fn take_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn py_len(s: &str) -> usize {
    s.chars().count()
}

/// `normalize_profile_name`: strip, `default` case-insensitively, else lower-case.
pub fn canonical_assignee(a: &str) -> DbResult<String> {
    let s = py_strip(a);
    if s.is_empty() {
        return value_err("profile name cannot be empty");
    }
    if s.to_lowercase() == "default" {
        return Ok("default".into());
    }
    Ok(s.to_lowercase())
}

// ---------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------

/// A row read by column name, tolerant of missing and unknown columns.
#[derive(Debug, Clone, Default)]
pub struct Row(pub BTreeMap<String, Sql>);

impl Row {
    fn from(r: &rusqlite::Row) -> rusqlite::Result<Row> {
        let st = r.as_ref();
        let mut m = BTreeMap::new();
        for i in 0..st.column_count() {
            m.insert(st.column_name(i)?.to_string(), r.get::<_, Sql>(i)?);
        }
        Ok(Row(m))
    }
    pub fn has(&self, k: &str) -> bool {
        self.0.contains_key(k)
    }
    pub fn s(&self, k: &str) -> Option<String> {
        match self.0.get(k)? {
            Sql::Text(t) => Some(t.clone()),
            Sql::Integer(i) => Some(i.to_string()),
            Sql::Real(f) => Some(f.to_string()),
            Sql::Blob(b) => Some(String::from_utf8_lossy(b).to_string()),
            Sql::Null => None,
        }
    }
    pub fn i(&self, k: &str) -> Option<i64> {
        match self.0.get(k)? {
            Sql::Integer(i) => Some(*i),
            Sql::Real(f) => Some(*f as i64),
            Sql::Text(t) => t.trim().parse().ok(),
            _ => None,
        }
    }
    /// The raw value as JSON (what `json.dumps(row[k])` gives).
    pub fn j(&self, k: &str) -> Value {
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

fn query_rows(conn: &Connection, sql: &str, p: &[&dyn rusqlite::ToSql]) -> DbResult<Vec<Row>> {
    let mut st = conn.prepare_cached(sql)?;
    let rows = st.query_map(p, Row::from)?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

fn query_strings(
    conn: &Connection,
    sql: &str,
    p: &[&dyn rusqlite::ToSql],
) -> DbResult<Vec<String>> {
    let mut st = conn.prepare_cached(sql)?;
    let rows = st.query_map(p, |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

#[derive(Debug, Clone)]
pub struct Task(pub Row);

impl Task {
    pub fn id(&self) -> String {
        self.0.s("id").unwrap_or_default()
    }
    pub fn status(&self) -> String {
        self.0.s("status").unwrap_or_default()
    }
    pub fn assignee(&self) -> Option<String> {
        self.0.s("assignee")
    }
    pub fn goal_mode(&self) -> bool {
        self.0.i("goal_mode").unwrap_or(0) != 0
    }
    /// Column values as `Task.from_row` presents them.
    pub fn field(&self, k: &str) -> Value {
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

pub fn get_task(conn: &Connection, id: &str) -> DbResult<Option<Task>> {
    Ok(
        query_rows(conn, "SELECT * FROM tasks WHERE id = ?", &[&id])?
            .into_iter()
            .next()
            .map(Task),
    )
}

pub fn task_exists(conn: &Connection, id: &str) -> DbResult<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM tasks WHERE id = ?")?
        .exists([id])?)
}

pub fn parent_ids(conn: &Connection, id: &str) -> DbResult<Vec<String>> {
    query_strings(
        conn,
        "SELECT parent_id FROM task_links WHERE child_id = ? ORDER BY parent_id",
        &[&id],
    )
}

pub fn child_ids(conn: &Connection, id: &str) -> DbResult<Vec<String>> {
    query_strings(
        conn,
        "SELECT child_id FROM task_links WHERE parent_id = ? ORDER BY child_id",
        &[&id],
    )
}

pub fn list_comments(conn: &Connection, id: &str) -> DbResult<Vec<Row>> {
    query_rows(
        conn,
        "SELECT * FROM task_comments WHERE task_id = ? ORDER BY created_at ASC",
        &[&id],
    )
}

pub fn list_events(conn: &Connection, id: &str) -> DbResult<Vec<Row>> {
    query_rows(
        conn,
        "SELECT * FROM task_events WHERE task_id = ? ORDER BY created_at ASC, id ASC",
        &[&id],
    )
}

pub fn list_runs(conn: &Connection, id: &str) -> DbResult<Vec<Row>> {
    query_rows(
        conn,
        "SELECT * FROM task_runs WHERE task_id = ? ORDER BY started_at ASC, id ASC",
        &[&id],
    )
}

pub fn latest_run_id(conn: &Connection, id: &str) -> DbResult<Option<i64>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM task_runs WHERE task_id = ? ORDER BY started_at DESC, id DESC LIMIT 1",
        )?
        .query_row([id], |r| r.get::<_, i64>(0))
        .optional()?)
}

/// A run row's `metadata` as `Run.from_row` parses it (invalid JSON → null).
pub fn run_metadata(r: &Row) -> Value {
    r.s("metadata")
        .filter(|s| !s.is_empty())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

/// An event payload as `list_events` parses it.
pub fn event_payload(r: &Row) -> Value {
    r.s("payload")
        .filter(|s| !s.is_empty())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

/// `json.dumps(payload, ensure_ascii=False) if payload else None`.
fn payload_text(p: Option<&Value>) -> Option<String> {
    match p {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) if m.is_empty() => None,
        Some(v) => Some(py_json(v)),
    }
}

pub fn append_event(
    conn: &Connection,
    task_id: &str,
    kind: &str,
    payload: Option<Value>,
    run_id: Option<i64>,
) -> DbResult<()> {
    conn.prepare_cached(
        "INSERT INTO task_events (task_id, run_id, kind, payload, created_at) VALUES (?, ?, ?, ?, ?)",
    )?
    .execute(params![task_id, run_id, kind, payload_text(payload.as_ref()), now()])?;
    Ok(())
}

fn current_run_id(conn: &Connection, task_id: &str) -> DbResult<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT current_run_id FROM tasks WHERE id = ?")?
        .query_row([task_id], |r| r.get::<_, Option<i64>>(0))
        .optional()?
        .flatten()
        .filter(|v| *v != 0))
}

/// `_end_run`: close the active run and clear the pointer.
fn end_run(
    conn: &Connection,
    task_id: &str,
    outcome: &str,
    status: &str,
    summary: Option<&str>,
    metadata: Option<&Value>,
) -> DbResult<Option<i64>> {
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
fn synthesize_ended_run(
    conn: &Connection,
    task_id: &str,
    outcome: &str,
    summary: Option<&str>,
    metadata: Option<&Value>,
) -> DbResult<i64> {
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

fn find_missing(conn: &Connection, ids: &[String]) -> DbResult<Vec<String>> {
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

// ---------------------------------------------------------------------------
// recompute_ready
// ---------------------------------------------------------------------------

/// Promote `todo`/`blocked` tasks whose parents are all `done`/`archived`
/// (same rules as Hermes: a blocked task stays when its latest
/// blocked/unblocked event is `blocked`, or when it reached its failure
/// limit). The eligible set comes from one query; a write transaction is only
/// opened when it is non-empty, and the query is re-run inside it, so a
/// concurrent writer's change is never undone.
pub fn recompute_ready(conn: &Connection) -> DbResult<i64> {
    const ELIGIBLE: &str = "SELECT t.id, t.status FROM tasks t \
        WHERE t.status IN ('todo', 'blocked') \
        AND NOT EXISTS (SELECT 1 FROM task_links l JOIN tasks p ON p.id = l.parent_id \
            WHERE l.child_id = t.id AND p.status NOT IN ('done', 'archived')) \
        AND (t.status = 'todo' OR ( \
            COALESCE((SELECT e.kind FROM task_events e WHERE e.task_id = t.id \
                AND e.kind IN ('blocked', 'unblocked') ORDER BY e.id DESC LIMIT 1), '') != 'blocked' \
            AND COALESCE(t.consecutive_failures, 0) < COALESCE(t.max_retries, 2)))";
    let eligible = |c: &Connection| -> DbResult<Vec<(String, String)>> {
        let mut st = c.prepare_cached(ELIGIBLE)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    };
    if eligible(conn)?.is_empty() {
        return Ok(0);
    }
    write_txn(conn, |c| {
        let mut promoted = 0;
        for (id, status) in eligible(c)? {
            c.execute(
                "UPDATE tasks SET status = 'ready' WHERE id = ? AND status = ?",
                params![id, status],
            )?;
            append_event(c, &id, "promoted", None, None)?;
            promoted += 1;
        }
        Ok(promoted)
    })
}

// ---------------------------------------------------------------------------
// create
// ---------------------------------------------------------------------------

#[derive(Debug, Default, Clone)]
pub struct NewTask {
    pub title: String,
    pub body: Option<String>,
    pub assignee: Option<String>,
    pub created_by: Option<String>,
    pub workspace_kind: String,
    pub workspace_path: Option<String>,
    pub tenant: Option<String>,
    pub priority: i64,
    pub parents: Vec<String>,
    pub triage: bool,
    pub idempotency_key: Option<String>,
    pub max_runtime_seconds: Option<i64>,
    pub skills: Option<Vec<String>>,
    pub goal_mode: bool,
    pub goal_max_turns: Option<i64>,
    pub initial_status: String,
    pub session_id: Option<String>,
    /// The board's `default_workdir` (for `dir`/`worktree` without a path).
    pub board_default_workdir: Option<String>,
}

/// `create_task`. Returns `(task_id, created)`; `created` is false when the
/// idempotency key matched an existing non-archived task.
pub fn create_task(conn: &Connection, t: NewTask) -> DbResult<(String, bool)> {
    let assignee = match &t.assignee {
        Some(a) => Some(canonical_assignee(a)?),
        None => None,
    };
    if py_strip(&t.title).is_empty() {
        return value_err("title is required");
    }
    if !["running", "blocked"].contains(&t.initial_status.as_str()) {
        return value_err("initial_status must be one of ['blocked', 'running']");
    }
    if !["scratch", "worktree", "dir"].contains(&t.workspace_kind.as_str()) {
        return value_err(format!(
            "workspace_kind must be one of ['dir', 'scratch', 'worktree'], got {}",
            super::paths::py_repr(&t.workspace_kind)
        ));
    }
    let parents: Vec<String> = t
        .parents
        .iter()
        .filter(|p| !p.is_empty())
        .cloned()
        .collect();
    let skills_list = match &t.skills {
        None => None,
        Some(list) => {
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
                        super::paths::py_repr(name)
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
                let quoted: Vec<String> = typos.iter().map(|n| super::paths::py_repr(n)).collect();
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
            Some(cleaned)
        }
    };
    let mut workspace_path = t.workspace_path.clone();
    if workspace_path.is_none() && (t.workspace_kind == "dir" || t.workspace_kind == "worktree") {
        workspace_path = t.board_default_workdir.clone();
    }
    let title = py_strip(&t.title).to_string();
    for attempt in 0..2 {
        let task_id = new_task_id();
        let res = write_txn(conn, |c| {
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
            let missing = find_missing(c, &parents)?;
            if !missing.is_empty() {
                return value_err(format!("unknown parent task(s): {}", missing.join(", ")));
            }
            let status = if t.initial_status == "blocked" {
                "blocked"
            } else if t.triage {
                "triage"
            } else if parents.is_empty() {
                "ready"
            } else {
                let sql = format!(
                    "SELECT status FROM tasks WHERE id IN ({})",
                    vec!["?"; parents.len()].join(",")
                );
                let mut st = c.prepare(&sql)?;
                let statuses: Vec<String> = st
                    .query_map(params_from_iter(parents.iter()), |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                if statuses.iter().any(|s| s != "done") {
                    "todo"
                } else {
                    "ready"
                }
            };
            c.execute(
                "INSERT INTO tasks (id, title, body, assignee, status, priority, created_by, created_at, \
                 workspace_kind, workspace_path, branch_name, project_id, tenant, idempotency_key, \
                 max_runtime_seconds, skills, max_retries, goal_mode, goal_max_turns, session_id) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                params![
                    task_id,
                    title,
                    t.body,
                    assignee,
                    status,
                    t.priority,
                    t.created_by,
                    now(),
                    t.workspace_kind,
                    workspace_path,
                    Option::<String>::None,
                    Option::<String>::None,
                    t.tenant,
                    t.idempotency_key,
                    t.max_runtime_seconds,
                    skills_list.as_ref().map(|s| py_json(&json!(s))),
                    Option::<i64>::None,
                    t.goal_mode as i64,
                    t.goal_max_turns,
                    t.session_id,
                ],
            )?;
            for p in &parents {
                c.execute(
                    "INSERT OR IGNORE INTO task_links (parent_id, child_id) VALUES (?, ?)",
                    params![p, task_id],
                )?;
            }
            append_event(
                c,
                &task_id,
                "created",
                Some(json!({
                    "assignee": assignee,
                    "status": status,
                    "parents": parents,
                    "tenant": t.tenant,
                    "branch_name": null,
                    "skills": skills_list.as_ref().filter(|s| !s.is_empty()),
                    "goal_mode": if t.goal_mode { json!(true) } else { Value::Null },
                })),
                None,
            )?;
            if status == "blocked" {
                // Sticky: recompute_ready leaves it until an explicit unblock (§7 #32).
                append_event(
                    c,
                    &task_id,
                    "blocked",
                    Some(
                        json!({"reason": "created blocked (initial_status=blocked)", "kind": null, "recurrences": 0}),
                    ),
                    None,
                )?;
            }
            Ok((task_id.clone(), true))
        });
        match res {
            Err(DbError::Sqlite(e))
                if attempt == 0
                    && e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) =>
            {
                continue;
            }
            other => return other,
        }
    }
    Err(DbError::Other("unreachable".into()))
}

/// `add_notify_sub` (auto-subscribe on create).
pub fn add_notify_sub(
    conn: &Connection,
    task_id: &str,
    platform: &str,
    chat_id: &str,
    thread_id: Option<&str>,
    user_id: Option<&str>,
    notifier_profile: Option<&str>,
) -> DbResult<()> {
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

// ---------------------------------------------------------------------------
// links, comments
// ---------------------------------------------------------------------------

fn would_cycle(conn: &Connection, parent: &str, child: &str) -> DbResult<bool> {
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

pub fn link_tasks(conn: &Connection, parent: &str, child: &str) -> DbResult<()> {
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
        let pstatus: String =
            c.query_row("SELECT status FROM tasks WHERE id = ?", [parent], |r| {
                r.get(0)
            })?;
        if pstatus != "done" {
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

pub fn add_comment(conn: &Connection, task_id: &str, author: &str, body: &str) -> DbResult<i64> {
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

// ---------------------------------------------------------------------------
// heartbeat
// ---------------------------------------------------------------------------

/// `heartbeat_claim`: extend `claim_expires` when `claimer` holds the claim.
/// Returns the new expiry when extended.
pub fn heartbeat_claim(
    conn: &Connection,
    task_id: &str,
    claimer: &str,
    ttl: i64,
) -> DbResult<Option<i64>> {
    let expires = now() + ttl;
    write_txn(conn, |c| {
        let n = c.execute(
            "UPDATE tasks SET claim_expires = ? WHERE id = ? AND status = 'running' AND claim_lock = ?",
            params![expires, task_id, claimer],
        )?;
        if n != 1 {
            return Ok(None);
        }
        if let Some(run_id) = current_run_id(c, task_id)? {
            c.execute(
                "UPDATE task_runs SET claim_expires = ? WHERE id = ?",
                params![expires, run_id],
            )?;
        }
        Ok(Some(expires))
    })
}

/// `heartbeat_worker`: touch `last_heartbeat_at` (CAS on the run when known),
/// mirror it on the run, record a `heartbeat` event.
pub fn heartbeat_worker(
    conn: &Connection,
    task_id: &str,
    note: Option<&str>,
    expected_run_id: Option<i64>,
) -> DbResult<bool> {
    let t = now();
    write_txn(conn, |c| {
        let n = match expected_run_id {
            None => c.execute(
                "UPDATE tasks SET last_heartbeat_at = ? WHERE id = ? AND status = 'running'",
                params![t, task_id],
            )?,
            Some(r) => c.execute(
                "UPDATE tasks SET last_heartbeat_at = ? WHERE id = ? AND status = 'running' AND current_run_id = ?",
                params![t, task_id, r],
            )?,
        };
        if n != 1 {
            return Ok(false);
        }
        let run_id = match expected_run_id {
            Some(r) => Some(r),
            None => current_run_id(c, task_id)?,
        };
        if let Some(r) = run_id {
            c.execute(
                "UPDATE task_runs SET last_heartbeat_at = ? WHERE id = ?",
                params![t, r],
            )?;
        }
        let payload = note.filter(|n| !n.is_empty()).map(|n| json!({"note": n}));
        append_event(c, task_id, "heartbeat", payload, run_id)?;
        Ok(true)
    })
}

// ---------------------------------------------------------------------------
// complete
// ---------------------------------------------------------------------------

pub enum CompleteOutcome {
    Done,
    NotApplied,
    Phantom(Vec<String>),
}

fn verify_created_cards(
    conn: &Connection,
    task_id: &str,
    claimed: &[String],
) -> DbResult<(Vec<String>, Vec<String>)> {
    let mut ordered: Vec<String> = Vec::new();
    for c in claimed {
        let c = py_strip(c).to_string();
        if !c.is_empty() && !ordered.contains(&c) {
            ordered.push(c);
        }
    }
    if ordered.is_empty() {
        return Ok((vec![], vec![]));
    }
    let Some(task) = get_task(conn, task_id)? else {
        return Ok((vec![], ordered));
    };
    let assignee = task.assignee();
    let sql = format!(
        "SELECT id, created_by FROM tasks WHERE id IN ({})",
        vec!["?"; ordered.len()].join(",")
    );
    let mut st = conn.prepare(&sql)?;
    let found: BTreeMap<String, Option<String>> = st
        .query_map(params_from_iter(ordered.iter()), |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })?
        .collect::<Result<_, _>>()?;
    let children: HashSet<String> = child_ids(conn, task_id)?.into_iter().collect();
    let (mut ok, mut bad) = (vec![], vec![]);
    for cid in ordered {
        // Python: `found.get(cid)` is None both for a missing row and a NULL created_by.
        let Some(Some(created_by)) = found.get(&cid) else {
            bad.push(cid);
            continue;
        };
        if assignee
            .as_deref()
            .is_some_and(|a| !a.is_empty() && a == created_by)
            || created_by == task_id
            || children.contains(&cid)
        {
            ok.push(cid);
        } else {
            bad.push(cid);
        }
    }
    Ok((ok, bad))
}

fn scan_prose_for_phantom_ids(conn: &Connection, text: &str) -> DbResult<Vec<String>> {
    static RE: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\bt_[a-f0-9]{8,}\b").unwrap());
    let mut uniq: Vec<String> = Vec::new();
    for m in RE.find_iter(text) {
        if !uniq.iter().any(|u| u == m.as_str()) {
            uniq.push(m.as_str().to_string());
        }
    }
    find_missing(conn, &uniq)
}

pub struct Completion<'a> {
    pub result: Option<&'a str>,
    pub summary: Option<&'a str>,
    pub metadata: Option<Value>,
    pub created_cards: Option<Vec<String>>,
    pub expected_run_id: Option<i64>,
    /// For scratch-workspace deliverables and cleanup (None: leave files alone).
    pub paths: Option<&'a super::paths::KanbanPaths>,
}

/// `complete_task`: `running|ready|blocked → done`, CAS on the worker's run.
pub fn complete_task(conn: &Connection, task_id: &str, c: Completion) -> DbResult<CompleteOutcome> {
    let Completion {
        result,
        summary,
        metadata,
        created_cards,
        expected_run_id,
        paths,
    } = c;
    let mut verified = vec![];
    if let Some(cards) = created_cards.as_ref().filter(|c| !c.is_empty()) {
        let (ok, bad) = verify_created_cards(conn, task_id, cards)?;
        if !bad.is_empty() {
            let text = summary.or(result).filter(|s| !s.is_empty());
            let preview = text.map(|s| take_chars(first_line(py_strip(s)), 200));
            write_txn(conn, |c| {
                append_event(
                    c,
                    task_id,
                    "completion_blocked_hallucination",
                    Some(
                        json!({"phantom_cards": bad, "verified_cards": ok, "summary_preview": preview}),
                    ),
                    None,
                )
            })?;
            return Ok(CompleteOutcome::Phantom(bad));
        }
        verified = ok;
    }
    let metadata = match paths {
        Some(p) => super::workspace::merge_prose_artifacts(
            conn,
            p,
            task_id,
            metadata,
            &[summary.unwrap_or(""), result.unwrap_or("")],
        )?,
        None => metadata,
    };
    let t = now();
    let run_summary = summary.or(result);
    let applied = write_txn(conn, |c| {
        let mut metadata = metadata.clone();
        const SET: &str = "UPDATE tasks SET status = 'done', result = ?, completed_at = ?, claim_lock = NULL, \
            claim_expires = NULL, worker_pid = NULL, block_kind = NULL, block_recurrences = 0 \
            WHERE id = ? AND status IN ('running', 'ready', 'blocked')";
        let n = match expected_run_id {
            None => c.execute(SET, params![result, t, task_id])?,
            Some(r) => c.execute(
                &format!("{SET} AND current_run_id = ?"),
                params![result, t, task_id, r],
            )?,
        };
        if n != 1 {
            return Ok(None);
        }
        if let (Some(p), Some(m @ Value::Object(_))) = (paths, metadata.as_mut()) {
            super::workspace::persist_artifacts(c, p, task_id, m)?;
        }
        let mut run_id = end_run(
            c,
            task_id,
            "completed",
            "done",
            run_summary,
            metadata.as_ref(),
        )?;
        let meta_truthy = match &metadata {
            Some(Value::Object(m)) => !m.is_empty(),
            Some(Value::Null) | None => false,
            Some(_) => true,
        };
        if run_id.is_none()
            && (summary.is_some_and(|s| !s.is_empty())
                || meta_truthy
                || result.is_some_and(|s| !s.is_empty()))
        {
            run_id = Some(synthesize_ended_run(
                c,
                task_id,
                "completed",
                run_summary,
                metadata.as_ref(),
            )?);
        }
        let ev = run_summary.unwrap_or("");
        let ev = take_chars(first_line(py_strip(ev)), 400);
        let mut payload = Map::new();
        payload.insert("result_len".into(), json!(result.map(py_len).unwrap_or(0)));
        payload.insert(
            "summary".into(),
            if ev.is_empty() {
                Value::Null
            } else {
                json!(ev)
            },
        );
        if !verified.is_empty() {
            payload.insert("verified_cards".into(), json!(verified));
        }
        if let Some(Value::Array(arts)) = metadata.as_ref().and_then(|m| m.get("artifacts")) {
            let cleaned: Vec<String> = arts
                .iter()
                .filter_map(Value::as_str)
                .map(py_strip)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            if !cleaned.is_empty() {
                payload.insert("artifacts".into(), json!(cleaned));
            }
        }
        append_event(
            c,
            task_id,
            "completed",
            Some(Value::Object(payload)),
            run_id,
        )?;
        Ok(Some(run_id))
    })?;
    let Some(run_id) = applied else {
        return Ok(CompleteOutcome::NotApplied);
    };
    let scan: Vec<&str> = [summary, result]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect();
    if !scan.is_empty() {
        let refs: Vec<String> = scan_prose_for_phantom_ids(conn, &scan.join(" "))?
            .into_iter()
            .filter(|r| !verified.contains(r))
            .collect();
        if !refs.is_empty() {
            write_txn(conn, |c| {
                append_event(
                    c,
                    task_id,
                    "suspected_hallucinated_references",
                    Some(json!({"phantom_refs": refs, "source": "completion_summary"})),
                    run_id,
                )
            })?;
        }
    }
    write_txn(conn, |c| {
        c.execute(
            "UPDATE tasks SET consecutive_failures = 0, last_failure_error = NULL WHERE id = ?",
            [task_id],
        )?;
        Ok(())
    })?;
    recompute_ready(conn)?;
    if let Some(p) = paths {
        super::workspace::cleanup_after_complete(conn, p, task_id);
    }
    Ok(CompleteOutcome::Done)
}

// ---------------------------------------------------------------------------
// block / unblock
// ---------------------------------------------------------------------------

/// `block_task`. Returns the status the task landed in, or `None` when it
/// was not blockable (unknown, not running/ready, or the run CAS failed).
pub fn block_task(
    conn: &Connection,
    task_id: &str,
    reason: Option<&str>,
    kind: Option<&str>,
    expected_run_id: Option<i64>,
) -> DbResult<Option<String>> {
    if let Some(k) = kind
        && !VALID_BLOCK_KINDS.contains(&k)
    {
        return value_err(format!(
            "block kind must be one of {} or None",
            py_list(VALID_BLOCK_KINDS)
        ));
    }
    let cas = if expected_run_id.is_some() {
        " AND current_run_id = ?"
    } else {
        ""
    };
    let reason_truthy = reason.is_some_and(|r| !r.is_empty());
    write_txn(conn, |c| {
        let Some(cur) = query_rows(c, "SELECT * FROM tasks WHERE id = ?", &[&task_id])?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let prev_kind = cur.s("block_kind");
        let prev_rec = cur.i("block_recurrences").unwrap_or(0);
        let exec = |sql: &str, mut p: Vec<Sql>| -> DbResult<usize> {
            p.push(Sql::Text(task_id.into()));
            if let Some(r) = expected_run_id {
                p.push(Sql::Integer(r));
            }
            Ok(c.execute(&format!("{sql}{cas}"), params_from_iter(p))?)
        };
        let kind_v = kind.map(|k| Sql::Text(k.into())).unwrap_or(Sql::Null);
        let close = |c: &Connection| -> DbResult<Option<i64>> {
            let mut run_id = end_run(c, task_id, "blocked", "blocked", reason, None)?;
            if run_id.is_none() && reason_truthy {
                run_id = Some(synthesize_ended_run(c, task_id, "blocked", reason, None)?);
            }
            Ok(run_id)
        };
        if kind == Some("dependency") {
            let n = exec(
                "UPDATE tasks SET status = 'todo', claim_lock = NULL, claim_expires = NULL, worker_pid = NULL, \
                 block_kind = ? WHERE id = ? AND status IN ('running', 'ready')",
                vec![kind_v],
            )?;
            if n != 1 {
                return Ok(None);
            }
            let run_id = close(c)?;
            append_event(
                c,
                task_id,
                "dependency_wait",
                Some(json!({"reason": reason, "kind": kind})),
                run_id,
            )?;
            return Ok(Some("todo".to_string()));
        }
        let rec = if prev_kind.as_deref() == kind {
            prev_rec + 1
        } else {
            1
        };
        // A block of the same kind that keeps coming back goes to triage (loop breaker).
        let (status, event, payload) = if rec >= BLOCK_RECURRENCE_LIMIT {
            (
                "triage",
                "block_loop_detected",
                json!({"reason": reason, "kind": kind, "recurrences": rec, "limit": BLOCK_RECURRENCE_LIMIT}),
            )
        } else {
            (
                "blocked",
                "blocked",
                json!({"reason": reason, "kind": kind, "recurrences": rec}),
            )
        };
        let n = exec(
            &format!(
                "UPDATE tasks SET status = '{status}', claim_lock = NULL, claim_expires = NULL, worker_pid = NULL, \
                 block_kind = ?, block_recurrences = ? WHERE id = ? AND status IN ('running', 'ready')"
            ),
            vec![kind_v, Sql::Integer(rec)],
        )?;
        if n != 1 {
            return Ok(None);
        }
        let run_id = close(c)?;
        append_event(c, task_id, event, Some(payload), run_id)?;
        Ok(Some(status.to_string()))
    })
}

/// `unblock_task`: `blocked|scheduled → ready`, or `todo` while a parent is open.
pub fn unblock_task(conn: &Connection, task_id: &str) -> DbResult<Option<String>> {
    let t = now();
    write_txn(conn, |c| {
        let stale: Option<Option<i64>> = c
            .query_row(
                "SELECT current_run_id FROM tasks WHERE id = ? AND status IN ('blocked', 'scheduled')",
                [task_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(Some(run)) = stale.filter(|r| r.is_some_and(|v| v != 0)) {
            c.execute(
                "UPDATE task_runs SET status = 'reclaimed', outcome = 'reclaimed', \
                 summary = COALESCE(summary, 'invariant recovery on unblock'), ended_at = ?, \
                 claim_lock = NULL, claim_expires = NULL, worker_pid = NULL WHERE id = ? AND ended_at IS NULL",
                params![t, run],
            )?;
        }
        let undone = c
            .prepare_cached(
                "SELECT 1 FROM task_links l JOIN tasks p ON p.id = l.parent_id \
                 WHERE l.child_id = ? AND p.status != 'done' LIMIT 1",
            )?
            .exists([task_id])?;
        let new_status = if undone { "todo" } else { "ready" };
        let n = c.execute(
            "UPDATE tasks SET status = ?, current_run_id = NULL, consecutive_failures = 0, \
             last_failure_error = NULL WHERE id = ? AND status IN ('blocked', 'scheduled')",
            params![new_status, task_id],
        )?;
        if n != 1 {
            return Ok(None);
        }
        let payload = (new_status != "ready").then(|| json!({"status": new_status}));
        append_event(c, task_id, "unblocked", payload, None)?;
        Ok(Some(new_status.to_string()))
    })
}

/// Python's `sorted(list)` repr: `['a', 'b']`.
pub fn py_list(items: &[&str]) -> String {
    let mut v: Vec<&str> = items.to_vec();
    v.sort();
    let q: Vec<String> = v.iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", q.join(", "))
}

// ---------------------------------------------------------------------------
// list
// ---------------------------------------------------------------------------

pub struct ListFilter<'a> {
    pub assignee: Option<&'a str>,
    pub status: Option<&'a str>,
    pub tenant: Option<&'a str>,
    pub include_archived: bool,
    pub limit: i64,
}

pub fn list_tasks(conn: &Connection, f: &ListFilter) -> DbResult<Vec<Task>> {
    // Two phases: order narrow (id) rows, then read the full rows of the page.
    let mut q = String::from("SELECT id FROM tasks WHERE 1=1");
    let mut p: Vec<Sql> = vec![];
    if let Some(a) = f.assignee {
        q.push_str(" AND assignee = ?");
        p.push(Sql::Text(canonical_assignee(a)?));
    }
    if let Some(s) = f.status {
        if !VALID_STATUSES.contains(&s) {
            return value_err(format!("status must be one of {}", py_list(VALID_STATUSES)));
        }
        q.push_str(" AND status = ?");
        p.push(Sql::Text(s.into()));
    }
    if let Some(t) = f.tenant {
        q.push_str(" AND tenant = ?");
        p.push(Sql::Text(t.into()));
    }
    if !f.include_archived && f.status != Some("archived") {
        q.push_str(" AND status != 'archived'");
    }
    q.push_str(" ORDER BY priority DESC, created_at ASC");
    if f.limit > 0 {
        q.push_str(&format!(" LIMIT {}", f.limit));
    }
    let ids: Vec<String> = {
        let mut st = conn.prepare_cached(&q)?;
        let rows = st.query_map(params_from_iter(p), |r| r.get::<_, String>(0))?;
        rows.collect::<Result<Vec<_>, _>>()?
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(t) = get_task(conn, &id)? {
            out.push(t);
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// worker context
// ---------------------------------------------------------------------------

/// `time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))`.
pub fn local_ts(ts: i64) -> String {
    // SAFETY: localtime_r writes into the tm we own.
    unsafe {
        let t: libc::time_t = ts as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return String::new();
        }
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}",
            tm.tm_year + 1900,
            tm.tm_mon + 1,
            tm.tm_mday,
            tm.tm_hour,
            tm.tm_min
        )
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

/// Python `json.dumps(v, ensure_ascii=False, sort_keys=True)`.
fn py_json_sorted(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            o => o.clone(),
        }
    }
    py_json(&sort(v))
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// `build_worker_context`: the text a dispatcher hands a worker.
pub fn build_worker_context(
    conn: &Connection,
    task_id: &str,
    terminal_timeout: Option<&str>,
) -> DbResult<String> {
    let Some(task) = get_task(conn, task_id)? else {
        return value_err(format!("unknown task {task_id}"));
    };
    let r = &task.0;
    let now = now();
    let mut lines: Vec<String> = vec![];
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
        let existing: i64 = terminal_timeout
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let desired = (mr - TERMINAL_TIMEOUT_GRACE).max(1);
        let override_ = (mr > 0 && existing < desired).then(|| desired.to_string());
        let effective = override_.or(terminal_timeout.map(str::to_string));
        lines.push(format!("Max runtime: {mr}s"));
        if let Some(e) = effective.filter(|e| !e.is_empty()) {
            lines.push(format!("Terminal timeout: {e}s"));
        }
    }
    if let Some(b) = r.s("branch_name").filter(|b| !b.is_empty()) {
        lines.push(format!("Branch:   {b}"));
    }
    lines.push(String::new());
    if let Some(body) = r.s("body").filter(|b| !py_strip(b).is_empty()) {
        lines.push("## Body".into());
        lines.push(cap(Some(&body), CTX_MAX_BODY));
        lines.push(String::new());
    }
    let atts = query_rows(
        conn,
        "SELECT * FROM task_attachments WHERE task_id = ? ORDER BY created_at ASC, id ASC",
        &[&task_id],
    )?;
    if !atts.is_empty() {
        lines.push("## Attachments".into());
        lines.push(
            "Files attached to this task. Read them with the file/terminal tools at the absolute paths below:"
                .into(),
        );
        for a in &atts {
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
    let prior: Vec<Row> = list_runs(conn, task_id)?
        .into_iter()
        .filter(|r| r.i("ended_at").is_some())
        .collect();
    let omitted = prior.len().saturating_sub(CTX_MAX_PRIOR_ATTEMPTS);
    let shown = &prior[omitted..];
    if !shown.is_empty() {
        lines.push("## Prior attempts on this task".into());
        if omitted > 0 {
            lines.push(format!(
                "_({omitted} earlier attempt{} omitted; showing most recent {})_",
                if omitted != 1 { "s" } else { "" },
                shown.len()
            ));
        }
        for (off, run) in shown.iter().enumerate() {
            let started = run.i("started_at").unwrap_or(0);
            let age = relative_age(Some(started), now);
            let ts = local_ts(started);
            let ts_disp = if age.is_empty() {
                ts
            } else {
                format!("{ts}, {age}")
            };
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
                lines.push(format!(
                    "_metadata_: `{}`",
                    cap(Some(&py_json_sorted(&meta)), CTX_MAX_FIELD)
                ));
            }
            lines.push(String::new());
        }
    }
    let mut wrote_header = false;
    for pid in parent_ids(conn, task_id)? {
        let Some(pt) = get_task(conn, &pid)? else {
            continue;
        };
        if pt.status() != "done" {
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
            lines.push(format!(
                "_metadata_: `{}`",
                cap(Some(&py_json_sorted(&meta)), CTX_MAX_FIELD)
            ));
        }
        lines.push(String::new());
    }
    if let Some(assignee) = task.assignee().filter(|a| !a.is_empty()) {
        let rows = query_rows(
            conn,
            "SELECT t.id, t.title, r.summary, r.ended_at FROM task_runs r JOIN tasks t ON r.task_id = t.id \
             WHERE r.profile = ? AND r.task_id != ? AND r.outcome = 'completed' ORDER BY r.ended_at DESC LIMIT 5",
            &[&assignee, &task_id],
        )?;
        if !rows.is_empty() {
            lines.push(format!("## Recent work by @{assignee}"));
            for row in rows {
                let ended = row.i("ended_at").unwrap_or(0);
                let age = relative_age(Some(ended), now);
                let ts = local_ts(ended);
                let ts_disp = if age.is_empty() {
                    ts
                } else {
                    format!("{ts}, {age}")
                };
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
    }
    let comments = list_comments(conn, task_id)?;
    let omitted_c = comments.len().saturating_sub(CTX_MAX_COMMENTS);
    let shown_c = &comments[omitted_c..];
    if !shown_c.is_empty() {
        lines.push("## Comment thread".into());
        if omitted_c > 0 {
            lines.push(format!(
                "_({omitted_c} earlier comment{} omitted; showing most recent {})_",
                if omitted_c != 1 { "s" } else { "" },
                shown_c.len()
            ));
        }
        for c in shown_c {
            let at = c.i("created_at").unwrap_or(0);
            let age = relative_age(Some(at), now);
            let ts = local_ts(at);
            let ts_disp = if age.is_empty() {
                ts
            } else {
                format!("{ts}, {age}")
            };
            let author = c.s("author").unwrap_or_default().replace('`', "");
            lines.push(format!("comment from worker `{author}` at {ts_disp}:"));
            lines.push(cap(c.s("body").as_deref(), CTX_MAX_COMMENT));
            lines.push(String::new());
        }
    }
    let text = lines.join("\n");
    Ok(format!("{}\n", text.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_see_other_writers() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("kanban.db");
        let a = super::super::db::open(&p, 5000).unwrap();
        let (id, _) = create_task(
            &a,
            NewTask {
                title: "x".into(),
                assignee: Some("a".into()),
                workspace_kind: "scratch".into(),
                initial_status: "running".into(),
                ..Default::default()
            },
        )
        .unwrap();
        let f = ListFilter {
            assignee: None,
            status: None,
            tenant: None,
            include_archived: false,
            limit: 10,
        };
        recompute_ready(&a).unwrap();
        assert_eq!(list_tasks(&a, &f).unwrap()[0].status(), "ready");
        let b = rusqlite::Connection::open(&p).unwrap();
        b.execute("UPDATE tasks SET status='running' WHERE id=?", [&id])
            .unwrap();
        assert!(a.is_autocommit(), "a read transaction is open");
        recompute_ready(&a).unwrap();
        assert_eq!(list_tasks(&a, &f).unwrap()[0].status(), "running");
    }

    #[test]
    fn recompute_ready_follows_hermes_rules() {
        let d = tempfile::tempdir().unwrap();
        let c = super::super::db::open(&d.path().join("kanban.db"), 5000).unwrap();
        let ins = |id: &str, status: &str, failures: i64, max_retries: Option<i64>| {
            c.execute(
                "INSERT INTO tasks (id, title, status, created_at, consecutive_failures, max_retries) VALUES (?, 'x', ?, 1, ?, ?)",
                params![id, status, failures, max_retries],
            )
            .unwrap();
        };
        ins("t_p_done", "done", 0, None);
        ins("t_p_open", "running", 0, None);
        ins("t_todo_ok", "todo", 0, None);
        ins("t_todo_wait", "todo", 0, None);
        ins("t_sticky", "blocked", 0, None);
        ins("t_breaker", "blocked", 0, None);
        ins("t_tripped", "blocked", 2, None);
        ins("t_retries", "blocked", 2, Some(5));
        for (p, ch) in [
            ("t_p_done", "t_todo_ok"),
            ("t_p_open", "t_todo_wait"),
            ("t_p_done", "t_sticky"),
        ] {
            c.execute("INSERT INTO task_links VALUES (?, ?)", [p, ch])
                .unwrap();
        }
        append_event(&c, "t_sticky", "blocked", None, None).unwrap();
        // An unblock after a block lifts stickiness; a later block restores it.
        append_event(&c, "t_breaker", "blocked", None, None).unwrap();
        append_event(&c, "t_breaker", "unblocked", None, None).unwrap();
        assert_eq!(recompute_ready(&c).unwrap(), 3);
        let st = |id: &str| get_task(&c, id).unwrap().unwrap().status();
        assert_eq!(st("t_todo_ok"), "ready");
        assert_eq!(st("t_todo_wait"), "todo");
        assert_eq!(st("t_sticky"), "blocked");
        assert_eq!(st("t_breaker"), "ready");
        assert_eq!(st("t_tripped"), "blocked");
        assert_eq!(st("t_retries"), "ready");
        assert_eq!(recompute_ready(&c).unwrap(), 0);
        // Each promotion is recorded as Hermes records it.
        let n: i64 = c
            .query_row(
                "SELECT COUNT(*) FROM task_events WHERE kind = 'promoted' AND payload IS NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 3);
    }

    #[test]
    fn idempotent_create_and_sticky_initial_block() {
        let d = tempfile::tempdir().unwrap();
        let c = super::super::db::open(&d.path().join("kanban.db"), 5000).unwrap();
        let new = |key: Option<&str>, initial: &str| NewTask {
            title: " t ".into(),
            assignee: Some("Default".into()),
            workspace_kind: "scratch".into(),
            initial_status: initial.into(),
            idempotency_key: key.map(str::to_string),
            ..Default::default()
        };
        let (a, created) = create_task(&c, new(Some("k"), "running")).unwrap();
        assert!(created);
        let (b, created) = create_task(&c, new(Some("k"), "running")).unwrap();
        assert_eq!((a.as_str(), created), (b.as_str(), false));
        let t = get_task(&c, &a).unwrap().unwrap();
        assert_eq!(t.0.s("title").as_deref(), Some("t"));
        assert_eq!(t.assignee().as_deref(), Some("default"));
        let (g, _) = create_task(&c, new(None, "blocked")).unwrap();
        recompute_ready(&c).unwrap();
        assert_eq!(get_task(&c, &g).unwrap().unwrap().status(), "blocked");
        assert_eq!(unblock_task(&c, &g).unwrap().as_deref(), Some("ready"));
    }
}
