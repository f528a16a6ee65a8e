//! Which tools the `serve` processes still running for this Hermes home
//! offered Codex. Codex asks for the tool list once, when it starts, and
//! ignores `tools/list_changed`: a tool that became available later (a key
//! added to `.env`, a Chromium installed) stays missing in that Codex until
//! it restarts. Each `serve` logs the tools of its first `tools/list` with its
//! pid (`$HERMES_HOME/logs/hermes-mcp.log`); `hermes-mcp tools` and `doctor`
//! compare that line of each live server with what is available now.

use std::path::Path;

/// The start of the log line [`log_listed`] writes (the pid and the names follow).
const LISTED: &str = "tools listed for codex (pid ";

/// Log the tools a server's first `tools/list` gave (once per process).
pub(crate) fn log_listed(names: &[&str]) {
    tracing::info!("{LISTED}{}): {}", std::process::id(), names.join(", "));
}

/// One live `serve` and the tools it listed first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub pid: u32,
    pub tools: Vec<String>,
}

/// The (pid, tools) of every [`LISTED`] line in `text`, last line per pid.
fn parse(text: &str) -> Vec<Listed> {
    let mut out: Vec<Listed> = Vec::new();
    for line in text.lines() {
        let Some(i) = line.find(LISTED) else {
            continue;
        };
        let rest = &line[i + LISTED.len()..];
        let Some((pid, tools)) = rest.split_once("): ") else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let tools = tools
            .split(", ")
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect();
        out.retain(|l| l.pid != pid);
        out.push(Listed { pid, tools });
    }
    out
}

/// `pid` is a running `hermes-mcp serve` (not a reused pid).
fn is_live_server(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
        let args: Vec<&[u8]> = c.split(|b| *b == 0).collect();
        args.iter().any(|a| *a == b"serve")
            && args
                .first()
                .is_some_and(|a| a.windows(10).any(|w| w == b"hermes-mcp"))
    })
}

/// The live servers of the Hermes home at `home` and what each listed first.
pub fn live(home: &Path) -> Vec<Listed> {
    let log = crate::hermes::home::log_file(home);
    let mut text = String::new();
    for p in [log.with_extension("log.1"), log] {
        let cap = crate::hermes::logfile::CAP * 2;
        if let Ok(Some(t)) = crate::fs::read_to_string_capped_opt(&p, cap) {
            text.push_str(&t);
            text.push('\n');
        }
    }
    parse(&text)
        .into_iter()
        .filter(|l| is_live_server(l.pid))
        .collect()
}

/// Tools in `now` that a live server did not list: (tool, pids that lack it).
pub fn new_since_start(live: &[Listed], now: &[&str]) -> Vec<(String, Vec<u32>)> {
    now.iter()
        .filter_map(|t| {
            let pids: Vec<u32> = live
                .iter()
                .filter(|l| !l.tools.iter().any(|x| x == t))
                .map(|l| l.pid)
                .collect();
            (!pids.is_empty()).then(|| (t.to_string(), pids))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_listing_of_each_pid_counts() {
        let text = format!(
            "2026-01-01T00:00:00Z  INFO hermes_mcp::server::running: {LISTED}7): web_search, memory\n\
             x\n\
             2026-01-01T00:00:01Z  INFO hermes_mcp::server::running: {LISTED}9): memory\n\
             2026-01-01T00:00:02Z  INFO hermes_mcp::server::running: {LISTED}7): web_search\n"
        );
        let l = parse(&text);
        assert_eq!(
            l,
            [
                Listed {
                    pid: 9,
                    tools: vec!["memory".into()]
                },
                Listed {
                    pid: 7,
                    tools: vec!["web_search".into()]
                },
            ]
        );
        assert_eq!(
            new_since_start(&l, &["memory", "web_search", "vision_analyze"]),
            [
                ("memory".to_string(), vec![7]),
                ("web_search".to_string(), vec![9]),
                ("vision_analyze".to_string(), vec![9, 7]),
            ]
        );
    }
}
