mod codex_e2e;
pub mod common;
mod kanban;
pub mod migrate;
mod migrate_codex;
mod migrate_hermes;
mod repo_rules;
mod serve_protocol;
mod skills;
