//! Codex's own verdict on a `config.toml` text before migrate writes it.
//!
//! migrate never writes a file codex cannot load (one bad entry stops every
//! codex command). [`super::compute`] proves the structure itself (every
//! server has a transport); this room asks codex, when it is installed:
//! `codex app-server --strict-config --print-startup-config` (the cheapest
//! run of codex's strict loader, the same in codex 0.169 and 0.171: it loads
//! the configuration, prints it and exits) against a scratch Codex home that
//! holds only the candidate text, started in that scratch directory so no
//! project `.codex/config.toml` joins in. A scratch home differs from the
//! real one (files next to config.toml are absent), so a refusal counts only
//! when codex loads the current text there ([`Verdict::Refused`] of both is
//! "codex refuses it either way", not migrate's doing).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::process::{RunError, output_then_kill_group};

/// How long codex may take to load a configuration.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(15);
const OUTPUT_CAP: usize = 1 << 20;

/// What codex said about a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Loads,
    /// Codex's message (the line and column, and what is wrong).
    Refused(String),
    /// Codex could not be asked (not installed, no answer): why.
    NotAsked(String),
}

/// Run codex's strict loader on `text` in a scratch Codex home.
pub(crate) fn verdict(codex_bin: &Path, text: &str) -> Verdict {
    let scratch = match tempfile::Builder::new()
        .prefix("hermes-mcp-codex-check-")
        .tempdir()
    {
        Ok(d) => d,
        Err(e) => return Verdict::NotAsked(format!("no scratch directory: {e}")),
    };
    let config = scratch.path().join("config.toml");
    if let Err(e) = std::fs::write(&config, text) {
        return Verdict::NotAsked(format!("cannot write {}: {e}", config.display()));
    }
    let mut cmd = Command::new(codex_bin);
    cmd.args(["app-server", "--strict-config", "--print-startup-config"])
        .env("CODEX_HOME", scratch.path())
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LOG")
        .current_dir(scratch.path());
    let out = match output_then_kill_group(cmd, TIMEOUT, OUTPUT_CAP) {
        Ok(o) => o,
        Err(e @ RunError::Spawn(_)) if e.is_not_found() => {
            return Verdict::NotAsked(format!("{} not found", codex_bin.display()));
        }
        Err(e) => return Verdict::NotAsked(format!("{}: {e}", codex_bin.display())),
    };
    if out.status.success() {
        return Verdict::Loads;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let scratch_name = config.display().to_string();
    // Only codex's own answer about the configuration is a refusal; any other
    // failure (killed, out of resources) says nothing about the text.
    let msg = stdout
        .lines()
        .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .and_then(|v| {
            v.pointer("/error/data/detail")
                .or_else(|| v.pointer("/error/message"))
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    match msg {
        // Codex names the scratch file; the position is what matters.
        Some(m) => Verdict::Refused(m.replace(&scratch_name, "config.toml")),
        None => {
            let err = String::from_utf8_lossy(&out.stderr);
            let line = err
                .lines()
                .find(|l| l.starts_with("Error"))
                .unwrap_or("exited with an error and no message");
            Verdict::NotAsked(format!("{}: {line}", codex_bin.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_codex_is_not_asked() {
        let v = verdict(Path::new("/nonexistent/codex"), "model = \"m\"\n");
        assert!(
            matches!(v, Verdict::NotAsked(ref m) if m.contains("not found")),
            "{v:?}"
        );
    }
}
