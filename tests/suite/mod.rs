mod browser;
pub mod common;
mod repo_rules;
mod serve_protocol;
