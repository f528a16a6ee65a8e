//! Browsers this toolset does not launch itself: the vendors behind
//! `browser.cloud_provider` and Camofox.
//!
//! * [`cloud`]: Browserbase, Browser Use and Firecrawl sessions created
//!   through their REST APIs, driven over CDP like a local Chromium;
//! * [`camofox`]: a Camofox server's REST API, which runs every tool itself;
//! * this file: the backend Hermes would run ([`select`]: a CDP override,
//!   Camofox, a cloud provider or local Chromium) and which URLs go to the
//!   local sidecar instead of the cloud ([`url_is_private`]).
//!
//! It owns the vendors' HTTP APIs and credentials. It is separate so that the
//! Chromium rooms never speak a vendor's API, and a vendor is added here
//! without touching them.

pub(crate) mod camofox;
pub(crate) mod cloud;

use std::net::IpAddr;

use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::{IpClass, classify};
use cloud::{Provider, browser_use_direct};

/// The browser backend Hermes would run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Backend {
    /// `BROWSER_CDP_URL` / `browser.cdp_url` (wins over everything).
    Cdp,
    /// `CAMOFOX_URL`: the tools talk to Camofox's REST API (`camofox/`).
    Camofox,
    Cloud(Provider),
    Local,
}

#[derive(Debug, Clone)]
pub(crate) struct Selection {
    pub(crate) backend: Backend,
    pub(crate) why: String,
}

/// Hermes' `_get_cloud_provider()` (explicit config wins even without
/// credentials; unset or unknown → Browser Use, then Browserbase, when their
/// credentials are set; Firecrawl only when named), after the CDP override and
/// Camofox checks that precede it in `browser_navigate`.
pub(crate) fn select(ctx: &Context, cdp_override: bool) -> Selection {
    if cdp_override {
        return Selection {
            backend: Backend::Cdp,
            why: "BROWSER_CDP_URL / browser.cdp_url is set: attach to that browser over CDP".into(),
        };
    }
    if ctx.env.is_set(envvars::CAMOFOX_URL) {
        return Selection {
            backend: Backend::Camofox,
            why: "CAMOFOX_URL is set (Hermes drives Camofox through its REST API)".into(),
        };
    }
    let configured = ctx.sections().browser.cloud_provider.clone();
    if let Some(name) = configured.as_deref() {
        if name == "local" {
            return Selection {
                backend: Backend::Local,
                why: "browser.cloud_provider: local".into(),
            };
        }
        if let Some(p) = Provider::parse(name) {
            return Selection {
                backend: Backend::Cloud(p),
                why: format!("browser.cloud_provider: {name}"),
            };
        }
        tracing::warn!(
            "browser.cloud_provider={name:?} is not a registered browser plugin; falling back to auto-detect"
        );
    }
    for p in [Provider::BrowserUse, Provider::Browserbase] {
        if p.available(ctx) {
            let var = match p {
                Provider::BrowserUse if browser_use_direct(ctx) => "BROWSER_USE_API_KEY is set",
                Provider::BrowserUse => "the Nous tool gateway (browser-use) is ready",
                _ => "BROWSERBASE_API_KEY and BROWSERBASE_PROJECT_ID are set",
            };
            return Selection {
                backend: Backend::Cloud(p),
                why: format!("no browser.cloud_provider; {var} (Hermes' auto-detect)"),
            };
        }
    }
    let why = match configured {
        Some(name) => format!(
            "browser.cloud_provider {name:?} is not a known provider and no cloud credentials are set: local Chromium"
        ),
        None => "no browser.cloud_provider and no cloud credentials: local Chromium".into(),
    };
    Selection {
        backend: Backend::Local,
        why,
    }
}

/// `browser.auto_local_for_private_urls` (default true, Python truthiness).
pub(crate) fn auto_local_for_private_urls(ctx: &Context) -> bool {
    ctx.sections().browser.auto_local_for_private_urls
}

fn ip_is_private(ip: IpAddr) -> bool {
    if let IpAddr::V4(v4) = ip {
        let o = v4.octets();
        // 100.64.0.0/10 (CGNAT), added by Hermes on top of `is_private`.
        if o[0] == 100 && (o[1] & 0xc0) == 64 {
            return true;
        }
    }
    classify(ip) != IpClass::Public
}

/// Hermes' `_url_is_private`: a literal private/loopback/link-local address,
/// `localhost`, `*.localhost`/`*.local`/`*.lan`/`*.internal`, or a name that
/// resolves to such an address. A DNS failure is not private.
pub(crate) async fn url_is_private(url: &str) -> bool {
    let Ok(u) = url::Url::parse(url) else {
        return false;
    };
    let host = match u.host() {
        Some(url::Host::Ipv4(a)) => return ip_is_private(IpAddr::V4(a)),
        Some(url::Host::Ipv6(a)) => return ip_is_private(IpAddr::V6(a)),
        Some(url::Host::Domain(d)) => d.trim_end_matches('.').to_ascii_lowercase(),
        None => return false,
    };
    if host.is_empty() {
        return false;
    }
    if host == "localhost"
        || [".localhost", ".local", ".lan", ".internal"]
            .iter()
            .any(|s| host.ends_with(s))
    {
        return true;
    }
    match tokio::net::lookup_host((host.as_str(), 0)).await {
        Ok(addrs) => addrs.map(|a| a.ip()).any(ip_is_private),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn private_urls_are_recognised_as_hermes_does() {
        for u in [
            "http://127.0.0.1:8080/x",
            "http://10.1.2.3/",
            "http://172.20.0.1/",
            "http://192.168.1.1/",
            "http://100.64.0.1/",
            "http://169.254.1.1/",
            "http://[::1]/",
            "http://[fe80::1]/",
            "http://localhost:3000/",
            "http://app.localhost/",
            "http://printer.local/",
            "http://nas.lan/",
            "http://db.internal/",
        ] {
            assert!(url_is_private(u).await, "{u}");
        }
        for u in [
            "https://93.184.216.34/",
            "https://[2606:4700::1111]/",
            "about:blank",
            "not a url",
        ] {
            assert!(!url_is_private(u).await, "{u}");
        }
    }
}
