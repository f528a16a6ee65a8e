//! What the suite needs on the machine — Hermes Agent's Python and its modules, the real
//! codex, Chromium, strace, piper, edge-tts, command-line programs — each probed once per
//! test run (the answers are cached in this process and, for the other test processes of a
//! nextest run, in the run's directory: [`super::run`]), failing the test with what to do
//! when it is missing. Tests never skip: tools/test.sh installs all of it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The cached answer for `key`, running `probe` the first time it is asked.
fn probed(key: &str, probe: impl FnOnce() -> bool) -> bool {
    static SEEN: OnceLock<Mutex<HashMap<String, bool>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    *seen
        .entry(key.to_string())
        .or_insert_with(|| super::run::probed_once_per_run(key, probe))
}

/// `cmd` ran and exited with success.
fn succeeds(mut cmd: Command) -> bool {
    cmd.output().map(|o| o.status.success()).unwrap_or(false)
}

/// `py` can run `code` (an import line), cached per (python, code).
pub fn python_can(py: &str, code: &str) -> bool {
    probed(&format!("python {py}: {code}"), || {
        let mut c = Command::new(py);
        c.args(["-c", code]);
        succeeds(c)
    })
}

/// Hermes Agent's Python (hermes-agent 0.19.0): `$HERMES_PYTHON`, default
/// `/opt/hermes-venv/bin/python` (tools/test.sh installs it there). Fails the
/// test, with what to do, when it is missing or cannot import `module`.
pub fn hermes_python(module: &str) -> PathBuf {
    let py =
        std::env::var("HERMES_PYTHON").unwrap_or_else(|_| "/opt/hermes-venv/bin/python".into());
    importing(py, module, "HERMES_PYTHON")
}

/// Hermes' Python as a process of its own, for a run whose process a test looks at (its pid,
/// the holder a lock error names). Under tools/test.sh, `HERMES_PYTHON` is a shim whose runs
/// are forks of `tools/pyzygote.py`'s server, so the pid spawned is not the one that runs the
/// code; this is the interpreter itself (`HERMES_PYTHON_PLAIN`, set beside the shim).
pub fn hermes_python_process(module: &str) -> PathBuf {
    match std::env::var("HERMES_PYTHON_PLAIN") {
        Ok(py) => importing(py, module, "HERMES_PYTHON_PLAIN"),
        Err(_) => hermes_python(module),
    }
}

/// `py`, named by the variable `var`, which must import `module` (else the test fails,
/// saying what to do).
fn importing(py: String, module: &str, var: &str) -> PathBuf {
    assert!(
        python_can(&py, &format!("import {module}")),
        "Hermes Agent's Python ({py}) cannot import {module}: these tests need hermes-agent 0.19.0; \
         run tools/test.sh (it installs it) or point {var} at its python"
    );
    PathBuf::from(py)
}

/// A Python that can `import edge_tts`: `$EDGE_TTS_PYTHON`, else Hermes' (`$HERMES_PYTHON`,
/// default /opt/hermes-venv/bin/python) with its `edge-tts` extra installed.
pub fn edge_tts_python() -> PathBuf {
    let py = std::env::var("EDGE_TTS_PYTHON")
        .or_else(|_| std::env::var("HERMES_PYTHON"))
        .unwrap_or_else(|_| "/opt/hermes-venv/bin/python".into());
    assert!(
        python_can(&py, "import edge_tts"),
        "{py} cannot import edge_tts: install Hermes' extra (`pip install 'hermes-agent[edge-tts]==0.19.0'`, \
         i.e. edge-tts==7.2.7) into that venv, or point EDGE_TTS_PYTHON at a python that has edge-tts"
    );
    PathBuf::from(py)
}

/// A Python with the real piper-tts and onnx: `$PIPER_PYTHON`, default `/opt/piper-venv/bin/python`.
pub fn piper_python() -> PathBuf {
    let py = std::env::var("PIPER_PYTHON").unwrap_or_else(|_| "/opt/piper-venv/bin/python".into());
    assert!(
        python_can(
            &py,
            "from piper import PiperVoice, SynthesisConfig; import onnx"
        ),
        "{py} cannot import piper-tts and onnx: run tools/test.sh (it installs them) or point PIPER_PYTHON at a Python that has them"
    );
    PathBuf::from(py)
}

/// The real Codex CLI on PATH (tools/test.sh puts 0.171.0 first; [`codex_of`] picks a
/// release).
pub fn codex_bin() -> PathBuf {
    let ok = probed("codex --version", || {
        let mut c = Command::new("codex");
        c.arg("--version");
        succeeds(c)
    });
    assert!(
        ok,
        "`codex` is not on PATH: these tests need the real Codex CLI (0.171.0, and 0.169.0 beside it); run tools/test.sh, which installs both"
    );
    PathBuf::from("codex")
}

/// The codex releases every config `migrate` writes is checked against: the newest
/// published (0.171.0) and the one Hermes 0.19 was released with (0.169.0).
pub const CODEX_VERSIONS: &[&str] = &["0.171.0", "0.169.0"];

/// The real Codex CLI of `version` (one of [`CODEX_VERSIONS`]): `$CODEX_<version with
/// underscores>` (e.g. `CODEX_0_171_0`), else the side-by-side install tools/test.sh makes
/// (`/opt/codex-<version>/node_modules/.bin/codex`), else `codex` on PATH when it is that
/// version. Fails the test, with what to do, when none is.
pub fn codex_of(version: &str) -> PathBuf {
    let var = format!("CODEX_{}", version.replace('.', "_"));
    let candidates: Vec<PathBuf> = std::env::var_os(&var)
        .map(PathBuf::from)
        .into_iter()
        .chain([
            PathBuf::from(format!("/opt/codex-{version}/node_modules/.bin/codex")),
            PathBuf::from("codex"),
        ])
        .collect();
    let found = candidates.into_iter().find(|c| {
        probed(&format!("{} --version = {version}", c.display()), || {
            Command::new(c).arg("--version").output().is_ok_and(|o| {
                o.status.success()
                    && String::from_utf8_lossy(&o.stdout).trim() == format!("codex-cli {version}")
            })
        })
    });
    found.unwrap_or_else(|| {
        panic!(
            "codex {version} is not installed: run tools/test.sh (it installs it with \
             `npm install --prefix /opt/codex-{version} @openai/codex@{version}`) or point {var} at it"
        )
    })
}

/// Fail loudly when Chromium is not installed.
pub fn require_chromium() {
    let found = probed("chromium", || {
        ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .any(|n| {
                std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                    .any(|d| d.join(n).is_file())
            })
    });
    assert!(
        found,
        "Chromium is required for the browser tests: install it with `apt-get install chromium` (tools/test.sh does)"
    );
}

/// Fail loudly when strace (which records Chromium's connections) is missing.
pub fn require_strace() {
    let ok = probed("strace -V", || {
        let mut c = Command::new("strace");
        c.arg("-V");
        succeeds(c)
    });
    assert!(
        ok,
        "strace is required to record Chromium's connections: `apt-get install strace` (tools/test.sh does)"
    );
}

/// Fail clearly when `program` (from the Debian package `package`) is not on PATH.
pub fn require(program: &str, package: &str) {
    let ok = probed(&format!("command -v {program}"), || {
        let mut c = Command::new("sh");
        c.args(["-c", &format!("command -v {program}")]);
        succeeds(c)
    });
    assert!(
        ok,
        "{program} is not installed: `apt install {package}` (tools/test.sh installs it)"
    );
}

/// Fail clearly when `program` (from the Debian package of the same name) is not on PATH.
pub fn require_program(program: &str) {
    require(program, program);
}
