//! `web:` (hermes-agent: tools/web_tools.py and the web provider plugins):
//! which backend searches and extracts, the extract size limit, and per
//! backend (`web.<backend>:`) its endpoint, pacing and options.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Reader;

/// `web:`.
#[derive(Debug, Clone, Default)]
pub struct Web {
    /// `web.backend`.
    pub backend: Option<String>,
    /// `web.search_backend`.
    pub search_backend: Option<String>,
    /// `web.extract_backend`.
    pub extract_backend: Option<String>,
    /// `web.extract_char_limit`: an integer (a float truncated), or text
    /// holding one; `None` otherwise.
    pub extract_char_limit: Option<i64>,
    /// `web.use_gateway` ([`super::Reader::use_gateway`]).
    pub use_gateway: bool,
    /// `web.<backend>:` sections that are mappings.
    backends: BTreeMap<String, WebBackend>,
}

/// `web.<backend>:` (`exa`, `parallel`, `brave`, `ddgs`, `xai`, …).
#[derive(Debug, Clone, Default)]
pub struct WebBackend {
    pub base_url: Option<String>,
    /// Seconds between two calls.
    pub min_interval: Option<f64>,
    /// `xai`'s model: a string, trimmed and non-empty (no `str()` of other scalars).
    pub model: Option<String>,
    /// `xai`'s timeout in seconds.
    pub timeout: Option<f64>,
    /// `xai`'s `allowed_domains`: the list's non-blank strings, stripped.
    pub allowed_domains: Vec<String>,
    /// `xai`'s `excluded_domains`, read alike.
    pub excluded_domains: Vec<String>,
}

static NO_BACKEND: WebBackend = WebBackend {
    base_url: None,
    min_interval: None,
    model: None,
    timeout: None,
    allowed_domains: Vec::new(),
    excluded_domains: Vec::new(),
};

/// A list's non-blank strings, stripped (other entries skipped); not a list
/// reads as none.
fn strings(v: Option<&Value>) -> Vec<String> {
    let Some(Value::Array(items)) = v else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn int(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

impl Web {
    pub(crate) fn read(r: &Reader<'_>, sec: Option<&Map<String, Value>>) -> Self {
        let backends = sec
            .into_iter()
            .flatten()
            .filter_map(|(name, v)| {
                let b = Some(v.as_object()?);
                Some((
                    name.clone(),
                    WebBackend {
                        base_url: r.text(b, "base_url"),
                        min_interval: r.float(b, "min_interval"),
                        model: r
                            .value(b, "model")
                            .and_then(Value::as_str)
                            .map(str::trim)
                            .filter(|m| !m.is_empty())
                            .map(str::to_string),
                        timeout: r.float(b, "timeout"),
                        allowed_domains: strings(r.value(b, "allowed_domains")),
                        excluded_domains: strings(r.value(b, "excluded_domains")),
                    },
                ))
            })
            .collect();
        Web {
            backend: r.text(sec, "backend"),
            search_backend: r.text(sec, "search_backend"),
            extract_backend: r.text(sec, "extract_backend"),
            extract_char_limit: int(r.value(sec, "extract_char_limit")),
            use_gateway: r.use_gateway(sec),
            backends,
        }
    }

    /// `web.<name>:`, empty when missing or not a mapping.
    pub fn section(&self, name: &str) -> &WebBackend {
        self.backends.get(name).unwrap_or(&NO_BACKEND)
    }

    /// The backend setting named by its dotted key (`web.backend`,
    /// `web.search_backend`, `web.extract_backend`), for messages that name it.
    pub fn backend_setting(&self, dotted: &str) -> Option<&str> {
        match dotted {
            "web.backend" => self.backend.as_deref(),
            "web.search_backend" => self.search_backend.as_deref(),
            "web.extract_backend" => self.extract_backend.as_deref(),
            _ => None,
        }
    }
}
