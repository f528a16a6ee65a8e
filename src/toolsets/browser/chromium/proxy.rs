//! The gate every connection of a launched Chromium goes through: a small
//! HTTP proxy on loopback, in this process, that Chromium is started with
//! (`--proxy-server`, and `--proxy-bypass-list=<-loopback>` so that not even
//! loopback is exempt). Each connection (`CONNECT` tunnels for https, wss and
//! ws; plain `GET http://…` requests, WebSocket upgrades included) is checked
//! with the browser's URL policy (`urlcheck.rs`, rules from
//! `crate::net::policy`, the same as web_extract's) on the host name and on
//! every address it resolves to, and then dialled at exactly those checked
//! addresses: cloud metadata is never reached, private addresses follow the
//! navigation policy, and a name cannot re-resolve somewhere else between
//! the check and the connection.
//!
//! Why a proxy and not CDP's `Fetch` domain for every request: `Fetch` does
//! not see WebSockets at all, must be enabled on every worker and service
//! worker target as it appears (a request sent before that is missed), and
//! pausing every image and script costs a round trip each. Chromium sends
//! every request of every frame, worker, service worker, beacon, preload and
//! redirect hop through its configured proxy, and it resolves no names
//! itself then, so one check at connect time covers the class. `Fetch` stays
//! on for documents only, for the readable refusal `browser_navigate`
//! returns. An attached browser (`browser.cdp_url`, cloud) is not ours to
//! start with a proxy: its documents are checked through `Fetch` as before.
//!
//! A refusal is answered `403` with the policy's reason as the body (for a
//! `CONNECT`, Chromium reports `ERR_TUNNEL_CONNECTION_FAILED`); a target
//! that cannot be resolved or reached, `502`. Plain requests are sent on
//! with `Connection: close` (one request per proxied connection).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use url::Url;

use super::urlcheck::{BrowserPolicy, NoAddress, dial_addrs};

/// A request head larger than this is refused (Chromium's are a few KiB).
const MAX_HEAD: usize = 64 * 1024;
/// How long a connection may stay open without a complete request head.
/// Chromium opens proxy connections ahead of need and keeps idle ones; such
/// a connection is closed without an answer (an answer could be read as the
/// reply to a request sent at that moment).
const HEAD_TIMEOUT: Duration = Duration::from_secs(300);
/// How long dialling the checked addresses may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The running proxy; dropping it stops it and every connection it carries.
pub(crate) struct GuardProxy {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl GuardProxy {
    /// Listen on an ephemeral loopback port and serve until dropped.
    pub(crate) async fn start(policy: BrowserPolicy) -> std::io::Result<GuardProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(serve(listener, policy, addr));
        Ok(GuardProxy { addr, task })
    }

    /// The Chromium flags that send every connection through this proxy.
    pub(crate) fn chromium_flags(&self) -> Vec<String> {
        vec![
            format!("--proxy-server=http://{}", self.addr),
            // Chromium bypasses the proxy for loopback unless told otherwise.
            "--proxy-bypass-list=<-loopback>".into(),
            // WebRTC's UDP (STUN/TURN, peer connections) does not go through
            // an HTTP proxy: without this a page could reach any private
            // address over UDP past the policy.
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp".into(),
        ]
    }
}

impl Drop for GuardProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether `a` reaches the proxy's own listener: its port on loopback, the
/// unspecified address or a v4-mapped loopback (all land on the same socket).
fn is_own(a: SocketAddr, own: SocketAddr) -> bool {
    if a.port() != own.port() {
        return false;
    }
    let ip = match a.ip() {
        std::net::IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(std::net::IpAddr::V6(v6), std::net::IpAddr::V4),
        v4 => v4,
    };
    ip == own.ip() || ip.is_loopback() || ip.is_unspecified()
}

/// Accept connections; each runs in a task of the set, aborted with it.
async fn serve(listener: TcpListener, policy: BrowserPolicy, own: SocketAddr) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            a = listener.accept() => match a {
                Ok((s, _)) => {
                    let policy = policy.clone();
                    conns.spawn(async move {
                        if let Err(e) = handle(s, &policy, own).await {
                            tracing::debug!("browser proxy: {e}");
                        }
                    });
                }
                Err(e) => {
                    tracing::debug!("browser proxy: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

/// Read up to the end of the request head; returns the head and any bytes
/// read past it.
async fn read_head(s: &mut TcpStream) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok(Some((String::from_utf8_lossy(&buf).into_owned(), rest)));
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A plain answer from the proxy itself.
async fn answer(s: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await?;
    s.write_all(body.as_bytes()).await?;
    s.shutdown().await
}

/// One proxied connection.
async fn handle(
    mut client: TcpStream,
    policy: &BrowserPolicy,
    own: SocketAddr,
) -> std::io::Result<()> {
    let read = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await;
    let Ok(Ok(Some((head, rest)))) = read else {
        // Idle, closed, or a head over the limit: close without an answer.
        return Ok(());
    };
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (method, target) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let connect = method.eq_ignore_ascii_case("CONNECT");
    // The URL checked: for a tunnel the scheme is unknown (https, wss or ws);
    // the rules that depend on it (https-only trusted hosts) read it as https
    // only on port 443, as plain http elsewhere.
    let url = if connect {
        let https = target.rsplit_once(':').is_none_or(|(_, p)| p == "443");
        let scheme = if https { "https" } else { "http" };
        Url::parse(&format!("{scheme}://{target}/"))
    } else {
        Url::parse(target)
    };
    let url = match url {
        Ok(u) if u.scheme() == "http" || u.scheme() == "https" || u.scheme() == "ws" => u,
        _ => return answer(&mut client, "400 Bad Request", "not a proxy request").await,
    };
    let checked = match checked_addrs(&url, policy).await {
        Ok(a) => a,
        Err((status, why)) => {
            tracing::info!("browser: refused a connection to {}: {why}", url.as_str());
            return answer(&mut client, status, &why).await;
        }
    };
    if checked.iter().any(|a| is_own(*a, own)) {
        return answer(
            &mut client,
            "403 Forbidden",
            "Blocked: the browser's own proxy",
        )
        .await;
    }
    let dialled = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&checked[..])).await;
    let mut upstream = match dialled {
        Ok(Ok(u)) => u,
        Ok(Err(e)) => {
            let why = format!("cannot connect to {}: {e}", host_port(&url));
            return answer(&mut client, "502 Bad Gateway", &why).await;
        }
        Err(_) => {
            let why = format!(
                "cannot connect to {}: no answer in {}s",
                host_port(&url),
                CONNECT_TIMEOUT.as_secs()
            );
            return answer(&mut client, "504 Gateway Timeout", &why).await;
        }
    };
    if connect {
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
    } else {
        upstream
            .write_all(origin_form(&url, first, lines).as_bytes())
            .await?;
    }
    upstream.write_all(&rest).await?;
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    Ok(())
}

fn host_port(url: &Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or(80)
    )
}

/// The request head as the origin server reads it: origin-form target, no
/// proxy headers, and `Connection: close` unless it is an upgrade.
fn origin_form<'a>(url: &Url, first: &str, lines: impl Iterator<Item = &'a str>) -> String {
    let mut parts = first.splitn(3, ' ');
    let method = parts.next().unwrap_or("GET");
    let version = parts.nth(1).unwrap_or("HTTP/1.1");
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let mut headers: Vec<&str> = lines
        .filter(|l| !l.is_empty())
        .filter(|l| {
            let name = l.split(':').next().unwrap_or_default().trim();
            !name.eq_ignore_ascii_case("proxy-connection")
                && !name.eq_ignore_ascii_case("proxy-authorization")
        })
        .collect();
    let upgrade = headers.iter().any(|l| {
        l.split(':')
            .next()
            .is_some_and(|n| n.trim().eq_ignore_ascii_case("upgrade"))
    });
    if !upgrade {
        headers.retain(|l| {
            !l.split(':')
                .next()
                .is_some_and(|n| n.trim().eq_ignore_ascii_case("connection"))
        });
        headers.push("Connection: close");
    }
    format!(
        "{method} {path} {version}\r\n{}\r\n\r\n",
        headers.join("\r\n")
    )
}

/// The addresses `url`'s host may be dialled at, each checked with the
/// browser's policy; or the status and reason of a refusal.
async fn checked_addrs(
    url: &Url,
    policy: &BrowserPolicy,
) -> Result<Vec<SocketAddr>, (&'static str, String)> {
    let port = url.port_or_known_default().unwrap_or(80);
    // Name rules, literal addresses and the website blocklist first (no I/O).
    let mut as_http = url.clone();
    if as_http.scheme() == "ws" {
        let _ = as_http.set_scheme("http");
    }
    crate::net::check_url(&as_http, &policy.policy)
        .map_err(|b| ("403 Forbidden", b.to_string()))?;
    let no_address = |e| match e {
        NoAddress::NoHost => ("400 Bad Request", "no host".to_string()),
        NoAddress::Unresolved(why) => ("502 Bad Gateway", why),
    };
    let scheme = as_http.scheme().to_string();
    dial_addrs(url, port, no_address, |host, ip| {
        policy
            .policy
            .check_ip(host, &scheme, ip)
            .map_err(|b| ("403 Forbidden", b.to_string()))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Policy;

    #[test]
    fn every_form_of_the_proxys_own_address_is_its_own() {
        let own: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        for a in [
            "127.0.0.1:4000",
            "127.0.0.2:4000",
            "0.0.0.0:4000",
            "[::1]:4000",
            "[::]:4000",
            "[::ffff:127.0.0.1]:4000",
        ] {
            assert!(is_own(a.parse().unwrap(), own), "{a}");
        }
        for a in ["127.0.0.1:4001", "10.0.0.1:4000", "[::ffff:10.0.0.1]:4000"] {
            assert!(!is_own(a.parse().unwrap(), own), "{a}");
        }
    }

    fn local() -> BrowserPolicy {
        BrowserPolicy {
            policy: Policy {
                allow_private: true,
                ..Policy::default()
            },
            local: true,
        }
    }

    #[tokio::test]
    async fn metadata_is_refused_in_every_form_and_loopback_follows_the_policy() {
        for t in [
            "https://169.254.169.254:80/",
            "https://100.100.100.200:443/",
            "https://[fd00:ec2::254]:80/",
            "https://[::ffff:a9fe:a9fe]:80/",
            "https://metadata.google.internal:443/",
            "http://2852039166/latest",
            "ws://169.254.169.254/",
        ] {
            let r = checked_addrs(&Url::parse(t).unwrap(), &local()).await;
            let (status, why) = r.unwrap_err();
            assert_eq!(status, "403 Forbidden", "{t}");
            assert!(why.contains("cloud metadata"), "{t}: {why}");
        }
        let ok = checked_addrs(&Url::parse("http://127.0.0.1:8080/x").unwrap(), &local())
            .await
            .unwrap();
        assert_eq!(ok, vec!["127.0.0.1:8080".parse().unwrap()]);
        let strict = BrowserPolicy {
            policy: Policy::default(),
            local: true,
        };
        let (_, why) = checked_addrs(&Url::parse("http://localhost:8080/").unwrap(), &strict)
            .await
            .unwrap_err();
        assert!(why.contains("private or internal"), "{why}");
    }

    #[test]
    fn requests_go_on_in_origin_form_without_proxy_headers() {
        let url = Url::parse("http://127.0.0.1:9/a/b?c=d").unwrap();
        let head = "GET http://127.0.0.1:9/a/b?c=d HTTP/1.1\r\nHost: 127.0.0.1:9\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*";
        let mut lines = head.split("\r\n");
        let first = lines.next().unwrap();
        assert_eq!(
            origin_form(&url, first, lines),
            "GET /a/b?c=d HTTP/1.1\r\nHost: 127.0.0.1:9\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let head =
            "GET http://h/ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket";
        let mut lines = head.split("\r\n");
        let first = lines.next().unwrap();
        let out = origin_form(&Url::parse("http://h/ws").unwrap(), first, lines);
        assert!(
            out.contains("Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n"),
            "{out}"
        );
    }
}
