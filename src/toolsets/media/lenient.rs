//! Reading vendor JSON (FAL, OpenAI, ElevenLabs answers) into typed structs
//! without becoming stricter than a `dict.get`: a field of the wrong type reads
//! as absent, and a non-object where an object was expected reads as an empty
//! one. The callers then word "no images returned"-style errors themselves,
//! exactly as when they walked `serde_json::Value`s.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer};
use serde_json::Value;

/// `T` from a JSON object; anything else (or an object that does not fit) is `T::default()`.
pub(crate) fn object<T: DeserializeOwned + Default>(v: &Value) -> T {
    match v {
        Value::Object(_) => T::deserialize(v).unwrap_or_default(),
        _ => T::default(),
    }
}

/// `T` from a response body: JSON objects as [`object`] reads them; `None` when
/// the body is not JSON at all.
pub(crate) fn from_slice<T: DeserializeOwned + Default>(body: &[u8]) -> Option<T> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .map(|v| object(&v))
}

/// `deserialize_with` for an optional scalar field: a value of another type is `None`.
pub(crate) fn opt<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

/// `deserialize_with` for an optional nested object (see [`object`]); `None` only when missing.
pub(crate) fn obj<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v = Value::deserialize(d)?;
    Ok(v.is_object().then(|| object(&v)))
}

/// `deserialize_with` for an optional list of objects: `None` unless it is an
/// array; items that are not objects read as `T::default()` (they keep their place).
pub(crate) fn list<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
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
pub(crate) fn raw<'de, D>(d: D) -> Result<Option<Value>, D::Error>
where
    D: Deserializer<'de>,
{
    Value::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        #[serde(deserialize_with = "list")]
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
