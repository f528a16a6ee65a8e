//! The one place the browser decides whether a URL may be loaded. Everything
//! else (the first navigation, every redirect hop and every frame's document
//! request intercepted through the CDP `Fetch` domain, `browser_back` targets)
//! calls [`check`]. The rules live in `crate::net` (shared with web_extract);
//! this module only chooses the policy for the browser mode:
//!
//! * local Chromium (ours): private and loopback addresses are allowed, as in
//!   Hermes (the agent already has that machine's network); an explicit
//!   `browser.allow_private_urls: false` turns this off;
//! * attached over CDP (`browser.cdp_url` / `BROWSER_CDP_URL`): the browser
//!   may live elsewhere, so the shared policy applies as configured
//!   (`HERMES_ALLOW_PRIVATE_URLS`, `security.allow_private_urls`, ...).
//!
//! Cloud metadata is blocked in both modes, by name, by literal address and
//! by the addresses a host name resolves to. The website blocklist applies.
//! A launched Chromium connects only through `proxy.rs`, which applies the
//! same policy to every connection (subresources, workers, WebSockets).
//!
//! The browser endpoints we are configured with (`browser.cdp_url` /
//! `BROWSER_CDP_URL`, a cloud provider's CDP URL, what `/json/version`
//! answers) may be loopback or private, never cloud metadata:
//! [`check_endpoint`] checks them and returns the addresses to dial.

use std::net::{IpAddr, SocketAddr};

use url::{Host, Url};

use crate::hermes::Context;
use crate::net::policy::{Blocked, IpClass, Policy, check_url, classify};

/// The browser's URL policy, fixed when the session starts.
#[derive(Debug, Clone)]
pub(crate) struct BrowserPolicy {
    pub(crate) policy: Policy,
    /// A local browser: DNS failures are left to Chromium (fail open for
    /// private/public classification, as Hermes' metadata floor does).
    pub(crate) local: bool,
}

impl BrowserPolicy {
    pub(crate) fn from_context(ctx: &Context, attached: bool) -> Self {
        let mut policy = Policy::from_context(ctx);
        if !attached {
            policy.allow_private = ctx.sections().browser.allow_private_urls.unwrap_or(true);
        }
        BrowserPolicy {
            policy,
            local: !attached,
        }
    }
}

/// A refused URL: the message (Hermes' wording) and, for the website
/// blocklist, Hermes' `blocked_by_policy` object.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    pub(crate) message: String,
    pub(crate) blocked_by_policy: Option<serde_json::Value>,
}

impl From<Blocked> for Refusal {
    fn from(b: Blocked) -> Self {
        let blocked_by_policy = b
            .policy_block()
            .map(|p| serde_json::json!({"host": p.host, "rule": p.rule, "source": p.source}));
        Refusal {
            message: b.to_string(),
            blocked_by_policy,
        }
    }
}

/// URLs the browser itself produces and that never reach the network.
pub(crate) fn is_internal(url: &str) -> bool {
    url == "about:blank"
        || url.starts_with("about:srcdoc")
        || url.starts_with("data:")
        || url.starts_with("blob:")
}

/// Check one URL the browser is about to load as a document.
pub(crate) async fn check(url_str: &str, bp: &BrowserPolicy) -> Result<(), Refusal> {
    if is_internal(url_str) {
        return Ok(());
    }
    let url = Url::parse(url_str).map_err(|e| Refusal {
        message: format!("Blocked: '{url_str}' is not a valid URL ({e})"),
        blocked_by_policy: None,
    })?;
    check_url(&url, &bp.policy)?;
    if let Some(Host::Domain(d)) = url.host() {
        let host = d.trim_end_matches('.').to_ascii_lowercase();
        let scheme = url.scheme().to_string();
        let resolved: std::io::Result<Vec<IpAddr>> = tokio::net::lookup_host((host.clone(), 0))
            .await
            .map(|a| a.map(|a| a.ip()).collect());
        match resolved {
            Ok(ips) => {
                for ip in ips {
                    bp.policy.check_ip(&host, &scheme, ip)?;
                }
            }
            Err(e) if !bp.local => {
                return Err(Blocked::Dns {
                    host,
                    reason: e.to_string(),
                }
                .into());
            }
            Err(_) => {}
        }
    }
    Ok(())
}

/// Why a URL's host stands for no address.
pub(crate) enum NoAddress {
    /// The URL has no host at all.
    NoHost,
    /// The name did not resolve, or to nothing (the text says which).
    Unresolved(String),
}

/// The addresses a URL's host stands for: its literal address, or every
/// address the name resolves to (never empty), with the host as checked
/// (lower case, no trailing dot). Callers check each address and dial only
/// these, so a second lookup cannot answer differently.
pub(crate) async fn host_addrs(url: &Url, port: u16) -> Result<(String, Vec<IpAddr>), NoAddress> {
    let (host, ips) = match url.host() {
        Some(Host::Ipv4(v4)) => (v4.to_string(), vec![IpAddr::V4(v4)]),
        Some(Host::Ipv6(v6)) => (v6.to_string(), vec![IpAddr::V6(v6)]),
        Some(Host::Domain(d)) => {
            let host = d.trim_end_matches('.').to_ascii_lowercase();
            let found = tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| NoAddress::Unresolved(format!("cannot resolve host {host}: {e}")))?
                .map(|a| a.ip())
                .collect();
            (host, found)
        }
        None => return Err(NoAddress::NoHost),
    };
    if ips.is_empty() {
        return Err(NoAddress::Unresolved(format!("cannot resolve host {host}")));
    }
    Ok((host, ips))
}

/// The addresses to dial for `url`: [`host_addrs`], every one passed
/// through `check` (host name, address) before any is returned.
pub(crate) async fn dial_addrs<E>(
    url: &Url,
    port: u16,
    no_address: impl FnOnce(NoAddress) -> E,
    check: impl Fn(&str, IpAddr) -> Result<(), E>,
) -> Result<Vec<SocketAddr>, E> {
    let (host, ips) = host_addrs(url, port).await.map_err(no_address)?;
    for ip in &ips {
        check(&host, *ip)?;
    }
    Ok(ips
        .into_iter()
        .map(|ip| SocketAddr::new(ip, port))
        .collect())
}

/// Check a configured browser endpoint (`http(s)://` DevTools address or
/// `ws(s)://` WebSocket URL) against the metadata rule: its host name, its
/// literal address in any form, and every address the name resolves to.
/// Returns the checked addresses, for the caller to dial and nothing else.
pub(crate) async fn check_endpoint(raw: &str) -> Result<Vec<SocketAddr>, String> {
    let url = Url::parse(raw.trim()).map_err(|e| format!("'{raw}' is not a valid URL ({e})"))?;
    let scheme = match url.scheme() {
        "http" | "ws" => "http",
        "https" | "wss" => "https",
        other => {
            return Err(format!(
                "unsupported scheme '{other}' (use http, https, ws or wss)"
            ));
        }
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let mut as_http = url.clone();
    let _ = as_http.set_scheme(scheme);
    // Loopback and private endpoints are normal here (a DevTools port on this
    // machine or the LAN); cloud metadata never is.
    let floor = Policy {
        allow_private: true,
        ..Policy::default()
    };
    if let Err(b @ Blocked::Metadata { .. }) = check_url(&as_http, &floor) {
        return Err(b.to_string());
    }
    let no_address = |e| match e {
        NoAddress::NoHost => format!("'{raw}' has no host"),
        NoAddress::Unresolved(why) => why,
    };
    dial_addrs(&url, port, no_address, |_, ip| {
        if classify(ip) == IpClass::Metadata {
            return Err(Blocked::Metadata {
                host: url.host_str().unwrap_or_default().to_string(),
            }
            .to_string());
        }
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bp(local: bool, allow_private: bool) -> BrowserPolicy {
        let policy = Policy {
            allow_private,
            ..Policy::default()
        };
        BrowserPolicy { policy, local }
    }

    #[tokio::test]
    async fn metadata_always_blocked_private_per_mode() {
        let local = bp(true, true);
        assert!(check("http://127.0.0.1:8080/x", &local).await.is_ok());
        assert!(check("http://localhost:8080/x", &local).await.is_ok());
        for u in [
            "http://169.254.169.254/latest/meta-data/",
            "http://metadata.google.internal/",
            "http://[::ffff:169.254.169.254]/",
            "http://0xa9fea9fe/",
        ] {
            let r = check(u, &local).await.unwrap_err();
            assert_eq!(r.message, "Blocked: URL targets a cloud metadata endpoint");
        }
        let remote = bp(false, false);
        let r = check("http://127.0.0.1/", &remote).await.unwrap_err();
        assert!(r.message.contains("private or internal"), "{}", r.message);
        assert!(check("file:///etc/passwd", &local).await.is_err());
        assert!(check("about:blank", &remote).await.is_ok());
    }

    #[tokio::test]
    async fn endpoints_may_be_loopback_never_metadata() {
        assert_eq!(
            check_endpoint("http://127.0.0.1:9222").await.unwrap(),
            vec!["127.0.0.1:9222".parse().unwrap()]
        );
        assert!(
            check_endpoint("ws://localhost:9222/devtools/browser/x")
                .await
                .is_ok()
        );
        for u in [
            "http://169.254.169.254:9222",
            "ws://169.254.169.254/devtools/browser/x",
            "http://[::ffff:a9fe:a9fe]:9222",
            "wss://[fd00:ec2::254]/x",
            "ws://metadata.google.internal:9222/",
            "http://100.100.100.200/",
            "http://2852039166:9222/",
        ] {
            let e = check_endpoint(u).await.unwrap_err();
            assert_eq!(e, "Blocked: URL targets a cloud metadata endpoint", "{u}");
        }
        assert!(check_endpoint("file:///x").await.is_err());
    }
}
