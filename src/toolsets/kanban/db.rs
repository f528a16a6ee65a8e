//! Opening `kanban.db` the way Hermes does (`kanban_db.connect`): pragmas,
//! first-open checks under `<db>.init.lock`, schema creation and additive
//! migrations that only ever add what is missing, and `write_txn`
//! (`BEGIN IMMEDIATE` / `COMMIT` retried with jitter on busy).

use std::collections::HashSet;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OptionalExtension, params};

pub const DEFAULT_BUSY_TIMEOUT_MS: u64 = 120_000;
const BUSY_MAX_RETRIES: usize = 5;
const INIT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);
const INIT_LOCK_POLL: Duration = Duration::from_millis(50);
const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Hermes' `ValueError`: surfaced as `<tool>: <message>`.
    #[error("{0}")]
    Value(String),
    #[error(
        "Refusing to open corrupt kanban DB at {path}: {reason}. Original preserved; backup at {backup}."
    )]
    Corrupt {
        path: PathBuf,
        reason: String,
        backup: String,
    },
    #[error("file is not a database: invalid SQLite header for {path}{signature}; first_32={hex}")]
    BadHeader {
        path: PathBuf,
        signature: String,
        hex: String,
    },
    /// A declared scratch deliverable could not be preserved (the completion rolled back).
    #[error("{0}")]
    Artifact(String),
    #[error("{0}")]
    Other(String),
}

pub type DbResult<T> = Result<T, DbError>;

pub fn value_err<T>(msg: impl Into<String>) -> DbResult<T> {
    Err(DbError::Value(msg.into()))
}

/// Paths whose first-open setup already ran in this process.
static INITIALIZED: LazyLock<Mutex<HashSet<PathBuf>>> = LazyLock::new(Default::default);

pub const SCHEMA_SQL: &str = r#"
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

/// Open (and on first use in this process, check and migrate) the DB at `path`.
pub fn open(path: &Path, busy_timeout_ms: u64) -> DbResult<Connection> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if INITIALIZED.lock().unwrap().contains(&key) {
        let conn = raw_connect(path, busy_timeout_ms)?;
        apply_pragmas(&conn)?;
        return Ok(conn);
    }
    let _lock = InitLock::acquire(path);
    validate_header(path)?;
    guard_healthy(path, busy_timeout_ms)?;
    let conn = raw_connect(path, busy_timeout_ms)?;
    apply_pragmas(&conn)?;
    conn.execute_batch(SCHEMA_SQL)?;
    migrate_add_optional_columns(&conn)?;
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    INITIALIZED.lock().unwrap().insert(key);
    Ok(conn)
}

/// Forget that `path` was checked, so the next open re-runs the first-open
/// checks and migrations (the file was replaced).
pub fn forget(path: &Path) {
    let mut set = INITIALIZED.lock().unwrap();
    set.remove(path);
    let canon = std::fs::canonicalize(path).ok();
    if let Some(c) = &canon {
        set.remove(c);
    }
    drop(set);
    // The cached header descriptor points at the old file.
    let mut fds = HEADER_FDS.lock().unwrap();
    fds.remove(&path.to_string_lossy().to_string());
    if let Some(c) = canon {
        fds.remove(&c.to_string_lossy().to_string());
    }
}

fn raw_connect(path: &Path, busy_timeout_ms: u64) -> DbResult<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_millis(busy_timeout_ms))?;
    conn.execute_batch(&format!("PRAGMA busy_timeout={busy_timeout_ms}"))?;
    Ok(conn)
}

/// Hermes' per-connection pragmas. WAL, falling back to DELETE only on
/// network-filesystem locking errors, never downgrading a WAL database.
fn apply_pragmas(conn: &Connection) -> DbResult<()> {
    match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
        Ok(_) => {}
        Err(e) => {
            let msg = e.to_string().to_lowercase();
            if msg.contains("locking protocol") || msg.contains("disk i/o") {
                tracing::warn!("kanban.db: WAL unavailable ({e}); using journal_mode=DELETE");
                let _ = conn.query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0));
            } else {
                return Err(e.into());
            }
        }
    }
    conn.execute_batch(
        "PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=100; PRAGMA foreign_keys=ON; \
         PRAGMA secure_delete=ON; PRAGMA cell_size_check=ON;",
    )?;
    Ok(())
}

/// `<db>.init.lock`: a bounded (10 s) exclusive flock serializing first-open
/// setup across processes; on timeout we proceed without it, as Hermes does.
struct InitLock {
    file: Option<std::fs::File>,
}

impl InitLock {
    fn acquire(db: &Path) -> Self {
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(".init.lock");
        let lock_path = db.with_file_name(name);
        let Ok(file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&lock_path)
        else {
            return InitLock { file: None };
        };
        let deadline = Instant::now() + INIT_LOCK_TIMEOUT;
        loop {
            // SAFETY: flock on a file descriptor we own.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                return InitLock { file: Some(file) };
            }
            if Instant::now() >= deadline {
                tracing::warn!(
                    "kanban init lock {} not acquired within 10s; proceeding without it",
                    lock_path.display()
                );
                return InitLock { file: None };
            }
            std::thread::sleep(INIT_LOCK_POLL);
        }
    }
}

impl Drop for InitLock {
    fn drop(&mut self) {
        if let Some(f) = &self.file {
            // SAFETY: unlocking our own descriptor.
            unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_UN) };
        }
    }
}

fn looks_like_tls(data: &[u8], off: usize) -> bool {
    if data.len() < off + 5 {
        return false;
    }
    let len = u16::from_be_bytes([data[off + 3], data[off + 4]]);
    [0x14, 0x15, 0x16, 0x17].contains(&data[off])
        && data[off + 1] == 0x03
        && data[off + 2] <= 0x04
        && len > 0
        && len <= 18432
}

/// Non-empty files must start with the SQLite header (Hermes' `_validate_sqlite_header`).
fn validate_header(path: &Path) -> DbResult<()> {
    let Ok(mut f) = std::fs::File::open(path) else {
        return Ok(());
    };
    let mut head = Vec::with_capacity(64);
    let _ = (&mut f).take(64).read_to_end(&mut head);
    if head.is_empty() || head.starts_with(SQLITE_HEADER) {
        return Ok(());
    }
    let signature = if head.starts_with(b"SQLit") && looks_like_tls(&head, 5) {
        " (TLS record header detected at byte offset 5)"
    } else if looks_like_tls(&head, 0) {
        " (TLS record header detected at byte offset 0)"
    } else {
        ""
    };
    let hex: Vec<String> = head.iter().take(32).map(|b| format!("{b:02x}")).collect();
    Err(DbError::BadHeader {
        path: path.to_path_buf(),
        signature: signature.into(),
        hex: hex.join(" "),
    })
}

/// `PRAGMA integrity_check` on an existing DB; a corrupt file is copied to
/// `kanban.db.corrupt.<sha-ish>.bak` and refused (never recreated over).
fn guard_healthy(path: &Path, busy_timeout_ms: u64) -> DbResult<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.len() > 0 => {}
        _ => return Ok(()),
    }
    let reason = match raw_connect(path, busy_timeout_ms).map_err(|e| match e {
        DbError::Sqlite(s) => s,
        other => rusqlite::Error::InvalidPath(PathBuf::from(other.to_string())),
    }) {
        Ok(probe) => match probe.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
        {
            Ok(s) if s.eq_ignore_ascii_case("ok") => return Ok(()),
            Ok(s) => format!("integrity_check returned {}", super::paths::py_repr(&s)),
            Err(e) if is_busy(&e) => return Err(e.into()),
            Err(e) => format!("sqlite refused to open file: {e}"),
        },
        Err(e) if is_busy(&e) => return Err(e.into()),
        Err(e) => format!("sqlite refused to open file: {e}"),
    };
    let backup = backup_corrupt(path)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "<backup failed>".into());
    Err(DbError::Corrupt {
        path: path.to_path_buf(),
        reason,
        backup,
    })
}

fn backup_corrupt(path: &Path) -> Option<PathBuf> {
    use std::hash::{DefaultHasher, Hasher};
    let data = std::fs::read(path).ok()?;
    let mut h = DefaultHasher::new();
    h.write(&data);
    let token = format!("{:016x}", h.finish());
    let name = path.file_name()?.to_string_lossy().to_string();
    let cand = path.with_file_name(format!("{name}.corrupt.{token}.bak"));
    if !cand.exists() {
        std::fs::copy(path, &cand).ok()?;
    }
    for sfx in ["-wal", "-shm"] {
        let side = path.with_file_name(format!("{name}{sfx}"));
        let dst = path.with_file_name(format!("{name}.corrupt.{token}.bak{sfx}"));
        if side.exists() && !dst.exists() {
            let _ = std::fs::copy(&side, &dst);
        }
    }
    Some(cand)
}

pub fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked)
    ) || {
        let m = e.to_string().to_lowercase();
        m.contains("database is locked") || m.contains("database is busy")
    }
}

fn jitter_sleep() {
    let ms = 20 + (super::ops::random_u32() % 131) as u64;
    std::thread::sleep(Duration::from_millis(ms));
}

fn boundary_with_retry(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    let mut attempt = 0;
    loop {
        match conn.execute_batch(sql) {
            Ok(()) => return Ok(()),
            Err(e) if is_busy(&e) && attempt < BUSY_MAX_RETRIES => {
                attempt += 1;
                jitter_sleep();
            }
            Err(e) => return Err(e),
        }
    }
}

/// Hermes' `write_txn`: `BEGIN IMMEDIATE`, the body, `COMMIT`; the two
/// boundaries are retried up to 5 times with a 20-150 ms jitter on busy,
/// the body never is. `ROLLBACK` on error, then the torn-extend check.
pub fn write_txn<T>(conn: &Connection, f: impl FnOnce(&Connection) -> DbResult<T>) -> DbResult<T> {
    boundary_with_retry(conn, "BEGIN IMMEDIATE")?;
    match f(conn) {
        Ok(v) => {
            if let Err(e) = boundary_with_retry(conn, "COMMIT") {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e.into());
            }
            check_file_length(conn)?;
            Ok(v)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Descriptors used to read DB headers, opened once and never closed: closing
/// any descriptor of a file drops every POSIX lock this process holds on it,
/// including SQLite's own WAL locks, after which another process's
/// checkpoint can leave our connection reading a stale snapshot.
static HEADER_FDS: LazyLock<Mutex<std::collections::HashMap<String, std::fs::File>>> =
    LazyLock::new(Default::default);

/// Post-commit check: the header's page count must fit in the file.
fn check_file_length(conn: &Connection) -> DbResult<()> {
    use std::os::unix::fs::FileExt;
    let Ok(Some(file)) = conn
        .query_row("PRAGMA database_list", [], |r| r.get::<_, String>(2))
        .optional()
    else {
        return Ok(());
    };
    if file.is_empty() {
        return Ok(());
    }
    let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    let Ok(size) = std::fs::metadata(&file).map(|m| m.len()) else {
        return Ok(());
    };
    let mut fds = HEADER_FDS.lock().unwrap();
    if !fds.contains_key(&file) {
        let Ok(f) = std::fs::File::open(&file) else {
            return Ok(());
        };
        fds.insert(file.clone(), f);
    }
    let mut hdr = [0u8; 4];
    if fds[&file].read_exact_at(&mut hdr, 28).is_err() {
        return Ok(());
    }
    drop(fds);
    let count = u32::from_be_bytes(hdr) as u64;
    if count == 0 || page_size <= 0 {
        return Ok(());
    }
    let actual = size / page_size as u64;
    if actual < count {
        return Err(DbError::Other(format!(
            "torn-extend detected: page count mismatch on {file}: header claims {count} pages, file has {actual} pages (missing {} pages, file_size={size}, page_size={page_size})",
            count - actual
        )));
    }
    Ok(())
}

pub fn table_columns(conn: &Connection, table: &str) -> DbResult<Vec<(String, String, bool)>> {
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

fn add_column(conn: &Connection, table: &str, ddl: &str) -> DbResult<bool> {
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
pub fn migrate_add_optional_columns(conn: &Connection) -> DbResult<()> {
    let names = |conn: &Connection, t: &str| -> DbResult<HashSet<String>> {
        Ok(table_columns(conn, t)?.into_iter().map(|c| c.0).collect())
    };
    let cols = names(conn, "tasks")?;
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
    let cols = names(conn, "tasks")?;
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
    conn.execute_batch(
        "CREATE INDEX IF NOT EXISTS idx_tasks_tenant ON tasks(tenant);
         CREATE INDEX IF NOT EXISTS idx_tasks_idempotency ON tasks(idempotency_key);
         CREATE INDEX IF NOT EXISTS idx_tasks_session_id ON tasks(session_id);",
    )?;
    if !names(conn, "task_events")?.contains("run_id") {
        add_column(conn, "task_events", "run_id INTEGER")?;
    }
    conn.execute_batch("CREATE INDEX IF NOT EXISTS idx_events_run ON task_events(run_id, id)")?;
    let notify = names(conn, "kanban_notify_subs")?;
    if !notify.is_empty() && !notify.contains("notifier_profile") {
        add_column(conn, "kanban_notify_subs", "notifier_profile TEXT")?;
    }
    // Running tasks from before runs existed get a synthesized run row.
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
        let now = super::ops::now();
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
    })?;
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
    rebuild_drifted_tables(conn)
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

fn table_drifted(conn: &Connection, table: &str) -> DbResult<bool> {
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
fn rebuild_drifted_tables(conn: &Connection) -> DbResult<()> {
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
            if *table == "kanban_notify_subs" {
                let shared: Vec<&String> = old
                    .iter()
                    .filter(|x| new.contains(*x) && *x != "last_event_id")
                    .collect();
                let csv = shared
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                c.execute_batch(&format!(
                    "INSERT INTO {table} ({csv}, last_event_id) SELECT {csv}, COALESCE(CAST(last_event_id AS INTEGER), 0) FROM {table}_legacy"
                ))?;
            } else {
                let shared: Vec<&String> = old
                    .iter()
                    .filter(|x| new.contains(*x) && *x != "id")
                    .collect();
                let csv = shared
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                c.execute_batch(&format!(
                    "INSERT INTO {table} ({csv}) SELECT {csv} FROM {table}_legacy"
                ))?;
            }
            c.execute_batch(&format!("DROP TABLE {table}_legacy"))?;
            for idx in *indexes {
                c.execute_batch(idx)?;
            }
        }
        Ok(())
    })
}
