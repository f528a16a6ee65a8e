//! Hermes' advisory lock files: an exclusive `flock`, held until dropped.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// An exclusive advisory `flock` on a lock file (created if missing), held
/// until dropped: how Hermes serialises writers of its shared files
/// (`skills/.usage.json.lock`, `auth.lock`), so our writes and Hermes' never
/// interleave.
pub struct Flock(File);

/// The lock file, created 0600 when missing (its content is never read or written).
fn open_lock_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .mode(0o600)
        .open(path)
}

impl Flock {
    /// Blocks until the lock is ours.
    pub fn take(path: &Path) -> io::Result<Flock> {
        let f = open_lock_file(path)?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&f), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Flock(f))
    }

    /// Like [`Flock::take`], giving up after `timeout` (Hermes waits 15 s
    /// for its auth store lock, then fails with "Timed out waiting ...").
    pub fn take_timeout(path: &Path, timeout: std::time::Duration) -> io::Result<Flock> {
        let f = open_lock_file(path)?;
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
