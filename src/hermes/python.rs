//! Hermes' own Python interpreter, for the few things only Hermes' code can
//! answer (plugin-registered skills: a plugin's `register(ctx)` decides them at
//! load time). `HERMES_PYTHON` when set, else the interpreter named in the
//! `#!` line of the `hermes` command on `PATH` (pip, pipx and uv all install
//! it as a script whose shebang is the environment's Python).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Context, envvars};

/// The interpreter, or `None` when Hermes is not installed where we can see it.
pub fn hermes_python(ctx: &Context) -> Option<PathBuf> {
    if let Some(p) = ctx.env.get(envvars::HERMES_PYTHON)
        && !p.trim().is_empty()
    {
        return Some(super::home::expand_tilde(Path::new(p.trim())));
    }
    let path = ctx.env.get_unlisted("PATH")?;
    let script = std::env::split_paths(&path)
        .map(|d| d.join("hermes"))
        .find(|p| p.is_file())?;
    shebang_interpreter(&script)
}

/// The interpreter of a `#!/path/python[ args]` script (`#!/usr/bin/env
/// python3` is not followed: it names no particular environment).
fn shebang_interpreter(script: &Path) -> Option<PathBuf> {
    let mut head = [0u8; 512];
    let f = crate::files::open_regular(script).ok()?;
    let n = f.take(512).read(&mut head).ok()?;
    let line = std::str::from_utf8(&head[..n]).ok()?.lines().next()?;
    let interp = line.strip_prefix("#!")?.split_whitespace().next()?;
    let p = PathBuf::from(interp);
    (p.is_absolute() && !p.ends_with("env") && p.is_file()).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_script_shebang() {
        let d = tempfile::tempdir().expect("tempdir");
        let py = d.path().join("python3");
        std::fs::write(&py, "").expect("write");
        let s = d.path().join("hermes");
        std::fs::write(&s, format!("#!{} -s\nimport sys\n", py.display())).expect("write");
        assert_eq!(shebang_interpreter(&s), Some(py));
        std::fs::write(&s, "#!/usr/bin/env python3\n").expect("write");
        assert_eq!(shebang_interpreter(&s), None);
        std::fs::write(&s, "no shebang\n").expect("write");
        assert_eq!(shebang_interpreter(&s), None);
    }
}
