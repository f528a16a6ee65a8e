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

use std::net::IpAddr;

use url::{Host, Url};

use crate::hermes::Context;
use crate::net::policy::{Blocked, Policy, check_url};

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
            policy.allow_private = ctx
                .config()
                .bool("browser.allow_private_urls")
                .unwrap_or(true);
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
}
