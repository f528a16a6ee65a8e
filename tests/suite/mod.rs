pub mod common;
mod migrate;
mod serve_protocol;
