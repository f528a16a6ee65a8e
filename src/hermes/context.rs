//! State shared by every tool call: the Hermes home, its config and `.env`.
//! Building it does no I/O; the config is read on first use.

use std::sync::OnceLock;

use super::{Env, HermesConfig, HermesHome, envvars};

pub struct Context {
    pub home: HermesHome,
    pub env: Env,
    config: OnceLock<(HermesConfig, Option<String>)>,
    preset_config: Option<HermesConfig>,
}

impl Context {
    /// The context for `serve`: process environment plus `$HERMES_HOME/.env`.
    pub fn new(home: HermesHome) -> Self {
        let env = Env::new(home.dotenv_path());
        Context {
            home,
            env,
            config: OnceLock::new(),
            preset_config: None,
        }
    }

    /// A context with a given environment and config (tests, benchmarks).
    pub fn with_parts(home: HermesHome, env: Env, config: HermesConfig) -> Self {
        Context {
            home,
            env,
            config: OnceLock::new(),
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
    pub fn config(&self) -> &HermesConfig {
        &self.loaded().0
    }

    /// Why `config.yaml` could not be used, if it could not.
    pub fn config_error(&self) -> Option<&str> {
        self.loaded().1.as_deref()
    }

    /// A config string with `${VAR}` references expanded (as Hermes' `load_config` does).
    pub fn config_str(&self, dotted: &str) -> Option<String> {
        self.config()
            .str(dotted)
            .map(|s| crate::hermes::config::expand_vars(&s, |n| self.env.get_unlisted(n)))
            .filter(|s| !s.trim().is_empty())
    }

    /// `HERMES_SESSION_ID`, when the launcher set one.
    pub fn session_id(&self) -> Option<String> {
        self.env.get(envvars::HERMES_SESSION_ID)
    }

    /// Whether secrets are redacted from tool output (Hermes forces this on in its MCP server).
    pub fn redact_secrets(&self) -> bool {
        self.env
            .get(envvars::HERMES_REDACT_SECRETS)
            .and_then(|v| crate::hermes::config::parse_bool(&v))
            .unwrap_or(true)
    }
}
