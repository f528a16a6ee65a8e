//! `browser:` (hermes-agent: tools/browser_tool.py and the cloud browser
//! providers): where Chromium is or which DevTools endpoint to attach to,
//! and per cloud provider (`browser.<provider>:`) its endpoint.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Reader;
use crate::hermes::config::bool_value;

/// `browser:`.
#[derive(Debug, Clone, Default)]
pub struct Browser {
    /// `browser.cdp_url`.
    pub cdp_url: Option<String>,
    /// `browser.executable`.
    pub executable: Option<String>,
    /// `browser.allow_private_urls` as a boolean (YAML 1.1 words, numbers), if it reads as one.
    pub allow_private_urls: Option<bool>,
    /// `browser.<provider>.base_url` of the sections that are mappings.
    base_urls: BTreeMap<String, String>,
}

impl Browser {
    pub(crate) fn read(r: &Reader<'_>, sec: Option<&Map<String, Value>>) -> Self {
        let base_urls = sec
            .into_iter()
            .flatten()
            .filter_map(|(name, v)| Some((name.clone(), r.text(Some(v.as_object()?), "base_url")?)))
            .collect();
        Browser {
            cdp_url: r.text(sec, "cdp_url"),
            executable: r.text(sec, "executable"),
            allow_private_urls: r.value(sec, "allow_private_urls").and_then(bool_value),
            base_urls,
        }
    }

    /// `browser.<provider>.base_url` (`browserbase`, `browser_use`, `firecrawl`, …).
    pub fn base_url(&self, provider: &str) -> Option<&str> {
        self.base_urls.get(provider).map(String::as_str)
    }
}
