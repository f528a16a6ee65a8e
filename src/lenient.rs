//! Lenient field readers for JSON from outside: vendor answers, codex's app-server.
//!
//! Vendors add, drop and retype fields; Hermes reads their answers with
//! `dict.get(...)` and shrugs at surprises (hermes-agent: tools/web_tools.py,
//! agent/auxiliary_client.py). These readers
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

// Readers for answers whose callers tell a missing field from an odd one
// (FAL, OpenAI images, ElevenLabs): `Option`s, and nested objects read with
// `object`, which never reads a JSON array positionally into a struct.

/// `T` from a JSON object; anything else (or an object that does not fit) is `T::default()`.
pub fn object<T: DeserializeOwned + Default>(v: &Value) -> T {
    match v {
        Value::Object(_) => T::deserialize(v).unwrap_or_default(),
        _ => T::default(),
    }
}

/// `T` from a response body: JSON objects as [`object`] reads them; `None` when
/// the body is not JSON at all.
pub fn from_slice<T: DeserializeOwned + Default>(body: &[u8]) -> Option<T> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .map(|v| object(&v))
}

/// `deserialize_with` for an optional scalar field: a value of another type is `None`.
pub fn opt<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

/// `deserialize_with` for an optional nested object (see [`object`]); `None` only when missing.
pub fn obj<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v = Value::deserialize(d)?;
    Ok(v.is_object().then(|| object(&v)))
}

/// `deserialize_with` for an optional list of objects: `None` unless it is an
/// array; items that are not objects read as `T::default()` (they keep their place).
pub fn objects<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => Some(items.iter().map(object).collect()),
        _ => None,
    })
}

/// `deserialize_with` for a field read as raw JSON, where an explicit `null`
/// differs from a missing field (`Some(Value::Null)` vs `None`).
pub fn raw<'de, D>(d: D) -> Result<Option<Value>, D::Error>
where
    D: Deserializer<'de>,
{
    Value::deserialize(d).map(Some)
}

/// A value read as `T` when it has `T`'s shape, else kept as it came, so a
/// file we rewrite keeps what another program (or a newer one) put there.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Kept<T> {
    Typed(T),
    Raw(Value),
}

impl<T> Kept<T> {
    /// The value when it has `T`'s shape.
    pub fn typed(&self) -> Option<&T> {
        match self {
            Kept::Typed(t) => Some(t),
            Kept::Raw(_) => None,
        }
    }

    /// The value when it has `T`'s shape, to edit in place.
    pub fn typed_mut(&mut self) -> Option<&mut T> {
        match self {
            Kept::Typed(t) => Some(t),
            Kept::Raw(_) => None,
        }
    }
}

/// `deserialize_with` for an `Option<Kept<T>>` field: present (an explicit
/// `null` included) is `Some`, so a rewrite keeps the `null`; missing is
/// `None` (with `#[serde(default)]`).
pub fn kept<'de, D, T>(d: D) -> Result<Option<Kept<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Kept::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Default, Debug, PartialEq)]
    #[serde(default)]
    struct Item {
        #[serde(deserialize_with = "opt")]
        url: Option<String>,
        #[serde(deserialize_with = "raw")]
        error: Option<Value>,
    }

    #[derive(Deserialize, Default, Debug, PartialEq)]
    #[serde(default)]
    struct Answer {
        #[serde(deserialize_with = "objects")]
        items: Option<Vec<Item>>,
        #[serde(deserialize_with = "obj")]
        one: Option<Item>,
    }

    #[test]
    fn wrong_types_read_as_absent() {
        let a: Answer = object(&serde_json::json!({
            "items": [{"url": 5}, "x", {"url": "u", "error": null}],
            "one": ["positional", "values"],
        }));
        let items = a.items.unwrap();
        assert_eq!(items[0], Item::default());
        assert_eq!(items[1], Item::default());
        assert_eq!(items[2].url.as_deref(), Some("u"));
        assert_eq!(items[2].error, Some(Value::Null));
        assert_eq!(a.one, None);
        assert_eq!(
            object::<Answer>(&serde_json::json!([1, 2])),
            Answer::default()
        );
        assert_eq!(
            object::<Answer>(&serde_json::json!({"items": {}})).items,
            None
        );
    }
}
