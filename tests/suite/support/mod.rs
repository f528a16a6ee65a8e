//! The suite's support layer: everything the test files share, so that a test file
//! imports only `support` (plus the crate, std and external crates), never another test
//! file (`repo_rules::suite_files_import_only_support` checks it).
//!
//! - [`common`]: hermetic homes ([`common::TestEnv`]), the binary, the raw JSON-RPC
//!   stdio client ([`common::RawClient`]), polling and reading tool results.
//! - [`serve`]: [`serve::Serve`], the one builder that starts `hermes-mcp serve` (config,
//!   variables, private TMPDIR) into an initialized client, and [`serve::Served`].
//! - [`prereq`]: what the machine must have (Hermes' Python and its modules, codex,
//!   Chromium, strace, piper, edge-tts, programs), each probed once per run; missing
//!   ones fail the test with what to do.
//! - [`run`]: work done once per test run and shared by its tests (also across the
//!   processes of a nextest run): fixtures, probes.
//! - [`deadlines`]: the one real-time test of each kind of fixed deadline.
//! - [`fs`]: file-system fixtures (FIFOs).
//! - [`fake`]: the loopback HTTP server ([`fake::TestServer`]) every fake is built on.
//! - [`edge`]: the Microsoft Read Aloud (Edge TTS) websocket fake.
//! - [`nous_gateway`]: the Nous Portal and tool-gateway fake, Nous logins and tokens.
//! - [`camofox`]: the Camofox REST fake.
//! - [`tls`]: a test certificate authority and a loopback TLS front (`wss://` CDP).
//! - [`web`], [`media`], [`browser`], [`vision`], [`tts`], [`kanban`], [`skills`],
//!   [`migrate`], [`codex`], [`doctor`], [`fuzz`], [`session_search`]: the helpers of those suites that more than one
//!   test file uses.

pub mod browser;
pub mod camofox;
pub mod codex;
pub mod common;
pub mod deadlines;
pub mod doctor;
pub mod edge;
pub mod fake;
pub mod fs;
pub mod fuzz;
pub mod kanban;
pub mod media;
pub mod migrate;
pub mod nous_gateway;
pub mod prereq;
pub mod run;
pub mod serve;
pub mod session_search;
pub mod skills;
pub mod tls;
pub mod tts;
pub mod vision;
pub mod web;
