//! `tts.providers.<name>` command providers, as Hermes runs them
//! (`_render_command_tts_template`, `_run_command_tts`): placeholders are
//! shell-quoted for the quoting context they sit in, `{{`/`}}` are literal
//! braces, `${name}` is left to the shell, and the command runs under `sh -c`
//! in its own process group, which is killed as a whole on timeout or cancel.

use std::time::Duration;

use tokio::process::Command;

/// The quote character open just before `position` (`'`, `"` or none), as
/// Hermes' `_shell_quote_context` scans it.
fn quote_context(template: &[char], position: usize) -> Option<char> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut i = 0;
    while i < position {
        let c = template[i];
        match quote {
            Some('\'') => {
                if c == '\'' {
                    quote = None;
                }
            }
            Some('"') => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    quote = None;
                }
            }
            _ => {
                if c == '\'' || c == '"' {
                    quote = Some(c);
                } else if c == '\\' {
                    i += 1;
                }
            }
        }
        i += 1;
    }
    quote
}

/// Python's `shlex.quote`.
pub(crate) fn shlex_quote(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    let safe = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\"'\"'"))
    }
}

fn quote_for(value: &str, ctx: Option<char>) -> String {
    match ctx {
        Some('\'') => value.replace('\'', r"'\''"),
        Some('"') => value
            .replace('\\', r"\\")
            .replace('"', r#"\""#)
            .replace('$', r"\$")
            .replace('`', r"\`"),
        _ => shlex_quote(value),
    }
}

/// Render a command template (Hermes' `_render_command_tts_template`). Hermes'
/// placeholders are `input_path`, `text_path`, `output_path`, `format`, `voice`,
/// `model` and `speed`; `values` supplies them, and unknown names stay literal.
pub(crate) fn render(template: &str, values: &[(&str, String)]) -> String {
    let chars: Vec<char> = template.chars().collect();
    let lookup = |name: &str| values.iter().find(|(k, _)| *k == name).map(|(_, v)| v);
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '{' && (i == 0 || chars[i - 1] != '$') {
            // `{{name}}` or `{name}` for a known placeholder.
            let double = chars.get(i + 1) == Some(&'{');
            let start = if double { i + 2 } else { i + 1 };
            let mut j = start;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let name: String = chars[start..j].iter().collect();
            let closes = if double {
                chars.get(j) == Some(&'}') && chars.get(j + 1) == Some(&'}')
            } else {
                chars.get(j) == Some(&'}')
            };
            if closes && let Some(v) = lookup(&name) {
                out.push_str(&quote_for(v, quote_context(&chars, i)));
                i = j + if double { 2 } else { 1 };
                continue;
            }
        }
        // Literal braces: `{{` -> `{`, `}}` -> `}`.
        if (c == '{' || c == '}') && chars.get(i + 1) == Some(&c) {
            out.push(c);
            i += 2;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("timed out after {0}s")]
    Timeout(String),
    #[error("exited with code {code}: {detail}")]
    Exit { code: i32, detail: String },
    #[error("could not start the shell: {0}")]
    Spawn(#[source] std::io::Error),
}

/// Kills the whole process group when dropped (timeout, cancellation, or normal end).
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            // SAFETY: signalling a process group we created; harmless if it is gone.
            unsafe {
                libc::killpg(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

pub(crate) use crate::time::fmt_secs;

/// Run `command` with `sh -c` in a new process group, stdin closed.
pub(crate) async fn run_shell(command: &str, timeout: Duration) -> Result<(), RunError> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = cmd.spawn().map_err(RunError::Spawn)?;
    let mut guard = GroupGuard(child.id());
    let out = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Err(_) => return Err(RunError::Timeout(fmt_secs(timeout.as_secs_f64()))),
        Ok(r) => r.map_err(RunError::Spawn)?,
    };
    // Finished normally: leave the group alone (as Hermes does).
    guard.0 = None;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let mut parts = Vec::new();
        if !stderr.is_empty() {
            parts.push(format!("stderr: {stderr}"));
        }
        if !stdout.is_empty() {
            parts.push(format!("stdout: {stdout}"));
        }
        let detail = if parts.is_empty() {
            "no command output".to_string()
        } else {
            parts.join("; ")
        };
        let code = out.status.code().unwrap_or(-1);
        return Err(RunError::Exit { code, detail });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_error_keeps_its_text_and_carries_the_io_error() {
        let e = RunError::Spawn(std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(e.to_string(), "could not start the shell: entity not found");
        let src = std::error::Error::source(&e).expect("the io error as source");
        assert_eq!(src.to_string(), "entity not found");
    }

    fn vals() -> Vec<(&'static str, String)> {
        vec![
            ("input_path", "/tmp/in put.txt".into()),
            ("output_path", "/tmp/o'ut.wav".into()),
            ("format", "wav".into()),
            ("voice", "".into()),
        ]
    }

    #[test]
    fn placeholders_are_quoted_for_their_context() {
        assert_eq!(
            render("tts -i {input_path} -o {output_path} -f {format}", &vals()),
            r#"tts -i '/tmp/in put.txt' -o '/tmp/o'"'"'ut.wav' -f wav"#
        );
        assert_eq!(
            render("tts '{output_path}' \"{input_path}\"", &vals()),
            r#"tts '/tmp/o'\''ut.wav' "/tmp/in put.txt""#
        );
        assert_eq!(render("x --voice {voice}", &vals()), "x --voice ''");
    }

    #[test]
    fn braces_and_shell_vars() {
        assert_eq!(
            render("awk '{{print}}' {{format}} ${format} {unknown}", &vals()),
            "awk '{print}' wav ${format} {unknown}"
        );
    }

    #[test]
    fn shlex_quote_matches_python() {
        assert_eq!(shlex_quote("abc-1.2/x_y"), "abc-1.2/x_y");
        assert_eq!(shlex_quote("a b"), "'a b'");
        assert_eq!(shlex_quote("it's"), r#"'it'"'"'s'"#);
    }

    #[test]
    fn secs_format_like_python_g() {
        assert_eq!(fmt_secs(120.0), "120");
        assert_eq!(fmt_secs(0.5), "0.5");
    }

    #[tokio::test]
    async fn timeout_kills_the_group_and_exit_codes_carry_output() {
        let t = std::time::Instant::now();
        let e = run_shell("sleep 30 & sleep 30", Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(matches!(e, RunError::Timeout(_)), "{e}");
        assert!(t.elapsed() < Duration::from_secs(10));
        let e = run_shell("echo oops >&2; exit 3", Duration::from_secs(5))
            .await
            .unwrap_err();
        assert_eq!(e.to_string(), "exited with code 3: stderr: oops");
        run_shell("true", Duration::from_secs(5)).await.unwrap();
    }
}
