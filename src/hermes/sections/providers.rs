//! `providers:` and `custom_providers:` (hermes-agent: agent/image_routing.py
//! `_supports_vision_override`): the models the user declared able or unable
//! to take images, per named provider and per custom provider. A
//! `supports_vision` is read as `_coerce_capability_bool` reads it
//! ([`capability_bool`]); one it does not recognise is left out.

use std::collections::BTreeMap;

use serde_json::Value;

/// `_coerce_capability_bool`: a boolean, `0`/`1`, or a word
/// (`true/yes/on/1`, `false/no/off/0`, trimmed, any case); else unknown.
pub(crate) fn capability_bool(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_i64() {
            Some(0) => Some(false),
            Some(1) => Some(true),
            _ => None,
        },
        Value::String(s) => crate::pycompat::env_flag(s),
        _ => None,
    }
}

/// `<entry>.models.<model>.supports_vision` of one provider entry.
fn vision_by_model(entry: &Value) -> BTreeMap<String, bool> {
    let Some(Value::Object(models)) = entry.get("models") else {
        return BTreeMap::new();
    };
    models
        .iter()
        .filter_map(|(m, v)| Some((m.clone(), capability_bool(v.get("supports_vision"))?)))
        .collect()
}

/// `providers:` and `custom_providers:`.
#[derive(Debug, Clone, Default)]
pub struct Providers {
    /// `providers.<name>.models.<model>.supports_vision`.
    named: BTreeMap<String, BTreeMap<String, bool>>,
    /// `custom_providers[i]`: its `name` (a string, trimmed; `""` otherwise)
    /// and its models' `supports_vision`, in the list's order.
    custom: Vec<(String, BTreeMap<String, bool>)>,
}

impl Providers {
    pub(crate) fn read(providers: Option<&Value>, custom: Option<&Value>) -> Self {
        let named = match providers {
            Some(Value::Object(m)) => m
                .iter()
                .map(|(name, e)| (name.clone(), vision_by_model(e)))
                .filter(|(_, models)| !models.is_empty())
                .collect(),
            _ => BTreeMap::new(),
        };
        let custom = match custom {
            Some(Value::Array(list)) => list
                .iter()
                .map(|e| {
                    let name = e.get("name").and_then(Value::as_str).unwrap_or("");
                    (name.trim().to_string(), vision_by_model(e))
                })
                .filter(|(_, models)| !models.is_empty())
                .collect(),
            _ => Vec::new(),
        };
        Providers { named, custom }
    }

    /// `providers.<provider>.models.<model>.supports_vision`.
    pub fn supports_vision(&self, provider: &str, model: &str) -> Option<bool> {
        self.named.get(provider)?.get(model).copied()
    }

    /// The first `custom_providers` entry named one of `names` that declares
    /// `supports_vision` for `model`, and what it declares.
    pub fn custom_supports_vision(&self, names: &[String], model: &str) -> Option<bool> {
        self.custom
            .iter()
            .filter(|(name, _)| names.iter().any(|n| n == name))
            .find_map(|(_, models)| models.get(model).copied())
    }
}
