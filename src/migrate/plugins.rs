//! Installed Codex plugins, asked from `codex app-server` (stdio JSON-RPC:
//! `initialize`, `initialized`, `plugin/list`), as codex 0.169's app-server speaks it
//! (`codex app-server generate-json-schema` gives the shapes).
//! Failure is a reason string, never an abort.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A plugin to write as `[plugins."<id>"]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    pub id: String,
    pub enabled: bool,
}

struct Guard(Child);
impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Ask `codex_bin app-server` (with `CODEX_HOME=codex_home`) for installed plugins.
pub fn discover(
    codex_bin: &Path,
    codex_home: &Path,
    timeout: Duration,
) -> Result<Vec<Plugin>, String> {
    let deadline = Instant::now() + timeout;
    let child = Command::new(codex_bin)
        .arg("app-server")
        .env("CODEX_HOME", codex_home)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "codex not found at {:?}; install it (`npm i -g @openai/codex`) or pass --codex-bin PATH",
                    codex_bin.display().to_string()
                )
            } else {
                format!("cannot start {} app-server: {e}", codex_bin.display())
            }
        })?;
    let mut g = Guard(child);
    let stdout = g.0.stdout.take().expect("piped");
    let mut stderr = g.0.stderr.take().expect("piped");
    let mut stdin = g.0.stdin.take().expect("piped");
    let (tx, rx) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && tx.send(v).is_err()
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
    let stderr_tail = |erx: &mpsc::Receiver<String>| -> String {
        let text = erx
            .recv_timeout(Duration::from_millis(500))
            .unwrap_or_default();
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    };
    let mut send = |v: Value| -> Result<(), String> {
        let mut line = v.to_string();
        line.push('\n');
        stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.flush())
            .map_err(|e| format!("cannot talk to codex app-server: {e}"))
    };
    let wait_for = |id: i64, what: &str| -> Result<Value, String> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "codex app-server did not answer {what} within {} s",
                    timeout.as_secs()
                ));
            }
            match rx.recv_timeout(left) {
                Ok(msg) => {
                    if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                        if let Some(e) = msg.get("error") {
                            let m = e
                                .get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("unknown error");
                            let hint = if m.contains("config") {
                                " (codex cannot load the existing config.toml; fix it and run migrate again to migrate plugins)"
                            } else {
                                ""
                            };
                            return Err(format!("codex app-server refused {what}: {m}{hint}"));
                        }
                        return Ok(msg.get("result").cloned().unwrap_or(Value::Null));
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err("codex app-server exited".to_string());
                }
            }
        }
    };
    let init = json!({"id": 1, "method": "initialize", "params": {
        "clientInfo": {"name": "hermes-mcp", "title": "hermes-mcp", "version": env!("CARGO_PKG_VERSION")},
        "capabilities": {}
    }});
    let exited = |e: String, g: &mut Guard| -> String {
        if e.contains("exited") || e.contains("cannot talk") {
            let _ = g.0.wait();
            let tail = stderr_tail(&erx);
            format!(
                "codex app-server stopped before answering (the existing config.toml may not load in codex; fix it and run migrate again to migrate plugins){}",
                if tail.is_empty() {
                    String::new()
                } else {
                    format!(": {tail}")
                }
            )
        } else {
            e
        }
    };
    if let Err(e) = send(init) {
        return Err(exited(e, &mut g));
    }
    if let Err(e) = wait_for(1, "initialize") {
        return Err(exited(e, &mut g));
    }
    let r = send(json!({"method": "initialized"}))
        .and_then(|_| send(json!({"id": 2, "method": "plugin/list", "params": {}})));
    if let Err(e) = r {
        return Err(exited(e, &mut g));
    }
    let result = match wait_for(2, "plugin/list") {
        Ok(r) => r,
        Err(e) => return Err(exited(e, &mut g)),
    };
    drop(g);
    parse_plugin_list(&result)
}

/// Installed, available plugins from a `plugin/list` result, deduplicated, sorted by id.
pub fn parse_plugin_list(result: &Value) -> Result<Vec<Plugin>, String> {
    let Some(markets) = result.get("marketplaces").and_then(Value::as_array) else {
        return Err("plugin/list response has no `marketplaces` list".into());
    };
    let mut out: Vec<Plugin> = Vec::new();
    for m in markets {
        let market = m
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("openai-curated");
        let Some(plugins) = m.get("plugins").and_then(Value::as_array) else {
            continue;
        };
        for p in plugins {
            if !p.get("installed").and_then(Value::as_bool).unwrap_or(false) {
                continue;
            }
            let avail = p
                .get("availability")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_ascii_uppercase();
            if !avail.is_empty() && avail != "AVAILABLE" {
                continue;
            }
            let id = match p
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| s.contains('@'))
            {
                Some(id) => id.to_string(),
                None => match p
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    Some(n) => format!("{n}@{market}"),
                    None => continue,
                },
            };
            if out.iter().any(|x| x.id == id) {
                continue;
            }
            out.push(Plugin {
                id,
                enabled: p.get("enabled").and_then(Value::as_bool).unwrap_or(true),
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
        .unwrap_err();
        assert!(e.contains("--codex-bin"), "{e}");
    }
}
