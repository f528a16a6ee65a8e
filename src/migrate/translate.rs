//! Hermes `mcp_servers.<name>` (config.yaml) → Codex `[mcp_servers.<name>]`.
//!
//! Rules follow Hermes' migrator (hermes-agent:
//! `hermes_cli/codex_runtime_plugin_migration.py`, `_translate_one_server`)
//! corrected against what codex 0.169 really accepts (`codex app-server
//! --strict-config --print-startup-config`). Every key that
//! cannot be expressed is reported per server; nothing is dropped silently.
//! `${VAR}` references are never expanded: secrets stay in the environment.

use serde_json::Value;

use crate::hermes::config::{parse_bool, whole_var_ref};

/// One value of a Codex server entry, in the order it is written.
#[derive(Debug, Clone, PartialEq)]
pub enum TomlVal {
    Str(String),
    Float(f64),
    Bool(bool),
    List(Vec<String>),
    /// Ordered string → string inline table.
    Map(Vec<(String, String)>),
}

/// A translated Codex server entry: ordered keys, plus per-tool tables.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CodexServer {
    pub keys: Vec<(String, TomlVal)>,
    /// `[mcp_servers.<n>.tools.<tool>]` tables: (tool, [(key, value)]).
    pub(crate) tools: Vec<(String, Vec<(String, TomlVal)>)>,
}

impl CodexServer {
    #[cfg(test)]
    pub(crate) fn get(&self, key: &str) -> Option<&TomlVal> {
        self.keys.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    fn push(&mut self, key: &str, v: TomlVal) {
        self.keys.push((key.to_string(), v));
    }
}

/// The outcome of translating one Hermes server.
#[derive(Debug, Clone, PartialEq)]
pub enum Translation {
    /// Written to the block; `notes` are the keys (or values) that were not carried over, and why.
    Ok {
        server: CodexServer,
        transport: &'static str,
        notes: Vec<String>,
    },
    /// Not written; `reason` says why and what to do.
    Skipped { reason: String },
}

/// Codex refuses to start a server whose name is outside `^[a-zA-Z0-9_:@/.-]+$`.
pub fn is_valid_codex_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'@' | b'/' | b'.' | b'-')
        })
}

/// Keys Hermes understands that have no Codex equivalent.
const NO_EQUIVALENT: &[&str] = &[
    "sampling",
    "keepalive_interval",
    "idle_timeout_seconds",
    "max_lifetime_seconds",
    "lifecycle",
    "client_cert",
    "client_key",
    "ssl_verify",
    "skip_preflight",
    "elicitation",
];

/// A scalar as Python's `str()` renders it (what Hermes would pass on).
fn scalar_str(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "True" } else { "False" }.to_string()),
        _ => None,
    }
}

fn has_var_ref(s: &str) -> bool {
    s.contains("${")
}

/// A number, or a string holding one (infinite and NaN included: the caller says why not).
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
}

/// Why a timeout cannot be written (the report shows it after the key).
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum BadTimeout {
    #[error("not a finite number of seconds")]
    NotFinite,
    #[error("negative")]
    Negative,
    #[error("{0} s is more than codex accepts (at most {max} s)", max = u64::MAX)]
    TooLarge(f64),
}

/// A `*_timeout_sec` value codex can load: codex converts float seconds to a
/// `Duration` and refuses the whole config.toml when that fails ("cannot
/// convert float seconds to Duration"): NaN, infinity, negative, >= 2^64 s.
pub(crate) fn codex_timeout(f: f64) -> Result<f64, BadTimeout> {
    if !f.is_finite() {
        return Err(BadTimeout::NotFinite);
    }
    if f < 0.0 {
        return Err(BadTimeout::Negative);
    }
    if std::time::Duration::try_from_secs_f64(f).is_err() {
        return Err(BadTimeout::TooLarge(f));
    }
    // -0.0 is written as 0.0.
    Ok(f.abs())
}

/// Text a process or an HTTP request can carry: no NUL byte (an exec argument,
/// an environment entry or a path cannot hold one).
fn has_nul(s: &str) -> bool {
    s.contains('\0')
}

/// An HTTP header name (RFC 9110 token).
fn is_header_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// An HTTP header value: no control characters except tab.
fn is_header_value(s: &str) -> bool {
    !s.chars()
        .any(|c| (c.is_control() && c != '\t') || c == '\u{7f}')
}

/// An environment variable name a process can be given.
fn is_env_key(s: &str) -> bool {
    !s.is_empty() && !s.contains(['=', '\0'])
}

/// `Bearer ${VAR}` / `Bearer ${env:VAR}` → `VAR`.
fn bearer_var(value: &str) -> Option<&str> {
    let rest = value.trim();
    let (scheme, token) = rest.split_once(char::is_whitespace)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    whole_var_ref(token.trim())
}

/// Translate one Hermes server definition.
pub fn translate(name: &str, cfg: &Value) -> Translation {
    if !is_valid_codex_server_name(name) {
        return Translation::Skipped {
            reason: format!(
                "codex cannot start a server named {name:?} (names may use only letters, digits, '-', '_', ':', '@', '/', '.'); rename it in config.yaml"
            ),
        };
    }
    let Some(map) = cfg.as_object() else {
        return Translation::Skipped {
            reason: format!(
                "its definition is {} instead of a mapping of keys",
                crate::hermes::config::json_type(cfg)
            ),
        };
    };
    let mut notes = Vec::new();
    let mut out = CodexServer::default();
    let truthy = |k: &str| match map.get(k) {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Bool(b)) => *b,
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(Value::Number(_)) => true,
    };
    let has_command = truthy("command");
    let has_url = truthy("url");
    let transport = if has_command {
        "stdio"
    } else if has_url {
        "streamable_http"
    } else {
        return Translation::Skipped {
            reason: "no `command` (stdio) or `url` (HTTP) is set".into(),
        };
    };
    if has_command && has_url {
        notes.push("url (both command and url are set; codex runs the stdio command)".into());
    }

    let mut env_vars: Vec<String> = Vec::new();
    if transport == "stdio" {
        let Some(command) = scalar_str(&map["command"]) else {
            return Translation::Skipped {
                reason: "`command` must be a string".into(),
            };
        };
        if has_nul(&command) {
            return Translation::Skipped {
                reason: "`command` contains a NUL character; no process can be started with it"
                    .into(),
            };
        }
        if has_var_ref(&command) {
            notes.push(format!(
                "command {command:?} contains a ${{VAR}} reference, which codex does not expand (copied as written)"
            ));
        }
        out.push("command", TomlVal::Str(command));
        match map.get("args") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                let mut args = Vec::new();
                for (i, a) in items.iter().enumerate() {
                    match scalar_str(a) {
                        Some(s) if has_nul(&s) => {
                            return Translation::Skipped {
                                reason: format!(
                                    "args[{i}] contains a NUL character; no process can be started with it"
                                ),
                            };
                        }
                        Some(s) => {
                            if has_var_ref(&s) {
                                notes.push(format!(
                                    "args[{i}] {s:?} contains a ${{VAR}} reference, which codex does not expand (copied as written)"
                                ));
                            }
                            args.push(s)
                        }
                        None => {
                            return Translation::Skipped {
                                reason: format!("args[{i}] is not a string"),
                            };
                        }
                    }
                }
                if !args.is_empty() {
                    out.push("args", TomlVal::List(args));
                }
            }
            Some(other) => {
                return Translation::Skipped {
                    reason: format!(
                        "`args` must be a list of strings, found {}",
                        crate::hermes::config::json_type(other)
                    ),
                };
            }
        }
        match map.get("env") {
            None | Some(Value::Null) => {}
            Some(Value::Object(env)) => {
                let mut literal = Vec::new();
                for (k, v) in env {
                    let Some(s) = scalar_str(v) else {
                        notes.push(format!("env.{k} (value is not a string)"));
                        continue;
                    };
                    if !is_env_key(k) {
                        notes.push(format!(
                            "env.{k:?} (a variable name cannot be empty or contain '=' or NUL)"
                        ));
                        continue;
                    }
                    if has_nul(&s) {
                        notes.push(format!("env.{k} (the value contains a NUL character)"));
                        continue;
                    }
                    // codex passes a variable only under its own name (`env_vars`
                    // copies NAME from codex's environment): a renamed or composed
                    // value becomes a pass-through of K, which the user exports.
                    if let Some(var) = whole_var_ref(&s) {
                        env_vars.push(k.clone());
                        if var != k {
                            notes.push(format!(
                                "env.{k} = {s:?}: passed through as env_vars = [\"{k}\"] (codex cannot rename a variable); export {k}=\"${var}\" before starting codex"
                            ));
                        }
                    } else if has_var_ref(&s) {
                        env_vars.push(k.clone());
                        notes.push(format!(
                            "env.{k} = {s:?}: passed through as env_vars = [\"{k}\"] (a value that mixes text and ${{VAR}} would put the secret into config.toml); export {k} with that value before starting codex"
                        ));
                    } else {
                        literal.push((k.clone(), s));
                    }
                }
                if !literal.is_empty() {
                    out.push("env", TomlVal::Map(literal));
                }
            }
            Some(_) => notes.push("env (not a mapping)".into()),
        }
        if !env_vars.is_empty() {
            out.push("env_vars", TomlVal::List(env_vars.clone()));
        }
        match map.get("cwd") {
            None | Some(Value::Null) => {}
            Some(v) => match scalar_str(v) {
                Some(s) if has_nul(&s) => notes.push("cwd (contains a NUL character)".into()),
                Some(s) if !s.is_empty() => out.push("cwd", TomlVal::Str(s)),
                Some(_) => {}
                None => notes.push("cwd (not a string)".into()),
            },
        }
        if truthy("headers") {
            notes.push("headers (HTTP only; this is a stdio server)".into());
        }
    } else {
        let Some(url) = scalar_str(&map["url"]) else {
            return Translation::Skipped {
                reason: "`url` must be a string".into(),
            };
        };
        if url.chars().any(char::is_control) {
            return Translation::Skipped {
                reason: format!("`url` {url:?} contains a control character"),
            };
        }
        if has_var_ref(&url) {
            notes.push(format!(
                "url {url:?} contains a ${{VAR}} reference, which codex does not expand (copied as written)"
            ));
        }
        out.push("url", TomlVal::Str(url));
        match map.get("headers") {
            None | Some(Value::Null) => {}
            Some(Value::Object(headers)) => {
                let mut literal = Vec::new();
                let mut from_env = Vec::new();
                let mut bearer: Option<String> = None;
                for (h, v) in headers {
                    let Some(s) = scalar_str(v) else {
                        notes.push(format!("headers.{h} (value is not a string)"));
                        continue;
                    };
                    if !is_header_name(h) {
                        notes.push(format!("headers.{h:?} (not a valid HTTP header name)"));
                        continue;
                    }
                    if !is_header_value(&s) {
                        notes.push(format!(
                            "headers.{h} (the value contains a control character, which HTTP forbids)"
                        ));
                        continue;
                    }
                    if h.eq_ignore_ascii_case("authorization")
                        && bearer.is_none()
                        && let Some(var) = bearer_var(&s)
                    {
                        bearer = Some(var.to_string());
                    } else if let Some(var) = whole_var_ref(&s) {
                        from_env.push((h.clone(), var.to_string()));
                    } else if has_var_ref(&s) {
                        notes.push(format!(
                            "headers.{h} = {s:?}: a header that mixes text and ${{VAR}} cannot be expressed without writing the secret into config.toml (only `Bearer ${{VAR}}` and a whole `${{VAR}}` can)"
                        ));
                    } else {
                        literal.push((h.clone(), s));
                    }
                }
                if let Some(var) = bearer {
                    out.push("bearer_token_env_var", TomlVal::Str(var));
                }
                if !literal.is_empty() {
                    out.push("http_headers", TomlVal::Map(literal));
                }
                if !from_env.is_empty() {
                    out.push("env_http_headers", TomlVal::Map(from_env));
                }
            }
            Some(_) => notes.push("headers (not a mapping)".into()),
        }
        for k in ["args", "env", "cwd"] {
            if truthy(k) {
                notes.push(format!("{k} (stdio only; this is an HTTP server)"));
            }
        }
    }

    match map.get("transport").and_then(Value::as_str) {
        Some("sse") => notes.push(
            "transport=sse (codex speaks only streamable HTTP; the server must support it at this url)"
                .into(),
        ),
        None | Some("stdio" | "http" | "streamable_http" | "streamable-http") => {}
        Some(other) => notes.push(format!("transport={other} (unknown; codex picks the transport from command/url)")),
    }

    for (hermes_key, codex_key) in [
        ("timeout", "tool_timeout_sec"),
        ("connect_timeout", "startup_timeout_sec"),
    ] {
        if let Some(v) = map.get(hermes_key).filter(|v| !v.is_null()) {
            match number(v).map(codex_timeout) {
                Some(Ok(f)) => out.push(codex_key, TomlVal::Float(f)),
                Some(Err(why)) => notes.push(format!("{hermes_key} ({why})")),
                None => notes.push(format!("{hermes_key} (not numeric)")),
            }
        }
    }

    if let Some(tools) = map.get("tools").filter(|v| !v.is_null()) {
        match tools.as_object() {
            Some(t) => {
                for (k, v) in t {
                    let codex_key = match k.as_str() {
                        "include" => "enabled_tools",
                        "exclude" => "disabled_tools",
                        other => {
                            notes.push(format!("tools.{other} (no codex equivalent)"));
                            continue;
                        }
                    };
                    let list: Option<Vec<String>> = match v {
                        Value::Array(a) => a.iter().map(scalar_str).collect(),
                        Value::String(s) => Some(vec![s.clone()]),
                        Value::Null => Some(vec![]),
                        _ => None,
                    };
                    let list = list.map(|l| {
                        let (bad, good): (Vec<String>, Vec<String>) =
                            l.into_iter().partition(|t| has_nul(t));
                        if !bad.is_empty() {
                            notes.push(format!(
                                "tools.{k}: {} name(s) with a NUL character",
                                bad.len()
                            ));
                        }
                        good
                    });
                    match list {
                        Some(l) => out.push(codex_key, TomlVal::List(l)),
                        None => notes.push(format!("tools.{k} (not a list of tool names)")),
                    }
                }
            }
            None => notes.push("tools (not a mapping)".into()),
        }
    }

    if let Some(v) = map
        .get("supports_parallel_tool_calls")
        .filter(|v| !v.is_null())
    {
        match as_bool(v) {
            Some(b) => out.push("supports_parallel_tool_calls", TomlVal::Bool(b)),
            None => notes.push("supports_parallel_tool_calls (not a boolean)".into()),
        }
    }

    if let Some(v) = map.get("enabled").filter(|v| !v.is_null()) {
        match as_bool(v) {
            Some(false) => out.push("enabled", TomlVal::Bool(false)),
            Some(true) => {}
            None => notes.push("enabled (not a boolean)".into()),
        }
    }

    const HANDLED: &[&str] = &[
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "transport",
        "timeout",
        "connect_timeout",
        "tools",
        "supports_parallel_tool_calls",
        "enabled",
    ];
    for key in map.keys() {
        if HANDLED.contains(&key.as_str()) {
            continue;
        }
        if NO_EQUIVALENT.contains(&key.as_str()) {
            notes.push(format!("{key} (no codex equivalent)"));
        } else if key == "auth" || key == "oauth" {
            notes.push(format!(
                "{key} (not translated; codex negotiates OAuth itself: run `codex mcp login {name}`)"
            ));
        } else if key == "description" {
            notes.push("description (codex has no description field)".into());
        } else {
            notes.push(format!("{key} (unknown Hermes key)"));
        }
    }

    Translation::Ok {
        server: out,
        transport,
        notes,
    }
}

fn as_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => parse_bool(s),
        Value::Number(n) => n.as_f64().map(|f| f != 0.0),
        _ => None,
    }
}

/// Kanban worker hand-off tools that must run without an approval prompt:
/// a dispatcher worker under `codex exec` cannot answer one and would hang.
pub(crate) const AUTO_APPROVED_TOOLS: &[&str] = &[
    "kanban_complete",
    "kanban_block",
    "kanban_heartbeat",
    "kanban_comment",
];

/// The `[mcp_servers.hermes-tools]` entry that launches this binary; `env_vars`
/// are the pass-through names `passthrough::choose` picked.
pub(crate) fn hermes_tools_entry(
    exe: &str,
    hermes_home: Option<&str>,
    env_vars: &[String],
) -> CodexServer {
    let mut s = CodexServer::default();
    s.push("command", TomlVal::Str(exe.to_string()));
    s.push("args", TomlVal::List(vec!["serve".into()]));
    if let Some(home) = hermes_home {
        s.push(
            "env",
            TomlVal::Map(vec![(
                crate::hermes::envvars::HERMES_HOME.to_string(),
                home.to_string(),
            )]),
        );
    }
    if !env_vars.is_empty() {
        s.push("env_vars", TomlVal::List(env_vars.to_vec()));
    }
    s.push("startup_timeout_sec", TomlVal::Float(30.0));
    s.push("tool_timeout_sec", TomlVal::Float(600.0));
    s.tools = AUTO_APPROVED_TOOLS
        .iter()
        .map(|t| {
            (
                t.to_string(),
                vec![("approval_mode".to_string(), TomlVal::Str("approve".into()))],
            )
        })
        .collect();
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(name: &str, v: Value) -> (CodexServer, Vec<String>) {
        match translate(name, &v) {
            Translation::Ok { server, notes, .. } => (server, notes),
            Translation::Skipped { reason } => panic!("skipped: {reason}"),
        }
    }

    #[test]
    fn stdio_basic_with_cwd_and_timeouts() {
        let (s, notes) = ok(
            "fs",
            json!({"command":"npx","args":["-y","pkg",3],"env":{"DEBUG":"1"},"cwd":"/tmp","timeout":120,"connect_timeout":"15"}),
        );
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(
            s.keys,
            vec![
                ("command".into(), TomlVal::Str("npx".into())),
                (
                    "args".into(),
                    TomlVal::List(vec!["-y".into(), "pkg".into(), "3".into()])
                ),
                (
                    "env".into(),
                    TomlVal::Map(vec![("DEBUG".into(), "1".into())])
                ),
                ("cwd".into(), TomlVal::Str("/tmp".into())),
                ("tool_timeout_sec".into(), TomlVal::Float(120.0)),
                ("startup_timeout_sec".into(), TomlVal::Float(15.0)),
            ]
        );
    }

    #[test]
    fn env_secrets_become_pass_through_or_are_reported() {
        let (s, notes) = ok(
            "gh",
            json!({"command":"gh-mcp","env":{"GITHUB_TOKEN":"${GITHUB_TOKEN}","OTHER":"${env:OTHER}","ALIAS":"${GH_TOKEN}","MIX":"x-${Y}","LIT":"plain"}}),
        );
        assert_eq!(
            s.get("env_vars"),
            Some(&TomlVal::List(vec![
                "GITHUB_TOKEN".into(),
                "OTHER".into(),
                "ALIAS".into(),
                "MIX".into()
            ]))
        );
        assert_eq!(
            s.get("env"),
            Some(&TomlVal::Map(vec![("LIT".into(), "plain".into())]))
        );
        // The report's advice ("export ALIAS") is true: ALIAS is passed through.
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("env.ALIAS") && n.contains("export ALIAS=\"$GH_TOKEN\"")),
            "{notes:?}"
        );
        assert!(notes.iter().any(|n| n.starts_with("env.MIX")), "{notes:?}");
        // No secret reference is ever written as a literal value.
        assert!(!format!("{s:?}").contains("${"));
    }

    #[test]
    fn http_headers_split_into_bearer_env_and_literal() {
        let (s, notes) = ok(
            "remote",
            json!({"url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${API_TOKEN}","X-Api-Key":"${env:XKEY}","X-Team":"core","X-Mixed":"k=${Z}"},"transport":"sse"}),
        );
        assert_eq!(
            s.get("bearer_token_env_var"),
            Some(&TomlVal::Str("API_TOKEN".into()))
        );
        assert_eq!(
            s.get("env_http_headers"),
            Some(&TomlVal::Map(vec![("X-Api-Key".into(), "XKEY".into())]))
        );
        assert_eq!(
            s.get("http_headers"),
            Some(&TomlVal::Map(vec![("X-Team".into(), "core".into())]))
        );
        assert!(notes.iter().any(|n| n.starts_with("headers.X-Mixed")));
        assert!(notes.iter().any(|n| n.starts_with("transport=sse")));
    }

    #[test]
    fn literal_bearer_header_is_copied_as_written() {
        let (s, _) = ok(
            "r",
            json!({"url":"http://x/mcp","headers":{"Authorization":"Bearer abc"}}),
        );
        assert_eq!(
            s.get("http_headers"),
            Some(&TomlVal::Map(vec![(
                "Authorization".into(),
                "Bearer abc".into()
            )]))
        );
        assert_eq!(s.get("bearer_token_env_var"), None);
    }

    #[test]
    fn enabled_tools_filters_and_flags() {
        let (s, notes) = ok(
            "x",
            json!({"command":"c","enabled":false,"tools":{"include":["a","b"],"exclude":["c"],"resources":false},"supports_parallel_tool_calls":"yes","sampling":{"enabled":true},"keepalive_interval":30,"description":"d","weird":1}),
        );
        assert_eq!(s.get("enabled"), Some(&TomlVal::Bool(false)));
        assert_eq!(
            s.get("enabled_tools"),
            Some(&TomlVal::List(vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            s.get("disabled_tools"),
            Some(&TomlVal::List(vec!["c".into()]))
        );
        assert_eq!(
            s.get("supports_parallel_tool_calls"),
            Some(&TomlVal::Bool(true))
        );
        for want in [
            "tools.resources (no codex equivalent)",
            "sampling (no codex equivalent)",
            "keepalive_interval (no codex equivalent)",
            "weird (unknown Hermes key)",
        ] {
            assert!(notes.iter().any(|n| n == want), "{want} not in {notes:?}");
        }
        let (s, _) = ok("y", json!({"command":"c","enabled":true}));
        assert_eq!(s.get("enabled"), None);
    }

    #[test]
    fn command_wins_over_url_and_bad_values_are_reported() {
        let (s, notes) = ok(
            "x",
            json!({"command":"c","url":"http://u","timeout":"soon","connect_timeout":-1}),
        );
        assert_eq!(s.get("url"), None);
        assert!(notes.iter().any(|n| n.starts_with("url (both")));
        assert!(notes.contains(&"timeout (not numeric)".to_string()));
        assert!(notes.contains(&"connect_timeout (negative)".to_string()));
    }

    #[test]
    fn values_codex_cannot_load_or_use_are_reported_not_written() {
        for (t, why) in [
            (json!(1.9e19), "more than codex accepts"),
            (json!(1e300), "more than codex accepts"),
            (json!(-3), "negative"),
            (json!("nan"), "not a finite number"),
            (json!("inf"), "not a finite number"),
            (json!("1e400"), "not a finite number"),
        ] {
            let (s, notes) = ok("x", json!({"command":"c","timeout":t,"connect_timeout":t}));
            assert_eq!(s.get("tool_timeout_sec"), None, "{t}");
            assert_eq!(s.get("startup_timeout_sec"), None, "{t}");
            assert!(
                notes
                    .iter()
                    .any(|n| n.starts_with("timeout (") && n.contains(why)),
                "{t}: {notes:?}"
            );
        }
        let (s, _) = ok(
            "x",
            json!({"command":"c","timeout":1.8e19,"connect_timeout":-0.0}),
        );
        assert_eq!(s.get("tool_timeout_sec"), Some(&TomlVal::Float(1.8e19)));
        assert_eq!(s.get("startup_timeout_sec"), Some(&TomlVal::Float(0.0)));
        let (s, notes) = ok(
            "x",
            json!({"command":"c","env":{"A=B":"1","":"2","N":"a\u{0}b","OK":"tab\there"},"cwd":"/x\u{0}"}),
        );
        assert_eq!(
            s.get("env"),
            Some(&TomlVal::Map(vec![("OK".into(), "tab\there".into())]))
        );
        assert_eq!(s.get("cwd"), None);
        assert_eq!(notes.len(), 4, "{notes:?}");
        let (s, notes) = ok(
            "h",
            json!({"url":"http://x","headers":{"Bad Name":"v","X-A":"a\r\nInjected: 1","X-B":"ok"}}),
        );
        assert_eq!(
            s.get("http_headers"),
            Some(&TomlVal::Map(vec![("X-B".into(), "ok".into())]))
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        for v in [
            json!({"command":"a\u{0}b"}),
            json!({"command":"c","args":["ok","\u{0}"]}),
            json!({"url":"http://x\ny"}),
        ] {
            assert!(
                matches!(translate("n", &v), Translation::Skipped { .. }),
                "{v}"
            );
        }
    }

    #[test]
    fn unusable_servers_are_skipped_with_a_reason() {
        for (name, v) in [
            ("none", json!({"timeout": 3})),
            ("a b", json!({"command":"c"})),
            ("café", json!({"command":"c"})),
            ("list", json!(["x"])),
            ("badargs", json!({"command":"c","args":"one string"})),
        ] {
            assert!(
                matches!(translate(name, &v), Translation::Skipped { .. }),
                "{name}"
            );
        }
        assert!(is_valid_codex_server_name("a:b@c/d.e-f_g"));
    }

    #[test]
    fn hermes_tools_entry_lists_the_chosen_vars() {
        let s = hermes_tools_entry("/usr/bin/hermes-mcp", None, &["EXA_API_KEY".into()]);
        assert_eq!(
            s.get("env_vars"),
            Some(&TomlVal::List(vec!["EXA_API_KEY".into()]))
        );
        assert_eq!(s.get("env"), None);
        let s = hermes_tools_entry("/x", Some("/h"), &[]);
        assert_eq!(s.get("env_vars"), None);
        assert_eq!(
            s.get("env"),
            Some(&TomlVal::Map(vec![("HERMES_HOME".into(), "/h".into())]))
        );
        assert_eq!(s.tools.len(), 4);
    }
}
