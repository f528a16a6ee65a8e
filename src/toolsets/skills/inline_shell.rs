//! Inline shell snippets in SKILL.md (`` !`cmd` ``), run only when the user
//! turned `skills.inline_shell` on (default off), as Hermes'
//! `agent/skill_preprocessing.py` does: `bash -c <cmd>` in the skill
//! directory, stdin closed, stdout (or stderr when stdout is empty) replaces
//! the snippet, capped at 4000 characters, with a timeout
//! (`skills.inline_shell_timeout`, default 10 s) after which the snippet's
//! whole process group is killed.

use std::path::Path;
use std::process::Command;
use std::sync::LazyLock;
use std::time::Duration;

static INLINE_SHELL_RE: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"!`([^`\n]+)`").expect("valid regex"));

/// Compile the pattern now (the toolset's warm-up).
pub(crate) fn warm() {
    LazyLock::force(&INLINE_SHELL_RE);
}

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

/// Run one snippet; failures become a short `[inline-shell ...]` marker.
pub(crate) fn run(command: &str, cwd: Option<&Path>, timeout_secs: u64) -> String {
    let timeout_secs = timeout_secs.max(1);
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(command);
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let out = match crate::process::output_with_timeout(cmd, Duration::from_secs(timeout_secs)) {
        Ok(o) => o,
        Err(e) if e.is_not_found() => {
            return "[inline-shell error: bash not found]".to_string();
        }
        Err(crate::process::RunError::TimedOut(_)) => {
            return format!("[inline-shell timeout after {timeout_secs}s: {command}]");
        }
        Err(e) => return format!("[inline-shell error: {e}]"),
    };
    let (stdout, stderr) = (out.stdout, out.stderr);
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
    use std::time::Instant;

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
