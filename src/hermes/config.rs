//! `$HERMES_HOME/config.yaml`.
//!
//! Hermes writes this file with PyYAML (YAML 1.1) and users edit it by hand, so
//! it is read with `serde-saphyr`, which accepts `yes`/`on` booleans and `<<`
//! merge keys like PyYAML does. The document is kept as a JSON value tree, the
//! way Hermes keeps a dict: the keys the toolsets use are read once into
//! typed structs ([`super::sections`]) and unknown keys are never an error.
//!
//! PyYAML loads `.inf`, `-.inf`, `.nan` (and `.Inf`, `.INF`, `.NaN`, `.NAN`,
//! `+.inf`: its float resolver in `yaml/resolver.py`) as Python floats. A JSON
//! value cannot hold those, so they are kept as the canonical strings
//! [`INF`], [`NEG_INF`] and [`NAN`]; [`non_finite`] reads them back as floats,
//! and [`yaml_scalar_str`] renders them as Python's `str()` does (`inf`, `-inf`,
//! `nan`). Every other key of such a file keeps working. (A quoted `'.inf'`
//! is a string to PyYAML but reads as infinity here; `-.nan`, a string to
//! PyYAML, reads as NaN: serde-saphyr resolves it as a float.)

use std::path::{Path, PathBuf};

use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Not a regular file, too large, unreadable or not UTF-8 (the message names the path).
    #[error(transparent)]
    Read(#[from] crate::fs::FileError),
    #[error("{path} is not valid YAML: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: the top level must be a mapping of keys, found {found}")]
    NotAMapping { path: PathBuf, found: &'static str },
}

#[derive(Debug, Clone, Default)]
pub struct HermesConfig {
    /// Where it was read from (None for an in-memory config).
    pub(crate) path: Option<PathBuf>,
    /// Whether the file existed.
    pub(crate) exists: bool,
    /// The document; an empty object when the file is missing or empty.
    pub(crate) root: Value,
}

fn yaml_options() -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.legacy_octal_numbers = true;
    o.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
    // PyYAML loads `.inf`/`.nan` as floats; serde-saphyr's default refuses the
    // whole document. As strings they fit a JSON value (see the module docs).
    o.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::AsString;
    o
}

/// How a YAML `.inf` / `+.inf` / `.Inf` / … is kept in the value tree.
pub(crate) const INF: &str = ".inf";
/// How a YAML `-.inf` / `-.Inf` / `-.INF` is kept.
pub(crate) const NEG_INF: &str = "-.inf";
/// How a YAML `.nan` / `.NaN` / `.NAN` is kept.
pub(crate) const NAN: &str = ".nan";

/// The float a YAML `.inf`, `-.inf` or `.nan` stands for (kept as [`INF`],
/// [`NEG_INF`], [`NAN`]); `None` for every other value.
pub(crate) fn non_finite(v: &Value) -> Option<f64> {
    match v.as_str()? {
        INF => Some(f64::INFINITY),
        NEG_INF => Some(f64::NEG_INFINITY),
        NAN => Some(f64::NAN),
        _ => None,
    }
}

/// A scalar as Python's `str()` renders what PyYAML loaded: numbers as
/// Python prints floats and ints (`1.0`, `inf`, `nan`), booleans as
/// `True`/`False`; `None` for null, lists and mappings.
pub(crate) fn yaml_scalar_str(v: &Value) -> Option<String> {
    if let Some(f) = non_finite(v) {
        return Some(
            if f.is_nan() {
                "nan"
            } else if f > 0.0 {
                "inf"
            } else {
                "-inf"
            }
            .to_string(),
        );
    }
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "True" } else { "False" }.to_string()),
        _ => None,
    }
}

/// A number, or a string holding one as Python's `float()` reads it
/// (`"inf"`, `"nan"` included), or a YAML `.inf`/`.nan`.
pub(crate) fn float_value(v: &Value) -> Option<f64> {
    if let Some(f) = non_finite(v) {
        return Some(f);
    }
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// serde_saphyr's error text without its own leading `error: `: the message
/// is wrapped in "… is not valid YAML: …", and the program already prints
/// `error:` in front of the whole line.
fn parse_message(text: &str) -> String {
    text.strip_prefix("error: ").unwrap_or(text).to_string()
}

impl HermesConfig {
    /// Load `path`; a missing file is an empty config, not an error.
    pub(crate) fn load(path: &Path) -> Result<Self, ConfigError> {
        // Only a regular file, never blocking on a FIFO, at most 16 MiB.
        match crate::fs::read_to_string_capped_opt(path, crate::fs::CONFIG_CAP)? {
            Some(text) => {
                let mut c = Self::parse(&text, path)?;
                c.exists = true;
                Ok(c)
            }
            None => Ok(HermesConfig {
                path: Some(path.to_path_buf()),
                exists: false,
                root: Value::Object(Default::default()),
            }),
        }
    }

    pub(crate) fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let text = text.trim_start_matches('\u{feff}');
        let root: Value = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_saphyr::from_str_with_options(text, yaml_options()).map_err(|e| {
                ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: parse_message(&e.to_string()),
                }
            })?
        };
        let root = match root {
            Value::Null => Value::Object(Default::default()),
            Value::Object(_) => root,
            other => {
                return Err(ConfigError::NotAMapping {
                    path: path.to_path_buf(),
                    found: json_type(&other),
                });
            }
        };
        Ok(HermesConfig {
            path: Some(path.to_path_buf()),
            exists: true,
            root,
        })
    }

    /// An in-memory config from a YAML string (tests and examples).
    pub fn from_yaml(text: &str) -> Result<Self, ConfigError> {
        let mut c = Self::parse(text, Path::new("<memory>"))?;
        c.path = None;
        Ok(c)
    }
}

/// A config value read as a boolean: a bool, a YAML 1.1 word
/// ([`crate::pycompat::yaml_bool_word`]) or a
/// number (non-zero); anything else is unknown.
pub(crate) fn bool_value(v: &Value) -> Option<bool> {
    if non_finite(v).is_some() {
        // Python: bool(float('inf')) and bool(float('nan')) are True.
        return Some(true);
    }
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => crate::pycompat::yaml_bool_word(s),
        Value::Number(n) => n.as_f64().map(|f| f != 0.0),
        _ => None,
    }
}

pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Expand `${VAR}` and `${env:VAR}` references as Hermes' `load_config` does.
/// Unresolved references are kept verbatim.
pub(crate) fn expand_vars(s: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                let inner = &after[..end];
                let name = inner.strip_prefix("env:").unwrap_or(inner);
                match (is_var_name(name)).then(|| lookup(name)).flatten() {
                    Some(v) => out.push_str(&v),
                    None => out.push_str(&rest[start..start + 2 + end + 1]),
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// If the whole string is one `${VAR}` / `${env:VAR}` reference, the variable name.
pub(crate) fn whole_var_ref(s: &str) -> Option<&str> {
    let inner = s.trim().strip_prefix("${")?.strip_suffix('}')?;
    let name = inner.strip_prefix("env:").unwrap_or(inner);
    is_var_name(name).then_some(name)
}

pub(crate) fn is_var_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && !b[0].is_ascii_digit()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loader's values read back by dotted path, as the sections read them.
    impl HermesConfig {
        /// The value at a dotted path (`"web.backend"`). Null counts as absent.
        fn get(&self, dotted: &str) -> Option<&Value> {
            let mut cur = &self.root;
            for part in dotted.split('.') {
                cur = cur.as_object()?.get(part)?;
            }
            (!cur.is_null()).then_some(cur)
        }

        /// A non-empty string (numbers and booleans rendered as PyYAML would `str()` them).
        fn str(&self, dotted: &str) -> Option<String> {
            yaml_scalar_str(self.get(dotted)?).filter(|s| !s.trim().is_empty())
        }

        fn f64(&self, dotted: &str) -> Option<f64> {
            float_value(self.get(dotted)?)
        }

        fn bool(&self, dotted: &str) -> Option<bool> {
            bool_value(self.get(dotted)?)
        }
    }

    #[test]
    fn reads_pyyaml_style_documents() {
        let c = HermesConfig::from_yaml(
            "defaults: &d\n  timeout: 60\n  enabled: yes\nmcp_servers:\n  gh:\n    <<: *d\n    command: npx\nweb:\n  backend: ''\nbrowser:\n  headed: on\n  command_timeout: 30\nmode: 0755\n",
        )
        .unwrap();
        assert_eq!(c.f64("mcp_servers.gh.timeout"), Some(60.0));
        assert_eq!(c.bool("mcp_servers.gh.enabled"), Some(true));
        assert_eq!(c.str("mcp_servers.gh.command").as_deref(), Some("npx"));
        assert_eq!(c.str("web.backend"), None);
        assert_eq!(c.bool("browser.headed"), Some(true));
        assert_eq!(c.f64("browser.command_timeout"), Some(30.0));
        assert_eq!(c.f64("mode"), Some(493.0));
        assert!(c.get("nope.deeper").is_none());
    }

    #[test]
    fn non_finite_floats_load_as_pyyaml_does() {
        // PyYAML's float resolver (yaml/resolver.py): [-+]?\.(inf|Inf|INF) and \.(nan|NaN|NAN).
        let c = HermesConfig::from_yaml(
            "a: .inf\nb: +.Inf\nc: -.INF\nd: .nan\ne: .NaN\nf: .NAN\ng: -.inf\nq: '.Nan'\nr: .infinity\nt: inf\nlist: [.inf, 1]\nkeep:\n  deeper: yes\n",
        )
        .unwrap();
        for k in ["a", "b"] {
            assert_eq!(c.f64(k), Some(f64::INFINITY), "{k}");
            assert_eq!(c.str(k).as_deref(), Some("inf"), "{k}");
        }
        for k in ["c", "g"] {
            assert_eq!(c.f64(k), Some(f64::NEG_INFINITY), "{k}");
            assert_eq!(c.str(k).as_deref(), Some("-inf"), "{k}");
        }
        for k in ["d", "e", "f"] {
            assert!(c.f64(k).unwrap().is_nan(), "{k}");
            assert_eq!(c.str(k).as_deref(), Some("nan"), "{k}");
            assert_eq!(c.bool(k), Some(true), "{k}: bool(nan) is True");
        }
        // Not floats to PyYAML either: plain strings.
        assert_eq!(c.str("q").as_deref(), Some(".Nan"));
        assert_eq!(c.str("r").as_deref(), Some(".infinity"));
        assert_eq!(c.str("t").as_deref(), Some("inf"));
        assert_eq!(non_finite(&c.root["list"][0]), Some(f64::INFINITY));
        // The rest of the document is intact.
        assert_eq!(c.bool("keep.deeper"), Some(true));
    }

    #[test]
    fn empty_and_bad_documents() {
        assert!(
            HermesConfig::from_yaml("")
                .unwrap()
                .root
                .as_object()
                .unwrap()
                .is_empty()
        );
        let e = HermesConfig::from_yaml("a: [1, 2\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not valid YAML"), "{e}");
        let e = HermesConfig::from_yaml("- a\n- b\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be a mapping"), "{e}");
    }

    #[test]
    fn expands_vars_like_hermes() {
        let look = |n: &str| (n == "TOKEN").then(|| "s3cret".to_string());
        assert_eq!(expand_vars("Bearer ${TOKEN}", look), "Bearer s3cret");
        assert_eq!(
            expand_vars("${env:TOKEN}/${MISSING}", look),
            "s3cret/${MISSING}"
        );
        assert_eq!(expand_vars("${unterminated", look), "${unterminated");
        assert_eq!(whole_var_ref(" ${env:GH_TOKEN} "), Some("GH_TOKEN"));
        assert_eq!(whole_var_ref("x${A}"), None);
    }
}
