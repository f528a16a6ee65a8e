//! Run a child process to completion with a deadline, from blocking code: its
//! output collected on two threads (so a chatty child never fills a pipe and
//! stalls) up to a cap (a child that writes without end is killed, not
//! buffered until memory runs out), and on timeout its whole process group
//! killed (a shell's own children may hold the pipes open). Used by `doctor` (codex), skills'
//! inline shell snippets, and the plugin-skill probe (Hermes' Python).

use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Spawn(io::Error),
    #[error("no answer within {} s", .0.as_secs())]
    TimedOut(Duration),
    #[error("wrote more than {} on {}", human_bytes(*.0), .1)]
    TooMuchOutput(usize, &'static str),
}

impl RunError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, RunError::Spawn(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// How much of a child's stdout or stderr [`output_with_timeout`] keeps: far
/// more than any answer it waits for, far less than memory.
pub const OUTPUT_CAP: usize = 16 << 20;

/// `16 MiB`, `4 KiB`, `100 bytes`.
pub fn human_bytes(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// Read a pipe to its end on a thread, keeping at most `cap` bytes: the
/// bytes arrive on the channel, or `Err` once the child wrote more (the
/// thread stops reading then, so memory stays bounded whatever it writes).
/// The pipe is read without blocking and polled in short steps, so the
/// thread also ends when `stop` is set: a descendant that left the process
/// group (`setsid`) and keeps the pipe open cannot hold it for ever.
fn drain<R: Read + AsRawFd + Send + 'static>(
    r: Option<R>,
    cap: usize,
    over: (Arc<AtomicU8>, u8),
    stop: Arc<AtomicBool>,
) -> mpsc::Receiver<Result<Vec<u8>, ()>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(r) = r {
            read_until_stopped(r, &mut buf, cap, &stop);
        }
        if buf.len() > cap {
            over.0.store(over.1, Ordering::SeqCst);
            let _ = tx.send(Err(()));
        } else {
            let _ = tx.send(Ok(buf));
        }
    });
    rx
}

/// Read `r` into `buf` until end of file, more than `cap` bytes, an error,
/// or `stop`.
fn read_until_stopped(r: impl Read + AsRawFd, buf: &mut Vec<u8>, cap: usize, stop: &AtomicBool) {
    read_polled(r, stop, |chunk| {
        buf.extend_from_slice(chunk);
        buf.len() <= cap
    });
}

/// Read a pipe without blocking, polled in short steps, handing each chunk
/// to `each` (which says whether to go on), until end of file, an error, or
/// `stop`: a descendant that left the process group (`setsid`) and keeps the
/// pipe open cannot hold the reading thread for ever.
pub(crate) fn read_polled(
    mut r: impl Read + AsRawFd,
    stop: &AtomicBool,
    mut each: impl FnMut(&[u8]) -> bool,
) {
    let fd = r.as_raw_fd();
    // SAFETY: fcntl on a descriptor this reader owns; only the flags change.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
    let mut chunk = vec![0u8; 64 * 1024];
    while !stop.load(Ordering::SeqCst) {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, for the length given.
        let n = unsafe { libc::poll(&mut pfd, 1, 100) };
        if n == 0 || (n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted) {
            continue;
        }
        if n < 0 {
            return;
        }
        match r.read(&mut chunk) {
            Ok(0) => return,
            Ok(k) => {
                if !each(chunk.get(..k).unwrap_or_default()) {
                    return;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return,
        }
    }
}

/// Sets the flag when dropped: whatever way a run returns, its reader
/// threads stop.
pub(crate) struct StopOnDrop(pub(crate) Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// SIGKILL the process group `pid` leads (made with `process_group(0)`).
pub fn kill_group(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) on the process group created for this child.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// Run `cmd` (stdin closed, stdout/stderr captured, each up to
/// [`OUTPUT_CAP`]) in its own process group. The deadline covers the output
/// too: a background grandchild that keeps the pipes open after the child
/// exits is killed with the group when the time is up, rather than holding
/// the caller. A child that writes more than the cap is killed with its group.
pub fn output_with_timeout(cmd: Command, timeout: Duration) -> Result<Output, RunError> {
    run(cmd, timeout, OUTPUT_CAP, false, kill_group)
}

/// [`output_with_timeout`] with its own cap, for a step that must leave
/// nothing behind (`doctor`): the whole process group is killed when the
/// step ends, however it ended.
pub fn output_then_kill_group(
    cmd: Command,
    timeout: Duration,
    cap: usize,
) -> Result<Output, RunError> {
    run(cmd, timeout, cap, true, kill_group)
}

/// Whether the child `pid` has ended, without reaping it: until
/// `Child::wait`, its zombie keeps `pid` (and so the group id) from being
/// given to another process, so a group kill cannot reach a stranger.
pub(crate) fn exited(pid: u32) -> io::Result<bool> {
    let id = libc::id_t::from(pid);
    // SAFETY: waitid(2) on our own child with WNOWAIT (nothing is reaped)
    // into a zeroed siginfo_t owned by this frame.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            id,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: si_pid is set by waitid when a child changed state; 0 otherwise.
    Ok(unsafe { info.si_pid() } != 0)
}

/// The run; `kill` kills the process group (every call comes before the
/// leader is reaped).
fn run(
    mut cmd: Command,
    timeout: Duration,
    cap: usize,
    reap: bool,
    kill: fn(u32),
) -> Result<Output, RunError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let pid = child.id();
    // Which pipe went over the cap: 1 stdout, 2 stderr.
    let over = Arc::new(AtomicU8::new(0));
    // Set when the run gives up on the pipes: the reader threads end then.
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_on_return = StopOnDrop(stop.clone());
    let out = drain(child.stdout.take(), cap, (over.clone(), 1), stop.clone());
    let err = drain(child.stderr.take(), cap, (over.clone(), 2), stop.clone());
    // A timeout too large to add to now (`.inf` in config.yaml) never expires.
    let deadline = Instant::now().checked_add(timeout);
    let end = |child: &mut std::process::Child, e: RunError| {
        kill(pid);
        let _ = child.wait();
        Err(e)
    };
    loop {
        match over.load(Ordering::SeqCst) {
            0 => {}
            1 => return end(&mut child, RunError::TooMuchOutput(cap, "stdout")),
            _ => return end(&mut child, RunError::TooMuchOutput(cap, "stderr")),
        }
        match exited(pid) {
            Ok(true) => break,
            Ok(false) if deadline.is_some_and(|d| Instant::now() >= d) => {
                return end(&mut child, RunError::TimedOut(timeout));
            }
            Ok(false) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return end(&mut child, RunError::Spawn(e)),
        }
    }
    let collect = |rx: mpsc::Receiver<Result<Vec<u8>, ()>>, name: &'static str| {
        let left = deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        });
        let got = match rx.recv_timeout(left) {
            Ok(b) => Some(b),
            Err(_) => {
                // Something the child started still holds the pipe.
                kill(pid);
                let got = rx.recv_timeout(Duration::from_secs(1)).ok();
                stop.store(true, Ordering::SeqCst);
                got
            }
        };
        match got {
            Some(Ok(b)) => Ok(b),
            Some(Err(())) => Err(RunError::TooMuchOutput(cap, name)),
            None => Err(RunError::TimedOut(timeout)),
        }
    };
    let result = collect(out, "stdout").and_then(|stdout| Ok((stdout, collect(err, "stderr")?)));
    if reap || result.is_err() {
        kill(pid);
    }
    // Reaped only now: every group kill above found the zombie holding its id.
    let status = child.wait().map_err(RunError::Spawn)?;
    let (stdout, stderr) = result?;
    Ok(Output {
        status,
        stdout,
        stderr,
    })
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
pub(crate) mod tests {
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

    #[test]
    fn endless_output_is_cut_at_the_cap_and_the_group_killed() {
        let mut c = Command::new("sh");
        c.args(["-c", "yes | tr -d '\\n'"]);
        let e = output_with_timeout(c, Duration::from_secs(60)).expect_err("endless");
        assert!(
            matches!(e, RunError::TooMuchOutput(OUTPUT_CAP, "stdout")),
            "{e}"
        );
        assert_eq!(e.to_string(), "wrote more than 16 MiB on stdout");
        let mut c = Command::new("sh");
        c.args(["-c", "head -c 5000 /dev/zero >&2"]);
        let e = output_then_kill_group(c, Duration::from_secs(60), 4096).expect_err("cap");
        assert_eq!(e.to_string(), "wrote more than 4 KiB on stderr");
        // Exactly the cap is not too much.
        let mut c = Command::new("sh");
        c.args(["-c", "head -c 4096 /dev/zero"]);
        let o = output_then_kill_group(c, Duration::from_secs(60), 4096).expect("exact");
        assert_eq!(o.stdout.len(), 4096);
    }

    fn read_pid(pidfile: &std::path::Path) -> libc::pid_t {
        std::fs::read_to_string(pidfile)
            .expect("pid")
            .trim()
            .parse()
            .expect("pid number")
    }

    /// Whether `pid` ends within `limit` (a zombie counts: init reaps it
    /// when it likes, so the state is what tells).
    pub(crate) fn gone_within(pid: libc::pid_t, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat.rsplit(") ").next().and_then(|r| r.chars().next());
            if matches!(state, None | Some('Z' | 'X')) {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A descendant that left the process group (`setsid`) and keeps the
    /// pipe open does not keep the reader thread: once the run gives up,
    /// the read end closes, and the descendant's next write fails.
    #[test]
    fn a_descendant_outside_the_group_does_not_keep_the_reader() {
        let t = tempfile::tempdir().expect("tempdir");
        let pidfile = t.path().join("pid");
        let mut c = Command::new("sh");
        c.arg("-c").arg(format!(
            "setsid sh -c 'echo $$ > {}; while :; do echo x || exit 0; sleep 0.1; done' & sleep 0.3",
            pidfile.display()
        ));
        let e = output_with_timeout(c, Duration::from_secs(1)).expect_err("held pipe");
        assert!(matches!(e, RunError::TimedOut(_)), "{e}");
        let pid = read_pid(&pidfile);
        let gone = gone_within(pid, Duration::from_secs(10));
        // SAFETY: plain kill(2) of the test's own descendant.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
        assert!(
            gone,
            "the descendant still writes into a pipe somebody reads"
        );
    }

    thread_local! {
        /// For each group kill of this thread's run: whether the leader was
        /// still unreaped (its /proc entry there, a zombie or running).
        static KILLS: std::cell::RefCell<Vec<bool>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    fn recording_kill(pid: u32) {
        let unreaped = std::path::Path::new(&format!("/proc/{pid}")).exists();
        KILLS.with(|k| k.borrow_mut().push(unreaped));
        kill_group(pid);
    }

    /// A step that must leave nothing ([`output_then_kill_group`]'s run)
    /// kills its group on success; every group kill comes while the leader's
    /// zombie still holds its pid (so a reused pid can never be killed),
    /// after a clean end and after pipes held past the deadline.
    #[test]
    fn the_group_is_killed_before_the_leader_is_reaped() {
        let t = tempfile::tempdir().expect("tempdir");
        let pidfile = t.path().join("pid");
        let mut c = Command::new("sh");
        // The grandchild lets go of the pipes, so the step ends at once.
        c.arg("-c").arg(format!(
            "sleep 100000 >/dev/null 2>&1 & echo $! > {}; echo done",
            pidfile.display()
        ));
        let o = run(c, Duration::from_secs(60), OUTPUT_CAP, true, recording_kill).expect("run");
        assert_eq!(o.stdout, b"done\n");
        assert!(o.status.success());
        let pid = read_pid(&pidfile);
        let gone = gone_within(pid, Duration::from_secs(30));
        assert!(gone, "the background sleep {pid} survived the step");
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 30 & exit 3"]);
        // The background sleep holds the pipes past the deadline: killed, then the run ends.
        let o = run(c, Duration::from_secs(1), OUTPUT_CAP, true, recording_kill).expect("run");
        assert_eq!(o.status.code(), Some(3));
        let kills = KILLS.with(|k| k.borrow().clone());
        assert!(kills.len() >= 2 && kills.iter().all(|k| *k), "{kills:?}");
    }
}
