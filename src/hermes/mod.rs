//! Everything about the Hermes Agent installation we read: where its home is,
//! its `config.yaml` (and its [`sections`] as typed structs), its `.env`,
//! the one list of environment variables hermes-mcp reads ([`envvars`]),
//! the one table of fixed deadlines ([`deadlines`]), the [`Context`]
//! every tool call and HTTP client shares, and the resolve [`pass`] in which
//! lower layers may keep what they read.

pub mod config;
pub mod context;
pub mod deadlines;
pub mod dotenv;
pub mod env;
pub mod envvars;
pub mod home;
pub mod logfile;
pub mod pass;
pub mod python;
pub mod sections;

pub use config::{ConfigError, HermesConfig};
pub use context::Context;
pub use env::Env;
pub use home::{HermesHome, HomeError};

/// The server key in Codex's config and the MCP server name. One constant for
/// `serve` and `migrate`: Hermes' own session code recognises the server by
/// this name (hermes-agent: `agent/transports/codex_app_server_session.py`).
pub(crate) const SERVER_NAME: &str = "hermes-tools";
