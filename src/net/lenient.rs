//! Lenient field readers for vendor answers.
//!
//! Vendors add, drop and retype fields; Hermes reads their answers with
//! `dict.get(...)` and shrugs at surprises (hermes-agent: tools/web_tools.py, agent/auxiliary_client.py). These readers
//! give the typed answer structs the same tolerance: a field of the wrong type
//! reads as its default instead of failing the whole answer, and list entries
//! are read one by one so one odd entry cannot hide the others.

use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde_json::Value;

/// Any value as text: strings as they are, `null` as empty, anything else as
/// its JSON text (what Hermes' `str(r.get(k, ""))` shows for a number).
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// `T` if the value has `T`'s shape, else `T::default()`.
pub fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(serde_json::from_value(Value::deserialize(d)?).unwrap_or_default())
}

/// A list of `T`: an entry of another shape reads as `T::default()`; a value
/// that is not a list reads as no entries.
pub fn items<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(match Value::deserialize(d)? {
        Value::Array(a) => list(a),
        _ => Vec::new(),
    })
}

/// The string entries of a list (others skipped); not a list reads as none.
pub fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(a) => a
            .into_iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    })
}

/// A string, or `None` for any other value.
pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

/// Like [`items`], but `None` when the value is not a list (so a caller can
/// fall back to another field, as Hermes' `a.get(x) or a.get(y)` does).
pub fn opt_items<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(match Value::deserialize(d)? {
        Value::Array(a) => Some(list(a)),
        _ => None,
    })
}

/// Each entry as `T`, an entry of another shape as `T::default()`.
pub fn list<T: DeserializeOwned + Default>(a: Vec<Value>) -> Vec<T> {
    a.into_iter()
        .map(|v| serde_json::from_value(v).unwrap_or_default())
        .collect()
}
