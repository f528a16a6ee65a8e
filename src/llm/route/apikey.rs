//! Credentials, endpoint, model, headers and wire for one of Hermes' API-key
//! providers (hermes-agent: agent/auxiliary_client.py `resolve_provider_client`,
//! its `auth_type == "api_key"` branch, and `_try_anthropic`;
//! hermes_cli/auth.py `resolve_api_key_provider_credentials`).
//!
//! Deviations, each so a loopback stand-in or a proxy works:
//! * an explicit base URL (`auxiliary.vision.base_url`) is honoured for
//!   `anthropic` (Hermes' `_try_anthropic` ignores it) and decides the wire
//!   (Hermes decides Anthropic-vs-OpenAI from the provider's own URL);
//! * a base URL for `anthropic` is treated as Anthropic itself (OAuth
//!   tokens keep their Bearer/Claude Code identity), and a base for `minimax`
//!   / `minimax-cn` as MiniMax's (Bearer, MiniMax's betas), where Hermes
//!   matches the exact public hosts;
//! * a base whose path ends in `/v1beta` (not `/openai`) speaks Gemini's
//!   native API, besides Hermes' generativelanguage.googleapis.com rule;
//! * Z.AI's endpoint is `GLM_BASE_URL`, else the one Hermes detected and
//!   cached in auth.json, else the default: no probing;
//! * Anthropic tokens: `ANTHROPIC_TOKEN`, `CLAUDE_CODE_OAUTH_TOKEN` (either
//!   yielding to a valid, refreshable Claude Code sign-in), Claude Code's
//!   `~/.claude/.credentials.json` while valid (never refreshed here, and
//!   not the macOS keychain), the credential pool in auth.json,
//!   `ANTHROPIC_API_KEY`.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::providers::{self, ApiKeyProvider};
use crate::auth::store as auth_store;
use crate::hermes::{Context, envvars};
use crate::llm::endpoint::Unusable;
use crate::llm::provider::Provider;
use crate::llm::wire::{AnthropicAuth, Wire};

/// What a vision call to an API-key provider needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Endpoint {
    pub base_url: String,
    pub api_key: String,
    pub model: String,
    pub wire: Wire,
    pub headers: Vec<(String, String)>,
}

/// hermes_cli/auth.py `has_usable_secret`.
fn usable(v: &str) -> bool {
    const PLACEHOLDERS: [&str; 12] = [
        "*",
        "**",
        "***",
        "changeme",
        "your_api_key",
        "your_api_key_here",
        "your-api-key",
        "placeholder",
        "example",
        "dummy",
        "null",
        "none",
    ];
    let v = v.trim();
    v.chars().count() >= 4 && !PLACEHOLDERS.contains(&v.to_ascii_lowercase().as_str())
}

fn trimmed(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty())
}

fn auth_json(ctx: &Context) -> Option<Value> {
    auth_store::load(&auth_store::path(&ctx.home.path))
        .ok()
        .and_then(|s| s.to_value().ok())
}

/// The pool entries of `provider` in auth.json (`credential_pool.<p>`) that
/// Hermes' pool would hand out: by `priority`, without `dead` ones or
/// `exhausted` ones still cooling down.
fn pool_entries(ctx: &Context, provider: &str) -> Vec<Value> {
    let now = auth_store::now();
    let mut v: Vec<(i64, Value)> = auth_json(ctx)
        .and_then(|v| v.pointer(&format!("/credential_pool/{provider}")).cloned())
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| {
            let p: auth_store::PoolEntry = serde_json::from_value(e.clone()).ok()?;
            (p.well_formed() && p.status_ok(now)).then_some((p.priority(), e))
        })
        .collect();
    v.sort_by_key(|(p, _)| *p);
    v.into_iter().map(|(_, e)| e).collect()
}

fn entry_str(e: &Value, k: &str) -> Option<String> {
    e.get(k)
        .and_then(Value::as_str)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// `_resolve_api_key_provider_secret`: the key variables in order, then the
/// first usable pool entry's token.
fn secret(ctx: &Context, p: &ApiKeyProvider) -> Option<String> {
    p.key_vars
        .iter()
        .filter_map(|v| ctx.env.get(v))
        .map(|v| v.trim().to_string())
        .find(|v| usable(v))
        .or_else(|| {
            pool_entries(ctx, p.name).iter().find_map(|e| {
                entry_str(e, "access_token")
                    .or_else(|| entry_str(e, "runtime_api_key"))
                    .filter(|k| usable(k))
            })
        })
}

/// What is missing when `provider` has no key, for the "why" texts.
pub(crate) fn missing_key(provider: &Provider) -> String {
    match provider {
        Provider::Anthropic => "no Anthropic credentials: set ANTHROPIC_API_KEY or ANTHROPIC_TOKEN in ~/.hermes/.env (or sign in with hermes auth)".into(),
        _ => match providers::api_key_provider(provider.as_str()) {
            Some(p) => format!("{} not set in ~/.hermes/.env", p.key_vars.join(" / ")),
            None => "no credentials found".into(),
        },
    }
}

/// `_to_openai_base_url`: an Anthropic-style base as its OpenAI twin.
pub(crate) fn to_openai_base_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    if let Some(stem) = url.strip_suffix("/anthropic") {
        if url.contains("bigmodel") {
            return format!("{stem}/paas/v4");
        }
        return format!("{stem}/v1");
    }
    if url.contains("api.kimi.com") && url.ends_with("/coding") {
        return format!("{url}/v1");
    }
    url.to_string()
}

fn host(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
        })
        .unwrap_or_default()
}

fn host_matches(url: &str, domain: &str) -> bool {
    let h = host(url);
    h == domain || h.ends_with(&format!(".{domain}"))
}

/// `_endpoint_speaks_anthropic_messages`.
pub(crate) fn speaks_anthropic(base: &str) -> bool {
    let b = base.trim().trim_end_matches('/').to_ascii_lowercase();
    if b.is_empty() {
        return false;
    }
    let path = url::Url::parse(&b)
        .map(|u| u.path().trim_end_matches('/').to_string())
        .unwrap_or_default();
    path.ends_with("/anthropic")
        || path.ends_with("/anthropic/v1")
        || host(&b) == "api.anthropic.com"
        || (host(&b) == "api.kimi.com" && b.contains("/coding"))
}

/// Gemini's native API: Hermes' `is_native_gemini_base_url`, or (ours) a
/// base whose path ends in `/v1beta`.
pub(crate) fn is_native_gemini(base: &str) -> bool {
    let b = base.trim().trim_end_matches('/').to_ascii_lowercase();
    if b.is_empty() || b.ends_with("/openai") {
        return false;
    }
    b.contains("generativelanguage.googleapis.com") || b.ends_with("/v1beta")
}

/// agent/anthropic_adapter.py `_is_oauth_token`.
pub(crate) fn is_oauth_token(key: &str) -> bool {
    !key.starts_with("sk-ant-api")
        && (key.starts_with("sk-ant-") || key.starts_with("eyJ") || key.starts_with("cc-"))
}

/// `build_anthropic_client`'s choice of auth for `base` (see the module
/// docs for the `anthropic` / `minimax` stand-in rule).
pub(crate) fn anthropic_auth(
    provider: &Provider,
    base: &str,
    key: &str,
    system_prompt: bool,
) -> AnthropicAuth {
    let b = base.trim().trim_end_matches('/').to_ascii_lowercase();
    let minimax = b.starts_with("https://api.minimax.io/anthropic")
        || b.starts_with("https://api.minimaxi.com/anthropic")
        || matches!(provider, Provider::MiniMax | Provider::MiniMaxCn);
    if b.starts_with("https://api.kimi.com/coding") {
        AnthropicAuth::KimiCoding
    } else if minimax || b.contains("azure.com") || host_matches(&b, "palantirfoundry.com") {
        AnthropicAuth::Bearer { minimax }
    } else if *provider != Provider::Anthropic && !b.is_empty() && !b.contains("anthropic.com") {
        // `_is_third_party_anthropic_endpoint`: their own keys, x-api-key.
        AnthropicAuth::ApiKey
    } else if is_oauth_token(key) {
        AnthropicAuth::OAuth { system_prompt }
    } else {
        AnthropicAuth::ApiKey
    }
}

/// The Z.AI endpoint Hermes detected for this key (auth.json
/// `providers.zai.detected_endpoint`, keyed by the key's hash).
fn zai_cached(ctx: &Context, key: &str) -> Option<String> {
    let v = auth_json(ctx)?;
    let d = v.pointer("/providers/zai/detected_endpoint")?;
    let hash = Sha256::digest(key.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    (d.get("key_hash")?.as_str()? == &hex[..16])
        .then(|| trimmed(entry_str(d, "base_url")))
        .flatten()
}

/// `_normalize_lmstudio_runtime_base_url`.
fn lmstudio_base(url: &str) -> String {
    let mut root = url.trim().trim_end_matches('/').to_string();
    for suffix in ["/api/v1", "/api", "/v1"] {
        if let Some(r) = root.strip_suffix(suffix) {
            root = r.trim_end_matches('/').to_string();
            break;
        }
    }
    if root.is_empty() {
        root = "http://127.0.0.1:1234".into();
    }
    format!("{root}/v1")
}

/// `model.default_headers` merged with `model.extra_headers` (the latter
/// wins), applied over the provider's headers (`_apply_user_default_headers`).
fn user_headers(ctx: &Context, headers: &mut Vec<(String, String)>) {
    for (k, v) in &ctx.sections().model.headers {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(k));
        headers.push((k.clone(), v.clone()));
    }
}

/// `model.default` (or `model: <string>`).
fn main_model(ctx: &Context) -> Option<String> {
    ctx.sections().model.default.clone()
}

/// The client for API-key provider `name` (already normalized): `Err` says
/// why it cannot run (no key, no model, not a known provider).
pub(crate) fn endpoint(
    ctx: &Context,
    name: &Provider,
    model: Option<String>,
    explicit_base: Option<String>,
    explicit_key: Option<String>,
) -> Result<Endpoint, Unusable> {
    if *name == Provider::Anthropic {
        return anthropic(ctx, model, explicit_base, explicit_key);
    }
    let p = providers::api_key_provider(name.as_str())
        .ok_or_else(|| format!("{name} is not one of Hermes' API-key providers"))?;
    // The table's own name (a registry alias resolves to it).
    let id = Provider::parse(p.name);
    let key = explicit_key
        .filter(|k| !k.trim().is_empty())
        .or_else(|| secret(ctx, p))
        .or_else(|| {
            (id == Provider::LmStudio).then(|| providers::LMSTUDIO_NOAUTH_PLACEHOLDER.into())
        })
        .ok_or_else(|| missing_key(&id))?;
    let env_base = trimmed(p.base_url_var.and_then(|v| ctx.env.get(v)));
    let mut raw = match id {
        Provider::KimiCoding | Provider::KimiCodingCn => env_base.unwrap_or_else(|| {
            if key.starts_with("sk-kimi-") {
                providers::KIMI_CODE_BASE_URL.into()
            } else {
                p.base_url.into()
            }
        }),
        Provider::Zai => env_base
            .or_else(|| zai_cached(ctx, &key))
            .unwrap_or_else(|| p.base_url.into()),
        _ => env_base.unwrap_or_else(|| p.base_url.into()),
    };
    if id == Provider::LmStudio {
        raw = lmstudio_base(&raw);
    }
    let explicit = trimmed(explicit_base);
    let wire_base = explicit.clone().unwrap_or_else(|| raw.clone());
    let base = to_openai_base_url(&wire_base);
    let model = model
        .filter(|m| !m.trim().is_empty())
        .or_else(|| (!p.aux_model.is_empty()).then(|| p.aux_model.to_string()))
        // resolve_provider_client: "then provider-scoped aux model, then main model".
        .or_else(|| main_model(ctx))
        .ok_or_else(|| {
            format!(
                "{} has no default auxiliary model: set auxiliary.vision.model",
                p.name
            )
        })?;

    if id == Provider::Gemini && is_native_gemini(&base) {
        let bare = ["google/", "gemini/"]
            .iter()
            .find_map(|pre| {
                (model.len() > pre.len()
                    && model
                        .get(..pre.len())
                        .is_some_and(|p| p.eq_ignore_ascii_case(pre)))
                .then(|| model[pre.len()..].trim().to_string())
            })
            .unwrap_or(model);
        return Ok(Endpoint {
            base_url: base,
            api_key: key,
            model: bare,
            wire: Wire::Gemini,
            headers: Vec::new(),
        });
    }
    if speaks_anthropic(&wire_base) {
        // `_maybe_wrap_anthropic`: a fresh Anthropic client, no extra headers.
        return Ok(Endpoint {
            wire: Wire::Anthropic(anthropic_auth(&id, &wire_base, &key, false)),
            base_url: wire_base,
            api_key: key,
            model,
            headers: Vec::new(),
        });
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    if host_matches(&base, "api.kimi.com") {
        headers.push(("User-Agent".into(), "claude-code/0.1.0".into()));
    } else if host_matches(&base, "integrate.api.nvidia.com") {
        headers.push(("X-BILLING-INVOKE-ORIGIN".into(), "HermesAgent".into()));
    } else {
        headers.extend(
            p.headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
    }
    user_headers(ctx, &mut headers);
    Ok(Endpoint {
        base_url: base,
        api_key: key,
        model,
        wire: Wire::OpenAi,
        headers,
    })
}

/// `_try_anthropic` + `resolve_anthropic_token`.
fn anthropic(
    ctx: &Context,
    model: Option<String>,
    explicit_base: Option<String>,
    explicit_key: Option<String>,
) -> Result<Endpoint, Unusable> {
    let env = |v: &str| trimmed(ctx.env.get(v));
    let pooled = || {
        pool_entries(ctx, Provider::Anthropic.as_str())
            .iter()
            .find_map(|e| {
                let tok =
                    entry_str(e, "access_token").or_else(|| entry_str(e, "runtime_api_key"))?;
                let base = trimmed(
                    entry_str(e, "runtime_base_url")
                        .or_else(|| entry_str(e, "inference_base_url"))
                        .or_else(|| entry_str(e, "base_url")),
                );
                Some((tok, base))
            })
    };
    // `resolve_anthropic_token`: a static OAuth token in the environment
    // yields to Claude Code's own sign-in when that is valid and refreshable.
    let claude = crate::auth::claude::sign_in(ctx);
    let prefer_claude = |t: String| match &claude {
        Some(c) if is_oauth_token(&t) && c.refreshable && c.token != t => c.token.clone(),
        _ => t,
    };
    let (token, pool_base) = match explicit_key.filter(|k| !k.trim().is_empty()) {
        Some(k) => (k, None),
        None => env(envvars::ANTHROPIC_TOKEN)
            .or_else(|| env(envvars::CLAUDE_CODE_OAUTH_TOKEN))
            .map(prefer_claude)
            .or_else(|| claude.as_ref().map(|c| c.token.clone()))
            .map(|t| (t, None))
            .or_else(pooled)
            .or_else(|| env(envvars::ANTHROPIC_API_KEY).map(|t| (t, None)))
            .ok_or_else(|| missing_key(&Provider::Anthropic))?,
    };
    let mut base = pool_base.unwrap_or_else(|| "https://api.anthropic.com".into());
    let main = &ctx.sections().model;
    if main
        .provider
        .as_deref()
        .is_some_and(|p| Provider::parse(&p.trim().to_ascii_lowercase()) == Provider::Anthropic)
        && let Some(b) = trimmed(main.base_url.clone())
        && host(&b) == "api.anthropic.com"
    {
        base = b;
    }
    if let Some(b) = trimmed(explicit_base) {
        base = b;
    }
    let model = model
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| "claude-haiku-4-5-20251001".into());
    let oauth = is_oauth_token(&token);
    Ok(Endpoint {
        wire: Wire::Anthropic(anthropic_auth(&Provider::Anthropic, &base, &token, oauth)),
        base_url: base,
        api_key: token,
        model,
        headers: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::{Env, HermesConfig, HermesHome};

    use crate::hermes::context::test_ctx as ctx;

    /// The host-based rules loopback tests cannot reach.
    #[test]
    fn endpoints_at_the_real_hosts() {
        let e = |p: &str, env: &[(&str, &str)]| {
            endpoint(&ctx("", env), &Provider::parse(p), None, None, None)
        };
        let n = e("nvidia", &[("NVIDIA_API_KEY", "nv-key")]).unwrap_err();
        assert!(n.0.contains("auxiliary.vision.model"), "{n}");
        let n = endpoint(
            &ctx("model:\n  default: m\n", &[("NVIDIA_API_KEY", "nv-key")]),
            &Provider::Nvidia,
            None,
            None,
            None,
        )
        .unwrap();
        assert_eq!(n.base_url, "https://integrate.api.nvidia.com/v1");
        assert_eq!(
            n.headers,
            vec![(
                "X-BILLING-INVOKE-ORIGIN".to_string(),
                "HermesAgent".to_string()
            )]
        );
        // sk-kimi- keys: Kimi Code's Anthropic wire with Claude Code's UA.
        let k = e("kimi-coding", &[("KIMI_API_KEY", "sk-kimi-abc")]).unwrap();
        assert_eq!(
            (k.base_url.as_str(), k.wire),
            (
                "https://api.kimi.com/coding",
                Wire::Anthropic(AnthropicAuth::KimiCoding)
            )
        );
        let k = e("kimi-coding", &[("KIMI_API_KEY", "sk-other")]).unwrap();
        assert_eq!(
            (k.base_url.as_str(), k.wire),
            ("https://api.moonshot.ai/v1", Wire::OpenAi)
        );
        let m = e("minimax", &[("MINIMAX_API_KEY", "mm-key")]).unwrap();
        assert_eq!(m.base_url, "https://api.minimax.io/anthropic");
        assert_eq!(
            m.wire,
            Wire::Anthropic(AnthropicAuth::Bearer { minimax: true })
        );
        assert_eq!(m.model, "MiniMax-M3");
        let g = e("gemini", &[("GEMINI_API_KEY", "g-key")]).unwrap();
        assert_eq!(
            (g.wire, g.model.as_str()),
            (Wire::Gemini, "gemini-3.5-flash")
        );
        let g = e(
            "gemini",
            &[
                ("GEMINI_API_KEY", "g-key"),
                (
                    "GEMINI_BASE_URL",
                    "https://generativelanguage.googleapis.com/v1beta/openai",
                ),
            ],
        )
        .unwrap();
        assert_eq!(g.wire, Wire::OpenAi);
        let a = e(
            "anthropic",
            &[
                ("ANTHROPIC_API_KEY", "sk-ant-api03-k"),
                ("ANTHROPIC_TOKEN", "sk-ant-oat01-t"),
            ],
        )
        .unwrap();
        assert_eq!(
            (a.api_key.as_str(), a.base_url.as_str()),
            ("sk-ant-oat01-t", "https://api.anthropic.com")
        );
        assert_eq!(
            a.wire,
            Wire::Anthropic(AnthropicAuth::OAuth {
                system_prompt: true
            })
        );
        let l = e("lmstudio", &[]).unwrap_err();
        assert!(l.0.contains("auxiliary.vision.model"), "{l}");
        assert!(
            e("deepseek", &[("DEEPSEEK_API_KEY", "dummy")])
                .unwrap_err()
                .0
                .contains("DEEPSEEK_API_KEY")
        );
        // model.default_headers over the profile's.
        let c = ctx(
            "model:\n  default_headers: {User-Agent: mine}\n",
            &[("GMI_API_KEY", "gmi-key")],
        );
        let g = endpoint(&c, &Provider::parse("gmi"), None, None, None).unwrap();
        assert_eq!(
            g.headers,
            vec![("User-Agent".to_string(), "mine".to_string())]
        );
    }

    #[test]
    fn url_rules() {
        assert_eq!(
            to_openai_base_url("https://api.minimax.io/anthropic/"),
            "https://api.minimax.io/v1"
        );
        assert_eq!(
            to_openai_base_url("https://open.bigmodel.cn/api/anthropic"),
            "https://open.bigmodel.cn/api/paas/v4"
        );
        assert_eq!(
            to_openai_base_url("https://api.kimi.com/coding"),
            "https://api.kimi.com/coding/v1"
        );
        assert!(speaks_anthropic("https://api.minimax.io/anthropic"));
        assert!(speaks_anthropic("https://api.kimi.com/coding/v1"));
        assert!(!speaks_anthropic("https://api.moonshot.ai/v1"));
        assert!(is_native_gemini(
            "https://generativelanguage.googleapis.com/v1beta"
        ));
        assert!(!is_native_gemini(
            "https://generativelanguage.googleapis.com/v1beta/openai/"
        ));
        assert!(is_native_gemini("http://127.0.0.1:9/v1beta"));
        assert!(!is_native_gemini("http://127.0.0.1:9/v1"));
        assert_eq!(lmstudio_base("http://h:1234/api/v1"), "http://h:1234/v1");
        assert!(usable("abcd") && !usable("dummy") && !usable("abc"));
    }

    #[test]
    fn anthropic_auth_styles() {
        use AnthropicAuth::*;
        let a = "https://api.anthropic.com";
        assert_eq!(
            anthropic_auth(&Provider::Anthropic, a, "sk-ant-api03-x", true),
            ApiKey
        );
        assert_eq!(
            anthropic_auth(&Provider::Anthropic, a, "sk-ant-oat01-x", true),
            OAuth {
                system_prompt: true
            }
        );
        assert_eq!(
            anthropic_auth(
                &Provider::MiniMax,
                "https://api.minimax.io/anthropic",
                "k",
                false
            ),
            Bearer { minimax: true }
        );
        // A third-party gateway keeps x-api-key even for an OAuth-shaped key.
        assert_eq!(
            anthropic_auth(
                &Provider::Custom,
                "https://gw.example/anthropic",
                "sk-ant-oat01-x",
                false
            ),
            ApiKey
        );
        assert_eq!(
            anthropic_auth(
                &Provider::KimiCoding,
                "https://api.kimi.com/coding",
                "sk-kimi-x",
                false
            ),
            KimiCoding
        );
    }

    #[test]
    fn pool_entries_follow_hermes_pool_rules() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("auth.json"),
            serde_json::json!({"credential_pool": {"zai": [
                {"id": "c", "priority": 2, "access_token": "third"},
                {"id": "a", "priority": 0, "access_token": "dead", "last_status": "dead"},
                {"id": "b", "priority": 1, "access_token": "cooling", "last_status": "exhausted",
                 "last_status_at": auth_store::now() - 10.0, "last_error_code": 429},
            ]}})
            .to_string(),
        )
        .expect("write");
        let c = Context::with_parts(
            HermesHome {
                path: dir.path().to_path_buf(),
                explicit: true,
            },
            Env::from_map(std::iter::empty::<(String, String)>()),
            HermesConfig::default(),
        );
        let ids: Vec<String> = pool_entries(&c, "zai")
            .iter()
            .filter_map(|e| entry_str(e, "id"))
            .collect();
        assert_eq!(ids, ["c"]);
    }
}
