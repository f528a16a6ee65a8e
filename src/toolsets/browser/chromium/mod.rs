//! The browser this toolset runs and what it may reach.
//!
//! * [`settings`]: `browser.*` config and the executable lookup (cheap: it
//!   runs for `tools/list`);
//! * [`launch`]: a local Chromium in its own process group with a fresh
//!   profile, and the flags it runs with;
//! * [`urlcheck`]: the one URL gate (rules from `crate::net::policy`);
//! * [`proxy`]: the gate applied to every connection of a launched Chromium.
//!
//! It owns the Chromium process and the rules around it, not the tab or the
//! DevTools wire: nothing here sends a CDP command. It is separate so that
//! the session, the transport and the Camofox backend ask the same gate and
//! read the same settings, and so that launching and checking can be tested
//! without a page.

pub mod launch;
pub(crate) mod proxy;
pub(crate) mod settings;
pub(crate) mod urlcheck;
