//! Inline shell snippets in SKILL.md (`` !`cmd` ``), run only when the user
//! turned `skills.inline_shell` on (default off), as Hermes'
//! `agent/skill_preprocessing.py` does: `bash -c <cmd>` in the skill
//! directory, stdin closed, stdout (or stderr when stdout is empty) replaces
//! the snippet, capped at 4000 characters, with a timeout
//! (`skills.inline_shell_timeout`, default 10 s) after which the snippet's
//! whole process group is killed.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

static INLINE_SHELL_RE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"!`([^`\n]+)`").expect("valid regex"));

const MAX_OUTPUT_CHARS: usize = 4000;

/// Replace every `` !`cmd` `` in `content` with the command's output.
pub(crate) fn expand(content: &str, skill_dir: Option<&Path>, timeout_secs: u64) -> String {
    if !content.contains("!`") {
        return content.to_string();
    }
    INLINE_SHELL_RE
        .replace_all(content, |c: &regex::Captures| {
            let cmd = c[1].trim();
            if cmd.is_empty() {
                String::new()
            } else {
                run(cmd, skill_dir, timeout_secs)
            }
        })
        .into_owned()
}

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Run one snippet; failures become a short `[inline-shell ...]` marker.
pub(crate) fn run(command: &str, cwd: Option<&Path>, timeout_secs: u64) -> String {
    let timeout_secs = timeout_secs.max(1);
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return "[inline-shell error: bash not found]".to_string();
        }
        Err(e) => return format!("[inline-shell error: {e}]"),
    };
    let out = drain(child.stdout.take().expect("piped stdout"));
    let err = drain(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + Duration::from_secs(timeout_secs);
    let timed_out = loop {
        match child.try_wait() {
            Ok(Some(_)) => break false,
            Ok(None) if Instant::now() >= deadline => break true,
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return format!("[inline-shell error: {e}]"),
        }
    };
    if timed_out {
        // The whole group: `bash -c` may have started children holding the pipes.
        let pgid = child.id() as libc::pid_t;
        // SAFETY: kill(2) on the process group we created for this child.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        let _ = child.wait();
        let _ = (out.join(), err.join());
        return format!("[inline-shell timeout after {timeout_secs}s: {command}]");
    }
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let text = |b: Vec<u8>| {
        super::frontmatter::universal_newlines(String::from_utf8_lossy(&b).into_owned())
            .trim_end_matches('\n')
            .to_string()
    };
    let mut output = text(stdout);
    if output.is_empty() {
        output = text(stderr);
    }
    if output.chars().count() > MAX_OUTPUT_CHARS {
        let cut: String = output.chars().take(MAX_OUTPUT_CHARS).collect();
        output = format!("{cut}...[truncated]");
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_replaced_by_their_output() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("marker.txt"), "here").unwrap();
        let s = expand(
            "a !`echo hi` b !`cat marker.txt` c !`echo oops >&2` d !` ` e",
            Some(t.path()),
            10,
        );
        assert_eq!(s, "a hi b here c oops d  e");
        assert_eq!(expand("no snippets `x`", None, 10), "no snippets `x`");
    }

    #[test]
    fn long_output_is_capped() {
        let s = run("head -c 5000 /dev/zero | tr '\\0' x", None, 10);
        assert_eq!(s.len(), MAX_OUTPUT_CHARS + "...[truncated]".len());
        assert!(s.ends_with("...[truncated]"));
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let start = Instant::now();
        let s = run("sleep 30 & sleep 30", None, 1);
        assert_eq!(s, "[inline-shell timeout after 1s: sleep 30 & sleep 30]");
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
    }
}
