//! Installed Codex plugins, asked from `codex app-server` (stdio JSON-RPC:
//! `initialize`, `initialized`, `plugin/list`), as codex 0.169's app-server speaks it
//! (`codex app-server generate-json-schema` gives the shapes).
//! Failure is a [`DiscoverError`] the report shows, never an abort.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::lenient;

/// A plugin to write as `[plugins."<id>"]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plugin {
    pub(crate) id: String,
    pub(crate) enabled: bool,
}

struct Guard(Child);
impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Why plugins could not be listed; `migrate` reports it and goes on.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DiscoverError {
    #[error(
        "codex not found at {path:?}; install it (`npm i -g @openai/codex`) or pass --codex-bin PATH"
    )]
    NotFound { path: String },
    #[error("cannot start {path} app-server: {source}")]
    Spawn {
        path: String,
        source: std::io::Error,
    },
    /// codex exited or closed its pipes before answering; `tail` is the end of its stderr.
    #[error(
        "codex app-server stopped before answering (the existing config.toml may not load in codex; fix it and run migrate again to migrate plugins){}",
        if tail.is_empty() { String::new() } else { format!(": {tail}") }
    )]
    Stopped { tail: String },
    #[error("codex app-server did not answer {what} within {secs} s")]
    Timeout { what: &'static str, secs: u64 },
    #[error("codex app-server refused {what}: {message}{}",
        if message.contains("config") {
            " (codex cannot load the existing config.toml; fix it and run migrate again to migrate plugins)"
        } else {
            ""
        }
    )]
    Refused { what: &'static str, message: String },
    #[error("plugin/list response has no `marketplaces` list")]
    NoMarketplaces,
}

/// What went wrong on the pipe, before it is worded for the user.
enum Talk {
    /// Closed pipe or exited process: worded with codex's stderr.
    Gone,
    Failed(DiscoverError),
}

/// A JSON-RPC answer from the app-server (requests and notifications have `method`).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Answer {
    #[serde(deserialize_with = "lenient::or_default")]
    id: Option<i64>,
    #[serde(deserialize_with = "lenient::string")]
    method: Option<String>,
    #[serde(deserialize_with = "lenient::raw")]
    result: Option<Value>,
    #[serde(deserialize_with = "lenient::raw")]
    error: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RpcError {
    #[serde(deserialize_with = "lenient::string")]
    message: Option<String>,
}

/// Ask `codex_bin app-server` (with `CODEX_HOME=codex_home`) for installed plugins.
pub(crate) fn discover(
    codex_bin: &Path,
    codex_home: &Path,
    timeout: Duration,
) -> Result<Vec<Plugin>, DiscoverError> {
    let deadline = Instant::now() + timeout;
    let path = codex_bin.display().to_string();
    let child = Command::new(codex_bin)
        .arg("app-server")
        .env("CODEX_HOME", codex_home)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                DiscoverError::NotFound { path: path.clone() }
            } else {
                DiscoverError::Spawn {
                    path: path.clone(),
                    source,
                }
            }
        })?;
    let mut g = Guard(child);
    let (Some(stdout), Some(mut stderr), Some(mut stdin)) =
        (g.0.stdout.take(), g.0.stderr.take(), g.0.stdin.take())
    else {
        return Err(DiscoverError::Stopped {
            tail: String::new(),
        });
    };
    let (tx, rx) = mpsc::channel::<Answer>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && tx.send(lenient::object(&v)).is_err()
            {
                break;
            }
        }
    });
    let (etx, erx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut buf = String::new();
        let _ = stderr.read_to_string(&mut buf);
        let _ = etx.send(buf);
    });
    let mut send = |v: Value| -> Result<(), Talk> {
        let mut line = v.to_string();
        line.push('\n');
        stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.flush())
            .map_err(|_| Talk::Gone)
    };
    let wait_for = |id: i64, what: &'static str| -> Result<Value, Talk> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Talk::Failed(DiscoverError::Timeout {
                    what,
                    secs: timeout.as_secs(),
                }));
            }
            match rx.recv_timeout(left) {
                Ok(msg) if msg.id == Some(id) && msg.method.is_none() => {
                    if let Some(e) = msg.error {
                        let e: RpcError = lenient::object(&e);
                        return Err(Talk::Failed(DiscoverError::Refused {
                            what,
                            message: e.message.unwrap_or_else(|| "unknown error".into()),
                        }));
                    }
                    return Ok(msg.result.unwrap_or(Value::Null));
                }
                Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Talk::Gone),
            }
        }
    };
    let init = json!({"id": 1, "method": "initialize", "params": {
        "clientInfo": {"name": "hermes-mcp", "title": "hermes-mcp", "version": env!("CARGO_PKG_VERSION")},
        "capabilities": {}
    }});
    let talk = send(init)
        .and_then(|_| wait_for(1, "initialize"))
        .and_then(|_| send(json!({"method": "initialized"})))
        .and_then(|_| send(json!({"id": 2, "method": "plugin/list", "params": {}})))
        .and_then(|_| wait_for(2, "plugin/list"));
    let result = match talk {
        Ok(r) => r,
        Err(Talk::Failed(e)) => return Err(e),
        Err(Talk::Gone) => {
            let _ = g.0.wait();
            return Err(DiscoverError::Stopped {
                tail: stderr_tail(&erx),
            });
        }
    };
    drop(g);
    parse_plugin_list(&result)
}

/// The last three non-blank lines codex printed on stderr, joined.
fn stderr_tail(erx: &mpsc::Receiver<String>) -> String {
    let text = erx
        .recv_timeout(Duration::from_millis(500))
        .unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}

/// `plugin/list`'s result (`PluginListResponse` in codex's app-server schema),
/// read leniently: a marketplace or plugin of another shape is skipped.
#[derive(Deserialize, Default)]
#[serde(default)]
struct PluginList {
    #[serde(deserialize_with = "lenient::opt_items")]
    marketplaces: Option<Vec<Marketplace>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Marketplace {
    #[serde(deserialize_with = "lenient::string")]
    name: Option<String>,
    #[serde(deserialize_with = "lenient::items")]
    plugins: Vec<PluginSummary>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PluginSummary {
    #[serde(deserialize_with = "lenient::string")]
    id: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    name: Option<String>,
    #[serde(deserialize_with = "lenient::or_default")]
    installed: Option<bool>,
    #[serde(deserialize_with = "lenient::or_default")]
    enabled: Option<bool>,
    #[serde(deserialize_with = "lenient::string")]
    availability: Option<String>,
}

/// Installed, available plugins from a `plugin/list` result, deduplicated, sorted by id.
pub(crate) fn parse_plugin_list(result: &Value) -> Result<Vec<Plugin>, DiscoverError> {
    let list: PluginList = lenient::object(result);
    let markets = list.marketplaces.ok_or(DiscoverError::NoMarketplaces)?;
    let mut out: Vec<Plugin> = Vec::new();
    for m in markets {
        let market = m
            .name
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "openai-curated".into());
        for p in m.plugins {
            if !p.installed.unwrap_or(false) {
                continue;
            }
            let avail = p.availability.unwrap_or_default().to_ascii_uppercase();
            if !avail.is_empty() && avail != "AVAILABLE" {
                continue;
            }
            let id = match (p.id.filter(|s| s.contains('@')), p.name) {
                (Some(id), _) => id,
                (None, Some(n)) if !n.is_empty() => format!("{n}@{market}"),
                _ => continue,
            };
            if out.iter().any(|x| x.id == id) {
                continue;
            }
            out.push(Plugin {
                id,
                enabled: p.enabled.unwrap_or(true),
            });
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_installed_available_plugins() {
        let r = json!({"marketplaces":[
            {"name":"m","plugins":[
                {"id":"a@m","installed":true,"enabled":true,"availability":"AVAILABLE"},
                {"id":"b@m","installed":true,"enabled":false},
                {"id":"c@m","installed":false,"enabled":false},
                {"id":"d@m","installed":true,"availability":"DISABLED_BY_ADMIN"},
                {"name":"e","installed":true},
                {"id":"a@m","installed":true,"enabled":false}
            ]},
            {"plugins":[{"name":"g","installed":true}]}
        ]});
        let got = parse_plugin_list(&r).unwrap();
        let ids: Vec<_> = got.iter().map(|p| (p.id.as_str(), p.enabled)).collect();
        assert_eq!(
            ids,
            vec![
                ("a@m", true),
                ("b@m", false),
                ("e@m", true),
                ("g@openai-curated", true)
            ]
        );
        assert!(parse_plugin_list(&json!({})).is_err());
    }

    #[test]
    fn missing_binary_is_a_reason_not_a_panic() {
        let e = discover(
            Path::new("/nonexistent/codex"),
            Path::new("/tmp"),
            Duration::from_secs(1),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("--codex-bin"), "{e}");
    }
}
