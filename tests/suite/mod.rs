pub mod common;
pub mod migrate;
mod migrate_codex;
mod serve_protocol;
