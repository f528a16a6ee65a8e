//! `auxiliary:` (hermes-agent: agent/auxiliary_client.py
//! `_resolve_task_provider_model`, tools/vision_tools.py): per side task
//! (`auxiliary.<task>:`, e.g. `vision`, `web_extract`, `tts_audio_tags`) its
//! provider, model, endpoint, key and client tuning.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Reader;

/// `auxiliary:`.
#[derive(Debug, Clone, Default)]
pub struct Auxiliary {
    /// `auxiliary.<task>:` sections that are mappings.
    tasks: BTreeMap<String, AuxTask>,
}

/// `auxiliary.<task>:`.
#[derive(Debug, Clone, Default)]
pub struct AuxTask {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// The variable holding the key (`key_env`).
    pub key_env: Option<String>,
    /// The same, spelled `api_key_env`.
    pub api_key_env: Option<String>,
    pub reasoning_effort: Option<String>,
    /// Seconds.
    pub timeout: Option<f64>,
    pub temperature: Option<f64>,
    /// As a float, as written (the caller truncates).
    pub max_tokens: Option<f64>,
    /// `extra_body`, when a mapping.
    pub extra_body: Option<Map<String, Value>>,
    /// `vision`'s CPU workers: an integer ≥ 1 (a whole-number float does
    /// not count), or text holding one.
    pub max_concurrency: Option<i64>,
    /// `vision`'s image download timeout in seconds.
    pub download_timeout: Option<f64>,
}

static NO_TASK: AuxTask = AuxTask {
    provider: None,
    model: None,
    base_url: None,
    api_key: None,
    key_env: None,
    api_key_env: None,
    reasoning_effort: None,
    timeout: None,
    temperature: None,
    max_tokens: None,
    extra_body: None,
    max_concurrency: None,
    download_timeout: None,
};

fn at_least_one(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    }
    .filter(|n| *n >= 1)
}

impl AuxTask {
    fn read(r: &Reader<'_>, t: Option<&Map<String, Value>>) -> Self {
        AuxTask {
            provider: r.text(t, "provider"),
            model: r.text(t, "model"),
            base_url: r.text(t, "base_url"),
            api_key: r.text(t, "api_key"),
            key_env: r.text(t, "key_env"),
            api_key_env: r.text(t, "api_key_env"),
            reasoning_effort: r.text(t, "reasoning_effort"),
            timeout: r.float(t, "timeout"),
            temperature: r.float(t, "temperature"),
            max_tokens: r.float(t, "max_tokens"),
            extra_body: r.section(t, "extra_body").cloned(),
            max_concurrency: at_least_one(r.value(t, "max_concurrency")),
            download_timeout: r.float(t, "download_timeout"),
        }
    }
}

impl Auxiliary {
    pub(crate) fn read(r: &Reader<'_>, sec: Option<&Map<String, Value>>) -> Self {
        let tasks = sec
            .into_iter()
            .flatten()
            .filter_map(|(name, v)| Some((name.clone(), AuxTask::read(r, Some(v.as_object()?)))))
            .collect();
        Auxiliary { tasks }
    }

    /// `auxiliary.<name>:`, empty when missing or not a mapping.
    pub fn task(&self, name: &str) -> &AuxTask {
        self.tasks.get(name).unwrap_or(&NO_TASK)
    }
}
