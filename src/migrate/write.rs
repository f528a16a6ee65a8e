//! Locking and durable, atomic replacement of `config.toml`.
//!
//! The lock is a separate file (`$CODEX_HOME/.hermes-mcp.lock`, std
//! `File::lock`, i.e. `flock`): `config.toml` itself cannot be locked because
//! the rename replaces its inode. The new text goes to a temp file in the real
//! file's directory, is fsynced, renamed over the target, and the directory is
//! fsynced, so a crash leaves the old or the new file, never a torn one.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::hermes::envvars;

pub(crate) const LOCK_FILE: &str = ".hermes-mcp.lock";
const TMP_PREFIX: &str = ".config.toml.";
const TMP_SUFFIX: &str = ".hermes-tmp";

#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteError {
    #[error("cannot create {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot create the lock file {path}: {}",
        crate::fs::not_writable_reason(source)
    )]
    LockDirNotWritable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open the lock file {path}: {source}")]
    LockOpen {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the lock file {path} is {kind}, not a regular file")]
    LockNotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "another `hermes-mcp migrate` has held {path} for over {secs} s; wait for it to finish and run migrate again"
    )]
    LockTimeout { path: PathBuf, secs: u64 },
    #[error(transparent)]
    File(#[from] crate::fs::FileError),
}

impl WriteError {
    /// What the user should do about it.
    pub(crate) fn hint(&self) -> String {
        match self {
            WriteError::CreateDir { .. } => {
                "check that you can write there, or pass --codex-home DIR".into()
            }
            WriteError::LockDirNotWritable { path, .. } => format!(
                "migrate needs to write in {}: make it writable, or pass --codex-home DIR (nothing was changed)",
                path.parent().unwrap_or(Path::new("/")).display()
            ),
            WriteError::LockOpen { .. } => {
                "check the permissions of the lock file and its directory (nothing was changed)"
                    .into()
            }
            WriteError::LockNotRegular { path, .. } => {
                format!(
                    "remove {} and run migrate again (nothing was changed)",
                    path.display()
                )
            }
            WriteError::LockTimeout { .. } => "only one migrate can run at a time".into(),
            WriteError::File(crate::fs::FileError::CreateTemp { dir, .. }) => format!(
                "migrate replaces config.toml through a temporary file beside it: make {} writable and run migrate again (nothing was changed)",
                dir.display()
            ),
            WriteError::File(crate::fs::FileError::NotRegular { .. }) => {
                "nothing was changed; migrate only reads and replaces regular files".into()
            }
            WriteError::File(_) => "check the file's permissions (nothing was changed)".into(),
        }
    }
}

/// A held lock; released on drop (and by the kernel if the process dies).
pub(crate) struct Lock {
    _lock: crate::fs::Flock,
}

/// Take the migrate lock in `dir`, waiting up to `wait`. The lock file is
/// opened as every lock file is ([`crate::fs::open_lock_file`]: never blocks
/// on a FIFO, never follows a symlink, a regular file only).
pub(crate) fn lock(dir: &Path, wait: Duration) -> Result<Lock, WriteError> {
    let path = dir.join(LOCK_FILE);
    match crate::fs::Flock::take_timeout_mode(&path, wait, 0o600) {
        Ok(lock) => Ok(Lock { _lock: lock }),
        Err(source) => Err(
            if let Some(refusal) = crate::fs::NotALockFile::in_io(&source) {
                WriteError::LockNotRegular {
                    kind: refusal.kind,
                    path,
                }
            } else if source.kind() == std::io::ErrorKind::TimedOut {
                WriteError::LockTimeout {
                    path,
                    secs: wait.as_secs(),
                }
            } else if crate::fs::is_not_writable(&source) {
                WriteError::LockDirNotWritable { path, source }
            } else {
                WriteError::LockOpen { path, source }
            },
        ),
    }
}

/// Create `CODEX_HOME` (mode 0700) when it is missing.
pub(crate) fn ensure_dir(dir: &Path) -> Result<(), WriteError> {
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| WriteError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })
}

/// The file a write really replaces (see [`crate::fs::real_target`]).
pub(crate) fn real_target(path: &Path) -> PathBuf {
    crate::fs::real_target(path)
}

/// Read the current text (None when the file does not exist). Only a regular
/// file is read, without blocking, up to [`crate::fs::CONFIG_CAP`].
pub(crate) fn read(path: &Path) -> Result<Option<String>, WriteError> {
    Ok(crate::fs::read_to_string_capped_opt(
        path,
        crate::fs::CONFIG_CAP,
    )?)
}

/// Remove temp files a killed migrate left behind (call with the lock held).
pub(crate) fn clean_stale_temps(dir: &Path) {
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name();
            let n = name.to_string_lossy();
            if n.starts_with(TMP_PREFIX) && n.ends_with(TMP_SUFFIX) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// Atomically and durably replace `target` with `text` (the one atomic write,
/// [`crate::fs::write_atomic_with`]: symlinks followed, mode kept, 0600 for a
/// new file, only regular files), pausing before the rename for crash tests.
pub(crate) fn atomic_write(target: &Path, text: &str) -> Result<crate::fs::Replaced, WriteError> {
    let opts = crate::fs::WriteOptions {
        temp: crate::fs::TempName::Random(TMP_PREFIX, TMP_SUFFIX),
        ..crate::fs::WriteOptions::DURABLE
    };
    crate::fs::write_atomic_with(target, text.as_bytes(), &opts, || {
        test_pause();
        Ok::<(), WriteError>(())
    })
}

/// Crash tests: pause between the fsynced temp file and the rename.
fn test_pause() {
    if let Some(ms) =
        envvars::get(envvars::HERMES_MCP_TEST_PAUSE_BEFORE_RENAME_MS).and_then(|v| v.parse().ok())
    {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn lock_errors_say_what_is_wrong() {
        let e = WriteError::LockDirNotWritable {
            path: PathBuf::from("/ro/.hermes-mcp.lock"),
            source: std::io::Error::from_raw_os_error(libc::EROFS),
        };
        assert!(e.to_string().contains("read-only file system"), "{e}");
        assert!(e.hint().contains("make it writable"), "{}", e.hint());
        assert!(!e.hint().contains("one migrate"));
        let e = WriteError::LockTimeout {
            path: PathBuf::from("/x"),
            secs: 1,
        };
        assert!(e.hint().contains("only one migrate"));
    }

    #[test]
    fn lock_times_out_while_held() {
        let d = tempfile::tempdir().unwrap();
        let held = lock(d.path(), Duration::from_secs(1)).unwrap();
        let e = lock(d.path(), Duration::from_millis(50)).err().unwrap();
        assert!(
            e.to_string().contains("another `hermes-mcp migrate`"),
            "{e}"
        );
        drop(held);
        lock(d.path(), Duration::from_millis(50)).unwrap();
    }

    #[test]
    fn a_lock_file_that_is_a_fifo_or_a_symlink_is_refused_at_once() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(LOCK_FILE);
        crate::fs::mkfifo(&p);
        let refused = |kind: &str| {
            let t = Instant::now();
            let e = lock(d.path(), Duration::from_secs(30)).err().unwrap();
            assert!(t.elapsed() < Duration::from_secs(5));
            assert!(
                matches!(&e, WriteError::LockNotRegular { kind: k, .. } if *k == kind),
                "{e}"
            );
            assert!(e.hint().starts_with("remove "), "{}", e.hint());
        };
        refused("a FIFO (named pipe)");
        fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(d.path().join("nowhere"), &p).unwrap();
        refused("a symlink");
        assert!(!d.path().join("nowhere").exists());
    }
}
