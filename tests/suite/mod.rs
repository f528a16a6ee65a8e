mod codex_e2e;
pub mod common;
mod net_ssrf;
mod repo_rules;
mod serve_protocol;
mod vision;
mod vision_e2e;
mod web;
mod web_support;
