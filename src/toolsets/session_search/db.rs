//! Opening Hermes' `state.db` for reading only.
//!
//! Hermes' own path (`hermes_state.py`, `SessionDB()`) opens the file
//! read-write: it creates a missing database, migrates an old one and heals
//! rows. hermes-mcp never does any of that: the file is opened with
//! `SQLITE_OPEN_READ_ONLY` (what Hermes' `SessionDB(read_only=True)` gets from
//! its `file:…?mode=ro` URI), so a missing file is an error rather than a new
//! empty database, and the database file itself is never written. SQLite
//! does write beside it, as it does for every reader of a WAL database
//! (Hermes' default mode): it creates `state.db-wal` and `state.db-shm` when
//! they are missing and keeps the readers' marks in `-shm`. Where it cannot
//! (a read-only directory), the file is read through SQLite's read-only-media
//! path (`immutable=1`: no lock, no `-shm`; safe, as nothing can write a WAL
//! database there either), and such a connection is not kept. In WAL mode
//! readers never block Hermes' writers; the busy timeout is Hermes' own short
//! one (1 s, `timeout=1.0`), for the rare moment a writer holds the file
//! exclusively (rollback-journal mode, WAL recovery).
//!
//! The file is hostile until checked: only a regular file is opened (a FIFO
//! would block the open for ever); the connection runs with
//! `SQLITE_DBCONFIG_TRUSTED_SCHEMA` off and `SQLITE_DBCONFIG_DEFENSIVE` on,
//! a value size cap ([`VALUE_CAP`], so a huge or generated value fails its
//! statement instead of exhausting memory) and the call's [`Budget`] as its
//! progress handler (a statement that runs past the deadline, or whose call
//! was cancelled, is interrupted). Before any query: a SQLite database,
//! Hermes' `schema_version` table at the version these queries were written
//! against, and `sessions` and `messages` as tables (not views) with the
//! columns the queries read. Each failure has its own text, prefixed like
//! Hermes' own `format_session_db_unavailable()`.
//!
//! The current profile's connection is kept between calls ([`DbCache`]), as
//! Hermes' agent and gateway keep their `SessionDB`s open: idle, it holds no
//! lock and no read transaction (every statement runs in autocommit and sees
//! Hermes' latest commit), and it is rechecked on every call and dropped
//! when the file is replaced. Like any open connection to a WAL database, it
//! only stands in the way of switching the file out of WAL, which Hermes
//! never does to a database in WAL mode.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::limits::Limit;
use rusqlite::{Connection, OpenFlags, ffi};

use super::budget::Budget;

/// `hermes_state.SCHEMA_VERSION` of the Hermes these queries copy.
pub(crate) const SCHEMA_VERSION: i64 = 22;
/// The Hermes release that writes schema [`SCHEMA_VERSION`].
pub(crate) const HERMES_RELEASE: &str = "hermes-agent 0.19";
/// Hermes' `sqlite3.connect(..., timeout=1.0)`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(1);
/// The most memory a connection's page cache may use (32 MiB).
const PAGE_CACHE_KIB: u32 = 32 * 1024;
/// The largest value (one message, one title) a statement may read or make,
/// in bytes (64 MiB, `SQLITE_LIMIT_LENGTH`); a larger one fails the
/// statement with `SQLITE_TOOBIG` ("string or blob too big").
pub(crate) const VALUE_CAP: i32 = 64 << 20;
/// SQLite VM steps between two looks at the call's [`Budget`].
const PROGRESS_STEPS: i32 = 4096;

/// The `sessions` columns the queries read.
const SESSION_COLUMNS: [&str; 11] = [
    "id",
    "source",
    "model",
    "model_config",
    "parent_session_id",
    "started_at",
    "ended_at",
    "end_reason",
    "message_count",
    "title",
    "archived",
];
/// The `messages` columns the queries read.
const MESSAGE_COLUMNS: [&str; 10] = [
    "id",
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "active",
    "compacted",
];

/// Whether discovery may use the FTS5 tables of this database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fts {
    /// The current profile's database: Hermes' read-write open probes FTS5
    /// and enables it (and the trigram table) when the tables are there.
    Probe,
    /// Another profile's database. Hermes opens it with
    /// `SessionDB(read_only=True)`, which never sets `_fts_enabled`, so
    /// `search_messages()` returns nothing and discovery there finds titles
    /// only. Copied as is, so results stay identical to Hermes'.
    Off,
}

/// An open, checked `state.db`.
pub(crate) struct StateDb {
    pub(crate) conn: Connection,
    /// `messages_fts` may be queried (Hermes' `_fts_enabled`).
    pub(crate) fts: bool,
    /// `messages_fts_trigram` may be queried (Hermes' `_trigram_available`).
    pub(crate) trigram: bool,
    /// Opened with `immutable=1` (a read-only directory): never kept.
    immutable: bool,
    /// The schema cookie (`PRAGMA schema_version`) the tables were last
    /// checked at: SQLite changes it with every schema change.
    checked_at: Option<i64>,
}

/// Why a `state.db` cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OpenError {
    #[error(
        "Session database not available: {} does not exist. Hermes creates it when it records its first conversation; session_search only reads it.",
        path.display()
    )]
    Missing { path: PathBuf },
    #[error(
        "Session database not available: {} is {kind}, not a regular file; session_search reads only a regular SQLite file there.",
        path.display()
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "Session database not available: {} is locked by another process ({why}); try again in a moment.",
        path.display()
    )]
    Locked { path: PathBuf, why: String },
    #[error(
        "Session database not available: {} has a hot rollback journal ({}-journal): a Hermes process stopped in the middle of a write, and only a writer can roll it back. Start Hermes once (it recovers the database), then retry.",
        path.display(), path.display()
    )]
    HotJournal { path: PathBuf },
    #[error(
        "Session database not available: {} cannot be read because its directory {} is read-only and SQLite needs to create state.db-wal and state.db-shm there to read a WAL database ({why}); make the directory writable, or start Hermes once there so they exist.",
        path.display(), dir.display()
    )]
    ReadOnlyDir {
        path: PathBuf,
        dir: PathBuf,
        why: String,
    },
    #[error(
        "Session database not available: {} is not a readable SQLite database ({why}).",
        path.display()
    )]
    Corrupt { path: PathBuf, why: String },
    #[error(
        "Session database not available: {} has no schema_version table, so it is not a Hermes state.db (hermes-mcp reads schema {SCHEMA_VERSION}, written by {HERMES_RELEASE}).",
        path.display()
    )]
    NotHermes { path: PathBuf },
    #[error(
        "Session database not available: {} is not a Hermes state.db as {HERMES_RELEASE} writes it: {why}.",
        path.display()
    )]
    Shape { path: PathBuf, why: String },
    #[error(
        "Session database not available: {} is at schema version {version}, from a Hermes older than {HERMES_RELEASE}; hermes-mcp reads schema {SCHEMA_VERSION}. Start Hermes once (it upgrades the database), then retry.",
        path.display()
    )]
    Older { path: PathBuf, version: i64 },
    #[error(
        "Session database not available: {} is at schema version {version}, from a Hermes newer than {HERMES_RELEASE}; this hermes-mcp reads schema {SCHEMA_VERSION}. Update hermes-mcp.",
        path.display()
    )]
    Newer { path: PathBuf, version: i64 },
    #[error("Session database not available: {}: {why}.", path.display())]
    Other {
        path: PathBuf,
        why: String,
        code: Option<i32>,
    },
}

/// Open `path` read-only and check it is a Hermes state.db of the known
/// schema; its statements run under `budget`.
pub(crate) fn open(path: &Path, fts: Fts, budget: &Budget) -> Result<StateDb, OpenError> {
    regular(path)?;
    match open_as(path, fts, budget, false) {
        Err(OpenError::Other {
            why,
            code: Some(ffi::SQLITE_CANTOPEN),
            ..
        }) if !dir_writable(path) => {
            open_as(path, fts, budget, true).map_err(|_| OpenError::ReadOnlyDir {
                path: path.to_path_buf(),
                dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
                why,
            })
        }
        other => other,
    }
}

/// `path` must be a regular file (or a link to one), checked on a
/// non-blocking open: SQLite's own open of a FIFO blocks for ever.
fn regular(path: &Path) -> Result<(), OpenError> {
    match crate::fs::open_regular(path) {
        Ok(_) => Ok(()),
        Err(crate::fs::FileError::NotRegular { kind, .. }) => Err(OpenError::NotRegular {
            path: path.to_path_buf(),
            kind,
        }),
        Err(e) if e.is_not_found() => Err(OpenError::Missing {
            path: path.to_path_buf(),
        }),
        Err(e) => Err(OpenError::Other {
            path: path.to_path_buf(),
            why: e.to_string(),
            code: None,
        }),
    }
}

/// Whether the directory holding `path` can be written by this process.
fn dir_writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// `path` as a SQLite URI (`file:` with `%`, `?` and `#` escaped).
fn uri(path: &Path, immutable: bool) -> String {
    let mut out = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            _ if b.is_ascii() => out.push(char::from(*b)),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out.push_str(if immutable {
        "?immutable=1"
    } else {
        "?mode=ro"
    });
    out
}

/// One attempt at [`open`]: the connection, hardened, then checked.
fn open_as(path: &Path, fts: Fts, budget: &Budget, immutable: bool) -> Result<StateDb, OpenError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn =
        Connection::open_with_flags(uri(path, immutable), flags).map_err(|e| classify(path, e))?;
    harden(&conn).map_err(|e| classify(path, e))?;
    let mut db = StateDb {
        conn,
        fts: false,
        trigram: false,
        immutable,
        checked_at: None,
    };
    db.check(path, fts, budget)?;
    Ok(db)
}

/// Settings for a file nobody vouches for, and the caches that make it fast.
fn harden(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    // One plan per statement, whatever its parameters: without this SQLite
    // prepares a cached statement again whenever the pattern bound to a
    // `LIKE` changes (the title match's, on every discovery call with a new
    // query: about 0.1 ms each). The results are the same; only the planner's
    // use of bound values goes.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, VALUE_CAP)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(32);
    // A page cache that holds what a ranked search touches (the FTS index and
    // its document sizes), kept between calls with the connection: SQLite's
    // default 2 MB is re-read from the file on every search.
    conn.execute_batch(&format!("PRAGMA cache_size = -{PAGE_CACHE_KIB}"))
}

impl StateDb {
    /// Run this call's statements under `budget`, then check the schema
    /// version, the tables, and which FTS tables may be used. The tables are
    /// looked at again only when the schema cookie moved since their last
    /// check (the cookie is what SQLite itself reloads its schema on); the
    /// version row is data, read on every call.
    fn check(&mut self, path: &Path, fts: Fts, budget: &Budget) -> Result<(), OpenError> {
        let b = budget.clone();
        self.conn
            .progress_handler(PROGRESS_STEPS, Some(move || b.should_stop()))
            .map_err(|e| classify(path, e))?;
        let cookie = schema_cookie(&self.conn).map_err(|e| classify(path, e))?;
        if self.checked_at == Some(cookie) {
            return check_version(&self.conn, path);
        }
        check_table(&self.conn, path, "schema_version", &["version"])?;
        check_version(&self.conn, path)?;
        check_table(&self.conn, path, "sessions", &SESSION_COLUMNS)?;
        check_table(&self.conn, path, "messages", &MESSAGE_COLUMNS)?;
        (self.fts, self.trigram) = match fts {
            Fts::Off => (false, false),
            Fts::Probe => fts_tables(&self.conn).map_err(|e| classify(path, e))?,
        };
        self.checked_at = Some(cookie);
        Ok(())
    }
}

/// The schema cookie: SQLite bumps it with every change to the schema.
fn schema_cookie(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("PRAGMA schema_version")?
        .query_row([], |r| r.get(0))
}

/// `name` is a table (not a view) with every column of `columns`. A missing
/// `schema_version` is [`OpenError::NotHermes`].
fn check_table(
    conn: &Connection,
    path: &Path,
    name: &str,
    columns: &[&str],
) -> Result<(), OpenError> {
    let shape = |why: String| OpenError::Shape {
        path: path.to_path_buf(),
        why,
    };
    let kind = conn
        .prepare_cached(
            "SELECT type FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE \
             AND type IN ('table', 'view') LIMIT 1",
        )
        .and_then(|mut s| s.query_row([name], |r| r.get::<_, String>(0)))
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(classify(path, e)),
        })?;
    match kind.as_deref() {
        Some("table") => {}
        None if name == "schema_version" => {
            return Err(OpenError::NotHermes {
                path: path.to_path_buf(),
            });
        }
        None => return Err(shape(format!("it has no {name} table"))),
        Some(k) => return Err(shape(format!("{name} is a {k}, not a table"))),
    }
    let mut stmt = conn
        .prepare_cached("SELECT name FROM pragma_table_xinfo(?1)")
        .map_err(|e| classify(path, e))?;
    let have = stmt
        .query_map([name], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(|e| classify(path, e))?;
    let missing: Vec<&str> = columns
        .iter()
        .copied()
        .filter(|c| !have.iter().any(|h| h.eq_ignore_ascii_case(c)))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(shape(format!(
        "table {name} has no column {}",
        missing.join(", ")
    )))
}

/// The file a path names now: `(device, inode)`.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// A kept connection and the file it was opened on.
struct Kept {
    path: PathBuf,
    id: (u64, u64),
    db: StateDb,
}

/// The current profile's connection between calls.
#[derive(Default)]
pub(crate) struct DbCache(Mutex<Option<Kept>>);

impl DbCache {
    /// The current profile's `state.db` at `path`: the kept connection when
    /// it is still the same file (checked again), else a new one.
    pub(crate) fn take(&self, path: &Path, budget: &Budget) -> Result<StateDb, OpenError> {
        let kept = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let now = file_id(path);
        if let Some(mut k) = kept
            && k.path == path
            && Some(k.id) == now
        {
            k.db.check(path, Fts::Probe, budget)?;
            return Ok(k.db);
        }
        open(path, Fts::Probe, budget)
    }

    /// Keep `db` (opened by [`Self::take`] for `path`) for the next call;
    /// an `immutable=1` connection is not kept.
    pub(crate) fn put(&self, path: PathBuf, db: StateDb) {
        if db.immutable {
            return;
        }
        if let Some(id) = file_id(&path) {
            *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Kept { path, id, db });
        }
    }
}

/// `SELECT version FROM schema_version` must give [`SCHEMA_VERSION`].
fn check_version(conn: &Connection, path: &Path) -> Result<(), OpenError> {
    let version = conn
        .prepare_cached("SELECT version FROM schema_version")
        .and_then(|mut s| s.query_row([], |r| r.get::<_, Option<i64>>(0)));
    match version {
        Ok(Some(SCHEMA_VERSION)) => Ok(()),
        Ok(Some(v)) if v < SCHEMA_VERSION => Err(OpenError::Older {
            path: path.to_path_buf(),
            version: v,
        }),
        Ok(Some(v)) => Err(OpenError::Newer {
            path: path.to_path_buf(),
            version: v,
        }),
        Ok(None) | Err(rusqlite::Error::QueryReturnedNoRows) => Err(OpenError::NotHermes {
            path: path.to_path_buf(),
        }),
        Err(e) => Err(classify(path, e)),
    }
}

/// Which of Hermes' two FTS5 tables exist (`messages_fts`, `messages_fts_trigram`).
fn fts_tables(conn: &Connection) -> rusqlite::Result<(bool, bool)> {
    let mut stmt = conn.prepare_cached(
        "SELECT name FROM sqlite_master WHERE type = 'table' \
         AND name IN ('messages_fts', 'messages_fts_trigram')",
    )?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let has = |n: &str| names.iter().any(|x| x == n);
    Ok((has("messages_fts"), has("messages_fts_trigram")))
}

/// Sort an SQLite failure into the errors above by its result code.
fn classify(path: &Path, e: rusqlite::Error) -> OpenError {
    let (path, why) = (path.to_path_buf(), e.to_string());
    if let rusqlite::Error::SqliteFailure(f, _) = &e
        && f.extended_code == ffi::SQLITE_READONLY_ROLLBACK
    {
        return OpenError::HotJournal { path };
    }
    match primary_code(&e) {
        Some(ffi::SQLITE_BUSY | ffi::SQLITE_LOCKED) => OpenError::Locked { path, why },
        Some(ffi::SQLITE_NOTADB | ffi::SQLITE_CORRUPT) => OpenError::Corrupt { path, why },
        code => OpenError::Other { path, why, code },
    }
}

/// The primary SQLite result code of an error, if it came from SQLite.
pub(crate) fn primary_code(e: &rusqlite::Error) -> Option<i32> {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.extended_code & 0xff),
        _ => None,
    }
}

/// Python's `sqlite3.OperationalError`: the result codes CPython maps to it
/// (`Modules/_sqlite/util.c`). Hermes swallows exactly these on its FTS query.
pub(crate) fn is_operational(e: &rusqlite::Error) -> bool {
    matches!(
        primary_code(e),
        Some(
            ffi::SQLITE_ERROR
                | ffi::SQLITE_PERM
                | ffi::SQLITE_ABORT
                | ffi::SQLITE_BUSY
                | ffi::SQLITE_LOCKED
                | ffi::SQLITE_READONLY
                | ffi::SQLITE_INTERRUPT
                | ffi::SQLITE_IOERR
                | ffi::SQLITE_FULL
                | ffi::SQLITE_CANTOPEN
                | ffi::SQLITE_PROTOCOL
                | ffi::SQLITE_EMPTY
                | ffi::SQLITE_SCHEMA
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal database with the tables and columns the queries read.
    fn minimal(dir: &Path) -> PathBuf {
        let path = dir.join("state.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(&format!(
            "CREATE TABLE schema_version(version INTEGER); INSERT INTO schema_version VALUES (22);
             CREATE TABLE sessions({}); CREATE TABLE messages({});",
            SESSION_COLUMNS.join(", "),
            MESSAGE_COLUMNS.join(", ")
        ))
        .unwrap();
        path
    }

    #[test]
    fn the_connection_distrusts_the_schema_and_caps_values() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(&minimal(dir.path()), Fts::Probe, &Budget::new()).unwrap();
        let c = &db.conn;
        assert!(
            !c.db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA)
                .unwrap()
        );
        assert!(c.db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE).unwrap());
        assert_eq!(c.limit(Limit::SQLITE_LIMIT_LENGTH).unwrap(), VALUE_CAP);
        let e = c
            .query_row("SELECT length(zeroblob(?1))", [VALUE_CAP + 1], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap_err();
        assert_eq!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::TooBig),
            "{e}"
        );
    }

    /// A cached statement keeps its plan when the pattern bound to its
    /// `LIKE` changes (the title match's does with every new query), rather
    /// than being prepared again.
    #[test]
    fn a_new_like_pattern_does_not_prepare_a_cached_statement_again() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(&minimal(dir.path()), Fts::Probe, &Budget::new()).unwrap();
        let sql = "SELECT count(*) FROM sessions WHERE title LIKE ? ESCAPE '\\'";
        for pattern in ["auth #%", "deploy #%", "p99%"] {
            let mut stmt = db.conn.prepare_cached(sql).unwrap();
            assert_eq!(stmt.query_row([pattern], |r| r.get::<_, i64>(0)), Ok(0));
        }
        let stmt = db.conn.prepare_cached(sql).unwrap();
        assert_eq!(stmt.get_status(rusqlite::StatementStatus::RePrepare), 0);
    }

    #[test]
    fn a_kept_connection_sees_changes_to_the_schema_and_the_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = minimal(dir.path());
        let cache = DbCache::default();
        let db = cache.take(&path, &Budget::new()).unwrap();
        assert!(!db.fts && db.checked_at.is_some());
        cache.put(path.clone(), db);
        let writer = Connection::open(&path).unwrap();
        // The version row is data: no schema change, still seen.
        writer
            .execute_batch("UPDATE schema_version SET version = 23")
            .unwrap();
        let e = cache.take(&path, &Budget::new()).err().unwrap();
        assert!(matches!(e, OpenError::Newer { version: 23, .. }), "{e}");
        writer
            .execute_batch("UPDATE schema_version SET version = 22")
            .unwrap();
        cache.put(path.clone(), cache.take(&path, &Budget::new()).unwrap());
        // A column renamed in place (same file): the tables are checked again.
        writer
            .execute_batch("ALTER TABLE messages RENAME COLUMN compacted TO c2")
            .unwrap();
        let e = cache.take(&path, &Budget::new()).err().unwrap();
        assert!(e.to_string().contains("has no column compacted"), "{e}");
        writer
            .execute_batch("ALTER TABLE messages RENAME COLUMN c2 TO compacted")
            .unwrap();
        cache.put(path.clone(), cache.take(&path, &Budget::new()).unwrap());
        // FTS tables added in place are found.
        writer
            .execute_batch("CREATE VIRTUAL TABLE messages_fts USING fts5(content)")
            .unwrap();
        let db = cache.take(&path, &Budget::new()).unwrap();
        assert!(db.fts && !db.trigram);
    }

    #[test]
    fn a_cancelled_budget_interrupts_a_running_statement() {
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget::new();
        let db = open(&minimal(dir.path()), Fts::Probe, &budget).unwrap();
        budget.cancel();
        let e = db
            .conn
            .query_row(
                "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
                 SELECT count(*) FROM r",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_err();
        assert_eq!(primary_code(&e), Some(ffi::SQLITE_INTERRUPT), "{e}");
        assert_eq!(
            budget.stopped(),
            Some(super::super::budget::Stop::Cancelled)
        );
    }
}
