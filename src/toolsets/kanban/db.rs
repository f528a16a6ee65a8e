//! Opening `kanban.db` the way Hermes does (hermes-agent:
//! `hermes_cli/kanban_db.py`, `connect`): pragmas, and on the first open in
//! this process the header and integrity checks, schema and migrations, all
//! under `<db>.init.lock` so concurrent first opens do not race. A corrupt
//! file is refused and backed up, never recreated over.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use rusqlite::Connection;

use crate::toolsets::kanban::error::{KanbanError, KanbanResult};
use crate::toolsets::kanban::tables::{SCHEMA_SQL, migrate_add_optional_columns};
use crate::toolsets::kanban::txn::{forget_header_fd, install_busy_handler, is_busy};
use crate::toolsets::kanban::util::py_repr;

/// Hermes' `DEFAULT_BUSY_TIMEOUT_MS`; `HERMES_KANBAN_BUSY_TIMEOUT_MS` overrides
/// it. Here it caps a call's total lock wait, with
/// [`crate::hermes::deadlines::KANBAN_LOCK_WAIT`] as the ceiling.
pub(crate) const DEFAULT_BUSY_TIMEOUT_MS: u64 = 120_000;
const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

/// Paths whose first-open setup already ran in this process.
static INITIALIZED: LazyLock<Mutex<HashSet<PathBuf>>> = LazyLock::new(Default::default);

/// Open (and on first use in this process, check and migrate) the DB at `path`.
/// Lock waits are bounded by the calling thread's [`crate::toolsets::kanban::txn::LockBudget`].
pub(crate) fn open(path: &Path) -> KanbanResult<Connection> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if INITIALIZED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .contains(&key)
    {
        let conn = raw_connect(path)?;
        apply_pragmas(&conn)?;
        return Ok(conn);
    }
    let _lock = init_lock(path)?;
    validate_header(path)?;
    guard_healthy(path)?;
    let conn = raw_connect(path)?;
    apply_pragmas(&conn)?;
    conn.execute_batch(SCHEMA_SQL)?;
    migrate_add_optional_columns(&conn)?;
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    INITIALIZED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(key);
    Ok(conn)
}

/// Forget that `path` was checked, so the next open re-runs the first-open
/// checks and migrations (the file was replaced).
pub(crate) fn forget(path: &Path) {
    let mut set = INITIALIZED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    set.remove(path);
    let canon = std::fs::canonicalize(path).ok();
    if let Some(c) = &canon {
        set.remove(c);
    }
    drop(set);
    // The cached header descriptor points at the old file.
    forget_header_fd(&path.to_string_lossy());
    if let Some(c) = canon {
        forget_header_fd(&c.to_string_lossy());
    }
}

fn raw_connect(path: &Path) -> KanbanResult<Connection> {
    let mut conn = Connection::open(path)?;
    install_busy_handler(&mut conn)?;
    Ok(conn)
}

/// Hermes' per-connection pragmas. WAL, falling back to DELETE only on
/// network-filesystem locking errors, never downgrading a WAL database.
fn apply_pragmas(conn: &Connection) -> KanbanResult<()> {
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
/// A lock file that is not a regular file (a FIFO, a symlink) is refused at
/// once ([`crate::fs::open_lock_file`]); one that cannot be opened otherwise
/// is done without.
fn init_lock(db: &Path) -> KanbanResult<Option<crate::fs::Flock>> {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(".init.lock");
    let lock_path = db.with_file_name(name);
    let wait = crate::hermes::deadlines::KANBAN_INIT_LOCK;
    // Python's open("a+b") makes it 0666 less the umask.
    match crate::fs::Flock::take_timeout_mode(&lock_path, wait.get(), 0o666) {
        Ok(lock) => Ok(Some(lock)),
        Err(e) if crate::fs::NotALockFile::in_io(&e).is_some() => Err(e.into()),
        Err(e) => {
            if e.kind() == std::io::ErrorKind::TimedOut {
                tracing::warn!(
                    "kanban init lock {} not acquired within {}s; proceeding without it",
                    lock_path.display(),
                    wait.hermes().as_secs()
                );
            }
            Ok(None)
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
fn validate_header(path: &Path) -> KanbanResult<()> {
    // Opened without blocking and regular files only; anything else is left
    // for SQLite to refuse with its own error.
    let Ok(mut f) = crate::fs::open_regular(path) else {
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
    Err(KanbanError::BadHeader {
        path: path.to_path_buf(),
        signature: signature.into(),
        hex: hex.join(" "),
    })
}

/// `PRAGMA integrity_check` on an existing DB; a corrupt file is copied to
/// `kanban.db.corrupt.<sha-ish>.bak` and refused (never recreated over).
fn guard_healthy(path: &Path) -> KanbanResult<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.len() > 0 => {}
        _ => return Ok(()),
    }
    let refused = |e: rusqlite::Error| {
        (
            format!("sqlite refused to open file: {e}"),
            Some(Box::new(e)),
        )
    };
    let (reason, source) = match raw_connect(path).map_err(|e| match e {
        KanbanError::Sqlite(s) => s,
        other => rusqlite::Error::InvalidPath(PathBuf::from(other.to_string())),
    }) {
        Ok(probe) => match probe.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
        {
            Ok(s) if s.eq_ignore_ascii_case("ok") => return Ok(()),
            Ok(s) => (format!("integrity_check returned {}", py_repr(&s)), None),
            Err(e) if is_busy(&e) => return Err(e.into()),
            Err(e) => refused(e),
        },
        Err(e) if is_busy(&e) => return Err(e.into()),
        Err(e) => refused(e),
    };
    let backup = backup_corrupt(path)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "<backup failed>".into());
    Err(KanbanError::Corrupt {
        path: path.to_path_buf(),
        reason,
        backup,
        source,
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
