//! hermes-mcp: Hermes Agent's tools as a stdio MCP server for the OpenAI Codex
//! CLI (`serve`), and a migrator that registers it and Hermes' MCP servers in
//! Codex's `config.toml` (`migrate`).

pub mod auth;
pub mod cli;
pub mod doctor;
pub mod error;
pub mod fs;
pub mod gateway;
pub mod hermes;
pub mod image;
pub mod lenient;
pub mod llm;
pub mod migrate;
pub mod net;
pub mod process;
pub mod pycompat;
pub mod redact;
pub mod server;
pub mod time;
pub mod toolsets;
