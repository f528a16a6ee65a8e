//! Hermes' cross-process locks on its sign-in stores (`auth.lock` beside
//! `auth.json`, `nous_auth.lock` beside the shared Nous store), taken as
//! Hermes takes them (hermes_cli/auth.py `_file_lock`: an exclusive `flock`
//! tried without blocking every 50 ms until the deadline,
//! `AUTH_LOCK_TIMEOUT_SECONDS` = 15 s for `auth.lock`:
//! [`crate::hermes::deadlines::AUTH_LOCK_WAIT`]).
//!
//! Two things beyond Hermes, both about a lock another process keeps:
//!
//! * One wait per lock, not one per attempt: one tool call may need the lock
//!   several times in a row (the Nous login, then a ChatGPT pool entry, then
//!   the next entry). While the lock stays held, attempts that follow one
//!   another share the first attempt's deadline, so a call ends after one
//!   timeout, not after the sum of them. An attempt starts a wait of its own
//!   once nobody has found the lock held for a moment ([`QUIET`]).
//! * The error says which file is held and, when the kernel tells
//!   (`/proc/locks`; Hermes writes nothing into the lock file), by which
//!   process, and what to do.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::fs::Flock;

/// Hermes' `_file_lock` polling interval.
const POLL: Duration = Duration::from_millis(50);

/// An attempt made this long after the last one that found the lock held
/// starts a wait of its own (a new tool call, not the same call's next step).
const QUIET: Duration = Duration::from_secs(2);

/// Why a lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process kept it for the whole wait.
    #[error(
        "Hermes' sign-in lock {} is held by {} and was not released within {}s, so the sign-in could not be refreshed. Wait for that process to finish (a `hermes auth` login or a Hermes session refreshing a token), or end it if it is stuck, then try again.",
        path.display(),
        holder.as_deref().unwrap_or("another process"),
        crate::hermes::deadlines::unscaled(*waited).as_secs()
    )]
    Held {
        path: PathBuf,
        /// The holder, when `/proc/locks` names it: `process 123 (hermes auth)`.
        holder: Option<String>,
        waited: Duration,
    },
    #[error("cannot open the lock file {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Since when, as far as this process has seen, a lock has been held by
/// someone else, and when it was last found held.
#[derive(Clone, Copy)]
struct Contention {
    since: Instant,
    last_seen: Instant,
}

static CONTENDED: Mutex<Option<HashMap<PathBuf, Contention>>> = Mutex::new(None);

fn contended<R>(f: impl FnOnce(&mut HashMap<PathBuf, Contention>) -> R) -> R {
    let mut g = CONTENDED.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// Take the exclusive lock on `path` (created 0600 if missing), waiting up
/// to `timeout` counted from when this process first found it held (see the
/// module docs). Blocking: call it off the async workers.
pub fn take(path: &Path, timeout: Duration) -> Result<Flock, LockError> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    loop {
        match Flock::take_timeout(path, Duration::ZERO) {
            Ok(l) => {
                contended(|m| m.remove(&key));
                return Ok(l);
            }
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(source) => {
                return Err(LockError::Open {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
        let now = Instant::now();
        let since = contended(|m| {
            let c = m.entry(key.clone()).or_insert(Contention {
                since: now,
                last_seen: now,
            });
            if now.duration_since(c.last_seen) > QUIET {
                c.since = now;
            }
            c.last_seen = now;
            c.since
        });
        if now.duration_since(since) >= timeout {
            return Err(LockError::Held {
                path: path.to_path_buf(),
                holder: holder(path),
                waited: timeout,
            });
        }
        std::thread::sleep(POLL);
    }
}

/// Who holds the `flock` on `path`, from `/proc/locks` (`1: FLOCK ADVISORY
/// WRITE <pid> <major>:<minor>:<inode> 0 EOF`) and the holder's command line;
/// `None` when the kernel does not say (another PID namespace, no /proc).
pub fn holder(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path).ok()?;
    let table = crate::fs::read_to_string_capped(Path::new("/proc/locks"), 4 << 20).ok()?;
    let pid = holder_pid(
        &table,
        u64::from(libc::major(md.dev())),
        u64::from(libc::minor(md.dev())),
        md.ino(),
    )?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    // Arguments are NUL-separated; newlines inside one (`python -c`) become spaces too.
    let cmd = String::from_utf8_lossy(&cmdline)
        .split(|c: char| c == '\0' || c.is_whitespace())
        .filter(|a| !a.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let cmd = crate::redact::redact_sensitive_text(&cmd);
    let cmd: String = if cmd.chars().count() > 120 {
        cmd.chars().take(120).chain("…".chars()).collect()
    } else {
        cmd
    };
    Some(if cmd.is_empty() {
        format!("process {pid}")
    } else {
        format!("process {pid} (`{cmd}`)")
    })
}

/// The PID holding a `FLOCK` on the file `major:minor:inode` in a
/// `/proc/locks` table (waiters, marked `->`, are skipped).
fn holder_pid(table: &str, major: u64, minor: u64, inode: u64) -> Option<u32> {
    table.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(1) != Some(&"FLOCK") {
            return None;
        }
        let pid: u32 = f.get(4)?.parse().ok()?;
        let mut id = f.get(5)?.split(':');
        let maj = u64::from_str_radix(id.next()?, 16).ok()?;
        let min = u64::from_str_radix(id.next()?, 16).ok()?;
        let ino: u64 = id.next()?.parse().ok()?;
        (maj == major && min == minor && ino == inode && pid > 0).then_some(pid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_lines_name_the_holder() {
        let table = "1: POSIX  ADVISORY  WRITE 77 00:2a:1234 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 4321 fd:01:1234 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 99 fd:01:1234 0 EOF\n";
        assert_eq!(holder_pid(table, 0xfd, 1, 1234), Some(4321));
        assert_eq!(holder_pid(table, 0xfd, 1, 1235), None);
        assert_eq!(
            holder_pid(table, 0x2a, 0, 1234),
            None,
            "POSIX locks are not Hermes'"
        );
        assert_eq!(holder_pid("garbage\n\n1: FLOCK", 0, 0, 0), None);
    }

    #[test]
    fn a_held_lock_is_waited_for_once_and_its_holder_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("auth.lock");
        // Another open file description: flock conflicts with it as with another process.
        let other = Flock::take(&p).expect("hold");
        let wait = Duration::from_secs(2);
        let t = Instant::now();
        let Err(e) = take(&p, wait) else {
            panic!("took a held lock");
        };
        assert!(t.elapsed() >= wait);
        let text = e.to_string();
        assert!(text.contains(&p.display().to_string()), "{text}");
        assert!(
            text.contains(&format!("process {}", std::process::id())),
            "{text}"
        );
        // The next attempt right away shares the first one's deadline
        // instead of waiting again.
        let t = Instant::now();
        assert!(take(&p, wait).is_err());
        assert!(t.elapsed() < wait, "waited again: {:?}", t.elapsed());
        drop(other);
        take(&p, Duration::from_millis(300)).expect("free now");
    }

    #[test]
    fn a_lock_file_that_is_a_fifo_or_a_symlink_is_refused_at_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("auth.lock");
        crate::fs::mkfifo(&p);
        let refused = |kind: &str| {
            let t = Instant::now();
            let Err(e) = take(&p, Duration::from_secs(15)) else {
                panic!("took {}", p.display());
            };
            assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
            assert!(matches!(e, LockError::Open { .. }), "{e}");
            let text = e.to_string();
            for part in [&p.display().to_string(), kind, "remove it"] {
                assert!(text.contains(part), "{part:?} not in {text}");
            }
        };
        refused("a FIFO (named pipe)");
        std::fs::remove_file(&p).expect("rm");
        let real = dir.path().join("real.lock");
        std::fs::write(&real, "").expect("write");
        std::os::unix::fs::symlink(&real, &p).expect("symlink");
        refused("a symlink");
        std::fs::remove_file(&p).expect("rm");
        take(&p, Duration::ZERO).expect("a regular file again");
    }
}
