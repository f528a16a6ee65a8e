//! The Nous tool gateway: Nous subscribers reach Firecrawl (web), FAL and
//! Krea (images), OpenAI audio (TTS) and Browser Use (cloud browser) through
//! Nous-hosted passthroughs that speak each vendor's own API, authenticated
//! with the Nous Portal access token instead of a vendor key. This module
//! answers "may this login use the gateway, at which origin, with which
//! token"; each toolset then calls its vendor there as it would directly.
//!
//! A layer of its own, below the toolsets that use it (web, image_gen, tts,
//! browser) and the CLI's start-up [`prefetch`]: `gateway` imports `auth`
//! (the Nous login in `auth.json`), `net` (the portal calls) and `hermes`
//! (env, config), nothing above.
//!
//! hermes-agent: tools/managed_tool_gateway.py (`resolve_managed_tool_gateway`,
//! `build_vendor_gateway_url`, `is_managed_tool_gateway_ready`) and
//! tools/tool_backend_helpers.py (`managed_nous_tools_enabled`,
//! `prefers_gateway`).
//!
//! A vendor's gateway is used when the login is entitled ([`account`]), an
//! origin is known and a token is at hand. The origin is
//! `<VENDOR>_GATEWAY_URL` (vendor upper-cased, `-` → `_`), else
//! `TOOL_GATEWAY_SCHEME://<vendor>-gateway.TOOL_GATEWAY_DOMAIN` (defaults
//! `https`, `nousresearch.com`). The token is `TOOL_GATEWAY_USER_TOKEN`, else
//! the Nous login's access token, refreshed when it has under 120 s left
//! ([`token`]). Gateway origins are configured endpoints: they are called like
//! a provider's `base_url` (the cloud-metadata floor applies; loopback is
//! allowed, which tests use).
//!
//! Whether a tool prefers the gateway over a direct key it also has is the
//! tool's `<section>.use_gateway` (read with the config's typed sections,
//! [`crate::hermes::sections`]); each caller applies
//! Hermes' precedence for its vendor.

pub(crate) mod account;
pub(crate) mod token;

use crate::hermes::{Context, envvars};
use crate::net::HttpClient;

pub(crate) use account::{AccountInfo, entitlement_message};

const DEFAULT_DOMAIN: &str = "nousresearch.com";

/// What the providers say when the gateway runs a job (`tools`, `doctor`).
pub(crate) const PROVIDER_LABEL: &str = "nous gateway";

/// A usable gateway for one vendor. The token is not printed by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Gateway {
    pub vendor: &'static str,
    /// Scheme, host and optional port/path, without a trailing `/`.
    pub origin: String,
    token: String,
}

impl Gateway {
    pub(crate) fn token(&self) -> &str {
        &self.token
    }
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("vendor", &self.vendor)
            .field("origin", &self.origin)
            .field("token", &"<redacted>")
            .finish()
    }
}

/// Why no gateway is usable for a vendor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Unavailable {
    /// Not entitled (or not logged in, or unknown without a portal call).
    NotEntitled(Option<Box<AccountInfo>>),
    /// `TOOL_GATEWAY_SCHEME` is neither `http` nor `https`.
    BadScheme,
    /// Entitled, but no token could be read.
    NoToken,
}

impl Unavailable {
    /// A short reason for `tools`/`doctor`.
    pub(crate) fn reason(&self) -> String {
        match self {
            Unavailable::NotEntitled(None) => {
                "Nous login found; tool-gateway entitlement not verified yet".into()
            }
            Unavailable::NotEntitled(Some(i)) if !i.logged_in => "no Nous Portal login".into(),
            Unavailable::NotEntitled(Some(i)) => match &i.error {
                Some(e) => format!("Nous entitlement could not be verified ({e})"),
                None => "the Nous account is not entitled to the tool gateway".into(),
            },
            Unavailable::BadScheme => SCHEME_ERROR.into(),
            Unavailable::NoToken => "no Nous access token".into(),
        }
    }

    /// True when the account was checked and is entitled (only the URL or
    /// token is missing): Hermes words some errors differently then.
    pub(crate) fn entitled(&self) -> bool {
        !matches!(self, Unavailable::NotEntitled(_))
    }
}

const SCHEME_ERROR: &str = "TOOL_GATEWAY_SCHEME must be 'http' or 'https'";

/// `build_vendor_gateway_url(vendor)`.
pub(crate) fn vendor_origin(ctx: &Context, vendor: &str) -> Result<String, Unavailable> {
    let var = format!(
        "{}_GATEWAY_URL",
        vendor.to_ascii_uppercase().replace('-', "_")
    );
    if let Some(u) = ctx
        .env
        .get(&var)
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty())
    {
        return Ok(u);
    }
    let scheme = ctx
        .env
        .get(envvars::TOOL_GATEWAY_SCHEME)
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "https".into());
    if scheme != "http" && scheme != "https" {
        return Err(Unavailable::BadScheme);
    }
    let domain = ctx
        .env
        .get(envvars::TOOL_GATEWAY_DOMAIN)
        .map(|s| s.trim().trim_matches('/').to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_DOMAIN.into());
    Ok(format!("{scheme}://{vendor}-gateway.{domain}"))
}

/// `is_managed_tool_gateway_ready(vendor)`: no network, no refresh. An
/// entitlement only the portal can confirm counts as not ready (fail closed).
pub(crate) fn peek(ctx: &Context, vendor: &'static str) -> Result<Gateway, Unavailable> {
    let info = account::peek(ctx);
    if !info.as_ref().is_some_and(|i| i.entitled()) {
        return Err(Unavailable::NotEntitled(info));
    }
    let origin = vendor_origin(ctx, vendor)?;
    let token = token::peek(ctx).ok_or(Unavailable::NoToken)?;
    Ok(Gateway {
        vendor,
        origin,
        token,
    })
}

/// `resolve_managed_tool_gateway(vendor)` for a real request: entitlement
/// (asking the portal when needed), origin, and a refreshed token.
pub(crate) async fn resolve(
    ctx: &Context,
    http: &HttpClient,
    vendor: &'static str,
) -> Result<Gateway, Unavailable> {
    let info = account::get(ctx, http, false).await;
    if !info.entitled() {
        return Err(Unavailable::NotEntitled(Some(Box::new(info))));
    }
    let origin = vendor_origin(ctx, vendor)?;
    let token = token::read(ctx, http).await.ok_or(Unavailable::NoToken)?;
    Ok(Gateway {
        vendor,
        origin,
        token,
    })
}

/// `managed_nous_tools_enabled()` for a request path (may ask the portal;
/// the answer is cached, so the cheap probes a call then makes — which
/// provider, which route — see it too).
pub(crate) async fn warm(ctx: &Context, http: &HttpClient) -> bool {
    account::get(ctx, http, false).await.entitled()
}

/// `nous_tool_gateway_unavailable_message(capability, force_fresh=…)`.
pub(crate) async fn unavailable_message(
    ctx: &Context,
    http: &HttpClient,
    capability: &str,
    force_fresh: bool,
) -> String {
    if force_fresh {
        account::reset_cache();
    }
    let info = account::get(ctx, http, force_fresh).await;
    entitlement_message(Some(&info), capability).unwrap_or_else(|| {
        format!(
            "{capability} is unavailable. Run `hermes model` to refresh your Nous Portal login and billing status."
        )
    })
}

/// Ask the portal once, when only it can tell, so the cheap probes that
/// choose providers (`tools/list`, `hermes-mcp tools`) see the answer. Runs
/// to completion: a token refresh it starts must store the rotated pair even
/// when nobody waits any longer (callers bound their wait, not this work).
pub async fn prefetch(ctx: &Context) {
    if account::peek(ctx).is_some() {
        return;
    }
    let Ok(http) = HttpClient::with_policy(crate::net::Policy::from_context(ctx)) else {
        return;
    };
    account::get(ctx, &http, false).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::hermes::context::test_ctx as ctx;

    #[test]
    fn origins_like_build_vendor_gateway_url() {
        assert_eq!(
            vendor_origin(&ctx("", &[]), "fal-queue").unwrap(),
            "https://fal-queue-gateway.nousresearch.com"
        );
        let c = ctx(
            "",
            &[
                ("TOOL_GATEWAY_DOMAIN", "/example.org/"),
                ("TOOL_GATEWAY_SCHEME", "HTTP"),
            ],
        );
        assert_eq!(
            vendor_origin(&c, "openai-audio").unwrap(),
            "http://openai-audio-gateway.example.org"
        );
        let c = ctx(
            "",
            &[
                ("OPENAI_AUDIO_GATEWAY_URL", "http://127.0.0.1:9/x/"),
                ("TOOL_GATEWAY_SCHEME", "ftp"),
            ],
        );
        assert_eq!(
            vendor_origin(&c, "openai-audio").unwrap(),
            "http://127.0.0.1:9/x"
        );
        let c = ctx("", &[("TOOL_GATEWAY_SCHEME", "ftp")]);
        assert_eq!(vendor_origin(&c, "krea"), Err(Unavailable::BadScheme));
    }

    #[test]
    fn not_logged_in_is_not_ready_and_token_is_redacted() {
        let e = peek(&ctx("", &[("TOOL_GATEWAY_USER_TOKEN", "t")]), "firecrawl").unwrap_err();
        assert_eq!(e.reason(), "no Nous Portal login");
        let g = Gateway {
            vendor: "krea",
            origin: "o".into(),
            token: "secret".into(),
        };
        assert!(!format!("{g:?}").contains("secret"));
    }
}
