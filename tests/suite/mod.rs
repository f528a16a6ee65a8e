pub mod common;
pub mod migrate;
mod migrate_codex;
mod migrate_hermes;
mod serve_protocol;
