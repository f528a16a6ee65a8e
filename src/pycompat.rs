//! Python's behaviour, where Hermes' output depends on it.
//!
//! Hermes' results and error texts are made by Python: `str.strip()`,
//! `repr()`, `json.dumps()` with its separators, `bool()` of a value. To give
//! the same bytes, every module uses these — one copy each, so a fix to how we
//! imitate Python lands everywhere at once. A leaf: it imports nothing of ours.

use serde_json::{Map, Value};

/// Python's `str.strip()`: Unicode whitespace plus the ASCII separators
/// `\x1c`–`\x1f`, which Python also strips.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
}

/// Python's `len()` of a str: code points, not bytes.
pub fn py_len(s: &str) -> usize {
    s.chars().count()
}

/// Python's `repr()` of a str (enough for error messages).
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c)
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `repr(sorted(items))` for plain strings: `['a', 'b']`.
pub fn py_sorted_list(items: &[&str]) -> String {
    let mut v: Vec<&str> = items.to_vec();
    v.sort();
    let q: Vec<String> = v.iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", q.join(", "))
}

/// Python's `str(value)` for scalars (`None`, `True`, `1.5`, the text of a
/// string); lists and mappings are rendered as JSON.
pub fn py_str_or_json(v: &Value) -> String {
    match v {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Python's `type(value).__name__` for JSON values.
pub fn py_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Python's `int(value)` for a config value, `None` where it raises:
/// integers; floats truncated toward zero (not NaN or infinite); booleans as
/// 0/1; strings of an optionally signed decimal integer with surrounding
/// whitespace and single underscores between digits.
pub fn py_int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.trunc().clamp(i64::MIN as f64, i64::MAX as f64) as i64)
        }),
        Value::String(s) => parse_py_int(py_strip(s)),
        _ => None,
    }
}

/// `int(str)` of an already stripped string.
fn parse_py_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let b = digits.as_bytes();
    let well_placed = |i: usize| i > 0 && i + 1 < b.len() && b[i + 1] != b'_';
    if b.is_empty()
        || !b
            .iter()
            .enumerate()
            .all(|(i, c)| c.is_ascii_digit() || (*c == b'_' && well_placed(i) && b[i - 1] != b'_'))
    {
        return None;
    }
    let n: i64 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

// ---- Truthiness: Python's `bool()`, and each way Hermes reads a boolean setting.

/// Hermes' `TRUTHY_STRINGS` (hermes-agent: `utils.py`).
const TRUE_WORDS: [&str; 4] = ["1", "true", "yes", "on"];
/// Their opposites, where a Hermes reader knows a false word.
const FALSE_WORDS: [&str; 4] = ["0", "false", "no", "off"];

/// Python's `bool(value)`: empty and zero are false.
pub fn py_bool(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// Hermes' `is_truthy_value` (hermes-agent: `utils.py`): strings count only when
/// they are `1`/`true`/`yes`/`on`; anything else falls back to `bool()`; absent
/// is `default`.
pub fn is_truthy_value(v: Option<&Value>, default: bool) -> bool {
    match v {
        None | Some(Value::Null) => default,
        Some(Value::String(s)) => TRUE_WORDS.contains(&s.trim().to_lowercase().as_str()),
        Some(v) => py_bool(v),
    }
}

/// Hermes' `_env_flag` (`tools/browser_camofox.py`) for a variable's text,
/// and the words of `_coerce_capability_bool` (`agent/image_routing.py`):
/// `1/true/yes/on` is true, `0/false/no/off` false (trimmed, any case),
/// anything else (the empty string too) `None`.
pub fn env_flag(raw: &str) -> Option<bool> {
    let w = raw.trim().to_lowercase();
    if TRUE_WORDS.contains(&w.as_str()) {
        Some(true)
    } else if FALSE_WORDS.contains(&w.as_str()) {
        Some(false)
    } else {
        None
    }
}

/// The words of [`env_flag`] plus `enabled`/`disabled`, which Hermes'
/// `_config_bool` and `_coerce_bool` also accept.
fn setting_word(s: &str) -> Option<bool> {
    match s.trim().to_lowercase().as_str() {
        "enabled" => Some(true),
        "disabled" => Some(false),
        w => env_flag(w),
    }
}

/// Hermes' `_config_bool` (`tools/tts_tool.py`): a bool as it is, a number by
/// `bool()`, a word of [`setting_word`]; anything else is `default`.
pub fn config_bool(v: Option<&Value>, default: bool) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => setting_word(s).unwrap_or(default),
        _ => default,
    }
}

/// Hermes' `_coerce_bool` (`tools/xai_http.py`): [`config_bool`] except that
/// a number is `default` too.
pub fn coerce_bool(v: Option<&Value>, default: bool) -> bool {
    match v {
        Some(Value::Number(_)) => default,
        other => config_bool(other, default),
    }
}

/// A boolean setting that reached us as a string, read as PyYAML (YAML 1.1)
/// spells booleans (`yes/no`, `on/off`, `true/false`, `y/n`) plus `1`/`0`,
/// and the empty string as false; anything else is unknown.
pub fn yaml_bool_word(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "y" | "1" => Some(true),
        "false" | "no" | "off" | "n" | "0" | "" => Some(false),
        _ => None,
    }
}

/// `json.dumps(value, ensure_ascii=False)`: Python's separators, raw UTF-8.
pub fn py_json(value: &Value) -> String {
    match value {
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), py_json(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(py_json).collect();
            format!("[{}]", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// `json.dumps(value)` with Python's defaults (`ensure_ascii=True`, `", "` and `": "`).
pub fn py_json_ascii(value: &Value) -> String {
    let s = py_json(value);
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if ch.is_ascii() {
            out.push(ch);
        } else {
            let mut buf = [0u16; 2];
            for u in ch.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// `json.dumps(value, ensure_ascii=False, sort_keys=True)`.
pub fn py_json_sorted(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            o => o.clone(),
        }
    }
    py_json(&sort(v))
}

/// A number of seconds from config (a Python float: any size, NaN, infinite)
/// as a `Duration` that cannot overflow: NaN and negatives are zero, anything
/// beyond a year is a year. `Duration::from_secs_f64` panics on those.
pub fn seconds(secs: f64) -> std::time::Duration {
    const YEAR: f64 = 365.0 * 24.0 * 3600.0;
    let s = if secs.is_nan() {
        0.0
    } else {
        secs.clamp(0.0, YEAR)
    };
    std::time::Duration::from_secs_f64(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_as_python_sees_them() {
        assert_eq!(py_strip("\x1c a \u{3000}\n"), "a");
        assert_eq!(py_len("né"), 2);
        assert_eq!(py_repr("it's"), "\"it's\"");
        assert_eq!(py_repr("a\tb'\"\x01"), "'a\\tb\\'\"\\x01'");
        assert_eq!(py_sorted_list(&["b", "a"]), "['a', 'b']");
    }

    #[test]
    fn values_as_python_sees_them() {
        assert_eq!(py_str_or_json(&json!(null)), "None");
        assert_eq!(py_str_or_json(&json!(true)), "True");
        assert_eq!(py_type(&json!(1.5)), "float");
        assert_eq!(py_type(&json!(2)), "int");
        assert!(!py_bool(&json!(0)) && !py_bool(&json!("")) && py_bool(&json!("0")));
        assert!(is_truthy_value(Some(&json!(" Yes ")), false));
        assert!(!is_truthy_value(Some(&json!("0")), true));
        assert!(is_truthy_value(None, true) && is_truthy_value(Some(&json!(2)), false));
    }

    #[test]
    fn each_hermes_boolean_reader() {
        assert_eq!(env_flag(" ON "), Some(true));
        assert_eq!(env_flag("off"), Some(false));
        assert_eq!(env_flag(""), None);
        assert_eq!(env_flag("enabled"), None);
        assert!(config_bool(Some(&json!("Enabled")), false));
        assert!(!config_bool(Some(&json!(0)), true));
        assert!(config_bool(Some(&json!("maybe")), true));
        assert!(coerce_bool(Some(&json!(0)), true));
        assert!(!coerce_bool(Some(&json!("disabled")), true));
        assert!(!coerce_bool(None, false));
        assert_eq!(yaml_bool_word(" Y "), Some(true));
        assert_eq!(yaml_bool_word(""), Some(false));
        assert_eq!(yaml_bool_word("2"), None);
    }

    #[test]
    fn json_with_python_separators() {
        let v = json!({"b": [1, "é"], "a": null});
        assert_eq!(py_json(&v), r#"{"b": [1, "é"], "a": null}"#);
        assert_eq!(py_json_ascii(&v), r#"{"b": [1, "\u00e9"], "a": null}"#);
        assert_eq!(py_json_sorted(&v), r#"{"a": null, "b": [1, "é"]}"#);
    }

    #[test]
    fn memory_ints_like_python() {
        for (v, want) in [
            (json!(80), Some(80)),
            (json!(80.9), Some(80)),
            (json!(-2.5), Some(-2)),
            (json!(true), Some(1)),
            (json!(" 3_000 "), Some(3000)),
            (json!("+7"), Some(7)),
            (json!("-7"), Some(-7)),
            (json!("3000.0"), None),
            (json!("3__0"), None),
            (json!("_30"), None),
            (json!("30_"), None),
            (json!(""), None),
            (json!(null), None),
            (json!([1]), None),
        ] {
            assert_eq!(py_int(&v), want, "{v}");
        }
    }
}
