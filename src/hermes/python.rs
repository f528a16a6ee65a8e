//! Hermes' own Python interpreter, for what only Hermes' Python can do: the
//! local TTS packages Hermes imports in-process (`piper-tts`, `neutts`,
//! `kittentts`), and plugin-registered skills (a plugin's `register(ctx)`
//! decides them at load time). hermes-mcp is no Python, so it finds Hermes':
//! 1. `HERMES_PYTHON` (a path, or a name on `PATH`);
//! 2. the interpreter of the `hermes` command on `PATH` (its `#!` line: pip's,
//!    pipx's and uv's console scripts name their venv's python);
//! 3. `$HERMES_HOME/hermes-agent/venv/bin/python` (Hermes' installer layout);
//! 4. `python3` on `PATH`.

use std::path::{Path, PathBuf};

use super::{Context, envvars};

/// `name` on the `PATH` Hermes' tools see.
fn which(ctx: &Context, name: &str) -> Option<PathBuf> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let name = super::home::expand_tilde(Path::new(name));
    super::env::which(
        &name.to_string_lossy(),
        ctx.env.get(envvars::PATH).as_deref(),
    )
}

/// The interpreter and how it was found (for `hermes-mcp tools`).
#[derive(Debug, Clone, PartialEq)]
pub struct Interpreter {
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
    let n = crate::fs::open_regular(script).ok()?.read(&mut head).ok()?;
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
        which(ctx, prog)
    }
}

/// Hermes' interpreter, found as the module docs say; `None` when there is no Python.
pub fn interpreter(ctx: &Context) -> Option<Interpreter> {
    if let Some(p) = ctx.env.get(envvars::HERMES_PYTHON) {
        let p = p.trim();
        let path = if p.contains('/') {
            crate::hermes::home::expand_tilde(Path::new(p))
        } else {
            which(ctx, p).unwrap_or_else(|| PathBuf::from(p))
        };
        return Some(Interpreter {
            path,
            source: "HERMES_PYTHON".into(),
        });
    }
    if let Some(path) = which(ctx, "hermes").and_then(|h| shebang_python(ctx, &h)) {
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
    which(ctx, "python3").map(|path| Interpreter {
        path,
        source: "python3 on PATH".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(vars: &[(&str, &str)]) -> Context {
        Context::with_parts(
            super::super::HermesHome {
                path: "/nonexistent".into(),
                explicit: true,
            },
            super::super::Env::from_map(vars.iter().map(|(k, v)| (k.to_string(), v.to_string()))),
            super::super::HermesConfig::default(),
        )
    }

    #[test]
    fn the_hermes_command_names_its_python() {
        let d = tempfile::tempdir().expect("tempdir");
        let py = d.path().join("python3");
        std::fs::write(&py, "").expect("write");
        let s = d.path().join("hermes");
        std::fs::write(&s, format!("#!{} -s\nimport sys\n", py.display())).expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let path = d.path().display().to_string();
        let i = interpreter(&ctx(&[("PATH", &path)])).expect("found");
        assert_eq!(i.path, py);
        assert_eq!(i.source, "the `hermes` command's interpreter");
        std::fs::write(&s, "no shebang\n").expect("write");
        assert!(interpreter(&ctx(&[("PATH", &path)])).is_none());
    }
}
