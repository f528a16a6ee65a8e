//! The tool handlers over a Chromium session: one function per tool, taking
//! the parsed arguments and the session, returning the tool's JSON.
//!
//! * [`navigate`]: `browser_navigate`, `browser_back`, and the URL precheck;
//! * [`snapshot_tool`]: `browser_snapshot` (cached, summarised when long);
//! * [`actions`]: click, type, press, scroll (keys from [`keys`]);
//! * [`pageinfo`]: `browser_get_images`, `browser_console` (log, evaluate);
//! * [`screenshot`]: `browser_vision` (a screenshot for the vision model).
//!
//! It owns what each tool does and says, not the session's lifetime (the
//! toolset's dispatch) nor the transport. It is separate so that a handler
//! reads as Hermes' tool it mirrors, with the session below it.

pub(crate) mod actions;
pub(crate) mod keys;
pub(crate) mod navigate;
pub(crate) mod pageinfo;
pub(crate) mod screenshot;
pub(crate) mod snapshot_tool;
