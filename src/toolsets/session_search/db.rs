//! Opening Hermes' `state.db` for reading only.
//!
//! Hermes' own path (`hermes_state.py`, `SessionDB()`) opens the file
//! read-write: it creates a missing database, migrates an old one and heals
//! rows. hermes-mcp never does any of that: the file is opened with
//! `SQLITE_OPEN_READ_ONLY` (what Hermes' `SessionDB(read_only=True)` gets from
//! its `file:…?mode=ro` URI), so a missing file is an error rather than a new
//! empty database, and nothing is ever written. In WAL mode (Hermes' default)
//! readers never block Hermes' writers; the busy timeout is Hermes' own short
//! one (1 s, `timeout=1.0`), for the rare moment a writer holds the file
//! exclusively (rollback-journal mode, WAL recovery).
//!
//! Before any query the file is checked: a SQLite database, with Hermes'
//! `schema_version` table at the version these queries were written against.
//! Each failure has its own text, prefixed like Hermes' own
//! `format_session_db_unavailable()`.
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

use rusqlite::{Connection, OpenFlags, ffi};

/// `hermes_state.SCHEMA_VERSION` of the Hermes these queries copy.
pub(crate) const SCHEMA_VERSION: i64 = 22;
/// The Hermes release that writes schema [`SCHEMA_VERSION`].
pub(crate) const HERMES_RELEASE: &str = "hermes-agent 0.19";
/// Hermes' `sqlite3.connect(..., timeout=1.0)`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(1);
/// The most memory a connection's page cache may use (32 MiB).
const PAGE_CACHE_KIB: u32 = 32 * 1024;

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
        "Session database not available: {} is locked by another process ({why}); try again in a moment.",
        path.display()
    )]
    Locked { path: PathBuf, why: String },
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
    Other { path: PathBuf, why: String },
}

/// Open `path` read-only and check it is a Hermes state.db of the known schema.
pub(crate) fn open(path: &Path, fts: Fts) -> Result<StateDb, OpenError> {
    if !path.exists() {
        return Err(OpenError::Missing {
            path: path.to_path_buf(),
        });
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| classify(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| classify(path, e))?;
    conn.set_prepared_statement_cache_capacity(32);
    // A page cache that holds what a ranked search touches (the FTS index and
    // its document sizes), kept between calls with the connection: SQLite's
    // default 2 MB is re-read from the file on every search.
    conn.execute_batch(&format!("PRAGMA cache_size = -{PAGE_CACHE_KIB}"))
        .map_err(|e| classify(path, e))?;
    let mut db = StateDb {
        conn,
        fts: false,
        trigram: false,
    };
    db.check(path, fts)?;
    Ok(db)
}

impl StateDb {
    /// The schema version, and which FTS tables may be used.
    fn check(&mut self, path: &Path, fts: Fts) -> Result<(), OpenError> {
        check_version(&self.conn, path)?;
        (self.fts, self.trigram) = match fts {
            Fts::Off => (false, false),
            Fts::Probe => fts_tables(&self.conn).map_err(|e| classify(path, e))?,
        };
        Ok(())
    }
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
    pub(crate) fn take(&self, path: &Path) -> Result<StateDb, OpenError> {
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
            k.db.check(path, Fts::Probe)?;
            return Ok(k.db);
        }
        open(path, Fts::Probe)
    }

    /// Keep `db` (opened by [`Self::take`] for `path`) for the next call.
    pub(crate) fn put(&self, path: PathBuf, db: StateDb) {
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
    let version = conn.query_row("SELECT version FROM schema_version", [], |r| {
        r.get::<_, Option<i64>>(0)
    });
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
        Err(e) if e.to_string().starts_with("no such table") => Err(OpenError::NotHermes {
            path: path.to_path_buf(),
        }),
        Err(e) => Err(classify(path, e)),
    }
}

/// Which of Hermes' two FTS5 tables exist (`messages_fts`, `messages_fts_trigram`).
fn fts_tables(conn: &Connection) -> rusqlite::Result<(bool, bool)> {
    let mut stmt = conn.prepare(
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
    match primary_code(&e) {
        Some(ffi::SQLITE_BUSY | ffi::SQLITE_LOCKED) => OpenError::Locked { path, why },
        Some(ffi::SQLITE_NOTADB | ffi::SQLITE_CORRUPT) => OpenError::Corrupt { path, why },
        _ => OpenError::Other { path, why },
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
