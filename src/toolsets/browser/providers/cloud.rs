//! Cloud browsers: the providers' REST calls to create and release a
//! remote session (which provider runs is chosen in `providers/mod.rs`). The session's CDP endpoint is then
//! driven exactly like a local Chromium (see `session/mod.rs`).
//!
//! hermes-agent: plugins/browser/{browserbase,browser_use,firecrawl}/provider.py
//! (endpoints, headers, bodies, env vars, error texts) and
//! tools/browser_tool.py (`_get_cloud_provider`, `_resolve_cdp_override`,
//! `_navigation_session_key`, `_url_is_private`, `cleanup_browser`).
//!
//! Every base URL can be pointed elsewhere with `browser.<provider>.base_url`
//! in config.yaml (ours; for tests and proxies), then Hermes' env var where it
//! has one (`BROWSERBASE_BASE_URL`, `FIRECRAWL_API_URL`), then the real
//! endpoint. Keys come from the environment or `$HERMES_HOME/.env` and are
//! never logged; the returned CDP URL (it may carry a signing key) is not
//! logged either.
//!
//! Browser Use may also run through the Nous tool gateway (`browser-use`
//! vendor, hermes-agent: plugins/browser/browser_use/provider.py
//! `_get_config_or_none`): a direct `BROWSER_USE_API_KEY` wins unless
//! `browser.use_gateway`; the gateway origin replaces the API base, the Nous
//! token goes in `X-Browser-Use-API-Key`, and the create carries an
//! `X-Idempotency-Key` and `{"timeout": 5, "proxyCountryCode": "us"}`.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::gateway;
use crate::hermes::{Context, deadlines, envvars};
use crate::net::{ApiError, HttpClient};

const BROWSERBASE_URL: &str = "https://api.browserbase.com";
const BROWSER_USE_URL: &str = "https://api.browser-use.com/api/v3";
const FIRECRAWL_URL: &str = "https://api.firecrawl.dev";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provider {
    Browserbase,
    BrowserUse,
    Firecrawl,
}

impl Provider {
    pub(crate) fn key(self) -> &'static str {
        match self {
            Provider::Browserbase => "browserbase",
            Provider::BrowserUse => "browser-use",
            Provider::Firecrawl => "firecrawl",
        }
    }
    /// Hermes' `display_name`.
    pub(crate) fn display(self) -> &'static str {
        match self {
            Provider::Browserbase => "Browserbase",
            Provider::BrowserUse => "Browser Use",
            Provider::Firecrawl => "Firecrawl",
        }
    }
    pub(super) fn parse(s: &str) -> Option<Self> {
        match s {
            "browserbase" => Some(Provider::Browserbase),
            "browser-use" => Some(Provider::BrowserUse),
            "firecrawl" => Some(Provider::Firecrawl),
            _ => None,
        }
    }
    /// The config section holding our `base_url` override.
    fn section(self) -> &'static str {
        match self {
            Provider::Browserbase => "browserbase",
            Provider::BrowserUse => "browser_use",
            Provider::Firecrawl => "firecrawl",
        }
    }
    /// Hermes' `is_available()`.
    pub(super) fn available(self, ctx: &Context) -> bool {
        match self {
            Provider::Browserbase => {
                ctx.env.is_set(envvars::BROWSERBASE_API_KEY)
                    && ctx.env.is_set(envvars::BROWSERBASE_PROJECT_ID)
            }
            Provider::BrowserUse => {
                browser_use_direct(ctx) || gateway::peek(ctx, BU_VENDOR).is_ok()
            }
            Provider::Firecrawl => ctx.env.is_set(envvars::FIRECRAWL_API_KEY),
        }
    }
    fn base_url(self, ctx: &Context) -> String {
        let browser = &ctx.sections().browser;
        let from_cfg = browser.base_url(self.section()).or_else(|| {
            (self == Provider::BrowserUse)
                .then(|| browser.base_url("browser-use"))
                .flatten()
        });
        let from_cfg = from_cfg.map(str::to_string);
        let from_env = match self {
            Provider::Browserbase => ctx.env.get(envvars::BROWSERBASE_BASE_URL),
            Provider::BrowserUse => None,
            Provider::Firecrawl => ctx.env.get(envvars::FIRECRAWL_API_URL),
        };
        let default = match self {
            Provider::Browserbase => BROWSERBASE_URL,
            Provider::BrowserUse => BROWSER_USE_URL,
            Provider::Firecrawl => FIRECRAWL_URL,
        };
        from_cfg
            .or(from_env)
            .unwrap_or_else(|| default.to_string())
            .trim()
            .trim_end_matches('/')
            .to_string()
    }
}

const BU_VENDOR: &str = "browser-use";

/// Browser Use's direct key is used (set, and `browser.use_gateway` is not).
pub(super) fn browser_use_direct(ctx: &Context) -> bool {
    ctx.env.is_set(envvars::BROWSER_USE_API_KEY) && !ctx.sections().browser.use_gateway
}

/// The provider name `tools`/`doctor` show: Browser Use through the Nous tool
/// gateway says so.
pub(crate) fn provider_label(ctx: &Context, p: Provider) -> String {
    if p == Provider::BrowserUse && !browser_use_direct(ctx) {
        return format!("{} ({})", p.key(), gateway::PROVIDER_LABEL);
    }
    p.key().to_string()
}

/// Why [`create`] has no session; the texts are Hermes' provider errors
/// (plugins/browser/*/provider.py `create_session`), shown in the fallback
/// notice.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CreateError {
    #[error(
        "Browserbase requires BROWSERBASE_API_KEY and BROWSERBASE_PROJECT_ID environment variables."
    )]
    BrowserbaseKeys,
    /// No direct key, and the Nous gateway is entitled but not usable.
    #[error(
        "Browser Use requires either a direct BROWSER_USE_API_KEY credential or a managed Browser Use gateway configuration."
    )]
    BrowserUseKeyOrGateway,
    #[error("Browser Use requires a direct BROWSER_USE_API_KEY credential.")]
    BrowserUseKey,
    #[error(
        "FIRECRAWL_API_KEY environment variable is required. Get your key at https://firecrawl.dev"
    )]
    FirecrawlKey,
    #[error("{name} API connection failed: {source}")]
    Connection {
        name: &'static str,
        #[source]
        source: ApiError,
    },
    #[error("Failed to create {what} session: {status} {body}")]
    Refused {
        what: &'static str,
        status: u16,
        body: String,
    },
    #[error("{name} session answer is not JSON: {source}")]
    NotJson {
        name: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("{name} session answer has no \"id\"")]
    NoId { name: &'static str },
    /// `field`: where the provider puts it.
    #[error("{name} session answer has no CDP URL ({field})")]
    NoCdpUrl {
        name: &'static str,
        field: &'static str,
    },
}

/// A live remote session: what its release call needs.
pub(crate) struct CloudSession {
    pub(crate) provider: Provider,
    pub(crate) id: String,
    pub(crate) cdp_url: String,
    /// Features Hermes reports (`features_enabled`), for the log.
    pub(crate) features: Value,
    base_url: String,
    headers: Vec<(&'static str, String)>,
    project_id: Option<String>,
    http: Arc<HttpClient>,
}

fn env(ctx: &Context, name: &str) -> Option<String> {
    ctx.env
        .get(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn flag(ctx: &Context, name: &str, default: bool) -> bool {
    match env(ctx, name) {
        None => default,
        // Hermes: `!= "false"` for default-true flags, `== "true"` otherwise.
        Some(v) if default => !v.eq_ignore_ascii_case("false"),
        Some(v) => v.eq_ignore_ascii_case("true"),
    }
}

async fn send(
    http: &HttpClient,
    provider: Provider,
    method: Method,
    url: &str,
    headers: &[(&'static str, String)],
    body: Option<&Value>,
    timeout: Duration,
) -> Result<(u16, String), ApiError> {
    let mut req = http.api().request(method, url).timeout(timeout);
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    let r = http.send_api(provider.key(), Duration::ZERO, req).await?;
    Ok((r.status, r.text()))
}

fn is_ok(status: u16) -> bool {
    (200..400).contains(&status)
}

/// The create call a provider wants.
struct CreateRequest {
    /// The API base the release goes to (the gateway's origin for a gateway
    /// session).
    base: String,
    url: String,
    headers: Vec<(&'static str, String)>,
    body: Value,
    project_id: Option<String>,
    /// The `X-Idempotency-Key` of a create through the gateway.
    idempotency: Option<String>,
}

/// Browserbase's create (hermes-agent: plugins/browser/browserbase/provider.py):
/// keep-alive and proxies unless turned off, the session timeout and
/// advanced stealth when set.
fn browserbase_request(ctx: &Context, base: String) -> Result<CreateRequest, CreateError> {
    let (Some(key), Some(project)) = (
        env(ctx, envvars::BROWSERBASE_API_KEY),
        env(ctx, envvars::BROWSERBASE_PROJECT_ID),
    ) else {
        return Err(CreateError::BrowserbaseKeys);
    };
    let mut body = json!({"projectId": project});
    if flag(ctx, envvars::BROWSERBASE_KEEP_ALIVE, true) {
        body["keepAlive"] = json!(true);
    }
    if let Some(t) = env(ctx, envvars::BROWSERBASE_SESSION_TIMEOUT) {
        match t.parse::<i64>() {
            Ok(v) if v > 0 => body["timeout"] = json!(v),
            Ok(_) => {}
            Err(_) => tracing::warn!("Invalid BROWSERBASE_SESSION_TIMEOUT value: {t}"),
        }
    }
    if flag(ctx, envvars::BROWSERBASE_PROXIES, true) {
        body["proxies"] = json!(true);
    }
    if flag(ctx, envvars::BROWSERBASE_ADVANCED_STEALTH, false) {
        body["browserSettings"] = json!({"advancedStealth": true});
    }
    Ok(CreateRequest {
        url: format!("{base}/v1/sessions"),
        base,
        headers: vec![
            ("Content-Type", "application/json".to_string()),
            ("X-BB-API-Key", key),
        ],
        body,
        project_id: Some(project),
        idempotency: None,
    })
}

/// Browser Use's create: with the direct key, or through the Nous gateway
/// (its origin, the Nous token, an idempotency key, Hermes' managed body).
async fn browser_use_request(
    ctx: &Context,
    http: &HttpClient,
    base: String,
) -> Result<CreateRequest, CreateError> {
    let headers = |key: String| {
        vec![
            ("Content-Type", "application/json".to_string()),
            ("X-Browser-Use-API-Key", key),
        ]
    };
    if let Some(key) =
        env(ctx, envvars::BROWSER_USE_API_KEY).filter(|_| !ctx.sections().browser.use_gateway)
    {
        return Ok(CreateRequest {
            url: format!("{base}/browsers"),
            base,
            headers: headers(key),
            body: json!({}),
            project_id: None,
            idempotency: None,
        });
    }
    let g = match gateway::resolve(ctx, http, BU_VENDOR).await {
        Ok(g) => g,
        Err(u) if u.entitled() => return Err(CreateError::BrowserUseKeyOrGateway),
        Err(_) => return Err(CreateError::BrowserUseKey),
    };
    let base = g.origin.clone();
    Ok(CreateRequest {
        url: format!("{base}/browsers"),
        base,
        headers: headers(g.token().to_string()),
        body: json!({"timeout": 5, "proxyCountryCode": "us"}),
        project_id: None,
        idempotency: Some(format!(
            "browser-use-session-create:{}",
            uuid::Uuid::new_v4().simple()
        )),
    })
}

/// Firecrawl's create: the session's TTL (`FIRECRAWL_BROWSER_TTL`, 300 s).
fn firecrawl_request(ctx: &Context, base: String) -> Result<CreateRequest, CreateError> {
    let Some(key) = env(ctx, envvars::FIRECRAWL_API_KEY) else {
        return Err(CreateError::FirecrawlKey);
    };
    let ttl = env(ctx, envvars::FIRECRAWL_BROWSER_TTL)
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(300);
    Ok(CreateRequest {
        url: format!("{base}/v2/browser"),
        base,
        headers: vec![
            ("Content-Type", "application/json".to_string()),
            ("Authorization", format!("Bearer {key}")),
        ],
        body: json!({"ttl": ttl}),
        project_id: None,
        idempotency: None,
    })
}

/// POST the create; Browserbase's then goes through Hermes' retries
/// ([`browserbase_retries`]). The status and body of the last answer.
async fn post_create(
    http: &HttpClient,
    provider: Provider,
    req: &mut CreateRequest,
) -> Result<(u16, String), CreateError> {
    let name = provider.display();
    let mut headers = req.headers.clone();
    if let Some(k) = &req.idempotency {
        headers.push(("X-Idempotency-Key", k.clone()));
    }
    let (status, text) = send(
        http,
        provider,
        Method::POST,
        &req.url,
        &headers,
        Some(&req.body),
        deadlines::CLOUD_CREATE.get(),
    )
    .await
    .map_err(|source| CreateError::Connection { name, source })?;
    if provider != Provider::Browserbase {
        return Ok((status, text));
    }
    browserbase_retries(http, req, status, text).await
}

/// Hermes' Browserbase create: on 402 retry without keepAlive, then without
/// proxies (each dropped from `req.body`).
async fn browserbase_retries(
    http: &HttpClient,
    req: &mut CreateRequest,
    mut status: u16,
    mut text: String,
) -> Result<(u16, String), CreateError> {
    let provider = Provider::Browserbase;
    for (field, why) in [
        (
            "keepAlive",
            "keepAlive may require paid plan (402), retrying without it. Sessions may timeout during long operations.",
        ),
        (
            "proxies",
            "Proxies unavailable (402), retrying without proxies. Bot detection may be less effective.",
        ),
    ] {
        if status != 402 || req.body.get(field).is_none() {
            continue;
        }
        tracing::warn!("{why}");
        if let Some(o) = req.body.as_object_mut() {
            o.remove(field);
        }
        (status, text) = send(
            http,
            provider,
            Method::POST,
            &req.url,
            &req.headers,
            Some(&req.body),
            deadlines::CLOUD_CREATE.get(),
        )
        .await
        .map_err(|source| CreateError::Connection {
            name: provider.display(),
            source,
        })?;
    }
    Ok((status, text))
}

/// What the session got, as Hermes reports it (`features_enabled`): for
/// Browserbase read from the body last sent (a field a retry dropped is
/// off), for the others just the provider.
fn features(provider: Provider, body: &Value) -> Value {
    if provider != Provider::Browserbase {
        return json!({provider.section(): true});
    }
    json!({
        "basic_stealth": true,
        "proxies": body.get("proxies").is_some(),
        "advanced_stealth": body.get("browserSettings").is_some(),
        "keep_alive": body.get("keepAlive").is_some(),
        "custom_timeout": body.get("timeout").is_some(),
    })
}

/// The session id and CDP URL in the create's answer (the URL is `None`
/// when the provider's field is missing or empty).
fn read_created(provider: Provider, text: &str) -> Result<(String, Option<String>), CreateError> {
    let name = provider.display();
    let data: Value =
        serde_json::from_str(text).map_err(|source| CreateError::NotJson { name, source })?;
    let id = match data.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(v @ Value::Number(_)) => v.to_string(),
        _ => return Err(CreateError::NoId { name }),
    };
    let cdp_field = |k: &str| {
        data.get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .filter(|s| !s.is_empty())
    };
    let cdp = match provider {
        Provider::Browserbase => cdp_field("connectUrl"),
        Provider::BrowserUse => cdp_field("cdpUrl").or_else(|| cdp_field("connectUrl")),
        Provider::Firecrawl => cdp_field("cdpUrl"),
    };
    Ok((id, cdp))
}

/// `provider.create_session(task_id)`: the REST call and its answer.
pub(crate) async fn create(
    ctx: &Context,
    http: Arc<HttpClient>,
    provider: Provider,
) -> Result<CloudSession, CreateError> {
    let name = provider.display();
    let base = provider.base_url(ctx);
    let mut req = match provider {
        Provider::Browserbase => browserbase_request(ctx, base)?,
        Provider::BrowserUse => browser_use_request(ctx, &http, base).await?,
        Provider::Firecrawl => firecrawl_request(ctx, base)?,
    };
    let (status, text) = post_create(&http, provider, &mut req).await?;
    if !is_ok(status) {
        let what = match provider {
            Provider::Firecrawl => "Firecrawl browser",
            _ => name,
        };
        return Err(CreateError::Refused {
            what,
            status,
            body: text,
        });
    }
    let (id, cdp) = read_created(provider, &text)?;
    let mut session = CloudSession {
        provider,
        id,
        cdp_url: String::new(),
        features: features(provider, &req.body),
        base_url: req.base,
        headers: req.headers,
        project_id: req.project_id,
        http,
    };
    let Some(cdp) = cdp else {
        // Created but unusable: give it back before reporting.
        session.release().await;
        return Err(CreateError::NoCdpUrl {
            name,
            field: match provider {
                Provider::Browserbase => "connectUrl",
                Provider::BrowserUse => "cdpUrl/connectUrl",
                Provider::Firecrawl => "cdpUrl",
            },
        });
    };
    session.cdp_url = resolve_cdp_url(&session.http, &cdp).await;
    tracing::info!(
        "browser: created {name} session {} with features: {}",
        session.id,
        session.features
    );
    Ok(session)
}

/// Hermes' `_resolve_cdp_override`: a browser websocket URL as is; an HTTP
/// discovery endpoint (or a bare `ws://host:port`) resolved through
/// `/json/version`'s `webSocketDebuggerUrl`; the raw URL when that fails.
pub(crate) async fn resolve_cdp_url(http: &HttpClient, raw: &str) -> String {
    let raw = raw.trim();
    let lower = raw.to_ascii_lowercase();
    if raw.is_empty() || lower.contains("/devtools/browser/") {
        return raw.to_string();
    }
    let mut discovery = raw.to_string();
    if lower.starts_with("ws://") || lower.starts_with("wss://") {
        let rest = raw.split_once("://").map(|x| x.1).unwrap_or_default();
        let bare = rest
            .trim_end_matches('/')
            .rsplit_once(':')
            .is_some_and(|(h, p)| !h.contains('/') && p.parse::<u16>().is_ok());
        if !bare {
            return raw.to_string();
        }
        let scheme = if lower.starts_with("ws://") {
            "http"
        } else {
            "https"
        };
        discovery = format!("{scheme}://{rest}");
    }
    let version = if discovery.to_ascii_lowercase().ends_with("/json/version") {
        discovery
    } else {
        format!("{}/json/version", discovery.trim_end_matches('/'))
    };
    let got = http
        .send_api(
            "cdp-discovery",
            Duration::ZERO,
            http.api().get(&version).timeout(Duration::from_secs(10)),
        )
        .await;
    match got {
        Ok(r) if is_ok(r.status) => r
            .json()
            .ok()
            .and_then(|v| {
                v.get("webSocketDebuggerUrl")
                    .and_then(Value::as_str)
                    .map(|s| s.trim().to_string())
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| {
                tracing::warn!(
                    "CDP discovery did not return webSocketDebuggerUrl; using raw endpoint"
                );
                raw.to_string()
            }),
        Ok(r) => {
            tracing::warn!("Failed to resolve CDP endpoint: HTTP {}", r.status);
            raw.to_string()
        }
        Err(e) => {
            tracing::warn!("Failed to resolve CDP endpoint: {e}");
            raw.to_string()
        }
    }
}

impl CloudSession {
    /// `provider.close_session(id)`: release the remote browser. Never fails;
    /// a refusal is logged as Hermes logs it.
    pub(crate) async fn release(&self) {
        let name = self.provider.display();
        let (method, url, body) = match self.provider {
            Provider::Browserbase => (
                Method::POST,
                format!("{}/v1/sessions/{}", self.base_url, self.id),
                Some(json!({"projectId": self.project_id, "status": "REQUEST_RELEASE"})),
            ),
            Provider::BrowserUse => (
                Method::PATCH,
                format!("{}/browsers/{}", self.base_url, self.id),
                Some(json!({"action": "stop"})),
            ),
            Provider::Firecrawl => (
                Method::DELETE,
                format!("{}/v2/browser/{}", self.base_url, self.id),
                None,
            ),
        };
        match send(
            &self.http,
            self.provider,
            method,
            &url,
            &self.headers,
            body.as_ref(),
            deadlines::CLOUD_RELEASE.get(),
        )
        .await
        {
            Ok((200 | 201 | 204, _)) => {
                tracing::info!("browser: closed {name} session {}", self.id);
            }
            Ok((status, text)) => {
                let text: String = text.chars().take(200).collect();
                tracing::warn!(
                    "Failed to close {name} session {}: HTTP {status} - {text}",
                    self.id
                );
            }
            Err(e) => tracing::error!("Exception closing {name} session {}: {e}", self.id),
        }
    }
}
