pub mod common;
mod kanban;
mod serve_protocol;
