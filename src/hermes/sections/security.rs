//! `security:` (hermes-agent: tools/url_safety.py, tools/website_policy.py):
//! whether private addresses may be fetched, and the website blocklist.

use serde_json::{Map, Value};

use super::Reader;
use crate::hermes::config::bool_value;

/// `security:`.
#[derive(Debug, Clone, Default)]
pub struct Security {
    /// `security.allow_private_urls` as a boolean (YAML 1.1 words, numbers), if it reads as one.
    pub allow_private_urls: Option<bool>,
    /// `security.website_blocklist`, as written: the URL policy reads its
    /// shape itself, since a malformed one is reported when it is used.
    pub website_blocklist: Option<Value>,
}

impl Security {
    pub(crate) fn read(r: &Reader<'_>, sec: Option<&Map<String, Value>>) -> Self {
        Security {
            allow_private_urls: r.value(sec, "allow_private_urls").and_then(bool_value),
            website_blocklist: r.value(sec, "website_blocklist").cloned(),
        }
    }
}
