//! Hermes `mcp_servers.<name>` (config.yaml) → Codex `[mcp_servers.<name>]`.
//!
//! Rules follow Hermes' migrator (hermes-agent:
//! `hermes_cli/codex_runtime_plugin_migration.py`, `_translate_one_server`)
//! corrected against what codex 0.169 really accepts (`codex app-server
//! --strict-config --print-startup-config`). Every key that
//! cannot be expressed is reported per server; nothing is dropped silently.
//! `${VAR}` references are never expanded: secrets stay in the environment.
//!
//! A translation fills a [`CodexServer`], the typed form of one
//! `[mcp_servers.<name>]` table; [`CodexServer::pairs`] is the one place that
//! names its keys and fixes their order, and `block` renders them.

use serde_json::{Map, Value};

use crate::hermes::config::{
    bool_value, float_value, is_var_name, json_type, whole_var_ref, yaml_scalar_str,
};
use crate::pycompat::py_bool;

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

/// A codex timeout key, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    /// `tool_timeout_sec` (Hermes' `timeout`): one tool call.
    Tool,
    /// `startup_timeout_sec` (Hermes' `connect_timeout`): `initialize` and `tools/list`.
    Startup,
}

impl Timeout {
    fn key(self) -> &'static str {
        match self {
            Timeout::Tool => "tool_timeout_sec",
            Timeout::Startup => "startup_timeout_sec",
        }
    }
}

/// A codex tool filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFilter {
    /// `enabled_tools` (Hermes' `tools.include`): only these tools.
    Enabled,
    /// `disabled_tools` (Hermes' `tools.exclude`): all but these tools.
    Disabled,
}

impl ToolFilter {
    fn key(self) -> &'static str {
        match self {
            ToolFilter::Enabled => "enabled_tools",
            ToolFilter::Disabled => "disabled_tools",
        }
    }
}

/// `[mcp_servers.<n>.tools.<tool>]`: codex's settings for one tool.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ToolSettings {
    /// `approval_mode` (`approve`: run without asking).
    pub(crate) approval_mode: Option<String>,
}

impl ToolSettings {
    /// The table's keys and values, in the order they are written.
    pub(crate) fn pairs(&self) -> Vec<(&'static str, TomlVal)> {
        let mut p = Vec::new();
        if let Some(mode) = &self.approval_mode {
            p.push(("approval_mode", TomlVal::Str(mode.clone())));
        }
        p
    }
}

/// One `[mcp_servers.<name>]` entry as codex 0.169 reads it (stdio or
/// streamable HTTP). Empty lists and maps and `None` are not written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CodexServer {
    /// stdio: the program codex starts.
    pub command: Option<String>,
    /// stdio: its arguments.
    pub args: Vec<String>,
    /// stdio: variables set to these literal values.
    pub env: Vec<(String, String)>,
    /// stdio: variables codex copies, by name, from its own environment.
    pub env_vars: Vec<String>,
    /// stdio: the working directory.
    pub cwd: Option<String>,
    /// HTTP: the server's address.
    pub url: Option<String>,
    /// HTTP: the variable whose value codex sends as `Authorization: Bearer ...`.
    pub bearer_token_env_var: Option<String>,
    /// HTTP: headers sent with these literal values.
    pub http_headers: Vec<(String, String)>,
    /// HTTP: headers whose value codex reads from a variable (header, variable).
    pub env_http_headers: Vec<(String, String)>,
    /// Timeouts, written in this order.
    pub timeouts: Vec<(Timeout, f64)>,
    /// Tool filters, written in this order (the order of Hermes' `tools` mapping);
    /// an empty list is written too.
    pub tool_filters: Vec<(ToolFilter, Vec<String>)>,
    pub supports_parallel_tool_calls: Option<bool>,
    /// `Some(false)` turns the server off (codex's default is on).
    pub enabled: Option<bool>,
    /// `[mcp_servers.<n>.tools.<tool>]` tables.
    pub(crate) tools: Vec<(String, ToolSettings)>,
}

impl CodexServer {
    /// The entry's keys and values, in the order they are written (its
    /// per-tool tables follow, from [`CodexServer::tool_tables`]).
    pub fn pairs(&self) -> Vec<(&'static str, TomlVal)> {
        let mut p = Vec::new();
        let str_key = |p: &mut Vec<_>, k, v: &Option<String>| {
            if let Some(v) = v {
                p.push((k, TomlVal::Str(v.clone())));
            }
        };
        let list_key = |p: &mut Vec<_>, k, v: &[String]| {
            if !v.is_empty() {
                p.push((k, TomlVal::List(v.to_vec())));
            }
        };
        let map_key = |p: &mut Vec<_>, k, v: &[(String, String)]| {
            if !v.is_empty() {
                p.push((k, TomlVal::Map(v.to_vec())));
            }
        };
        str_key(&mut p, "command", &self.command);
        list_key(&mut p, "args", &self.args);
        map_key(&mut p, "env", &self.env);
        list_key(&mut p, "env_vars", &self.env_vars);
        str_key(&mut p, "cwd", &self.cwd);
        str_key(&mut p, "url", &self.url);
        str_key(&mut p, "bearer_token_env_var", &self.bearer_token_env_var);
        map_key(&mut p, "http_headers", &self.http_headers);
        map_key(&mut p, "env_http_headers", &self.env_http_headers);
        for (t, secs) in &self.timeouts {
            p.push((t.key(), TomlVal::Float(*secs)));
        }
        for (f, names) in &self.tool_filters {
            p.push((f.key(), TomlVal::List(names.clone())));
        }
        if let Some(b) = self.supports_parallel_tool_calls {
            p.push(("supports_parallel_tool_calls", TomlVal::Bool(b)));
        }
        if let Some(b) = self.enabled {
            p.push(("enabled", TomlVal::Bool(b)));
        }
        p
    }

    /// The per-tool tables: (tool, its keys and values).
    pub(crate) fn tool_tables(&self) -> Vec<(&str, Vec<(&'static str, TomlVal)>)> {
        self.tools
            .iter()
            .map(|(tool, settings)| (tool.as_str(), settings.pairs()))
            .collect()
    }

    #[cfg(test)]
    pub(crate) fn get(&self, key: &str) -> Option<TomlVal> {
        self.pairs()
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}

/// The outcome of translating one Hermes server.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // one per configured server, moved once into the block
pub enum Translation {
    /// Written to the block; `notes` are the keys (or values) that were not
    /// carried over as written, and why; `actions` what the user must do for
    /// the server to work as it did under Hermes (a shell command each).
    Ok {
        server: CodexServer,
        transport: &'static str,
        notes: Vec<String>,
        actions: Vec<String>,
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

/// Keys a translation step reads (everything else is reported by [`Work::unhandled_keys`]).
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

/// A scalar as Python's `str()` renders it (what Hermes would pass on).
fn scalar_str(v: &Value) -> Option<String> {
    yaml_scalar_str(v)
}

fn has_var_ref(s: &str) -> bool {
    s.contains("${")
}

/// `value` (text with `${VAR}` / `${env:VAR}` references, as Hermes expands
/// them) as the inside of a double-quoted shell word: references become
/// `${VAR}`; `None` when the literal text holds anything the shell would
/// interpret inside double quotes.
fn shell_value(value: &str) -> Option<String> {
    let plain =
        |t: &str| !t.contains(['"', '\\', '`', '$', '!']) && !t.chars().any(char::is_control);
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find("${") {
        let (lit, after) = (&rest[..i], &rest[i + 2..]);
        let end = after.find('}')?;
        let inner = &after[..end];
        let name = inner.strip_prefix("env:").unwrap_or(inner);
        if !plain(lit) || !is_var_name(name) {
            return None;
        }
        out.push_str(lit);
        out.push_str(&format!("${{{name}}}"));
        rest = &after[end + 1..];
    }
    plain(rest).then(|| out + rest)
}

/// A number, a string holding one, or YAML's `.inf`/`.nan` (infinite and NaN
/// included: the caller says why not).
fn number(v: &Value) -> Option<f64> {
    float_value(v)
}

/// A number of seconds as the report shows it: short (`30`, `0.5`, `1e300`,
/// `1.9e19`), and infinity and NaN as YAML writes them (`.inf`, `.nan`).
pub(crate) fn compact_number(f: f64) -> String {
    if f.is_nan() {
        ".nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { ".inf" } else { "-.inf" }.into()
    } else if f != 0.0 && !(1e-4..1e15).contains(&f.abs()) {
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

/// Why a timeout cannot be written (the report shows it after the key and value).
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum BadTimeout {
    #[error("is not a finite number of seconds")]
    NotFinite,
    #[error("is negative")]
    Negative,
    /// Codex's limit is just under 2^64 s (`Duration`), about 1.84e19 s.
    #[error("is more than Codex accepts (at most about 1.84e19 s)")]
    TooLarge,
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
        return Err(BadTimeout::TooLarge);
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

/// Why a server is not written at all (the report shows it).
type Skip = String;

/// Translate one Hermes server definition.
pub fn translate(name: &str, cfg: &Value) -> Translation {
    Work::run(name, cfg).unwrap_or_else(|reason| Translation::Skipped { reason })
}

/// One server being translated: its Hermes mapping, the entry filled so far
/// and the notes for the report. Each step reads its own keys, in the order
/// the notes are reported.
struct Work<'a> {
    name: &'a str,
    map: &'a Map<String, Value>,
    out: CodexServer,
    notes: Vec<String>,
    actions: Vec<String>,
}

impl<'a> Work<'a> {
    fn run(name: &'a str, cfg: &'a Value) -> Result<Translation, Skip> {
        if !is_valid_codex_server_name(name) {
            return Err(format!(
                "codex cannot start a server named {name:?} (names may use only letters, digits, '-', '_', ':', '@', '/', '.'); rename it in config.yaml"
            ));
        }
        let Some(map) = cfg.as_object() else {
            return Err(format!(
                "its definition is {} instead of a mapping of keys",
                json_type(cfg)
            ));
        };
        let mut w = Work {
            name,
            map,
            out: CodexServer::default(),
            notes: Vec::new(),
            actions: Vec::new(),
        };
        let transport = w.transport()?;
        if transport == "stdio" {
            w.stdio()?;
        } else {
            w.http()?;
        }
        w.transport_hint();
        w.timeouts();
        w.tool_filters();
        w.flags();
        w.unhandled_keys();
        Ok(Translation::Ok {
            server: w.out,
            transport,
            notes: w.notes,
            actions: w.actions,
        })
    }

    fn note(&mut self, n: impl Into<String>) {
        self.notes.push(n.into());
    }

    /// Whether `key` is set, as Hermes' migrator tests it (`if cfg.get(key):`,
    /// Python's truthiness: absent, null, false, 0, "" and empty lists or
    /// mappings are not set).
    fn is_set(&self, key: &str) -> bool {
        self.map.get(key).is_some_and(py_bool)
    }

    /// stdio when `command` is set, else streamable HTTP when `url` is set
    /// (Hermes' migrator prefers the command when both are).
    fn transport(&mut self) -> Result<&'static str, Skip> {
        let (has_command, has_url) = (self.is_set("command"), self.is_set("url"));
        if has_command && has_url {
            self.note("url (both command and url are set; codex runs the stdio command)");
        }
        match (has_command, has_url) {
            (true, _) => Ok("stdio"),
            (false, true) => Ok("streamable_http"),
            (false, false) => Err("no `command` (stdio) or `url` (HTTP) is set".into()),
        }
    }

    /// A stdio server: command, args, env (and pass-through env_vars), cwd.
    fn stdio(&mut self) -> Result<(), Skip> {
        self.command()?;
        self.args()?;
        self.env();
        self.cwd();
        if self.is_set("headers") {
            self.note("headers (HTTP only; this is a stdio server)");
        }
        Ok(())
    }

    fn command(&mut self) -> Result<(), Skip> {
        let Some(command) = scalar_str(&self.map["command"]) else {
            return Err("`command` must be a string".into());
        };
        if has_nul(&command) {
            return Err(
                "`command` contains a NUL character; no process can be started with it".into(),
            );
        }
        if has_var_ref(&command) {
            self.note(format!(
                "command {command:?} contains a ${{VAR}} reference, which codex does not expand (copied as written)"
            ));
        }
        self.out.command = Some(command);
        Ok(())
    }

    /// `args`: a list of scalars; a NUL in one, or a non-scalar, skips the server.
    fn args(&mut self) -> Result<(), Skip> {
        let items = match self.map.get("args") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(format!(
                    "`args` must be a list of strings, found {}",
                    json_type(other)
                ));
            }
        };
        for (i, a) in items.iter().enumerate() {
            let Some(s) = scalar_str(a) else {
                return Err(format!("args[{i}] is not a string"));
            };
            if has_nul(&s) {
                return Err(format!(
                    "args[{i}] contains a NUL character; no process can be started with it"
                ));
            }
            if has_var_ref(&s) {
                self.note(format!(
                    "args[{i}] {s:?} contains a ${{VAR}} reference, which codex does not expand (copied as written)"
                ));
            }
            self.out.args.push(s);
        }
        Ok(())
    }

    /// `env`: literal values stay in `env`; a `${VAR}` value becomes a
    /// pass-through of its key in `env_vars`, so no secret is written.
    fn env(&mut self) {
        let env = match self.map.get("env") {
            None | Some(Value::Null) => return,
            Some(Value::Object(env)) => env,
            Some(_) => return self.note("env (not a mapping)"),
        };
        for (k, v) in env {
            let Some(s) = scalar_str(v) else {
                self.note(format!("env.{k} (value is not a string)"));
                continue;
            };
            if !is_env_key(k) {
                self.note(format!(
                    "env.{k:?} (a variable name cannot be empty or contain '=' or NUL)"
                ));
                continue;
            }
            if has_nul(&s) {
                self.note(format!("env.{k} (the value contains a NUL character)"));
                continue;
            }
            // codex passes a variable only under its own name (`env_vars`
            // copies NAME from codex's environment): a renamed or composed
            // value becomes a pass-through of K, which the user exports.
            if let Some(var) = whole_var_ref(&s) {
                self.out.env_vars.push(k.clone());
                if var != k {
                    self.note(format!(
                        "env.{k} = {s:?}: passed through as env_vars = [\"{k}\"] (codex cannot rename a variable)"
                    ));
                    self.export(k, &s);
                }
            } else if has_var_ref(&s) {
                self.out.env_vars.push(k.clone());
                self.note(format!(
                    "env.{k} = {s:?}: passed through as env_vars = [\"{k}\"] (a value that mixes text and ${{VAR}} would put the secret into config.toml)"
                ));
                self.export(k, &s);
            } else {
                self.out.env.push((k.clone(), s));
            }
        }
    }

    /// The action for a pass-through variable `k` that must hold `value` (text
    /// with `${VAR}` references): a shell `export` line when one can be written
    /// safely, else the same in words.
    fn export(&mut self, k: &str, value: &str) {
        let shell = match whole_var_ref(value) {
            Some(var) => Some(format!("${var}")),
            None => shell_value(value),
        };
        let action = match shell.filter(|_| is_var_name(k)) {
            // The words after the line repeat the reference outside a `NAME=value` shape: Hermes'
            // log redaction masks every such value, and the plugin's run is logged there.
            Some(v) => {
                format!(
                    "export {k}=\"{v}\" in the shell that starts codex, so {k} takes the value {v}"
                )
            }
            None => format!(
                "set {k} to {value:?} (its ${{VAR}} references filled in) in the environment codex starts in"
            ),
        };
        self.action(action);
    }

    fn action(&mut self, a: String) {
        if !self.actions.contains(&a) {
            self.actions.push(a);
        }
    }

    fn cwd(&mut self) {
        let Some(v) = self.map.get("cwd").filter(|v| !v.is_null()) else {
            return;
        };
        match scalar_str(v) {
            Some(s) if has_nul(&s) => self.note("cwd (contains a NUL character)"),
            Some(s) if !s.is_empty() => self.out.cwd = Some(s),
            Some(_) => {}
            None => self.note("cwd (not a string)"),
        }
    }

    /// A streamable HTTP server: url and headers.
    fn http(&mut self) -> Result<(), Skip> {
        self.url()?;
        self.headers();
        for k in ["args", "env", "cwd"] {
            if self.is_set(k) {
                self.note(format!("{k} (stdio only; this is an HTTP server)"));
            }
        }
        Ok(())
    }

    fn url(&mut self) -> Result<(), Skip> {
        let Some(url) = scalar_str(&self.map["url"]) else {
            return Err("`url` must be a string".into());
        };
        if url.chars().any(char::is_control) {
            return Err(format!("`url` {url:?} contains a control character"));
        }
        if has_var_ref(&url) {
            self.note(format!(
                "url {url:?} contains a ${{VAR}} reference, which codex does not expand (copied as written)"
            ));
        }
        self.out.url = Some(url);
        Ok(())
    }

    /// `headers`: the first `Authorization: Bearer ${VAR}` becomes
    /// `bearer_token_env_var`, a whole `${VAR}` value `env_http_headers`, a
    /// literal `http_headers`; a value mixing text and `${VAR}` is reported.
    fn headers(&mut self) {
        let headers = match self.map.get("headers") {
            None | Some(Value::Null) => return,
            Some(Value::Object(headers)) => headers,
            Some(_) => return self.note("headers (not a mapping)"),
        };
        for (h, v) in headers {
            let Some(s) = scalar_str(v) else {
                self.note(format!("headers.{h} (value is not a string)"));
                continue;
            };
            if !is_header_name(h) {
                self.note(format!("headers.{h:?} (not a valid HTTP header name)"));
                continue;
            }
            if !is_header_value(&s) {
                self.note(format!(
                    "headers.{h} (the value contains a control character, which HTTP forbids)"
                ));
                continue;
            }
            if h.eq_ignore_ascii_case("authorization")
                && self.out.bearer_token_env_var.is_none()
                && let Some(var) = bearer_var(&s)
            {
                self.out.bearer_token_env_var = Some(var.to_string());
            } else if let Some(var) = whole_var_ref(&s) {
                self.out.env_http_headers.push((h.clone(), var.to_string()));
            } else if has_var_ref(&s) {
                self.note(format!(
                    "headers.{h} = {s:?}: a header that mixes text and ${{VAR}} cannot be expressed without writing the secret into config.toml (only `Bearer ${{VAR}}` and a whole `${{VAR}}` can)"
                ));
            } else {
                self.out.http_headers.push((h.clone(), s));
            }
        }
    }

    /// Hermes' `transport` hint: codex picks the transport itself.
    fn transport_hint(&mut self) {
        match self.map.get("transport").and_then(Value::as_str) {
            Some("sse") => self.note(
                "transport=sse (codex speaks only streamable HTTP; the server must support it at this url)",
            ),
            None | Some("stdio" | "http" | "streamable_http" | "streamable-http") => {}
            Some(other) => self.note(format!(
                "transport={other} (unknown; codex picks the transport from command/url)"
            )),
        }
    }

    /// `timeout` / `connect_timeout` → `tool_timeout_sec` / `startup_timeout_sec`.
    fn timeouts(&mut self) {
        for (hermes_key, which) in [
            ("timeout", Timeout::Tool),
            ("connect_timeout", Timeout::Startup),
        ] {
            let Some(v) = self.map.get(hermes_key).filter(|v| !v.is_null()) else {
                continue;
            };
            match number(v).map(|f| (f, codex_timeout(f))) {
                Some((_, Ok(f))) => self.out.timeouts.push((which, f)),
                Some((f, Err(why))) => {
                    let unit = if f.is_finite() { " s" } else { "" };
                    self.note(format!(
                        "{hermes_key} {}{unit} {why}; not carried over",
                        compact_number(f)
                    ))
                }
                None => self.note(format!("{hermes_key} (not numeric)")),
            }
        }
    }

    /// `tools.include` / `tools.exclude` → `enabled_tools` / `disabled_tools`.
    fn tool_filters(&mut self) {
        let Some(tools) = self.map.get("tools").filter(|v| !v.is_null()) else {
            return;
        };
        let Some(t) = tools.as_object() else {
            return self.note("tools (not a mapping)");
        };
        for (k, v) in t {
            let filter = match k.as_str() {
                "include" => ToolFilter::Enabled,
                "exclude" => ToolFilter::Disabled,
                other => {
                    self.note(format!("tools.{other} (no codex equivalent)"));
                    continue;
                }
            };
            let list: Option<Vec<String>> = match v {
                Value::Array(a) => a.iter().map(scalar_str).collect(),
                Value::String(s) => Some(vec![s.clone()]),
                Value::Null => Some(vec![]),
                _ => None,
            };
            let Some(list) = list else {
                self.note(format!("tools.{k} (not a list of tool names)"));
                continue;
            };
            let (bad, good): (Vec<String>, Vec<String>) =
                list.into_iter().partition(|t| has_nul(t));
            if !bad.is_empty() {
                self.note(format!(
                    "tools.{k}: {} name(s) with a NUL character",
                    bad.len()
                ));
            }
            self.out.tool_filters.push((filter, good));
        }
    }

    /// `supports_parallel_tool_calls`, and `enabled` (written only when false).
    fn flags(&mut self) {
        if let Some(v) = self
            .map
            .get("supports_parallel_tool_calls")
            .filter(|v| !v.is_null())
        {
            match bool_value(v) {
                Some(b) => self.out.supports_parallel_tool_calls = Some(b),
                None => self.note("supports_parallel_tool_calls (not a boolean)"),
            }
        }
        if let Some(v) = self.map.get("enabled").filter(|v| !v.is_null()) {
            match bool_value(v) {
                Some(false) => self.out.enabled = Some(false),
                Some(true) => {}
                None => self.note("enabled (not a boolean)"),
            }
        }
    }

    /// Every other key, reported with why it is not carried over.
    fn unhandled_keys(&mut self) {
        let name = self.name;
        for key in self.map.keys() {
            if HANDLED.contains(&key.as_str()) {
                continue;
            }
            let note = if NO_EQUIVALENT.contains(&key.as_str()) {
                format!("{key} (no codex equivalent)")
            } else if key == "auth" || key == "oauth" {
                self.action(format!("run `codex mcp login {name}` (OAuth)"));
                format!("{key} (not translated; codex negotiates OAuth itself)")
            } else if key == "description" {
                "description (codex has no description field)".into()
            } else {
                format!("{key} (unknown Hermes key)")
            };
            self.notes.push(note);
        }
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
/// are the pass-through names `passthrough::choose` picked; `serve_flags`
/// follow `serve` (`--no-hermes-context`, `--hermes-soul`).
pub(crate) fn hermes_tools_entry(
    exe: &str,
    hermes_home: Option<&str>,
    env_vars: &[String],
    serve_flags: &[String],
) -> CodexServer {
    CodexServer {
        command: Some(exe.to_string()),
        args: std::iter::once("serve".to_string())
            .chain(serve_flags.iter().cloned())
            .collect(),
        env: hermes_home
            .map(|home| {
                vec![(
                    crate::hermes::envvars::HERMES_HOME.to_string(),
                    home.to_string(),
                )]
            })
            .unwrap_or_default(),
        env_vars: env_vars.to_vec(),
        timeouts: vec![(Timeout::Startup, 30.0), (Timeout::Tool, 600.0)],
        tools: AUTO_APPROVED_TOOLS
            .iter()
            .map(|t| {
                let approve = ToolSettings {
                    approval_mode: Some("approve".into()),
                };
                (t.to_string(), approve)
            })
            .collect(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(name: &str, v: Value) -> (CodexServer, Vec<String>) {
        let (server, notes, _) = ok_actions(name, v);
        (server, notes)
    }

    fn ok_actions(name: &str, v: Value) -> (CodexServer, Vec<String>, Vec<String>) {
        match translate(name, &v) {
            Translation::Ok {
                server,
                notes,
                actions,
                ..
            } => (server, notes, actions),
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
            s.pairs(),
            vec![
                ("command", TomlVal::Str("npx".into())),
                (
                    "args",
                    TomlVal::List(vec!["-y".into(), "pkg".into(), "3".into()])
                ),
                ("env", TomlVal::Map(vec![("DEBUG".into(), "1".into())])),
                ("cwd", TomlVal::Str("/tmp".into())),
                ("tool_timeout_sec", TomlVal::Float(120.0)),
                ("startup_timeout_sec", TomlVal::Float(15.0)),
            ]
        );
    }

    #[test]
    fn env_secrets_become_pass_through_or_are_reported() {
        let (s, notes, actions) = ok_actions(
            "gh",
            json!({"command":"gh-mcp","env":{"GITHUB_TOKEN":"${GITHUB_TOKEN}","OTHER":"${env:OTHER}","ALIAS":"${GH_TOKEN}","MIX":"x-${Y}","LIT":"plain"}}),
        );
        assert_eq!(
            s.get("env_vars"),
            Some(TomlVal::List(vec![
                "GITHUB_TOKEN".into(),
                "OTHER".into(),
                "ALIAS".into(),
                "MIX".into()
            ]))
        );
        assert_eq!(
            s.get("env"),
            Some(TomlVal::Map(vec![("LIT".into(), "plain".into())]))
        );
        // The report's advice ("export ALIAS") is true: ALIAS is passed through.
        assert!(
            notes.iter().any(|n| n.starts_with("env.ALIAS")),
            "{notes:?}"
        );
        assert!(notes.iter().any(|n| n.starts_with("env.MIX")), "{notes:?}");
        // What the user must do is an action of its own (`-q` keeps it), as a shell line.
        assert_eq!(
            actions,
            [
                "export ALIAS=\"$GH_TOKEN\" in the shell that starts codex, so ALIAS takes the value $GH_TOKEN",
                "export MIX=\"x-${Y}\" in the shell that starts codex, so MIX takes the value x-${Y}",
            ]
        );
        assert!(!notes.iter().any(|n| n.contains("export")), "{notes:?}");
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
            Some(TomlVal::Str("API_TOKEN".into()))
        );
        assert_eq!(
            s.get("env_http_headers"),
            Some(TomlVal::Map(vec![("X-Api-Key".into(), "XKEY".into())]))
        );
        assert_eq!(
            s.get("http_headers"),
            Some(TomlVal::Map(vec![("X-Team".into(), "core".into())]))
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
            Some(TomlVal::Map(vec![(
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
        assert_eq!(s.get("enabled"), Some(TomlVal::Bool(false)));
        assert_eq!(
            s.get("enabled_tools"),
            Some(TomlVal::List(vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            s.get("disabled_tools"),
            Some(TomlVal::List(vec!["c".into()]))
        );
        assert_eq!(
            s.get("supports_parallel_tool_calls"),
            Some(TomlVal::Bool(true))
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
        assert!(notes.contains(&"connect_timeout -1 s is negative; not carried over".to_string()));
    }

    #[test]
    fn values_codex_cannot_load_or_use_are_reported_not_written() {
        const BIG: &str = "is more than Codex accepts (at most about 1.84e19 s); not carried over";
        const INFINITE: &str = "is not a finite number of seconds; not carried over";
        for (t, want) in [
            (json!(1.9e19), format!("timeout 1.9e19 s {BIG}")),
            (json!(1e300), format!("timeout 1e300 s {BIG}")),
            (
                json!(-3),
                "timeout -3 s is negative; not carried over".into(),
            ),
            (json!("nan"), format!("timeout .nan {INFINITE}")),
            (json!("inf"), format!("timeout .inf {INFINITE}")),
            (json!("1e400"), format!("timeout .inf {INFINITE}")),
            // YAML's .inf / -.inf / .nan, as config.yaml's reader keeps them.
            (json!(".inf"), format!("timeout .inf {INFINITE}")),
            (json!("-.inf"), format!("timeout -.inf {INFINITE}")),
            (json!(".nan"), format!("timeout .nan {INFINITE}")),
        ] {
            let (s, notes) = ok("x", json!({"command":"c","timeout":t,"connect_timeout":t}));
            assert_eq!(s.get("tool_timeout_sec"), None, "{t}");
            assert_eq!(s.get("startup_timeout_sec"), None, "{t}");
            assert!(notes.contains(&want), "{t}: {notes:?}");
            // Short: no 301-digit number, at most one level of parentheses.
            assert!(
                notes.iter().all(|n| n.len() < 100 && !n.contains("((")),
                "{notes:?}"
            );
        }
        let (s, _) = ok(
            "x",
            json!({"command":"c","timeout":1.8e19,"connect_timeout":-0.0}),
        );
        assert_eq!(s.get("tool_timeout_sec"), Some(TomlVal::Float(1.8e19)));
        assert_eq!(s.get("startup_timeout_sec"), Some(TomlVal::Float(0.0)));
        let (s, notes) = ok(
            "x",
            json!({"command":"c","env":{"A=B":"1","":"2","N":"a\u{0}b","OK":"tab\there"},"cwd":"/x\u{0}"}),
        );
        assert_eq!(
            s.get("env"),
            Some(TomlVal::Map(vec![("OK".into(), "tab\there".into())]))
        );
        assert_eq!(s.get("cwd"), None);
        assert_eq!(notes.len(), 4, "{notes:?}");
        let (s, notes) = ok(
            "h",
            json!({"url":"http://x","headers":{"Bad Name":"v","X-A":"a\r\nInjected: 1","X-B":"ok"}}),
        );
        assert_eq!(
            s.get("http_headers"),
            Some(TomlVal::Map(vec![("X-B".into(), "ok".into())]))
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
    fn compact_numbers_and_shell_values() {
        assert_eq!(compact_number(30.0), "30");
        assert_eq!(compact_number(0.5), "0.5");
        assert_eq!(compact_number(1e300), "1e300");
        assert_eq!(compact_number(-1e-9), "-1e-9");
        assert_eq!(compact_number(f64::NEG_INFINITY), "-.inf");
        assert_eq!(
            shell_value("a-${env:B}/${C}").as_deref(),
            Some("a-${B}/${C}")
        );
        for unsafe_text in ["x\"${A}", "`id`${A}", "$HOME/${A}", "${A", "${1A}"] {
            assert_eq!(shell_value(unsafe_text), None, "{unsafe_text}");
        }
        // A value the shell would interpret, or a name it cannot export, is said in words.
        let (_, _, actions) = ok_actions(
            "n",
            json!({"command":"c","env":{"K":"`x`${A}","A-B":"${C}"},"auth":"oauth","oauth":{}}),
        );
        assert_eq!(
            actions,
            [
                "set K to \"`x`${A}\" (its ${VAR} references filled in) in the environment codex starts in",
                "set A-B to \"${C}\" (its ${VAR} references filled in) in the environment codex starts in",
                "run `codex mcp login n` (OAuth)",
            ]
        );
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
    fn unset_keys_follow_python_truthiness() {
        // Hermes' migrator tests `if cfg.get("command"):`: 0 is not a command.
        match translate("n", &json!({"command": 0, "url": "http://x/mcp"})) {
            Translation::Ok {
                server, transport, ..
            } => {
                assert_eq!(transport, "streamable_http");
                assert_eq!(server.get("url"), Some(TomlVal::Str("http://x/mcp".into())));
                assert_eq!(server.get("command"), None);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            translate("n", &json!({"command": 0})),
            Translation::Skipped { .. }
        ));
        let (_, notes) = ok("n", json!({"url": "http://x/mcp", "args": 0, "cwd": 0.0}));
        assert!(notes.is_empty(), "{notes:?}");
        let (_, notes) = ok("n", json!({"command": "c", "headers": 0}));
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn tool_filters_keep_the_order_of_hermes_tools_mapping() {
        let (s, _) = ok(
            "n",
            json!({"command": "c", "tools": {"exclude": ["a"], "include": null}}),
        );
        let keys: Vec<&str> = s.pairs().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["command", "disabled_tools", "enabled_tools"]);
        assert_eq!(s.get("enabled_tools"), Some(TomlVal::List(vec![])));
    }

    #[test]
    fn enabled_zero_is_disabled_as_python_bool() {
        let (s, notes) = ok("n", json!({"command": "c", "enabled": 0}));
        assert_eq!(s.get("enabled"), Some(TomlVal::Bool(false)));
        assert!(notes.is_empty(), "{notes:?}");
        let (s, _) = ok("n", json!({"command": "c", "enabled": 1}));
        assert_eq!(s.get("enabled"), None);
    }

    #[test]
    fn hermes_tools_entry_lists_the_chosen_vars() {
        let s = hermes_tools_entry("/usr/bin/hermes-mcp", None, &["EXA_API_KEY".into()], &[]);
        assert_eq!(
            s.get("env_vars"),
            Some(TomlVal::List(vec!["EXA_API_KEY".into()]))
        );
        assert_eq!(s.get("env"), None);
        let s = hermes_tools_entry("/x", Some("/h"), &[], &["--hermes-soul".into()]);
        assert_eq!(s.get("env_vars"), None);
        assert_eq!(
            s.get("env"),
            Some(TomlVal::Map(vec![("HERMES_HOME".into(), "/h".into())]))
        );
        assert_eq!(s.tools.len(), 4);
        let keys: Vec<&str> = s.pairs().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            [
                "command",
                "args",
                "env",
                "startup_timeout_sec",
                "tool_timeout_sec"
            ]
        );
    }
}
