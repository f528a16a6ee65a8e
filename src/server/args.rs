//! Argument validation against a tool's JSON schema, with Hermes' coercions
//! (`model_tools.handle_function_call` turns `"42"` into `42` for integer
//! parameters, `"true"` into `true`, ...). Unset optionals (`null`) are dropped,
//! as Hermes' MCP dispatcher does. Errors name the argument and what it needs.

use serde_json::{Map, Value};

/// Why arguments were refused; the text names the argument and what it needs.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum ArgError {
    #[error("missing required argument(s): {}", .0.join(", "))]
    Missing(Vec<String>),
    #[error("argument '{key}' must be {want}, got {got}")]
    WrongType {
        key: String,
        want: &'static str,
        got: String,
    },
    #[error("argument '{key}' takes at most {max} item(s), got {got}")]
    TooMany { key: String, max: u64, got: usize },
    #[error("argument '{key}' must be one of {}, got {got}", .allowed.join(", "))]
    NotAllowed {
        key: String,
        allowed: Vec<String>,
        got: Value,
    },
    #[error("argument '{key}' must be at least {min}, got {got}")]
    TooSmall { key: String, min: f64, got: Value },
    #[error("argument '{key}' must be at most {max}, got {got}")]
    TooLarge { key: String, max: f64, got: Value },
}

/// Validate and coerce `args` against `schema`. Unknown arguments are dropped
/// (Hermes' signature-based dispatch never passed them on).
pub(crate) fn validate(
    schema: &Value,
    args: Option<Map<String, Value>>,
) -> Result<Map<String, Value>, ArgError> {
    let props = schema.get("properties").and_then(Value::as_object);
    let mut out = Map::new();
    for (k, v) in args.unwrap_or_default() {
        if v.is_null() {
            continue;
        }
        let Some(prop) = props.and_then(|p| p.get(&k)) else {
            continue;
        };
        let v = coerce(&k, v, prop)?;
        out.insert(k, v);
    }
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        let missing: Vec<String> = req
            .iter()
            .filter_map(Value::as_str)
            .filter(|r| !out.contains_key(*r))
            .map(str::to_string)
            .collect();
        if !missing.is_empty() {
            return Err(ArgError::Missing(missing));
        }
    }
    Ok(out)
}

fn type_name(prop: &Value) -> Option<&str> {
    prop.get("type").and_then(Value::as_str)
}

fn coerce(key: &str, v: Value, prop: &Value) -> Result<Value, ArgError> {
    let v = match type_name(prop) {
        Some("string") => match v {
            Value::String(_) => v,
            Value::Number(n) => Value::String(n.to_string()),
            Value::Bool(b) => Value::String(b.to_string()),
            other => return Err(bad(key, "a string", &other)),
        },
        Some("integer") => match &v {
            Value::Number(n) if n.is_i64() || n.is_u64() => v,
            Value::Number(n) => match n.as_f64().filter(|f| f.fract() == 0.0) {
                Some(f) => Value::from(f as i64),
                None => return Err(bad(key, "an integer", &v)),
            },
            Value::String(s) => match s.trim().parse::<i64>() {
                Ok(i) => Value::from(i),
                Err(_) => return Err(bad(key, "an integer", &v)),
            },
            _ => return Err(bad(key, "an integer", &v)),
        },
        Some("number") => match &v {
            Value::Number(_) => v,
            Value::String(s) => match s
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
            {
                Some(n) => Value::Number(n),
                None => return Err(bad(key, "a number", &v)),
            },
            _ => return Err(bad(key, "a number", &v)),
        },
        Some("boolean") => match &v {
            Value::Bool(_) => v,
            Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => Value::Bool(true),
                "false" | "0" | "no" => Value::Bool(false),
                _ => return Err(bad(key, "true or false", &v)),
            },
            _ => return Err(bad(key, "true or false", &v)),
        },
        Some("array") => {
            let items = match v {
                Value::Array(a) => a,
                // A lone value where a list is expected: Hermes' coercion wraps it.
                Value::String(s) => match serde_json::from_str::<Value>(&s) {
                    Ok(Value::Array(a)) => a,
                    _ => vec![Value::String(s)],
                },
                other => vec![other],
            };
            let item_schema = prop.get("items").cloned().unwrap_or(Value::Null);
            let items = items
                .into_iter()
                .enumerate()
                .map(|(i, it)| coerce(&format!("{key}[{i}]"), it, &item_schema))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(max) = prop.get("maxItems").and_then(Value::as_u64)
                && items.len() as u64 > max
            {
                return Err(ArgError::TooMany {
                    key: key.to_string(),
                    max,
                    got: items.len(),
                });
            }
            Value::Array(items)
        }
        Some("object") => match v {
            Value::Object(_) => v,
            Value::String(s) => match serde_json::from_str::<Value>(&s) {
                Ok(o @ Value::Object(_)) => o,
                _ => return Err(bad(key, "an object", &Value::String(s))),
            },
            other => return Err(bad(key, "an object", &other)),
        },
        _ => v,
    };
    if let Some(allowed) = prop.get("enum").and_then(Value::as_array)
        && !allowed.contains(&v)
    {
        return Err(ArgError::NotAllowed {
            key: key.to_string(),
            allowed: allowed.iter().map(|a| a.to_string()).collect(),
            got: v,
        });
    }
    if let Some(n) = v.as_f64() {
        if let Some(min) = prop.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(ArgError::TooSmall {
                key: key.to_string(),
                min,
                got: v,
            });
        }
        if let Some(max) = prop.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(ArgError::TooLarge {
                key: key.to_string(),
                max,
                got: v,
            });
        }
    }
    Ok(v)
}

fn bad(key: &str, want: &'static str, got: &Value) -> ArgError {
    let got = match got {
        Value::String(s) => format!("{s:?}"),
        other => crate::hermes::config::json_type(other).to_string(),
    };
    ArgError::WrongType {
        key: key.to_string(),
        want,
        got,
    }
}

/// Typed getters for toolsets, over validated arguments.
pub(crate) trait ArgsExt {
    fn str_arg(&self, key: &str) -> Option<&str>;
    fn i64_arg(&self, key: &str) -> Option<i64>;
    fn bool_arg(&self, key: &str) -> Option<bool>;
    fn str_list_arg(&self, key: &str) -> Vec<String>;
}

impl ArgsExt for Map<String, Value> {
    fn str_arg(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
    fn i64_arg(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(Value::as_i64)
    }
    fn bool_arg(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(Value::as_bool)
    }
    fn str_list_arg(&self, key: &str) -> Vec<String> {
        self.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type":"object","properties":{
            "q":{"type":"string"},
            "limit":{"type":"integer","minimum":1,"maximum":10},
            "dir":{"type":"string","enum":["up","down"]},
            "urls":{"type":"array","items":{"type":"string"},"maxItems":2},
            "full":{"type":"boolean"}},
            "required":["q"]})
    }

    fn obj(v: Value) -> Option<Map<String, Value>> {
        v.as_object().cloned()
    }

    #[test]
    fn coerces_like_hermes_and_drops_nulls_and_unknowns() {
        let out = validate(
            &schema(),
            obj(json!({"q":"x","limit":"3","full":"true","dir":null,"zzz":1})),
        )
        .unwrap();
        assert_eq!(Value::Object(out), json!({"q":"x","limit":3,"full":true}));
        let out = validate(&schema(), obj(json!({"q":"x","urls":"https://a"}))).unwrap();
        assert_eq!(out["urls"], json!(["https://a"]));
    }

    #[test]
    fn rejects_with_messages_naming_the_argument() {
        let e = |v| validate(&schema(), obj(v)).unwrap_err().to_string();
        assert_eq!(e(json!({})), "missing required argument(s): q");
        assert!(e(json!({"q":"x","limit":"many"})).contains("'limit' must be an integer"));
        assert!(e(json!({"q":"x","limit":11})).contains("at most 10"));
        assert!(e(json!({"q":"x","dir":"left"})).contains("must be one of"));
        assert!(e(json!({"q":"x","urls":["a","b","c"]})).contains("at most 2 item"));
        assert!(e(json!({"q":{"a":1}})).contains("'q' must be a string, got a mapping"));
    }
}
