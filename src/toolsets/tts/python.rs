//! The Python that runs Hermes' local TTS packages (`piper-tts`, `neutts`,
//! `kittentts`), and which of them it can import.
//!
//! Hermes imports them in its own process (`sys.executable`, hermes-agent:
//! `tools/tts_tool.py` `_import_piper`, `_check_neutts_available`,
//! `_import_kittentts`; NeuTTS and Piper's voice download run `sys.executable`
//! as a child). hermes-mcp is no Python, so it uses Hermes' interpreter as
//! [`crate::hermes::python`] finds it.
//!
//! Whether a package is importable is asked of that interpreter
//! (`importlib.util.find_spec`, as Hermes' availability checks do) and
//! remembered for [`PROBE_TTL`], so `tools/list` does not start Python each time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

pub(crate) use crate::hermes::python::{Interpreter, interpreter};

/// How long an import probe's answer is reused.
const PROBE_TTL: Duration = Duration::from_secs(30);
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

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
    let mut cmd = std::process::Command::new(py);
    // From `/`: `python -c` puts the working directory (Codex's, usually the
    // user's project) first on `sys.path`, so a project's `json.py` would run.
    cmd.arg("-c").arg(PROBE).args(MODULES).current_dir("/");
    let out = crate::process::blocking(|| crate::process::output_with_timeout(cmd, PROBE_TIMEOUT));
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!("{} did not answer the import probe: {e}", py.display());
            return None;
        }
    };
    serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::context::test_ctx as ctx;

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
