//! Memory files on disk, shared with Hermes' own writers (its agent, its
//! background review, the gateway's `/memory approve`): Hermes' lock, reads
//! that never block or overrun, Hermes' atomic 0600 replace and its drift
//! backups (hermes-agent 0.19.0: `tools/memory_tool.py`, `MemoryStore._file_lock`,
//! `_read_file`, `_write_file`, `_detect_external_drift`; `utils.atomic_replace`).
//!
//! **The lock.** Hermes serialises every read-modify-write of `MEMORY.md` with
//! an exclusive BSD `flock(2)` on `MEMORY.md.lock` beside it (`USER.md.lock`
//! for `USER.md`), opened `a+` (mode 0666 less the umask) and never deleted.
//! We take the same lock on the same file, held from the re-read through the
//! rename, so no entry is lost whichever side writes first. Hermes waits
//! forever; a call here gives up after
//! [`MEMORY_LOCK_WAIT`](crate::hermes::deadlines::MEMORY_LOCK_WAIT) with nothing written.
//!
//! **Where we are stricter than Hermes**, so that bad input never loses
//! entries: a memory file that is not a regular file (a FIFO would block
//! Hermes forever), larger than [`READ_CAP`], not UTF-8 (Hermes raises) or
//! unreadable (Hermes reads it as empty and the next write would replace it)
//! is an error naming the file, and nothing is written; so is a lock file
//! that is not a regular file (a FIFO, a symlink: see [`crate::fs::lock`]).

use std::fs;
use std::path::{Path, PathBuf};

use crate::fs::{FileError, Flock};
use crate::hermes::deadlines;

/// The largest memory file read: far beyond any char limit a Hermes config
/// would set (the default whole-file limit is 2,200 characters).
pub(crate) const READ_CAP: u64 = 16 << 20;

/// A failure Hermes would raise as an exception: the call answers
/// `{"error": <text>, "success": false}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure(pub(crate) String);

/// `get_memory_dir().mkdir(parents=True, exist_ok=True)`, which Hermes runs on
/// every call; but a Hermes home that is not there is never created (a
/// mistyped `HERMES_HOME` must not become an empty new home).
pub(crate) fn ensure_dir(home: &Path, dir: &Path) -> Result<(), Failure> {
    if !home.is_dir() {
        return Err(Failure(format!(
            "Memory is not available: the Hermes home {} does not exist (check HERMES_HOME).",
            home.display()
        )));
    }
    fs::create_dir_all(dir).map_err(|e| {
        Failure(format!(
            "cannot create the memories directory {}: {e}",
            dir.display()
        ))
    })
}

/// A memory file's text with Python's universal newlines, `None` when it
/// does not exist (a dangling symlink included, as Python's `exists()`).
pub(crate) fn read_text(path: &Path) -> Result<Option<String>, Failure> {
    let bytes = crate::fs::read_capped_opt(path, READ_CAP).map_err(|e| match e {
        FileError::TooLarge { .. } => Failure(format!(
            "{} is larger than {READ_CAP} bytes, far beyond any memory limit; move it away. Nothing was written.",
            path.display()
        )),
        other => Failure(format!("Cannot read memory file: {other}. Nothing was written.")),
    })?;
    let Some(bytes) = bytes else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        Failure(format!(
            "{} is not UTF-8 text; fix or move it. Nothing was written.",
            path.display()
        ))
    })?;
    Ok(Some(super::format::universal_newlines(&text)))
}

/// `_write_file`: `.mem_*.tmp` beside the file, fsync, rename over the real
/// file (a symlink is kept and its target replaced). The result is 0600, as
/// Hermes' `mkstemp` leaves it.
pub(crate) fn write_text(path: &Path, text: &str) -> Result<(), Failure> {
    let opts = crate::fs::WriteOptions {
        temp: crate::fs::TempName::Random(".mem_", ".tmp"),
        perms: crate::fs::Perms::Fixed(0o600),
        ..crate::fs::WriteOptions::DURABLE
    };
    crate::fs::write_atomic(path, text.as_bytes(), &opts)
        .map(|_| ())
        .map_err(|e| {
            Failure(format!(
                "Failed to write memory file {}: {e}",
                path.display()
            ))
        })
}

/// `<path>.<suffix>`, as Hermes' `path.with_suffix(path.suffix + suffix)`.
fn with_added_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The drift snapshot: `text` written to `<path>.bak.<unix seconds>` (a
/// second backup in the same second replaces the first). Returns the path as
/// Hermes reports it, with Hermes' note when the write failed.
pub(crate) fn backup(path: &Path, text: &str) -> String {
    let secs = crate::time::unix_now();
    let bak = with_added_suffix(path, &format!(".bak.{secs}"));
    // Writing into a FIFO would block: only a regular file (or none) is written.
    let writable = fs::metadata(&bak).map_or(true, |m| m.is_file());
    match writable.then(|| fs::write(&bak, text)) {
        Some(Ok(())) => bak.display().to_string(),
        _ => format!("{} (BACKUP FAILED — file unchanged on disk)", bak.display()),
    }
}

/// Hermes' exclusive lock for `path` (`<path>.lock`), held until dropped.
pub(crate) fn lock(path: &Path) -> Result<Flock, Failure> {
    let lock_path = with_added_suffix(path, ".lock");
    if let Some(dir) = lock_path.parent() {
        let _ = fs::create_dir_all(dir);
    }
    let fail = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::TimedOut {
            Failure(format!(
                "Timed out after {} s waiting for {} (another Hermes process is writing memory). Nothing was written; retry.",
                deadlines::MEMORY_LOCK_WAIT.hermes().as_secs(),
                lock_path.display()
            ))
        } else if let Some(refusal) = crate::fs::NotALockFile::in_io(&e) {
            Failure(format!(
                "Cannot write memory: {refusal}. Nothing was written."
            ))
        } else {
            Failure(format!("cannot lock {}: {e}", lock_path.display()))
        }
    };
    // Created as Python's open(..., "a+") creates it (0666 less the umask);
    // opened without blocking or following a symlink, a regular file only.
    Flock::take_timeout_mode(&lock_path, deadlines::MEMORY_LOCK_WAIT.get(), 0o666).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    #[test]
    fn writes_0600_through_symlinks_and_reads_back_universal_newlines() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("elsewhere/MEMORY.md");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "a\r\n§\r\nb").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o644)).unwrap();
        let link = d.path().join("MEMORY.md");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(read_text(&link).unwrap().as_deref(), Some("a\n§\nb"));
        write_text(&link, "c").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "c");
        let mode = fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(read_text(&d.path().join("missing")).unwrap(), None);
    }

    #[test]
    fn refuses_what_it_cannot_read_safely() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("MEMORY.md");
        crate::fs::mkfifo(&fifo);
        let e = read_text(&fifo).unwrap_err().0;
        assert!(
            e.contains("FIFO") && e.contains("Nothing was written"),
            "{e}"
        );
        let bad = d.path().join("USER.md");
        fs::write(&bad, [b'a', 0xff]).unwrap();
        assert!(read_text(&bad).unwrap_err().0.contains("not UTF-8"));
    }

    #[test]
    fn the_lock_is_exclusive_and_bounded() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("MEMORY.md");
        let held = lock(&path).unwrap();
        assert!(d.path().join("MEMORY.md.lock").is_file());
        let path2 = path.clone();
        let waiter = std::thread::spawn(move || {
            let t = std::time::Instant::now();
            let _g = lock(&path2).unwrap();
            t.elapsed()
        });
        std::thread::sleep(Duration::from_millis(300));
        drop(held);
        assert!(waiter.join().unwrap() >= Duration::from_millis(250));
    }
}
