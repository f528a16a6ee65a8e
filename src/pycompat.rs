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

/// Python's `str(value)` for scalars (lists and mappings are rendered as JSON).
pub fn py_str(v: &Value) -> String {
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
        Some(Value::String(s)) => matches!(
            s.trim().to_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        ),
        Some(v) => py_bool(v),
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

// ── Dates, as Python's datetime writes and reads them ───────────────────

/// Python's `datetime.fromisoformat` on Hermes' timestamps
/// (`YYYY-MM-DD[T ]HH:MM:SS[.ffffff][Z|±HH:MM]`, naive = UTC) as epoch seconds.
pub fn fromisoformat(s: &str) -> Option<f64> {
    let s = s.trim();
    if !s.is_ascii() {
        return None;
    }
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    let days = days_from_civil(y, m, d);
    let mut t = (days * 86_400 + hh * 3600 + mm * 60 + ss) as f64;
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        t += format!("0.{}", &frac[..n]).parse::<f64>().ok()?;
        rest = &frac[n..];
    }
    match rest {
        "" | "Z" => {}
        z if (z.starts_with('+') || z.starts_with('-'))
            && z.is_ascii()
            && z.len() == 6
            && &z[3..4] == ":" =>
        {
            let (oh, om) = (z[1..3].parse::<f64>().ok()?, z[4..6].parse::<f64>().ok()?);
            let sign = if z.starts_with('-') { -1.0 } else { 1.0 };
            t -= sign * (oh * 3600.0 + om * 60.0);
        }
        _ => return None,
    }
    Some(t)
}

/// Howard Hinnant's `civil_from_days`: (year, month, day) of a day count from 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Howard Hinnant's `days_from_civil`: days from 1970-01-01 to a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// UTC (year, month, day, seconds of the day) of epoch seconds.
pub fn civil_from_secs(secs: i64) -> (i64, i64, i64, i64) {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    (y, m, d, secs.rem_euclid(86_400))
}

/// `datetime.now(timezone.utc).isoformat()` for epoch seconds (`+00:00`, microseconds).
pub fn utc_isoformat(t: f64) -> String {
    let secs = t.floor() as i64;
    let micros = ((t - t.floor()) * 1e6).round().min(999_999.0) as i64;
    let (y, m, d, s) = civil_from_secs(secs);
    let frac = if micros > 0 {
        format!(".{micros:06}")
    } else {
        String::new()
    };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}{frac}+00:00",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
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
        assert_eq!(py_str(&json!(null)), "None");
        assert_eq!(py_str(&json!(true)), "True");
        assert_eq!(py_type(&json!(1.5)), "float");
        assert_eq!(py_type(&json!(2)), "int");
        assert!(!py_bool(&json!(0)) && !py_bool(&json!("")) && py_bool(&json!("0")));
        assert!(is_truthy_value(Some(&json!(" Yes ")), false));
        assert!(!is_truthy_value(Some(&json!("0")), true));
        assert!(is_truthy_value(None, true) && is_truthy_value(Some(&json!(2)), false));
    }

    #[test]
    fn json_with_python_separators() {
        let v = json!({"b": [1, "é"], "a": null});
        assert_eq!(py_json(&v), r#"{"b": [1, "é"], "a": null}"#);
        assert_eq!(py_json_ascii(&v), r#"{"b": [1, "\u00e9"], "a": null}"#);
        assert_eq!(py_json_sorted(&v), r#"{"a": null, "b": [1, "é"]}"#);
    }
}
