//! State shared by every tool call: the Hermes home, its config and `.env`.
//! Building it does no I/O; the config is read on first use, and its typed
//! sections ([`Sections`]) once, on the first call that reads one.

use std::sync::OnceLock;

use super::sections::Sections;
use super::{Env, HermesConfig, HermesHome, envvars};

pub struct Context {
    pub(crate) home: HermesHome,
    pub(crate) env: Env,
    config: OnceLock<(HermesConfig, Option<String>)>,
    sections: OnceLock<Sections>,
    preset_config: Option<HermesConfig>,
}

impl Context {
    /// The context for `serve`: process environment plus `$HERMES_HOME/.env`.
    pub(crate) fn new(home: HermesHome) -> Self {
        let env = Env::new(home.dotenv_path());
        Context {
            home,
            env,
            config: OnceLock::new(),
            sections: OnceLock::new(),
            preset_config: None,
        }
    }

    /// A context with a given environment and config (tests, benchmarks).
    pub fn with_parts(home: HermesHome, env: Env, config: HermesConfig) -> Self {
        Context {
            home,
            env,
            config: OnceLock::new(),
            sections: OnceLock::new(),
            preset_config: Some(config),
        }
    }

    fn loaded(&self) -> &(HermesConfig, Option<String>) {
        self.config.get_or_init(|| {
            if let Some(c) = &self.preset_config {
                return (c.clone(), None);
            }
            match HermesConfig::load(&self.home.config_path()) {
                Ok(c) => (c, None),
                Err(e) => {
                    tracing::warn!("{e}; using defaults");
                    (HermesConfig::default(), Some(e.to_string()))
                }
            }
        })
    }

    /// `config.yaml`, or an empty config when it is missing or broken
    /// (see [`Self::config_error`]).
    fn config(&self) -> &HermesConfig {
        &self.loaded().0
    }

    /// The config's sections the toolsets read, as typed structs (read once).
    pub(crate) fn sections(&self) -> &Sections {
        self.sections
            .get_or_init(|| Sections::read(self.config(), &|n: &str| self.env.get_unlisted(n)))
    }

    /// Why `config.yaml` could not be used, if it could not.
    pub(crate) fn config_error(&self) -> Option<&str> {
        self.loaded().1.as_deref()
    }

    /// An executable on the server's `PATH` (`~` expanded in a path with a `/`).
    pub(crate) fn which(&self, name: &str) -> Option<std::path::PathBuf> {
        let name = name.trim();
        if name.is_empty() {
            return None;
        }
        let name = crate::fs::expand_tilde(std::path::Path::new(name));
        super::env::which(
            &name.to_string_lossy(),
            self.env.get(envvars::PATH).as_deref(),
        )
    }

    /// `HERMES_SESSION_ID`, when the launcher set one.
    pub(crate) fn session_id(&self) -> Option<String> {
        self.env.get(envvars::HERMES_SESSION_ID)
    }
}

/// A context from config YAML and environment variables, for unit tests (a
/// Hermes home that does not exist, so no file of the machine is read).
#[cfg(test)]
pub(crate) fn test_ctx(yaml: &str, env: &[(&str, &str)]) -> Context {
    Context::with_parts(
        super::HermesHome {
            path: "/nonexistent-hermes".into(),
            explicit: true,
        },
        Env::from_map(env.iter().map(|(k, v)| (k.to_string(), v.to_string()))),
        HermesConfig::from_yaml(yaml).expect("test config"),
    )
}
