pub mod common;
mod serve_protocol;
