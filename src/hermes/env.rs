//! Variable lookup as Hermes' `get_env_value` does it: the process environment
//! first, then `$HERMES_HOME/.env` (read lazily, once).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use super::{dotenv, envvars};

#[derive(Debug)]
pub struct Env {
    dotenv_path: Option<PathBuf>,
    dotenv: OnceLock<HashMap<String, String>>,
    /// When set, replaces the process environment (tests, and `tools` previews).
    overrides: Option<HashMap<String, String>>,
}

impl Env {
    /// Process environment plus the `.env` at `dotenv_path`.
    pub(crate) fn new(dotenv_path: PathBuf) -> Self {
        Env {
            dotenv_path: Some(dotenv_path),
            dotenv: OnceLock::new(),
            overrides: None,
        }
    }

    /// A fixed environment (no process env, no .env), for tests.
    pub fn from_map<I: IntoIterator<Item = (K, V)>, K: Into<String>, V: Into<String>>(
        vars: I,
    ) -> Self {
        Env {
            dotenv_path: None,
            dotenv: OnceLock::new(),
            overrides: Some(
                vars.into_iter()
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect(),
            ),
        }
    }

    fn dotenv(&self) -> &HashMap<String, String> {
        self.dotenv.get_or_init(|| match &self.dotenv_path {
            Some(p) => dotenv::load(p),
            None => HashMap::new(),
        })
    }

    /// Look a listed variable up: process env (non-empty) first, then `.env`.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        debug_assert!(
            envvars::is_listed(name),
            "environment variable {name} is not listed in hermes/envvars.rs"
        );
        let process = match &self.overrides {
            Some(m) => m.get(name).filter(|v| !v.is_empty()).cloned(),
            None => envvars::get(name),
        };
        process.or_else(|| self.dotenv().get(name).filter(|v| !v.is_empty()).cloned())
    }

    /// Any variable by name, for `${VAR}` expansion in config values (process env, then `.env`).
    #[allow(clippy::disallowed_methods)] // `${VAR}` in config.yaml may name any variable.
    pub(crate) fn get_unlisted(&self, name: &str) -> Option<String> {
        let process = match &self.overrides {
            Some(m) => m.get(name).cloned(),
            None => std::env::var(name).ok(),
        };
        process.or_else(|| self.dotenv().get(name).cloned())
    }

    pub(crate) fn is_set(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

/// Find an executable as Python's `shutil.which` does: a name with a `/` is
/// checked as a path, any other name in each entry of `path_var` (`PATH`).
/// A few `stat`s: cheap enough for `tools/list`.
pub(crate) fn which(name: &str, path_var: Option<&str>) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    let is_exec = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let p = Path::new(name);
        return is_exec(p).then(|| p.to_path_buf());
    }
    path_var?
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| is_exec(p))
}
