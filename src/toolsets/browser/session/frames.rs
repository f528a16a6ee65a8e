//! The cross-origin frames of the tab's current document and how commands
//! reach them (state the session holds; `walk.rs` fills and uses it). A
//! leaf beside `navigator.rs`, so that the session can own it without
//! importing the walker.

use super::navigator::Navigator;

/// How commands reach a cross-origin frame.
pub(crate) enum Via {
    /// In the tab's own renderer: the tab's session, this execution context.
    World(i64),
    /// Out of process: its own CDP session.
    Oop(Navigator),
}

pub(crate) struct FrameCtx {
    pub(crate) frame_id: String,
    /// The walker id (top document) of the iframe element hosting it.
    pub(crate) host: i64,
    pub(crate) via: Via,
}

/// Cross-origin frames of the current document, numbered from 1.
#[derive(Default)]
pub(crate) struct Frames {
    pub(crate) doc_gen: u64,
    pub(crate) list: Vec<FrameCtx>,
}
