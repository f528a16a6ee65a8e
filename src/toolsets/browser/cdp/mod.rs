//! The DevTools transport: how this toolset talks to a Chromium, local,
//! attached or in a cloud.
//!
//! * `connection.rs`: the protocol client (one WebSocket, flat sessions;
//!   [`Browser`], [`Page`], [`Connection`]);
//! * [`protocol`]: the typed view of the results and events the tools read.
//!
//! It owns the wire and nothing above it: no tab, no policy, no tool. It is a
//! room of its own so that everything that sends a command (the session, the
//! tools) goes through one client with one error type ([`CdpError`]), and so
//! that the wire can be read and tested without a browser. The one thing it
//! asks the layer beside it is whether a configured endpoint may be dialled
//! (`chromium::urlcheck::check_endpoint`).

mod connection;
pub(crate) mod protocol;

pub(crate) use connection::{Browser, CdpError, Connection, Page};
