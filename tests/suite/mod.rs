pub mod common;
mod net_ssrf;
mod serve_protocol;
mod web;
mod web_support;
