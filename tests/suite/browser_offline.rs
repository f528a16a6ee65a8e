//! Chromium makes no connection the page did not ask for: every connect() and send of
//! the server and all of its processes is recorded with strace while the
//! browser loads a loopback page and then idles, and any destination other
//! than the page's server or the DevTools endpoint fails the test.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use super::support::browser::page_server;
use super::support::common::{RawClient, TestEnv, is_error, result_json};
use super::support::prereq::{require_chromium, require_strace};

/// How long Chromium is watched after the page loaded (its background
/// services start within seconds of launch).
const IDLE: Duration = Duration::from_secs(12);

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

/// The port of the request gate (`--proxy-server`) the Chromium whose
/// profile lives under `tmp` was started with: every connection of the page
/// goes to it, and the server dials the page's server.
fn proxy_port(tmp: &Path) -> u16 {
    let marker = tmp.display().to_string();
    for (_, _, cmd) in super::support::browser::procs_with(&marker) {
        if let Some(rest) = cmd.split("--proxy-server=http://127.0.0.1:").nth(1)
            && let Some(port) = rest.split_whitespace().next().and_then(|p| p.parse().ok())
        {
            return port;
        }
    }
    panic!("no Chromium under {marker} runs with --proxy-server=http://127.0.0.1:PORT");
}

/// One connect() strace recorded: the socket's kind from `-yy` (`TCP`,
/// `UDPv6`, `UNIX`...), the address family, address and port, and the line.
struct Connect {
    kind: String,
    family: String,
    addr: String,
    port: u16,
    line: String,
}

fn socket_kind(line: &str, call: &str) -> String {
    let re = regex::Regex::new(&format!(r"{call}\(\d+<([A-Za-z0-9]+)")).unwrap();
    re.captures(line)
        .map(|c| c[1].to_string())
        .unwrap_or_default()
}

fn connects(trace: &str) -> Vec<Connect> {
    let fam = regex::Regex::new(r"sa_family=(AF_[A-Z0-9]+)").unwrap();
    let port = regex::Regex::new(r"sin6?_port=htons\((\d+)\)").unwrap();
    let v4 = regex::Regex::new(r#"inet_addr\("([^"]+)"\)"#).unwrap();
    let v6 = regex::Regex::new(r#"inet_pton\(AF_INET6, "([^"]+)""#).unwrap();
    let mut out = Vec::new();
    for line in trace.lines().filter(|l| l.contains(" connect(")) {
        let Some(f) = fam.captures(line) else {
            continue;
        };
        out.push(Connect {
            kind: socket_kind(line, "connect"),
            family: f[1].to_string(),
            addr: v4
                .captures(line)
                .or_else(|| v6.captures(line))
                .map(|c| c[1].to_string())
                .unwrap_or_default(),
            port: port
                .captures(line)
                .and_then(|c| c[1].parse().ok())
                .unwrap_or(0),
            line: line.to_string(),
        });
    }
    out
}

/// Every send or write on an IP socket whose peer is not loopback: a TCP or
/// UDP socket shows its peer after `->` in strace's `-yy` annotation
/// (`21<TCP:[127.0.0.1:58878->127.0.0.1:8765]>`); an unconnected one has none.
fn sends_off_loopback(trace: &str) -> Vec<String> {
    let call = regex::Regex::new(
        r"\b(?:sendto|sendmsg|sendmmsg|write|writev)\(\d+<(?:TCP|TCPv6|UDP|UDPv6|UDPLITE|UDPLITEv6|RAW|RAWv6):\[([^\]]*(?:\][^\]]*)*)\]>",
    )
    .unwrap();
    trace
        .lines()
        .filter(|l| {
            call.captures(l).is_some_and(|c| {
                let peer = c[1].rsplit_once("->").map(|(_, p)| p).unwrap_or("");
                !(peer.starts_with("127.")
                    || peer.starts_with("[::1]")
                    || peer.starts_with("[::ffff:127."))
            })
        })
        .map(str::to_string)
        .collect()
}

/// Chromium's IPv6 reachability probe: a UDP `connect()` to Google's public
/// DNS address, port 443. It cannot be switched off in Chromium 156: every
/// host resolution (IP literals included) starts in
/// `HostResolverManager::RequestImpl::DoIPv6Reachability`, and
/// `StartIPv6ReachabilityCheck` skips the probe only on Wi-Fi; no switch or
/// feature reaches it (net/dns/host_resolver_manager.cc, `kIPv6ProbeAddress`,
/// `StartGloballyReachableCheck`; `EnableIPv6ReachabilityOverride` changes
/// only the AAAA query). A UDP connect() sends no packet: the kernel only
/// picks a route (and fails here, in a loopback-only namespace, with
/// ENETUNREACH). So the probe is allowed only as exactly that: a datagram
/// socket, this address and port, and [`sends_off_loopback`] proves that
/// nothing is ever sent on it (or on any other socket not talking to loopback).
fn is_route_probe(c: &Connect) -> bool {
    matches!(c.kind.as_str(), "UDP" | "UDPv6")
        && c.family == "AF_INET6"
        && c.addr == "2001:4860:4860::8888"
        && c.port == 443
}

#[test]
fn chromium_connects_only_where_the_page_asks() {
    require_chromium();
    require_strace();
    let pages = page_server();
    let env = TestEnv::new();
    let tmp = env.dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let trace = env.dir.path().join("connect.trace");
    let mut cmd = Command::new("strace");
    cmd.args([
        "-f",
        "-qq",
        "-yy",
        "-s",
        "64",
        "-e",
        "trace=connect,sendto,sendmsg,sendmmsg,write,writev",
        "-o",
    ])
    .arg(&trace)
    .arg(super::support::common::bin());
    env.apply(&mut cmd);
    cmd.env("TMPDIR", &tmp);
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let r = c.call_tool("browser_navigate", json!({"url": pages.url("/form.html")}));
    assert!(!is_error(&r), "{r}");
    assert_eq!(result_json(&r)["title"], "Order form", "{r}");
    let devtools = devtools_port(&tmp);
    let proxy = proxy_port(&tmp);
    // The idle time is the input (Chromium's own background timers, not a
    // deadline of ours to scale): a sleep.
    std::thread::sleep(IDLE);
    let r = c.call_tool("browser_snapshot", json!({}));
    assert!(!is_error(&r), "{r}");
    let st = c.finish(Duration::from_secs(30));
    assert!(st.success(), "{st:?}");

    let text = std::fs::read_to_string(&trace).unwrap();
    let all = connects(&text);
    let mut bad: Vec<String> = all
        .iter()
        .filter(|c| match c.family.as_str() {
            // Local IPC (D-Bus, the zygote, nscd...) and the disconnect of a UDP socket.
            "AF_UNIX" | "AF_NETLINK" | "AF_UNSPEC" => false,
            "AF_INET" | "AF_INET6" => {
                !(matches!(c.addr.as_str(), "127.0.0.1" | "::1" | "::ffff:127.0.0.1")
                    && (c.port == pages.port() || c.port == devtools || c.port == proxy))
                    && !is_route_probe(c)
            }
            _ => true,
        })
        .map(|c| c.line.clone())
        .collect();
    bad.extend(sends_off_loopback(&text));
    assert!(
        all.iter()
            .any(|c| c.port == pages.port() || c.port == devtools),
        "strace recorded no connection at all (is it tracing?):\n{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("sendto(") && l.contains("GET /form.html")),
        "strace recorded no send to the page server (are sends traced?)"
    );
    assert!(
        bad.is_empty(),
        "Chromium (or the server) connected or sent where the page did not ask (page port {}, DevTools port {devtools}, proxy port {proxy}):\n{}",
        pages.port(),
        bad.join("\n")
    );
    let probes = all.iter().filter(|c| is_route_probe(c)).count();
    eprintln!(
        "{} IP connects, {probes} packetless IPv6 route probe(s), no send off loopback",
        all.len()
    );
}

/// The analysis above catches what it must: a TCP connect elsewhere, a UDP
/// connect to any other address or port, and a datagram sent on the probe's
/// (unconnected) socket or to a DNS server.
#[test]
fn the_trace_analysis_refuses_what_is_not_the_page() {
    let trace = r#"7 connect(24<UDPv6:[632321]>, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:4860:4860::8888", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH (Network is unreachable)
7 connect(25<UDPv6:[632322]>, {sa_family=AF_INET6, sin6_port=htons(53), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:4860:4860::8888", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH (Network is unreachable)
7 connect(26<TCPv6:[632323]>, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:4860:4860::8888", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH (Network is unreachable)
7 sendto(21<TCP:[127.0.0.1:58878->127.0.0.1:8765]>, "GET / HTTP/1.1\r\n"..., 654, MSG_NOSIGNAL, NULL, 0) = 654
7 sendto(24<UDPv6:[[::]:39819]>, "\1\2", 2, 0, {sa_family=AF_INET6, sin6_port=htons(443)}, 28) = -1 ENETUNREACH
7 sendmsg(30<UDP:[10.0.0.2:5353->8.8.8.8:53]>, {msg_name=NULL}, 0) = 30
7 write(31<TCPv6:[[::1]:4000->[::1]:8765]>, "x", 1) = 1
"#;
    let all = connects(trace);
    assert_eq!(all.len(), 3);
    assert!(is_route_probe(&all[0]));
    assert!(!is_route_probe(&all[1]), "another port");
    assert!(!is_route_probe(&all[2]), "a TCP socket");
    let sends = sends_off_loopback(trace);
    assert_eq!(sends.len(), 2, "{sends:#?}");
    assert!(sends[0].contains("sendto(24<UDPv6"));
    assert!(sends[1].contains("8.8.8.8:53"));
}
