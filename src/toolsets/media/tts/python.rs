//! The Python that runs Hermes' local TTS packages (`piper-tts`, `neutts`,
//! `kittentts`), and which of them it can import.
//!
//! Hermes imports them in its own process (`sys.executable`, hermes-agent:
//! `tools/tts_tool.py` `_import_piper`, `_check_neutts_available`,
//! `_import_kittentts`; NeuTTS and Piper's voice download run `sys.executable`
//! as a child). hermes-mcp is no Python, so it finds Hermes' interpreter:
//! 1. `HERMES_PYTHON` (a path, or a name on `PATH`);
//! 2. the interpreter of the `hermes` command on `PATH` (its `#!` line: pip's
//!    console scripts name their venv's python);
//! 3. `$HERMES_HOME/hermes-agent/venv/bin/python` (Hermes' installer layout);
//! 4. `python3` on `PATH`.
//!
//! Whether a package is importable is asked of that interpreter
//! (`importlib.util.find_spec`, as Hermes' availability checks do) and
//! remembered for [`PROBE_TTL`], so `tools/list` does not start Python each time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use crate::hermes::Context;
use crate::hermes::envvars;
use crate::toolsets::media;

/// How long an import probe's answer is reused.
const PROBE_TTL: Duration = Duration::from_secs(30);
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// The interpreter and how it was found (for `hermes-mcp tools`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Interpreter {
    pub path: PathBuf,
    pub source: String,
}

impl std::fmt::Display for Interpreter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.path.display(), self.source)
    }
}

/// The `#!` interpreter of a script, when it is a Python.
fn shebang_python(ctx: &Context, script: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script).ok()?.read(&mut head).ok()?;
    let line = std::str::from_utf8(&head[..n]).ok()?.lines().next()?;
    let mut words = line.strip_prefix("#!")?.split_whitespace();
    let mut prog = words.next()?;
    if Path::new(prog).file_name().is_some_and(|n| n == "env") {
        prog = words.find(|w| !w.starts_with('-'))?;
    }
    let name = Path::new(prog).file_name()?.to_string_lossy().into_owned();
    if !name.starts_with("python") {
        return None;
    }
    if Path::new(prog).is_absolute() {
        Path::new(prog).is_file().then(|| PathBuf::from(prog))
    } else {
        media::which(ctx, prog)
    }
}

/// Hermes' interpreter, found as the module docs say; `None` when there is no Python.
pub(crate) fn interpreter(ctx: &Context) -> Option<Interpreter> {
    if let Some(p) = ctx.env.get(envvars::HERMES_PYTHON) {
        let p = p.trim();
        let path = if p.contains('/') {
            crate::hermes::home::expand_tilde(Path::new(p))
        } else {
            media::which(ctx, p).unwrap_or_else(|| PathBuf::from(p))
        };
        return Some(Interpreter {
            path,
            source: "HERMES_PYTHON".into(),
        });
    }
    if let Some(path) = media::which(ctx, "hermes").and_then(|h| shebang_python(ctx, &h)) {
        return Some(Interpreter {
            path,
            source: "the `hermes` command's interpreter".into(),
        });
    }
    let installed = ctx.home.path.join("hermes-agent/venv/bin/python");
    if installed.is_file() {
        return Some(Interpreter {
            path: installed,
            source: "Hermes' installed venv".into(),
        });
    }
    media::which(ctx, "python3").map(|path| Interpreter {
        path,
        source: "python3 on PATH".into(),
    })
}

/// The local TTS packages an interpreter can import (top-level module names).
pub(crate) const MODULES: [&str; 3] = ["piper", "neutts", "kittentts"];

const PROBE: &str = r#"
import importlib.util, json, sys
def has(m):
    try:
        return importlib.util.find_spec(m) is not None
    except Exception:
        return False
print(json.dumps({m: has(m) for m in sys.argv[1:]}))
"#;

type Probed = HashMap<String, bool>;
static PROBES: LazyLock<Mutex<HashMap<PathBuf, (Instant, Probed)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Whether `py` can import `module` (one of [`MODULES`]). A Python that cannot
/// be run imports nothing.
pub(crate) fn can_import(py: &Path, module: &str) -> bool {
    if let Ok(cache) = PROBES.lock()
        && let Some((at, found)) = cache.get(py)
        && at.elapsed() < PROBE_TTL
    {
        return found.get(module).copied().unwrap_or(false);
    }
    let found = probe(py).unwrap_or_default();
    let has = found.get(module).copied().unwrap_or(false);
    if let Ok(mut cache) = PROBES.lock() {
        cache.insert(py.to_path_buf(), (Instant::now(), found));
    }
    has
}

fn probe(py: &Path) -> Option<Probed> {
    let mut child = std::process::Command::new(py)
        .arg("-c")
        .arg(PROBE)
        .args(MODULES)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < PROBE_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(10))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::warn!("{} did not answer the import probe", py.display());
                return None;
            }
        }
    }
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut()?, &mut out).ok()?;
    serde_json::from_str(out.lines().last()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolsets::media::test_ctx as ctx;

    #[test]
    fn interpreter_order() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let py = bin.join("python3.11");
        std::fs::write(&py, "").unwrap();
        let path = bin.to_str().unwrap();
        // Nothing: no interpreter.
        assert_eq!(interpreter(&ctx("", &[("PATH", path)])), None);
        // `hermes` whose #! names a python.
        std::fs::write(
            bin.join("hermes"),
            format!("#!{}\nimport sys\n", py.display()),
        )
        .unwrap();
        set_exec(&bin.join("hermes"));
        let i = interpreter(&ctx("", &[("PATH", path)])).unwrap();
        assert_eq!(i.path, py);
        assert!(i.source.contains("hermes"), "{i}");
        // `#!/usr/bin/env python3.11` is looked up on PATH.
        std::fs::write(bin.join("hermes"), "#!/usr/bin/env python3.11\n").unwrap();
        set_exec(&py);
        assert_eq!(interpreter(&ctx("", &[("PATH", path)])).unwrap().path, py);
        // HERMES_PYTHON wins.
        let i = interpreter(&ctx("", &[("PATH", path), ("HERMES_PYTHON", "/x/python")])).unwrap();
        assert_eq!(
            (i.path.as_path(), i.source.as_str()),
            (Path::new("/x/python"), "HERMES_PYTHON")
        );
        // A shell script is not a Python.
        std::fs::write(bin.join("hermes"), "#!/bin/sh\n").unwrap();
        assert_eq!(interpreter(&ctx("", &[("PATH", path)])), None);
    }

    fn set_exec(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_missing_interpreter_imports_nothing() {
        assert!(!can_import(Path::new("/nonexistent/python"), "piper"));
    }
}
