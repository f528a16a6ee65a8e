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
//! with `Connection: close`, and their answers come back with it (one
//! request per proxied connection: a second request on the same connection
//! would reach the first one's server unchecked). The proxy's own port and
//! the launched Chromium's DevTools port are refused whatever the policy
//! allows (a page reaching DevTools would drive the browser).

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
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
    /// The launched Chromium's DevTools address, once known ([`Self::forbid_devtools`]).
    devtools: Arc<OnceLock<SocketAddr>>,
    task: JoinHandle<()>,
}

impl GuardProxy {
    /// Listen on an ephemeral loopback port and serve until dropped.
    pub(crate) async fn start(policy: BrowserPolicy) -> std::io::Result<GuardProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let devtools = Arc::new(OnceLock::new());
        let forbidden = Forbidden {
            own: addr,
            devtools: devtools.clone(),
        };
        let task = tokio::spawn(serve(listener, policy, forbidden));
        Ok(GuardProxy {
            addr,
            devtools,
            task,
        })
    }

    /// Refuse the DevTools endpoint of the Chromium this proxy serves (its
    /// `ws://127.0.0.1:PORT/…` URL) from now on, whatever the policy allows.
    pub(crate) fn forbid_devtools(&self, ws_url: &str) {
        if let Some(port) = Url::parse(ws_url).ok().and_then(|u| u.port()) {
            let _ = self.devtools.set(SocketAddr::from(([127, 0, 0, 1], port)));
        }
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

/// The listeners no proxied connection may reach: the proxy's own, and the
/// browser's DevTools endpoint.
#[derive(Clone)]
struct Forbidden {
    own: SocketAddr,
    devtools: Arc<OnceLock<SocketAddr>>,
}

impl Forbidden {
    /// Why `a` is refused, if it is.
    fn why(&self, a: SocketAddr) -> Option<&'static str> {
        if is_own(a, self.own) {
            Some("Blocked: the browser's own proxy")
        } else if self.devtools.get().is_some_and(|d| is_own(a, *d)) {
            Some("Blocked: the browser's own DevTools port")
        } else {
            None
        }
    }
}

/// Accept connections; each runs in a task of the set, aborted with it.
async fn serve(listener: TcpListener, policy: BrowserPolicy, own: Forbidden) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            a = listener.accept() => match a {
                Ok((s, _)) => {
                    let policy = policy.clone();
                    let own = own.clone();
                    conns.spawn(async move {
                        if let Err(e) = handle(s, &policy, &own).await {
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
    Ok(read_head_bytes(s, Vec::new())
        .await?
        .map(|(head, rest)| (String::from_utf8_lossy(&head).into_owned(), rest)))
}

/// Read up to the end of an HTTP head (`buf`: bytes already read); returns
/// the head, its blank line included, and any bytes read past it. `None` at
/// the end of the stream or past [`MAX_HEAD`].
async fn read_head_bytes<S: AsyncRead + Unpin>(
    s: &mut S,
    mut buf: Vec<u8>,
) -> std::io::Result<Option<(Vec<u8>, Vec<u8>)>> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok(Some((buf, rest)));
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
    own: &Forbidden,
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
    if let Some(why) = checked.iter().find_map(|a| own.why(*a)) {
        return answer(&mut client, "403 Forbidden", why).await;
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
    let tunnel = if connect {
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
        true
    } else {
        let (head, upgrade) = origin_form(&url, first, lines);
        upstream.write_all(head.as_bytes()).await?;
        upgrade
    };
    upstream.write_all(&rest).await?;
    if tunnel {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        return Ok(());
    }
    // One request: its body goes up, its answer comes down marked `Connection: close`.
    let (mut client_r, mut client_w) = client.split();
    let (mut up_r, mut up_w) = upstream.split();
    let down = relay_answer(&mut up_r, &mut client_w);
    tokio::pin!(down);
    tokio::select! {
        r = &mut down => r?,
        _ = tokio::io::copy(&mut client_r, &mut up_w) => {
            let _ = up_w.shutdown().await;
            down.await?;
        }
    }
    Ok(())
}

/// Copy a server's answer to the client, every head (interim `1xx` ones
/// as they are) with its own connection headers replaced by `Connection:
/// close`, then the body until the server closes; then close the client's side.
async fn relay_answer<R, W>(up: &mut R, client: &mut W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut rest = Vec::new();
    loop {
        let Some((head, more)) = read_head_bytes(up, rest).await? else {
            return Ok(());
        };
        rest = more;
        let interim = head.starts_with(b"HTTP/1.1 1") || head.starts_with(b"HTTP/1.0 1");
        let head = if interim { head } else { closing_head(&head) };
        client.write_all(&head).await?;
        if !interim {
            break;
        }
    }
    client.write_all(&rest).await?;
    tokio::io::copy(up, client).await?;
    client.shutdown().await
}

/// A response head (blank line included) without `Connection`,
/// `Keep-Alive` and `Proxy-Connection`, and with `Connection: close`.
fn closing_head(head: &[u8]) -> Vec<u8> {
    // The status line and the headers, each with its line end.
    let lines = head.strip_suffix(b"\r\n").unwrap_or(head);
    let mut out = Vec::with_capacity(head.len() + 19);
    for (i, line) in lines.split_inclusive(|b| *b == b'\n').enumerate() {
        let name = line.split(|b| *b == b':').next().unwrap_or_default();
        let name = name.trim_ascii();
        let hop = [&b"connection"[..], b"keep-alive", b"proxy-connection"]
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h));
        if i > 0 && hop {
            continue;
        }
        out.extend_from_slice(line);
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out
}

fn host_port(url: &Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or(80)
    )
}

/// The request head as the origin server reads it: origin-form target, no
/// proxy headers, and `Connection: close` unless it is an upgrade (said by
/// the second value).
fn origin_form<'a>(url: &Url, first: &str, lines: impl Iterator<Item = &'a str>) -> (String, bool) {
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
    let head = format!(
        "{method} {path} {version}\r\n{}\r\n\r\n",
        headers.join("\r\n")
    );
    (head, upgrade)
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

    /// `request` sent through `proxy`; everything it answers, up to its close.
    async fn through(proxy: &GuardProxy, request: &str) -> String {
        let mut s = TcpStream::connect(proxy.addr).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
            .await
            .expect("the proxy closes the connection after one answer")
            .unwrap();
        String::from_utf8_lossy(&out).into_owned()
    }

    /// A server answering each connection's request with `answer`, then closing.
    async fn server(answer: &'static str) -> SocketAddr {
        let l = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                let _ = read_head(&mut s).await;
                let _ = s.write_all(answer.as_bytes()).await;
            }
        });
        addr
    }

    #[tokio::test]
    async fn answers_come_back_with_connection_close() {
        let up = server(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nconnection: keep-alive\r\nKeep-Alive: timeout=5\r\nX-Other: 1\r\n\r\nok",
        )
        .await;
        let proxy = GuardProxy::start(local()).await.unwrap();
        let got = through(
            &proxy,
            &format!(
                "GET http://{up}/ HTTP/1.1\r\nHost: {up}\r\nProxy-Connection: keep-alive\r\n\r\n"
            ),
        )
        .await;
        assert_eq!(
            got,
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Other: 1\r\nConnection: close\r\n\r\nok"
        );
    }

    #[tokio::test]
    async fn the_devtools_port_is_refused_even_when_private_addresses_are_allowed() {
        let devtools = server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}").await;
        let other = server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").await;
        let proxy = GuardProxy::start(local()).await.unwrap();
        proxy.forbid_devtools(&format!("ws://{devtools}/devtools/browser/x"));
        let port = devtools.port();
        for request in [
            format!("GET http://{devtools}/json/version HTTP/1.1\r\nHost: {devtools}\r\n\r\n"),
            format!("GET http://localhost:{port}/json HTTP/1.1\r\nHost: localhost\r\n\r\n"),
            format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
            format!("CONNECT [::ffff:127.0.0.1]:{port} HTTP/1.1\r\n\r\n"),
        ] {
            let got = through(&proxy, &request).await;
            assert!(
                got.starts_with("HTTP/1.1 403 Forbidden")
                    && got.ends_with("Blocked: the browser's own DevTools port"),
                "{request}: {got}"
            );
        }
        let got = through(
            &proxy,
            &format!("GET http://{other}/ HTTP/1.1\r\nHost: {other}\r\n\r\n"),
        )
        .await;
        assert!(
            got.starts_with("HTTP/1.1 200 OK") && got.ends_with("ok"),
            "{got}"
        );
    }

    #[test]
    fn requests_go_on_in_origin_form_without_proxy_headers() {
        let url = Url::parse("http://127.0.0.1:9/a/b?c=d").unwrap();
        let head = "GET http://127.0.0.1:9/a/b?c=d HTTP/1.1\r\nHost: 127.0.0.1:9\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*";
        let mut lines = head.split("\r\n");
        let first = lines.next().unwrap();
        assert_eq!(
            origin_form(&url, first, lines).0,
            "GET /a/b?c=d HTTP/1.1\r\nHost: 127.0.0.1:9\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let head =
            "GET http://h/ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket";
        let mut lines = head.split("\r\n");
        let first = lines.next().unwrap();
        let (out, upgrade) = origin_form(&Url::parse("http://h/ws").unwrap(), first, lines);
        assert!(upgrade);
        assert!(
            out.contains("Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n"),
            "{out}"
        );
    }
}
