//! Is this Nous login entitled to the tool gateway? Decided as Hermes decides
//! it, failing closed on anything unknown.
//!
//! hermes-agent: hermes_cli/nous_account.py (`get_nous_portal_account_info`,
//! `tool_gateway_entitled`, `format_nous_portal_entitlement_message`) and
//! tools/tool_backend_helpers.py (`managed_nous_tools_enabled`,
//! `nous_tool_gateway_unavailable_message`):
//!
//! 1. No `providers.nous.access_token`: a `credential_pool.nous` OAuth entry
//!    (`auth_type` `oauth*` or a refresh token) is used like the login below;
//!    an opaque pool key is "inference key only" (not logged in); else not
//!    logged in.
//! 2. An access token that is a JWT with more than 60 s left: its claims
//!    (`paid_access`, `tool_access.enabled`) decide, with no network.
//! 3. Else the token is refreshed (see [`super::token`]) and `GET
//!    <portal>/api/oauth/account` (Bearer, 8 s) decides:
//!    `paid_service_access.allowed` (else `.paid_access`) or
//!    `tool_access.enabled`. Answers are cached 60 s per token and portal.
//!
//! Entitled = logged in and (paid access is `true` or the tool pool is
//! enabled). The sync probe ([`peek`]) only uses steps 1–2 and the cache;
//! `serve` and `tools` warm the cache first ([`super::prefetch`]).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value};
use sha2::Digest as _;

use super::token;
use crate::auth::nous::{self as nous_auth, text};
use crate::auth::store::{Numeric, ToolAccess};
use crate::hermes::Context;
use crate::lenient;
use crate::net::HttpClient;

/// `_ACCOUNT_INFO_CACHE_TTL`.
const CACHE_TTL: Duration = Duration::from_secs(60);
/// `min_jwt_ttl_seconds`.
const MIN_JWT_TTL: f64 = 60.0;

/// The parts of `NousPortalAccountInfo` the gate and its messages read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct AccountInfo {
    pub logged_in: bool,
    /// `jwt`, `account_api`, `inference_key`, `none`, `error`.
    pub source: &'static str,
    pub fresh: bool,
    pub portal_base_url: Option<String>,
    pub org_slug: Option<String>,
    pub inference_credential_present: bool,
    pub paid_service_access: Option<bool>,
    pub reason: Option<String>,
    pub has_active_subscription: Option<bool>,
    pub active_subscription_is_paid: Option<bool>,
    pub total_usable_credits: Option<f64>,
    pub subscription_credits_remaining: Option<f64>,
    pub purchased_credits_remaining: Option<f64>,
    pub tool_access_enabled: bool,
    pub error: Option<String>,
}

impl AccountInfo {
    /// `tool_gateway_entitled` behind `managed_nous_tools_enabled`'s `logged_in` check.
    pub(crate) fn entitled(&self) -> bool {
        self.logged_in && (self.paid_service_access == Some(true) || self.tool_access_enabled)
    }

    fn not_logged_in(source: &'static str, portal: Option<String>) -> Self {
        AccountInfo {
            source,
            portal_base_url: portal,
            ..Default::default()
        }
    }

    fn error(e: impl Into<String>, logged_in: bool, portal: Option<String>) -> Self {
        AccountInfo {
            logged_in,
            source: "error",
            portal_base_url: portal,
            error: Some(e.into()),
            ..Default::default()
        }
    }

    /// `_info_from_valid_jwt`: `None` unless a JWT with more than 60 s left.
    fn from_jwt(token: &str, portal: Option<String>) -> Option<Self> {
        let claims = nous_auth::jwt_claims(token);
        let exp = claims.exp?.coerce()?;
        if exp <= nous_auth::now() + MIN_JWT_TTL {
            return None;
        }
        Some(AccountInfo {
            logged_in: true,
            source: "jwt",
            portal_base_url: portal,
            inference_credential_present: true,
            paid_service_access: claims.paid_access,
            tool_access_enabled: claims.tool_access.and_then(|t| t.enabled) == Some(true),
            ..Default::default()
        })
    }

    /// `_info_from_account_payload`.
    fn from_account(p: AccountPayload, portal: Option<String>) -> Self {
        let access = p.paid_service_access;
        let a = access.clone().unwrap_or_default();
        AccountInfo {
            logged_in: true,
            source: "account_api",
            fresh: true,
            portal_base_url: portal,
            org_slug: p
                .organisation
                .and_then(|o| o.slug)
                .filter(|s| !s.is_empty()),
            inference_credential_present: true,
            paid_service_access: access.and(a.allowed.or(a.paid_access)),
            reason: a.reason.filter(|s| !s.is_empty()),
            has_active_subscription: a.has_active_subscription,
            active_subscription_is_paid: a.active_subscription_is_paid,
            total_usable_credits: a.total_usable_credits,
            subscription_credits_remaining: a.subscription_credits_remaining,
            purchased_credits_remaining: a.purchased_credits_remaining,
            tool_access_enabled: p.tool_access.and_then(|t| t.enabled) == Some(true),
            error: None,
        }
    }
}

/// The parts of `/api/oauth/account`'s answer the gate reads, each as
/// tolerant as Hermes' `payload.get(...)`: a field of another type reads as
/// absent.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AccountPayload {
    #[serde(deserialize_with = "lenient::obj")]
    organisation: Option<Organisation>,
    #[serde(deserialize_with = "lenient::obj")]
    paid_service_access: Option<PaidServiceAccess>,
    /// `_tool_access_from_value(...).enabled`: only a literal `true` counts.
    #[serde(deserialize_with = "lenient::obj")]
    tool_access: Option<ToolAccess>,
    #[serde(deserialize_with = "lenient::string")]
    error: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Organisation {
    #[serde(deserialize_with = "lenient::string")]
    slug: Option<String>,
}

/// `paid_service_access` (bools are JSON bools; credits as `_coerce_float` reads them).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct PaidServiceAccess {
    #[serde(deserialize_with = "lenient::opt")]
    allowed: Option<bool>,
    #[serde(deserialize_with = "lenient::opt")]
    paid_access: Option<bool>,
    #[serde(deserialize_with = "lenient::string")]
    reason: Option<String>,
    #[serde(deserialize_with = "lenient::opt")]
    has_active_subscription: Option<bool>,
    #[serde(deserialize_with = "lenient::opt")]
    active_subscription_is_paid: Option<bool>,
    #[serde(deserialize_with = "coerce_float")]
    total_usable_credits: Option<f64>,
    #[serde(deserialize_with = "coerce_float")]
    subscription_credits_remaining: Option<f64>,
    #[serde(deserialize_with = "coerce_float")]
    purchased_credits_remaining: Option<f64>,
}

/// `_coerce_float` (bools are not numbers; numeric strings are).
fn coerce_float<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(lenient::opt::<D, Numeric>(d)?.and_then(|n| n.coerce()))
}

/// `_portal_base_url(state)`.
fn portal_of(state: &Map<String, Value>) -> Option<String> {
    text(state, "portal_base_url").map(|s| s.trim_end_matches('/').to_string())
}

type CacheEntry = (String, Instant, AccountInfo);
static CACHE: Mutex<Option<CacheEntry>> = Mutex::new(None);

fn cache_key(token: &str, portal: Option<&str>) -> String {
    let digest = sha2::Sha256::digest(token.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}:{hex}", portal.unwrap_or(""))
}

/// The cached portal answer for this token and portal; `stale` accepts one
/// older than the TTL, or a failed lookup (the cheap probes: a real answer
/// beats "unknown"; Hermes itself never reuses a failure).
fn cached(key: &str, stale: bool) -> Option<AccountInfo> {
    let c = CACHE.lock().ok()?;
    let (k, at, info) = c.as_ref()?;
    let fresh = at.elapsed() < CACHE_TTL && info.source == "account_api";
    (k == key && (stale || fresh)).then(|| info.clone())
}

/// Forget the cached answer (tests; a just-bought subscription).
pub(crate) fn reset_cache() {
    if let Ok(mut c) = CACHE.lock() {
        *c = None;
    }
}

/// The login to judge: `providers.nous`, else the best OAuth pool entry
/// (`_select_nous_pool_entry`); `Err` carries the answer when there is none.
enum Login {
    State(Map<String, Value>),
    Pool(Map<String, Value>),
}

fn login(ctx: &Context) -> Result<(Login, Option<String>), Box<AccountInfo>> {
    let store = nous_auth::load_store(&ctx.home).unwrap_or_default();
    let state = nous_auth::provider_state(&store)
        .cloned()
        .unwrap_or_default();
    let portal = portal_of(&state);
    if text(&state, "access_token").is_some() {
        return Ok((Login::State(state), portal));
    }
    let ts = |e: &Map<String, Value>, k: &str| {
        e.get(k)
            .and_then(Value::as_str)
            .and_then(nous_auth::iso_ts)
            .unwrap_or(0.0)
    };
    let entry = nous_auth::pool_entries(&store).into_iter().max_by(|a, b| {
        let key = |e: &Map<String, Value>| {
            let prio = e.get("priority").and_then(Value::as_i64).unwrap_or(0);
            (ts(e, "agent_key_expires_at"), ts(e, "expires_at"), -prio)
        };
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let Some(e) = entry else {
        return Err(Box::new(AccountInfo::not_logged_in("none", portal)));
    };
    let auth_type = text(e, "auth_type").unwrap_or("").to_ascii_lowercase();
    let oauth = text(e, "access_token").is_some()
        && (auth_type.starts_with("oauth") || text(e, "refresh_token").is_some());
    let entry_portal = portal_of(e).or(portal);
    if oauth {
        return Ok((Login::Pool(e.clone()), entry_portal));
    }
    if text(e, "runtime_api_key")
        .or_else(|| text(e, "access_token"))
        .is_some()
    {
        return Err(Box::new(AccountInfo {
            source: "inference_key",
            portal_base_url: entry_portal,
            inference_credential_present: true,
            error: Some("portal_oauth_missing".into()),
            ..Default::default()
        }));
    }
    Err(Box::new(AccountInfo::not_logged_in("none", entry_portal)))
}

/// The answer without the network: JWT claims or a cached portal answer;
/// `None` when only the portal can tell.
pub(crate) fn peek(ctx: &Context) -> Option<Box<AccountInfo>> {
    let (login, portal) = match login(ctx) {
        Ok(l) => l,
        Err(info) => return Some(info),
    };
    let (Login::State(s) | Login::Pool(s)) = &login;
    let tok = text(s, "access_token").unwrap_or("");
    AccountInfo::from_jwt(tok, portal.clone())
        .or_else(|| cached(&cache_key(tok, portal.as_deref()), true))
        .map(Box::new)
}

/// `get_nous_portal_account_info(force_fresh=…)`.
pub(crate) async fn get(ctx: &Context, http: &HttpClient, force_fresh: bool) -> AccountInfo {
    let (login, portal) = match login(ctx) {
        Ok(l) => l,
        Err(info) => return *info,
    };
    match login {
        Login::Pool(e) => {
            let tok = text(&e, "access_token").unwrap_or("").to_string();
            if !force_fresh && let Some(i) = AccountInfo::from_jwt(&tok, portal.clone()) {
                return i;
            }
            fetch(http, &tok, portal).await
        }
        Login::State(s) => {
            let tok = text(&s, "access_token").unwrap_or("").to_string();
            if !force_fresh && let Some(i) = AccountInfo::from_jwt(&tok, portal.clone()) {
                return i;
            }
            // `_fresh_account_info`: refresh first, then the cache, then the portal.
            let tok = match token::resolve(ctx, http).await {
                Ok(t) => t,
                Err(e) => return AccountInfo::error(e.to_string(), true, portal),
            };
            let refreshed = nous_auth::load_store(&ctx.home);
            let portal = refreshed
                .as_ref()
                .and_then(nous_auth::provider_state)
                .and_then(portal_of)
                .or(portal);
            let key = cache_key(&tok, portal.as_deref());
            if !force_fresh && let Some(i) = cached(&key, false) {
                return i;
            }
            let info = fetch(http, &tok, portal).await;
            if let Ok(mut c) = CACHE.lock() {
                *c = Some((key, Instant::now(), info.clone()));
            }
            info
        }
    }
}

/// `_fetch_nous_account_info` and its error handling.
async fn fetch(http: &HttpClient, tok: &str, portal: Option<String>) -> AccountInfo {
    let base = portal
        .clone()
        .unwrap_or_else(|| token::DEFAULT_PORTAL_URL.into());
    let req = http
        .api()
        .get(format!("{}/api/oauth/account", base.trim_end_matches('/')))
        .timeout(crate::hermes::deadlines::GATEWAY_ACCOUNT.get())
        .bearer_auth(tok)
        .header("Accept", "application/json");
    let resp = match http.send_api("nous-portal", Duration::ZERO, req).await {
        Ok(r) => r,
        Err(e) => return AccountInfo::error(e.to_string(), true, portal),
    };
    if !(200..300).contains(&resp.status) {
        // urllib raises HTTPError for any non-2xx.
        return AccountInfo::error(format!("HTTP Error {}", resp.status), true, portal);
    }
    let payload = match serde_json::from_slice::<Value>(&resp.body) {
        Ok(v) => v,
        Err(e) => return AccountInfo::error(e.to_string(), true, portal),
    };
    if payload.as_object().is_none_or(Map::is_empty) {
        return AccountInfo::error("empty_account_response", true, portal);
    }
    let payload: AccountPayload = lenient::object(&payload);
    if let Some(e) = &payload.error {
        let e = if e.is_empty() {
            "account_response_error"
        } else {
            e
        };
        return AccountInfo::error(e, true, portal);
    }
    AccountInfo::from_account(payload, portal)
}

/// `nous_portal_billing_url`.
fn billing_url(info: Option<&AccountInfo>) -> String {
    let base = info
        .and_then(|i| i.portal_base_url.clone())
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| token::DEFAULT_PORTAL_URL.into());
    format!("{}/billing", base.trim_end_matches('/'))
}

fn credit_detail(i: &AccountInfo) -> String {
    let parts: Vec<String> = [
        ("usable", i.total_usable_credits),
        ("subscription", i.subscription_credits_remaining),
        ("purchased", i.purchased_credits_remaining),
    ]
    .into_iter()
    .filter_map(|(n, v)| v.map(|v| format!("{n} ${v:.2}")))
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// `format_nous_portal_entitlement_message` (no coverage category); `None`
/// when entitled.
pub(crate) fn entitlement_message(info: Option<&AccountInfo>, capability: &str) -> Option<String> {
    let billing = billing_url(info);
    let Some(i) = info else {
        return Some(format!(
            "Hermes could not verify your Nous Portal entitlement, so {capability} is unavailable. Run `hermes model` to refresh your login, or check billing at {billing}."
        ));
    };
    if i.paid_service_access == Some(true) || i.tool_access_enabled {
        return None;
    }
    if !i.logged_in {
        if i.inference_credential_present {
            return Some(format!(
                "Nous inference credentials are configured, but Hermes cannot verify your Nous Portal paid access for {capability}. Log in with `hermes model` to enable Portal-managed features. Billing and credits are managed at {billing}."
            ));
        }
        return Some(format!(
            "Log in to Nous Portal to use {capability}: run `hermes model`. Billing and credits are managed at {billing}."
        ));
    }
    let Some(paid) = i.paid_service_access else {
        let mut d = format!(
            "Hermes could not verify your Nous Portal paid access, so {capability} is unavailable."
        );
        if let Some(e) = &i.error {
            d += &format!(" Account lookup failed: {e}.");
        }
        d += " Run `hermes model` to refresh your session.";
        d += &format!(" Check billing at {billing}.");
        return Some(d);
    };
    if i.reason.as_deref() == Some("account_missing") {
        return Some(format!(
            "Hermes could not find a Nous Portal account or organisation for this login, so {capability} is unavailable. Run `hermes model` to authenticate again; if the problem persists, contact Nous support."
        ));
    }
    if i.reason.as_deref() == Some("no_usable_credits") || !paid {
        let credits = credit_detail(i);
        let mut m = match (i.has_active_subscription, i.active_subscription_is_paid) {
            (Some(true), Some(true)) => format!(
                "Your Nous Portal credits are exhausted{credits}, so {capability} is unavailable. Top up or renew credits at {billing}."
            ),
            (Some(true), Some(false)) => format!(
                "Your current Nous Portal plan does not include paid service access, so {capability} is unavailable. Upgrade or add credits at {billing}."
            ),
            (Some(false), _) => format!(
                "Your Nous Portal account has no active subscription or usable credits{credits}, so {capability} is unavailable. Subscribe or add credits at {billing}."
            ),
            _ => format!(
                "Your Nous Portal account has no usable paid credits{credits}, so {capability} is unavailable. Add credits or update billing at {billing}."
            ),
        };
        if !i.fresh {
            m += " If you recently bought credits, run `hermes model` to refresh Hermes.";
        }
        return Some(m);
    }
    Some(format!(
        "Your Nous Portal account does not currently have paid service access, so {capability} is unavailable. Add credits or update billing at {billing}."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_follow_hermes() {
        let none = AccountInfo::not_logged_in("none", None);
        assert_eq!(
            entitlement_message(Some(&none), "managed FAL image generation").unwrap(),
            "Log in to Nous Portal to use managed FAL image generation: run `hermes model`. Billing and credits are managed at https://portal.nousresearch.com/billing."
        );
        let paid = AccountInfo {
            logged_in: true,
            paid_service_access: Some(true),
            ..Default::default()
        };
        assert!(paid.entitled());
        assert_eq!(entitlement_message(Some(&paid), "x"), None);
        let broke = AccountInfo {
            logged_in: true,
            fresh: true,
            paid_service_access: Some(false),
            has_active_subscription: Some(true),
            active_subscription_is_paid: Some(true),
            total_usable_credits: Some(0.0),
            ..Default::default()
        };
        assert!(!broke.entitled());
        assert_eq!(
            entitlement_message(Some(&broke), "x").unwrap(),
            "Your Nous Portal credits are exhausted (usable $0.00), so x is unavailable. Top up or renew credits at https://portal.nousresearch.com/billing."
        );
        let pool = AccountInfo {
            logged_in: true,
            paid_service_access: Some(false),
            tool_access_enabled: true,
            ..Default::default()
        };
        assert!(pool.entitled());
    }
}
