//! Run a child process to completion with a deadline, from blocking code: its
//! output collected on two threads (so a chatty child never fills a pipe and
//! stalls), and on timeout its whole process group killed (a shell's own
//! children may hold the pipes open). Used by `doctor` (codex), skills'
//! inline shell snippets, and the plugin-skill probe (Hermes' Python).

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Spawn(io::Error),
    #[error("no answer within {} s", .0.as_secs())]
    TimedOut(Duration),
}

impl RunError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, RunError::Spawn(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// Read a pipe to its end on a thread; the bytes arrive on the channel.
fn drain(r: Option<impl Read + Send + 'static>) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut buf);
        }
        let _ = tx.send(buf);
    });
    rx
}

fn kill_group(pid: u32) {
    // SAFETY: kill(2) on the process group created for this child.
    unsafe {
        libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
    }
}

/// Run `cmd` (stdin closed, stdout/stderr captured) in its own process group.
/// The deadline covers the output too: a background grandchild that keeps
/// the pipes open after the child exits is killed with the group when the
/// time is up, rather than holding the caller.
pub fn output_with_timeout(mut cmd: Command, timeout: Duration) -> Result<Output, RunError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let pid = child.id();
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    // A timeout too large to add to now (`.inf` in config.yaml) never expires.
    let deadline = Instant::now().checked_add(timeout);
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if deadline.is_some_and(|d| Instant::now() >= d) => {
                kill_group(pid);
                let _ = child.wait();
                return Err(RunError::TimedOut(timeout));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(RunError::Spawn(e)),
        }
    };
    let collect = |rx: std::sync::mpsc::Receiver<Vec<u8>>| {
        let left = deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        });
        match rx.recv_timeout(left) {
            Ok(b) => Some(b),
            Err(_) => {
                // Something the child started still holds the pipe.
                kill_group(pid);
                rx.recv_timeout(Duration::from_secs(1)).ok()
            }
        }
    };
    let (stdout, stderr) = (collect(out), collect(err));
    match (stdout, stderr) {
        (Some(stdout), Some(stderr)) => Ok(Output {
            status,
            stdout,
            stderr,
        }),
        _ => Err(RunError::TimedOut(timeout)),
    }
}

/// Run blocking work (a child process, a file lock) from async code without
/// stalling the runtime's workers: on tokio's multi-thread runtime the worker
/// hands its other tasks off first (`block_in_place`); elsewhere it just runs.
pub fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_and_group_kill() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo out; echo err >&2"]);
        let o = output_with_timeout(c, Duration::from_secs(10)).expect("run");
        assert_eq!(
            (o.stdout.as_slice(), o.stderr.as_slice()),
            (&b"out\n"[..], &b"err\n"[..])
        );
        let start = Instant::now();
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 30 & sleep 30"]);
        assert!(matches!(
            output_with_timeout(c, Duration::from_secs(1)),
            Err(RunError::TimedOut(_))
        ));
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(
            output_with_timeout(Command::new("/nonexistent/x"), Duration::from_secs(1))
                .expect_err("missing")
                .is_not_found()
        );
        // A timeout of ~forever (from `.inf` seconds) is no overflow panic.
        let o = output_with_timeout(Command::new("true"), Duration::MAX).expect("run");
        assert!(o.status.success());
    }
}
