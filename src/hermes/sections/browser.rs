//! `browser:` (hermes-agent: tools/browser_tool.py, tools/browser_camofox.py
//! and the cloud browser providers): where Chromium is or which DevTools
//! endpoint to attach to, the command and session timeouts, the dialog and
//! `evaluate` policies, the cloud provider (and per provider,
//! `browser.<provider>:`, its endpoint), and the `browser.camofox:` block.
//!
//! Hermes reads these keys from `read_raw_config()`, so text here is not
//! `${VAR}`-expanded (except the endpoints, which the providers read from
//! the expanded config).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Reader;
use crate::hermes::config::{bool_value, float_value};
use crate::pycompat::{py_bool, py_int};

/// `browser:`.
#[derive(Debug, Clone, Default)]
pub struct Browser {
    /// `browser.cdp_url`.
    pub cdp_url: Option<String>,
    /// `browser.executable`.
    pub executable: Option<String>,
    /// `browser.allow_private_urls` as a boolean (YAML 1.1 words, numbers), if it reads as one.
    pub allow_private_urls: Option<bool>,
    /// `browser.command_timeout`: a number, or text holding one (`.inf`/`.nan` included).
    pub command_timeout: Option<f64>,
    /// `browser.command_timeout` as Python's `int()` reads it (Hermes'
    /// Camofox client): a number truncated, integer text, a boolean as 0/1.
    pub command_timeout_int: Option<f64>,
    /// `browser.navigation_timeout`, read as [`Self::command_timeout`].
    pub navigation_timeout: Option<f64>,
    /// `browser.inactivity_timeout`, read as [`Self::command_timeout`].
    pub inactivity_timeout: Option<f64>,
    /// `browser.dialog_timeout_s`, read as [`Self::command_timeout`].
    pub dialog_timeout_s: Option<f64>,
    /// `browser.dialog_policy`: a non-blank scalar as Python's `str()` renders it.
    pub dialog_policy: Option<String>,
    /// `browser.restrict_evaluate` (YAML 1.1 words, numbers; otherwise off).
    pub restrict_evaluate: bool,
    /// `browser.allow_unsafe_evaluate`, read as `restrict_evaluate`.
    pub allow_unsafe_evaluate: bool,
    /// `browser.headed`, read as `restrict_evaluate`.
    pub headed: bool,
    /// `browser.record_sessions`, read as `restrict_evaluate`.
    pub record_sessions: bool,
    /// `browser.auto_local_for_private_urls`: Python's `bool()` of the value
    /// when the key is present (`null` too), true when it is absent.
    pub auto_local_for_private_urls: bool,
    /// `browser.cloud_provider` when the key is present, as Hermes'
    /// `normalize_browser_cloud_provider` gives it: lowercased and trimmed,
    /// `null`, `false` and blank as `local`.
    pub cloud_provider: Option<String>,
    /// `browser.use_gateway` ([`super::Reader::use_gateway`]).
    pub use_gateway: bool,
    /// `browser.camofox:`.
    pub camofox: Camofox,
    /// `browser.<provider>.base_url` of the sections that are mappings.
    base_urls: BTreeMap<String, String>,
}

/// `browser.camofox:` (hermes-agent: tools/browser_camofox.py), read as
/// `cfg.get(key)` there: flags by Python's `bool()`, text by
/// `str(v or "").strip()`.
#[derive(Debug, Clone, Default)]
pub struct Camofox {
    pub managed_persistence: bool,
    pub user_id: Option<String>,
    pub session_key: Option<String>,
    pub adopt_existing_tab: bool,
    pub rewrite_loopback_urls: bool,
    pub loopback_host_alias: Option<String>,
}

/// `str(v or "").strip()`, empty as `None`.
fn camofox_text(v: Option<&Value>) -> Option<String> {
    let s = match v? {
        Value::String(s) => s.clone(),
        Value::Null | Value::Bool(false) => return None,
        Value::Bool(true) => "True".into(),
        other => other.to_string(),
    };
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

impl Camofox {
    fn read(sec: Option<&Map<String, Value>>) -> Self {
        let get = |k: &str| sec.and_then(|b| b.get(k));
        let truthy = |k: &str| get(k).is_some_and(py_bool);
        Camofox {
            managed_persistence: truthy("managed_persistence"),
            user_id: camofox_text(get("user_id")),
            session_key: camofox_text(get("session_key")),
            adopt_existing_tab: truthy("adopt_existing_tab"),
            rewrite_loopback_urls: truthy("rewrite_loopback_urls"),
            loopback_host_alias: camofox_text(get("loopback_host_alias")),
        }
    }
}

/// `browser.cloud_provider` as `normalize_browser_cloud_provider` reads a present key.
fn cloud_provider(v: &Value) -> String {
    let s = match v {
        Value::Null | Value::Bool(false) => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let s = s.trim().to_ascii_lowercase();
    if s.is_empty() { "local".into() } else { s }
}

impl Browser {
    pub(crate) fn read(r: &Reader<'_>, sec: Option<&Map<String, Value>>) -> Self {
        let base_urls = sec
            .into_iter()
            .flatten()
            .filter_map(|(name, v)| Some((name.clone(), r.text(Some(v.as_object()?), "base_url")?)))
            .collect();
        let secs = |key: &str| r.value(sec, key).and_then(float_value);
        let flag = |key: &str| r.value(sec, key).and_then(bool_value).unwrap_or(false);
        let raw = |key: &str| sec.and_then(|s| s.get(key));
        Browser {
            cdp_url: r.text(sec, "cdp_url"),
            executable: r.text(sec, "executable"),
            allow_private_urls: r.value(sec, "allow_private_urls").and_then(bool_value),
            command_timeout: secs("command_timeout"),
            command_timeout_int: r
                .value(sec, "command_timeout")
                .and_then(py_int)
                .map(|i| i as f64),
            navigation_timeout: secs("navigation_timeout"),
            inactivity_timeout: secs("inactivity_timeout"),
            dialog_timeout_s: secs("dialog_timeout_s"),
            dialog_policy: r.scalar(sec, "dialog_policy"),
            restrict_evaluate: flag("restrict_evaluate"),
            allow_unsafe_evaluate: flag("allow_unsafe_evaluate"),
            headed: flag("headed"),
            record_sessions: flag("record_sessions"),
            auto_local_for_private_urls: raw("auto_local_for_private_urls").is_none_or(py_bool),
            cloud_provider: raw("cloud_provider").map(cloud_provider),
            use_gateway: r.use_gateway(sec),
            camofox: Camofox::read(r.section(sec, "camofox")),
            base_urls,
        }
    }

    /// `browser.<provider>.base_url` (`browserbase`, `browser_use`, `firecrawl`, …).
    pub fn base_url(&self, provider: &str) -> Option<&str> {
        self.base_urls.get(provider).map(String::as_str)
    }
}
