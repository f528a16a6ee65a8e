pub mod common;
mod net_ssrf;
mod repo_rules;
mod serve_protocol;
mod web;
mod web_support;
