//! Start an MCP stdio server the way codex does and time its handshake.
//!
//! codex (0.169) spawns `command args` with a cleared environment (see
//! `hermes::envvars::codex_server_env`), in the entry's `cwd`, then sends
//! `initialize`, `notifications/initialized` and `tools/list`, each answered
//! on one line of stdout. We do the same with the same protocol version and
//! capabilities, so a server that fails here fails in codex too.
//!
//! Whatever the server does, doctor ends: the server runs in its own process
//! group, which is killed when each step ends (a background grandchild can
//! hold the pipes open after the server exits); every step has a deadline;
//! stdout is read up to [`STDOUT_CAP`] and only the last [`STDERR_CAP`] of
//! stderr is kept; and what doctor shows of the server's output is redacted
//! as the tools redact their results (`crate::redact`).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::hermes::deadlines::{
    self, DOCTOR_EXIT_GRACE, DOCTOR_EXTRA_WAIT_MAX, DOCTOR_EXTRA_WAIT_MIN, DOCTOR_MAX_STEP,
};
use crate::process::{RunError, StopOnDrop, exited, human_bytes, kill_group, read_polled};
use crate::redact::redact_sensitive_text as redact;

use serde_json::{Value, json};

/// How much of the server's stderr is kept (its end) to explain a failure.
const STDERR_CAP: usize = 16 << 10;
/// How much the server may write on stdout in one step: hermes-mcp's whole
/// `tools/list` or `tools --json` is a few hundred KiB.
pub(crate) const STDOUT_CAP: usize = 16 << 20;

/// What to start.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: Option<PathBuf>,
    /// codex's `startup_timeout_sec` (applies to `initialize` and `tools/list`),
    /// at most [`DOCTOR_MAX_STEP`].
    pub(crate) timeout: Duration,
}

impl Launch {
    /// How long doctor waits for a step: codex's timeout and as much again,
    /// within [`DOCTOR_EXTRA_WAIT_MIN`] and [`DOCTOR_EXTRA_WAIT_MAX`] (a
    /// server that answers after codex gave up is told apart from one that
    /// never does). codex's timeout is its setting and waited as it is;
    /// doctor's extra wait, and its cap on a step, scale in tests.
    fn patience(&self) -> Duration {
        let codex = if self.timeout >= DOCTOR_MAX_STEP.hermes() {
            DOCTOR_MAX_STEP.get()
        } else {
            self.timeout
        };
        let extra = self.timeout.clamp(
            DOCTOR_EXTRA_WAIT_MIN.hermes(),
            DOCTOR_EXTRA_WAIT_MAX.hermes(),
        );
        codex.saturating_add(deadlines::scaled(extra))
    }

    pub(crate) fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args)
            .env_clear()
            .envs(self.env.iter().cloned());
        if let Some(d) = &self.cwd {
            c.current_dir(d);
        }
        c
    }
}

/// A successful handshake.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    pub(crate) server_name: Option<String>,
    pub(crate) server_version: Option<String>,
    pub(crate) initialize: Duration,
    pub(crate) tools_list: Duration,
    pub(crate) tools: Vec<String>,
}

/// Why the handshake failed, with what the server wrote on stderr.
#[derive(Debug, Clone)]
pub(crate) struct ProbeError {
    pub(crate) message: String,
    pub(crate) stderr: String,
}

/// What the stdout reader hands over.
enum Out {
    Line(String),
    /// More than [`STDOUT_CAP`] bytes: the reader stopped.
    TooMuch,
}

struct Running {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<Out>,
    stderr: mpsc::Receiver<String>,
    /// Set when doctor is done with the server (at the latest when this is
    /// dropped): the pipe readers end then, whoever still holds the pipes.
    stop: StopOnDrop,
}

impl Running {
    fn send(&mut self, msg: &Value) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("stdin closed"))?;
        writeln!(stdin, "{msg}")?;
        stdin.flush()
    }

    /// The response to request `id`, skipping notifications and log lines.
    fn response(&self, id: i64, deadline: Instant, timeout: Duration) -> Result<Value, TalkError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(Out::TooMuch) => return Err(TalkError::TooMuch(STDOUT_CAP, "stdout")),
                Ok(Out::Line(line)) => {
                    let Ok(v) = serde_json::from_str::<Value>(&line) else {
                        return Err(TalkError::NotJsonRpc(redact(&truncate(&line, 200))));
                    };
                    if v.get("id").and_then(Value::as_i64) != Some(id) {
                        continue;
                    }
                    if let Some(e) = v.get("error") {
                        return Err(TalkError::RpcError(redact(&truncate(&e.to_string(), 500))));
                    }
                    return Ok(v.get("result").cloned().unwrap_or(Value::Null));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(TalkError::Timeout(
                        timeout,
                        "codex's start-up timeout; doctor waited longer",
                    ));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(TalkError::Exited);
                }
            }
        }
    }

    /// Close stdin, give the server [`DOCTOR_EXIT_GRACE`] to exit, then kill its whole
    /// process group (whatever it left running); the end of its stderr,
    /// redacted.
    fn finish(mut self) -> String {
        drop(self.stdin.take());
        let grace = DOCTOR_EXIT_GRACE.get();
        let deadline = Instant::now() + grace;
        // Seen to end without being reaped: its zombie keeps the group id
        // from going to another process until the group kill below.
        while Instant::now() < deadline {
            if exited(self.child.id()).unwrap_or(true) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        kill_group(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A process that left the group (setsid) may still hold stderr: the
        // reader then stops and hands over what it has.
        let stderr = self.stderr.recv_timeout(grace).unwrap_or_else(|_| {
            self.stop.0.store(true, Ordering::SeqCst);
            self.stderr.recv_timeout(grace).unwrap_or_default()
        });
        redact(&stderr)
    }
}

fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", s.get(..i).unwrap_or(s)),
        None => s.to_string(),
    }
}

fn spawn(launch: &Launch) -> std::io::Result<Running> {
    let mut child = launch
        .command()
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout"))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| std::io::Error::other("no stderr"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, lines) = mpsc::channel();
    let halt = stop.clone();
    std::thread::spawn(move || read_lines(stdout, &tx, &halt));
    let (tx, stderr_rx) = mpsc::channel();
    let halt = stop.clone();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        read_polled(stderr, &halt, |chunk| {
            buf.extend_from_slice(chunk);
            // Keep the end, which says why it stopped; drop the start in bulk.
            if buf.len() > 2 * STDERR_CAP {
                buf.drain(..buf.len() - STDERR_CAP);
            }
            true
        });
        let keep = buf.len().saturating_sub(STDERR_CAP);
        let _ = tx.send(String::from_utf8_lossy(buf.get(keep..).unwrap_or_default()).into_owned());
    });
    let stdin = child.stdin.take();
    Ok(Running {
        child,
        stdin,
        lines,
        stderr: stderr_rx,
        stop: StopOnDrop(stop),
    })
}

/// Hand over stdout line by line until EOF or `stop`, or until more than
/// [`STDOUT_CAP`] bytes came (then [`Out::TooMuch`] and stop reading: a
/// server writing without a newline must not grow one line without end).
fn read_lines(
    stdout: impl std::io::Read + std::os::fd::AsRawFd,
    tx: &mpsc::Sender<Out>,
    stop: &AtomicBool,
) {
    let mut total = 0usize;
    let mut line = Vec::new();
    let mut over = false;
    let mut gone = false;
    read_polled(stdout, stop, |chunk| {
        total += chunk.len();
        if total > STDOUT_CAP {
            let _ = tx.send(Out::TooMuch);
            over = true;
            return false;
        }
        for part in chunk.split_inclusive(|b| *b == b'\n') {
            line.extend_from_slice(part);
            if line.last() == Some(&b'\n') {
                line.pop();
                let text = String::from_utf8_lossy(&line).into_owned();
                line.clear();
                if tx.send(Out::Line(text)).is_err() {
                    gone = true;
                    return false;
                }
            }
        }
        true
    });
    if !over && !gone && !line.is_empty() {
        let _ = tx.send(Out::Line(String::from_utf8_lossy(&line).into_owned()));
    }
}

/// Start the server, run the handshake codex runs, list its tools, stop it.
pub(crate) fn probe(launch: &Launch) -> Result<Probe, ProbeError> {
    let fail = |message: String, stderr: String| ProbeError { message, stderr };
    let started = Instant::now();
    let mut run = spawn(launch).map_err(|e| {
        fail(
            format!("cannot start {}: {e}", launch.program.display()),
            String::new(),
        )
    })?;
    let deadline = far(started, launch.patience());
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18",
        "capabilities":{"elicitation":{"form":{},"url":{}}},
        "clientInfo":{"name":"hermes-mcp-doctor","title":"hermes-mcp doctor","version":env!("CARGO_PKG_VERSION")}
    }});
    let result = run
        .send(&init)
        .map_err(|e| TalkError::StdinClosed("before initialize", e))
        .and_then(|()| run.response(0, deadline, launch.timeout));
    let info = match result {
        Ok(v) => v,
        Err(m) => {
            let stderr = run.finish();
            return Err(fail(format!("initialize: the server {m}"), stderr));
        }
    };
    let initialize = started.elapsed();
    let _ = run.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let t = Instant::now();
    let deadline = far(t, launch.patience());
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    for id in 1..=100 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let req = json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":params});
        let page = run
            .send(&req)
            .map_err(|e| TalkError::StdinClosed("during tools/list", e))
            .and_then(|()| run.response(id, deadline, launch.timeout));
        let page = match page {
            Ok(p) => p,
            Err(m) => {
                let stderr = run.finish();
                return Err(fail(format!("tools/list: the server {m}"), stderr));
            }
        };
        if let Some(list) = page.get("tools").and_then(Value::as_array) {
            tools.extend(
                list.iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .map(str::to_string),
            );
        }
        cursor = page.get("nextCursor").filter(|c| !c.is_null()).cloned();
        if cursor.is_none() {
            break;
        }
    }
    let tools_list = t.elapsed();
    let _ = run.finish();
    let s = |k: &str| {
        info.get("serverInfo")
            .and_then(|i| i.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    Ok(Probe {
        server_name: s("name"),
        server_version: s("version"),
        initialize,
        tools_list,
        tools,
    })
}

/// Run `launch` to completion within `timeout` (for `hermes-mcp tools
/// --json`; a scaled wait, named in the error in real time), stdout as
/// text; its process group is killed at the end.
pub(crate) fn output(launch: &Launch, timeout: Duration) -> Result<String, TalkError> {
    let program = launch.program.display().to_string();
    let out = crate::process::output_then_kill_group(launch.command(), timeout, STDOUT_CAP)
        .map_err(|e| match e {
            RunError::TimedOut(d) => {
                TalkError::Timeout(deadlines::unscaled(d), "doctor's limit for this step")
            }
            RunError::TooMuchOutput(cap, pipe) => TalkError::TooMuch(cap, pipe),
            RunError::Spawn(source) => TalkError::Run {
                program: program.clone(),
                source,
            },
        })?;
    if !out.status.success() {
        return Err(TalkError::Failed {
            program,
            status: out.status,
            stderr: redact(&truncate(String::from_utf8_lossy(&out.stderr).trim(), 500)),
        });
    }
    String::from_utf8(out.stdout).map_err(|_| TalkError::NotUtf8)
}

/// What went wrong talking to the server; the texts follow "the server …".
#[derive(Debug, thiserror::Error)]
pub(crate) enum TalkError {
    #[error("wrote a line on stdout that is not JSON-RPC: {0:?}")]
    NotJsonRpc(String),
    #[error("answered with an error: {0}")]
    RpcError(String),
    #[error("did not answer within {} ({})", secs(*.0), .1)]
    Timeout(Duration, &'static str),
    #[error("wrote more than {} on {} (doctor stops reading there)", human_bytes(*.0), .1)]
    TooMuch(usize, &'static str),
    #[error("exited (or closed stdout) before answering")]
    Exited,
    #[error("closed stdin {0}: {1}")]
    StdinClosed(&'static str, std::io::Error),
    #[error("cannot run {program}: {source}")]
    Run {
        program: String,
        source: std::io::Error,
    },
    #[error("{program} exited with {status}: {stderr}")]
    Failed {
        program: String,
        status: std::process::ExitStatus,
        stderr: String,
    },
    #[error("its output is not UTF-8")]
    NotUtf8,
    #[error("`tools --json` printed no JSON: {0}")]
    NotJson(serde_json::Error),
}

/// `start + timeout`, or a day on when that is past what `Instant` holds.
fn far(start: Instant, timeout: Duration) -> Instant {
    start
        .checked_add(timeout)
        .or_else(|| start.checked_add(Duration::from_secs(86_400)))
        .unwrap_or(start)
}

/// `1 s`, `0.5 s`.
fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Find `command` as codex does: a path as given (relative to `cwd`), else in `PATH`.
pub(crate) fn resolve(command: &str, path_var: Option<&str>, cwd: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exec = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        let p = cwd.join(command);
        return is_exec(&p).then_some(p);
    }
    path_var?
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(command))
        .find(|p| is_exec(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::process::tests::gone_within;

    /// A descendant that left the server's process group (`setsid`) and
    /// keeps writing to its stderr does not keep doctor's pipe readers: once
    /// doctor is done with the server they stop (the descendant's next write
    /// fails), and what it wrote so far is still shown.
    #[test]
    fn a_descendant_outside_the_group_does_not_keep_the_readers() {
        let t = tempfile::tempdir().expect("tempdir");
        let pidfile = t.path().join("pid");
        let launch = Launch {
            program: PathBuf::from("/bin/sh"),
            args: vec![
                "-c".into(),
                format!(
                    "setsid sh -c 'echo $$ > {}; while :; do echo held >&2 || exit 0; sleep 0.1; done' & sleep 0.3",
                    pidfile.display()
                ),
            ],
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            cwd: None,
            timeout: Duration::from_secs(1),
        };
        let e = probe(&launch).expect_err("no handshake");
        assert!(e.stderr.contains("held"), "{e:?}");
        let pid: libc::pid_t = std::fs::read_to_string(&pidfile)
            .expect("pid")
            .trim()
            .parse()
            .expect("pid number");
        let gone = gone_within(pid, Duration::from_secs(10));
        // SAFETY: plain kill(2) of the test's own descendant.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
        assert!(gone, "the descendant still writes into a pipe doctor reads");
    }
}
