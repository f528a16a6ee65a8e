//! Hermes' `write_txn` (hermes-agent: `hermes_cli/kanban_db.py`): every
//! write runs in `BEGIN IMMEDIATE` / `COMMIT`, the boundaries retried with
//! jitter while another process holds the lock, and each commit is followed
//! by the torn-extend check (`_check_file_length_invariant`).
//!
//! Waiting for another process's lock is bounded per tool call, not per
//! statement: Hermes waits up to `busy_timeout` (120 s) on every statement and
//! retries each boundary 5 times, so a board held by a wedged process costs a
//! Hermes call many minutes. Here one call waits
//! [`KANBAN_LOCK_WAIT`](crate::hermes::deadlines::KANBAN_LOCK_WAIT) in all
//! (a [`LockBudget`] set by the call, read by the busy handler and the retry
//! loop) and then fails with an error naming the lock.

use std::cell::Cell;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OptionalExtension};

use crate::toolsets::kanban::error::{KanbanError, KanbanResult};
use crate::toolsets::kanban::util::random_u32;

const BUSY_MAX_RETRIES: usize = 5;

thread_local! {
    /// When the current call's lock waiting must end (set by [`LockBudget`]).
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The lock-wait deadline of the call running on this thread, for as long as
/// the guard lives (each call's SQLite work runs on one blocking thread).
pub(crate) struct LockBudget {
    prev: Option<Instant>,
}

impl LockBudget {
    pub(crate) fn start(deadline: Instant) -> Self {
        LockBudget {
            prev: DEADLINE.replace(Some(deadline)),
        }
    }
}

impl Drop for LockBudget {
    fn drop(&mut self) {
        DEADLINE.set(self.prev);
    }
}

/// The call's deadline, else (outside a call) `KANBAN_LOCK_WAIT` after `since`.
fn deadline_after(since: Instant) -> Instant {
    DEADLINE
        .get()
        .unwrap_or_else(|| since + crate::hermes::deadlines::KANBAN_LOCK_WAIT.get())
}

/// True once the current call has used up its lock-wait budget.
pub(crate) fn lock_wait_expired() -> bool {
    DEADLINE.get().is_some_and(|d| Instant::now() >= d)
}

/// Install the busy handler on `conn` (it replaces SQLite's `busy_timeout`):
/// SQLite's own back-off (`sqliteDefaultBusyCallback`: 1, 2, 5, 10, 15, 20,
/// 25, 25, 25, 50, 50, 100 ms), until the call's deadline.
pub(crate) fn install_busy_handler(conn: &mut Connection) -> rusqlite::Result<()> {
    const DELAYS_MS: [u64; 12] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];
    let mut episode = Instant::now();
    conn.busy_handler(Some(move |n: i32| {
        if n == 0 {
            episode = Instant::now();
        }
        let left = deadline_after(episode).saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let step = DELAYS_MS[usize::try_from(n).unwrap_or(0).min(DELAYS_MS.len() - 1)];
        std::thread::sleep(Duration::from_millis(step).min(left));
        true
    }))
}

pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked)
    ) || {
        let m = e.to_string().to_lowercase();
        m.contains("database is locked") || m.contains("database is busy")
    }
}

fn jitter_sleep() {
    let ms = 20 + (random_u32() % 131) as u64;
    std::thread::sleep(Duration::from_millis(ms));
}

fn boundary_with_retry(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    let mut attempt = 0;
    loop {
        match conn.execute_batch(sql) {
            Ok(()) => return Ok(()),
            Err(e) if is_busy(&e) && attempt < BUSY_MAX_RETRIES && !lock_wait_expired() => {
                attempt += 1;
                jitter_sleep();
            }
            Err(e) => return Err(e),
        }
    }
}

/// Hermes' `write_txn`: `BEGIN IMMEDIATE`, the body, `COMMIT`; the two
/// boundaries are retried up to 5 times with a 20-150 ms jitter on busy
/// (never past the call's lock-wait deadline), the body never is. `ROLLBACK` on error, then the torn-extend check.
pub(crate) fn write_txn<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> KanbanResult<T>,
) -> KanbanResult<T> {
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

/// Post-commit check: the header's page count must fit in the file. The size
/// and the header are two reads, and another process's checkpoint can extend
/// the file between them (Hermes' check has the same window): a mismatch is
/// read again a few times before it is reported, since a real torn extend
/// stays while a checkpoint in flight finishes within milliseconds.
fn check_file_length(conn: &Connection) -> KanbanResult<()> {
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
    if page_size <= 0 {
        return Ok(());
    }
    let mut attempt = 0;
    loop {
        let Some((count, size)) = header_and_size(&file) else {
            return Ok(());
        };
        let actual = size / page_size as u64;
        if count == 0 || actual >= count {
            return Ok(());
        }
        attempt += 1;
        if attempt >= 3 {
            return Err(KanbanError::TornExtend {
                file,
                count,
                actual,
                size,
                page_size,
            });
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The header's page count and the file's size, or `None` when unreadable.
fn header_and_size(file: &str) -> Option<(u64, u64)> {
    use std::os::unix::fs::FileExt;
    let size = std::fs::metadata(file).ok()?.len();
    let mut fds = HEADER_FDS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !fds.contains_key(file) {
        let f = std::fs::File::open(file).ok()?;
        fds.insert(file.to_string(), f);
    }
    let mut hdr = [0u8; 4];
    fds[file].read_exact_at(&mut hdr, 28).ok()?;
    Some((u64::from(u32::from_be_bytes(hdr)), size))
}

/// Drop the cached header descriptor for `file` (the file was replaced).
pub(crate) fn forget_header_fd(file: &str) {
    HEADER_FDS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .remove(file);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_shorter_than_its_header_is_a_torn_extend() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("k.db");
        let conn = Connection::open(&path).expect("open");
        conn.execute_batch("CREATE TABLE t(x BLOB); INSERT INTO t VALUES (zeroblob(20000));")
            .expect("fill");
        check_file_length(&conn).expect("a whole file passes");
        let len = std::fs::metadata(&path).expect("meta").len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open for truncate")
            .set_len(len - 4096)
            .expect("truncate");
        assert!(matches!(
            check_file_length(&conn),
            Err(KanbanError::TornExtend { .. })
        ));
    }
}
