//! What a page looks like as text: the snapshot outline with its `eN` refs,
//! and the safety rules every page text passes through.
//!
//! * `outline.rs`: the outline rendered from accessibility nodes, the ref
//!   table, truncation;
//! * [`domsnap`]: the tree the in-page walker (`snapshot.js`) returns, read
//!   and rendered through the same outline rules;
//! * [`textsafety`]: redaction of page text, and the `evaluate` policy;
//! * [`summary`]: a long snapshot stored in a file, or summarised by the
//!   auxiliary model.
//!
//! It owns what page text becomes, and no CDP: running the walker
//! in a tab and its frames is the session's (`session::walk`). It is separate
//! so that the text format (which the model reads, and Hermes' parity tests
//! compare) is one place, tested without a browser, and shared by the
//! Chromium tools and the Camofox backend.

pub(crate) mod domsnap;
mod outline;
pub(crate) mod summary;
pub(crate) mod textsafety;

pub(crate) use outline::{RefEntry, RefError, RefTable, truncate};
