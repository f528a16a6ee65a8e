//! Locking and durable, atomic replacement of `config.toml`.
//!
//! The lock is a separate file (`$CODEX_HOME/.hermes-mcp.lock`, std
//! `File::lock`, i.e. `flock`): `config.toml` itself cannot be locked because
//! the rename replaces its inode. The new text goes to a temp file in the real
//! file's directory, is fsynced, renamed over the target, and the directory is
//! fsynced, so a crash leaves the old or the new file, never a torn one.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::hermes::envvars;

pub const LOCK_FILE: &str = ".hermes-mcp.lock";
const TMP_PREFIX: &str = ".config.toml.";
const TMP_SUFFIX: &str = ".hermes-tmp";

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot create {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open the lock file {path}: {source}")]
    LockOpen {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "another `hermes-mcp migrate` has held {path} for over {secs} s; wait for it to finish and run migrate again"
    )]
    LockTimeout { path: PathBuf, secs: u64 },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not UTF-8 text; fix or move it, then run migrate again")]
    NotUtf8 { path: PathBuf },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A held lock; released on drop (and by the kernel if the process dies).
pub struct Lock {
    _file: File,
}

/// Take the migrate lock in `dir`, waiting up to `wait`.
pub fn lock(dir: &Path, wait: Duration) -> Result<Lock, WriteError> {
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(|source| WriteError::LockOpen {
            path: path.clone(),
            source,
        })?;
    let deadline = Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Lock { _file: file }),
            Err(fs::TryLockError::WouldBlock) => {
                if Instant::now() >= deadline {
                    return Err(WriteError::LockTimeout {
                        path,
                        secs: wait.as_secs(),
                    });
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(fs::TryLockError::Error(source)) => {
                return Err(WriteError::LockOpen { path, source });
            }
        }
    }
}

/// Create `CODEX_HOME` (mode 0700) when it is missing.
pub fn ensure_dir(dir: &Path) -> Result<(), WriteError> {
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

/// The file a write really replaces: `config.toml`, or the end of its symlink
/// chain (dotfile managers), so the link itself is kept.
pub fn real_target(path: &Path) -> PathBuf {
    let mut cur = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => match fs::read_link(&cur) {
                Ok(next) => {
                    cur = if next.is_absolute() {
                        next
                    } else {
                        cur.parent().unwrap_or(Path::new("/")).join(next)
                    };
                }
                Err(_) => break,
            },
            _ => break,
        }
    }
    cur
}

/// Read the current text (None when the file does not exist).
pub fn read(path: &Path) -> Result<Option<String>, WriteError> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| WriteError::NotUtf8 {
                path: path.to_path_buf(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(WriteError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Remove temp files a killed migrate left behind (call with the lock held).
pub fn clean_stale_temps(dir: &Path) {
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

/// Atomically replace `target` (already symlink-resolved) with `text`, keeping
/// its mode (0600 for a new file).
pub fn atomic_write(target: &Path, text: &str) -> Result<(), WriteError> {
    let err = |source| WriteError::Write {
        path: target.to_path_buf(),
        source,
    };
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mode = fs::metadata(target)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o600);
    let mut tmp = tempfile::Builder::new()
        .prefix(TMP_PREFIX)
        .suffix(TMP_SUFFIX)
        .tempfile_in(dir)
        .map_err(err)?;
    tmp.write_all(text.as_bytes()).map_err(err)?;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))
        .map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    test_pause();
    tmp.persist(target).map_err(|e| err(e.error))?;
    File::open(dir).and_then(|d| d.sync_all()).map_err(err)?;
    Ok(())
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

    #[test]
    fn write_keeps_mode_and_follows_symlinks() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("dotfiles/config.toml");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "a = 1\n").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.path().join("config.toml");
        std::os::unix::fs::symlink("dotfiles/config.toml", &link).unwrap();
        let t = real_target(&link);
        assert_eq!(t, d.path().join("dotfiles/config.toml"));
        atomic_write(&t, "a = 2\n").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&link).unwrap(), "a = 2\n");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let leftovers: Vec<_> = fs::read_dir(real.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
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
}
