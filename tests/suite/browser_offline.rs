//! Chromium makes no connection the page did not ask for: every connect() of
//! the server and all of its processes is recorded with strace while the
//! browser loads a loopback page and then idles, and any destination other
//! than the page's server or the DevTools endpoint fails the test.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use super::browser::{PageServer, require_chromium};
use super::common::{RawClient, TestEnv, is_error, result_json};

/// How long Chromium is watched after the page loaded (its background
/// services start within seconds of launch).
const IDLE: Duration = Duration::from_secs(12);

fn require_strace() {
    let ok = Command::new("strace")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "strace is required to record Chromium's connections: `apt-get install strace` (tools/test.sh does)"
    );
}

/// The DevTools port of the Chromium whose profile lives under `tmp`.
fn devtools_port(tmp: &Path) -> u16 {
    for e in std::fs::read_dir(tmp).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("hermes-mcp-chromium-")
            && let Ok(text) = std::fs::read_to_string(e.path().join("DevToolsActivePort"))
            && let Some(port) = text.lines().next().and_then(|l| l.trim().parse().ok())
        {
            return port;
        }
    }
    panic!("no DevToolsActivePort under {}", tmp.display());
}

/// (family, address, port) of each connect() strace recorded.
fn connects(trace: &str) -> Vec<(String, String, u16, String)> {
    let fam = regex::Regex::new(r"sa_family=(AF_[A-Z0-9]+)").unwrap();
    let port = regex::Regex::new(r"sin6?_port=htons\((\d+)\)").unwrap();
    let v4 = regex::Regex::new(r#"inet_addr\("([^"]+)"\)"#).unwrap();
    let v6 = regex::Regex::new(r#"inet_pton\(AF_INET6, "([^"]+)""#).unwrap();
    let mut out = Vec::new();
    for line in trace.lines().filter(|l| l.contains("connect(")) {
        let Some(f) = fam.captures(line) else {
            continue;
        };
        let addr = v4
            .captures(line)
            .or_else(|| v6.captures(line))
            .map(|c| c[1].to_string())
            .unwrap_or_default();
        let p = port
            .captures(line)
            .and_then(|c| c[1].parse().ok())
            .unwrap_or(0);
        out.push((f[1].to_string(), addr, p, line.to_string()));
    }
    out
}

#[test]
#[ignore = "known failure (issue 12): Chromium still probes IPv6 reachability with a UDP connect to 2001:4860:4860::8888:443 while a page loads; run with `-- --ignored` inside tools/test.sh's namespace"]
fn chromium_connects_only_where_the_page_asks() {
    require_chromium();
    require_strace();
    let pages = PageServer::start();
    let env = TestEnv::new();
    let tmp = env.dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let trace = env.dir.path().join("connect.trace");
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-qq", "-s", "256", "-e", "trace=connect", "-o"])
        .arg(&trace)
        .arg(super::common::bin());
    env.apply(&mut cmd);
    cmd.env("TMPDIR", &tmp);
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let r = c.call_tool("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert!(!is_error(&r), "{r}");
    assert_eq!(result_json(&r)["title"], "Order form", "{r}");
    let devtools = devtools_port(&tmp);
    std::thread::sleep(IDLE);
    let r = c.call_tool("browser_snapshot", json!({}));
    assert!(!is_error(&r), "{r}");
    let st = c.finish(Duration::from_secs(30));
    assert!(st.success(), "{st:?}");

    let text = std::fs::read_to_string(&trace).unwrap();
    let all = connects(&text);
    let bad: Vec<_> = all
        .iter()
        .filter(|(fam, addr, port, _)| match fam.as_str() {
            // Local IPC (D-Bus, the zygote, nscd...) and the disconnect of a UDP socket.
            "AF_UNIX" | "AF_NETLINK" | "AF_UNSPEC" => false,
            "AF_INET" | "AF_INET6" => {
                !(matches!(addr.as_str(), "127.0.0.1" | "::1" | "::ffff:127.0.0.1")
                    && (*port == pages.port || *port == devtools))
            }
            _ => true,
        })
        .map(|(_, _, _, line)| line.clone())
        .collect();
    assert!(
        all.iter()
            .any(|(_, _, port, _)| *port == pages.port || *port == devtools),
        "strace recorded no connection at all (is it tracing?):\n{text}"
    );
    assert!(
        bad.is_empty(),
        "Chromium (or the server) connected where the page did not ask (page port {}, DevTools port {devtools}):\n{}",
        pages.port,
        bad.join("\n")
    );
}
