pub mod common;
mod serve_protocol;
mod skills;
