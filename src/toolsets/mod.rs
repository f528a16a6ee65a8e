//! Hermes' toolsets, one module each. [`all`] is the one place that lists them,
//! in Hermes' `EXPOSED_TOOLS` order.

pub mod browser;

use crate::server::Toolset;

/// Every toolset the server registers.
pub fn all() -> Vec<Box<dyn Toolset>> {
    vec![Box::new(browser::BrowserToolset::new())]
}
