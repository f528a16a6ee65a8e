//! Browsers this toolset does not launch itself: the vendors behind
//! `browser.cloud_provider` and Camofox.
//!
//! * [`cloud`]: Browserbase, Browser Use and Firecrawl sessions created
//!   through their REST APIs, driven over CDP like a local Chromium, and the
//!   choice of backend Hermes makes ([`cloud::select`]);
//! * [`camofox`]: a Camofox server's REST API, which runs every tool itself.
//!
//! It owns the vendors' HTTP APIs and credentials. It is separate so that the
//! Chromium rooms never speak a vendor's API, and a vendor is added here
//! without touching them.

pub(crate) mod camofox;
pub(crate) mod cloud;
