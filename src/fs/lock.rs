//! Hermes' advisory lock files: an exclusive `flock`, held until dropped.
//!
//! A lock file sits in a directory the user controls, so what is found at its
//! path may be a FIFO (a plain open for writing waits for a reader for ever),
//! a socket, a device, a directory or a symlink to any of them. Every lock
//! file is opened with `O_NONBLOCK` (a FIFO opens at once), `O_NOFOLLOW` (a
//! symlink is refused, not followed) and `O_NOCTTY`, and the opened handle is
//! checked with `fstat`: anything but a regular file is refused at once with
//! [`NotALockFile`], which names the path, what is there and what to do.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// An exclusive advisory `flock` on a lock file (created if missing), held
/// until dropped: how Hermes serialises writers of its shared files
/// (`skills/.usage.json.lock`, `auth.lock`), so our writes and Hermes' never
/// interleave.
pub struct Flock(File);

/// What stands at a lock file's path when it is not a regular file; carried
/// inside the `io::Error` the lock functions return (find it with
/// [`NotALockFile::in_io`]).
#[derive(Debug, thiserror::Error)]
#[error(
    "the lock file {} is {kind}, not a regular file, so it cannot be locked; remove it (it is recreated empty when missing) and try again",
    path.display()
)]
pub struct NotALockFile {
    pub path: PathBuf,
    pub kind: &'static str,
}

impl NotALockFile {
    /// The refusal inside `e`, if that is what `e` is.
    pub fn in_io(e: &io::Error) -> Option<&NotALockFile> {
        e.get_ref().and_then(|inner| inner.downcast_ref())
    }

    fn io(path: &Path, ft: &std::fs::FileType) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            NotALockFile {
                path: path.to_path_buf(),
                kind: super::kind_name(ft),
            },
        )
    }
}

/// Opens the lock file `path`, created with `mode` (less the umask) when
/// missing; its content is never read or written. Never blocks and never
/// follows a symlink; refuses anything but a regular file (see the module docs).
pub fn open_lock_file(path: &Path, mode: u32) -> io::Result<File> {
    let opened = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .mode(mode)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path);
    let file = match opened {
        Ok(f) => f,
        // A symlink (ELOOP), a socket (ENXIO), a directory (EISDIR): name it.
        Err(e) => {
            return Err(match std::fs::symlink_metadata(path) {
                Ok(m) if !m.is_file() => NotALockFile::io(path, &m.file_type()),
                _ => e,
            });
        }
    };
    // The handle we hold is what counts (the path may have been swapped).
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(NotALockFile::io(path, &meta.file_type()));
    }
    Ok(file)
}

impl Flock {
    /// Blocks until the lock is ours; a missing lock file is made 0600.
    pub fn take(path: &Path) -> io::Result<Flock> {
        let f = open_lock_file(path, 0o600)?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&f), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Flock(f))
    }

    /// Like [`Flock::take`], giving up after `timeout` (Hermes waits 15 s
    /// for its auth store lock, then fails with "Timed out waiting ...").
    pub fn take_timeout(path: &Path, timeout: std::time::Duration) -> io::Result<Flock> {
        Self::take_timeout_mode(path, timeout, 0o600)
    }

    /// Like [`Flock::take_timeout`], a missing lock file made with `mode`
    /// (less the umask), as Python's `open(path, "a+")` makes it with 0o666.
    pub fn take_timeout_mode(
        path: &Path,
        timeout: std::time::Duration,
        mode: u32,
    ) -> io::Result<Flock> {
        let f = open_lock_file(path, mode)?;
        let deadline = std::time::Instant::now() + timeout;
        loop {
            // SAFETY: flock on a descriptor we own.
            let r = unsafe {
                libc::flock(
                    std::os::fd::AsRawFd::as_raw_fd(&f),
                    libc::LOCK_EX | libc::LOCK_NB,
                )
            };
            if r == 0 {
                return Ok(Flock(f));
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(e);
            }
            if std::time::Instant::now() >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "timed out waiting for the lock",
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

impl Drop for Flock {
    fn drop(&mut self) {
        // SAFETY: unlocking our own descriptor (closing it would release it too).
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&self.0), libc::LOCK_UN) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Every way of taking a lock refuses `path` at once, naming it and `kind`.
    fn refused_at_once(path: &Path, kind: &str) {
        let takes: [&dyn Fn() -> io::Result<Flock>; 3] = [
            &|| Flock::take(path),
            &|| Flock::take_timeout(path, Duration::from_secs(30)),
            &|| Flock::take_timeout_mode(path, Duration::from_secs(30), 0o666),
        ];
        for take in takes {
            let t = Instant::now();
            let Err(e) = take() else {
                panic!("{} was locked", path.display())
            };
            assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
            let refusal = NotALockFile::in_io(&e).unwrap_or_else(|| panic!("{e}"));
            assert_eq!(refusal.kind, kind);
            let text = e.to_string();
            assert!(
                text.contains(&path.display().to_string()) && text.contains("remove it"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_fifo_symlink_directory_or_socket_lock_file_is_refused_at_once() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo.lock");
        crate::fs::mkfifo(&fifo);
        refused_at_once(&fifo, "a FIFO (named pipe)");
        // A symlink is refused even when it leads to a good lock file.
        let real = d.path().join("real.lock");
        std::fs::write(&real, "").unwrap();
        let link = d.path().join("link.lock");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        refused_at_once(&link, "a symlink");
        let dangling = d.path().join("dangling.lock");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        refused_at_once(&dangling, "a symlink");
        assert!(!d.path().join("nowhere").exists());
        let dir = d.path().join("dir.lock");
        std::fs::create_dir(&dir).unwrap();
        refused_at_once(&dir, "a directory");
        let sock = d.path().join("sock.lock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        refused_at_once(&sock, "a socket");
    }

    #[test]
    fn a_missing_lock_file_is_made_with_the_mode_asked_and_a_regular_one_is_locked() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.lock");
        drop(Flock::take_timeout_mode(&p, Duration::ZERO, 0o600).unwrap());
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let held = Flock::take(&p).unwrap();
        let e = Flock::take_timeout(&p, Duration::ZERO).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        drop(held);
        Flock::take_timeout(&p, Duration::ZERO).unwrap();
    }
}
