mod codex_e2e;
pub mod common;
mod media;
mod media_e2e;
mod media_support;
mod repo_rules;
mod serve_protocol;
