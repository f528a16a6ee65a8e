//! Which provider `vision_analyze` uses, decided as Hermes 0.19 decides it
//! (hermes-agent: agent/auxiliary_client.py `call_llm(task="vision")` →
//! `_resolve_task_provider_model` → `resolve_vision_provider_client`).
//!
//! Order:
//! 0. `agent.image_input_mode: native` → native (Hermes' fast path).
//! 1. `auxiliary.vision.base_url`: with `api_key` → `custom`; else a named
//!    first-class provider keeps its identity (its key, headers, model);
//!    else `custom`. (`provider: openai` is `custom` at api.openai.com/v1.)
//! 2. `auxiliary.vision.provider` (not `auto`): `openrouter`, `nous`,
//!    `deepinfra` strictly; `openai-codex` → native (Codex is the model);
//!    `custom` → the main `model.base_url`; `main` → the main provider;
//!    any of Hermes' API-key providers (providers.rs, apikey.rs: Hermes'
//!    generic router), `zai` at its pinned OpenAI-wire endpoint.
//!    When it cannot run, Hermes falls back to the auto chain (3–4).
//! 3. auto: the main provider (`model.provider`) with the main model
//!    (`model.default`), or the provider's dedicated vision model (zai,
//!    xiaomi): `nous` strictly; `kimi-coding*` skipped (no vision); a main
//!    model known to be text-only (capability.rs) skipped; `openrouter`,
//!    `deepinfra`, `custom` and the API-key providers served;
//!    `openai-codex` and providers hermes-mcp cannot call (Bedrock, Vertex,
//!    Copilot, OAuth-only logins) → native, saying why.
//! 4. then OpenRouter (`OPENROUTER_API_KEY`), Nous Portal (`auth.json`),
//!    DeepInfra (`DEEPINFRA_API_KEY`, model from the live catalog).
//! 5. nothing: native (Codex's own model looks at the image) when nothing was
//!    asked for; Hermes' "No LLM provider configured" when a provider was.
//!
//! Every endpoint can be pointed elsewhere with `auxiliary.vision.base_url`
//! (Hermes ignores it for openrouter; we honour it so tests and proxies work).
//!
//! The provider builders here ([`build`], [`keyed`], [`main_custom`]) are
//! shared with the text tasks' resolution (textaux.rs), which follows
//! Hermes' `_resolve_auto` without vision's rules.

use serde_json::Value;

use super::auxiliary::Unusable;
use super::auxiliary::{
    self, DEFAULT_AGGREGATOR_MODEL, Mode, NOUS_BASE_URL, OPENAI_BASE_URL, OPENROUTER_BASE_URL,
};
use super::providers::{self, Wire};
use super::{apikey, capability};
use crate::auth::nous as nous_auth;
use crate::hermes::{Context, envvars};

pub(crate) const DEEPINFRA_BASE_URL: &str = "https://api.deepinfra.com/v1/openai";
/// Hermes' default model for `custom` endpoints with no model anywhere.
const CUSTOM_DEFAULT_MODEL: &str = "gpt-4o-mini";

/// The mode plus what `tools`/`doctor` show: the provider and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolution {
    pub mode: Mode,
    pub provider: String,
    pub why: String,
}

pub(super) fn native(why: impl Into<String>) -> Resolution {
    Resolution {
        mode: Mode::Native,
        provider: "native".into(),
        why: why.into(),
    }
}

/// `auxiliary.vision.*` as Hermes reads it.
struct TaskCfg {
    provider: String,
    model: Option<String>,
    base_url: Option<String>,
    api_key: Option<String>,
}

fn task_cfg(ctx: &Context) -> TaskCfg {
    let s = |k: &str| {
        ctx.config_str(&format!("auxiliary.vision.{k}"))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    // `model: auto` means "inherit", not a model id; the env var is the
    // legacy override vision_tools.py reads when the key is unset.
    let model = s("model")
        .filter(|m| !m.eq_ignore_ascii_case("auto"))
        .or_else(|| {
            ctx.env
                .get(envvars::AUXILIARY_VISION_MODEL)
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty())
        });
    TaskCfg {
        provider: normalize(ctx, s("provider").as_deref()),
        model,
        base_url: s("base_url").map(|b| b.trim_end_matches('/').to_string()),
        api_key: s("api_key"),
    }
}

/// Hermes' `_normalize_aux_provider` (the aliases vision can meet).
pub(super) fn normalize(ctx: &Context, p: Option<&str>) -> String {
    let mut p = p.unwrap_or("auto").trim().to_ascii_lowercase();
    if let Some(rest) = p.strip_prefix("custom:") {
        p = if rest.trim().is_empty() {
            "custom".into()
        } else {
            rest.trim().to_string()
        };
    }
    match p.as_str() {
        "codex" => "openai-codex".into(),
        "main" => match main_provider(ctx) {
            Some(m) if m != "auto" && m != "main" => m,
            _ => "custom".into(),
        },
        "deep-infra" | "deepinfra-ai" => "deepinfra".into(),
        _ => providers::aux_alias(&p).to_string(),
    }
}

/// `model.provider` (Hermes' `_read_main_provider`), lower-cased.
pub(super) fn main_provider(ctx: &Context) -> Option<String> {
    ctx.config_str("model.provider")
        .map(|p| p.trim().to_ascii_lowercase())
        .filter(|p| !p.is_empty())
}

/// `model.default` (or `model: <string>`): Hermes' `_read_main_model`.
pub(super) fn main_model(ctx: &Context) -> Option<String> {
    let v = match ctx.config().get("model") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Object(m)) => m.get("default").and_then(Value::as_str).map(String::from),
        _ => None,
    };
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

fn host_of(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
}

/// The mode `vision_analyze` runs in (see [`resolve`]).
pub(crate) fn mode(ctx: &Context) -> Mode {
    resolve(ctx).mode
}

/// Decide the provider. Cheap: config, environment and `auth.json` only.
pub(crate) fn resolve(ctx: &Context) -> Resolution {
    if ctx
        .config_str("agent.image_input_mode")
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("native"))
    {
        return native("agent.image_input_mode: native (Hermes' native fast path)");
    }
    let t = task_cfg(ctx);
    // `provider: openai` is a direct-API alias: custom at api.openai.com/v1.
    let (provider, base_url) = if t.provider == "openai" {
        (
            "custom".to_string(),
            Some(t.base_url.clone().unwrap_or_else(|| OPENAI_BASE_URL.into())),
        )
    } else {
        (t.provider.clone(), t.base_url.clone())
    };

    // 1. An explicit endpoint.
    if let Some(base) = base_url {
        let keep = !matches!(provider.as_str(), "auto" | "custom") && t.api_key.is_none();
        let p = if keep {
            provider.clone()
        } else {
            "custom".into()
        };
        let why = format!("auxiliary.vision.base_url ({base})");
        if is_keyed(&p) {
            return keyed(ctx, "vision", &p, Some(base), None, t.model.clone(), &why)
                .unwrap_or_else(|e| unavailable(&p, e.0));
        }
        return match build(
            ctx,
            "vision",
            &p,
            Some(base),
            t.api_key.clone(),
            t.model.clone(),
            &why,
        ) {
            Some(r) => r,
            None => unavailable(&p, missing(&p)),
        };
    }

    // 2. An explicit provider.
    if provider != "auto" {
        let why = format!("auxiliary.vision.provider: {provider}");
        let mut reason = missing(&provider);
        let mut try_keyed = |p: &str, base: Option<String>, key: Option<String>| match keyed(
            ctx,
            "vision",
            p,
            base,
            key,
            t.model.clone(),
            &why,
        ) {
            Ok(r) => Some(r),
            Err(e) => {
                reason = e.0;
                None
            }
        };
        let first = match provider.as_str() {
            "openai-codex" | "native" => {
                return native(format!("{why}: Codex's own model looks at the image"));
            }
            "openrouter" | "nous" | "deepinfra" => build(
                ctx,
                "vision",
                &provider,
                None,
                t.api_key.clone(),
                t.model.clone(),
                &why,
            ),
            "custom" => main_custom(ctx, "vision", t.model.clone(), &why),
            other if providers::uncallable(other).is_some() => {
                return native(format!(
                    "{why}: {} — hermes-mcp cannot call it, so Codex's own model looks at the image",
                    providers::uncallable(other).unwrap_or_default()
                ));
            }
            // Hermes pins Z.AI's OpenAI-wire endpoint for explicit vision.
            // ... and passes the task's api_key to it (no other provider
            // reads auxiliary.vision.api_key without a base_url).
            "zai" => try_keyed(
                "zai",
                Some(providers::ZAI_OPENAI_URLS[0].to_string()),
                t.api_key.clone(),
            ),
            other if is_keyed(other) => try_keyed(other, None, None),
            other => {
                return Resolution {
                    mode: Mode::Misconfigured(format!(
                        "auxiliary.vision.provider '{other}' is not a provider Hermes knows: use one of Hermes' providers (openrouter, nous, deepinfra, openai, anthropic, gemini, zai, xai, minimax, ...), or custom with auxiliary.vision.base_url (or remove auxiliary.vision to let Codex's own model look at images)"
                    )),
                    provider: other.to_string(),
                    why: why.clone(),
                };
            }
        };
        if let Some(r) = first {
            return r;
        }
        // Hermes: "Vision provider %s unavailable, falling back to auto".
        return match auto(ctx, t.model.clone()) {
            Some(mut r) => {
                r.why = format!("{} ({provider} unavailable: {reason})", r.why);
                r
            }
            None => unavailable(&provider, reason),
        };
    }

    // 3–4. auto.
    auto(ctx, t.model).unwrap_or_else(|| {
        native("no auxiliary vision provider configured or available (auxiliary.vision, model.provider, OPENROUTER_API_KEY, Nous Portal login, DEEPINFRA_API_KEY): Codex's own model looks at the image")
    })
}

/// Hermes' error when a requested provider has no client, with what to set.
fn unavailable(provider: &str, reason: String) -> Resolution {
    Resolution {
        mode: Mode::Misconfigured(format!(
            "No LLM provider configured for task=vision provider={provider}. Run: hermes setup ({provider}: {reason})"
        )),
        provider: "none".into(),
        why: format!("auxiliary.vision.provider: {provider} cannot run: {reason}"),
    }
}

pub(super) fn missing(provider: &str) -> String {
    match provider {
        "openrouter" => "OPENROUTER_API_KEY not set in ~/.hermes/.env".into(),
        "nous" => "no Nous Portal login in ~/.hermes/auth.json (run: hermes auth)".into(),
        "deepinfra" => "DEEPINFRA_API_KEY not set in ~/.hermes/.env".into(),
        "custom" => "no endpoint: set auxiliary.vision.base_url or model.base_url".into(),
        "openai-codex" => {
            "no ChatGPT sign-in in auth.json (run: hermes auth codex) or no model.default".into()
        }
        other => apikey::missing_key(other),
    }
}

/// One of Hermes' API-key providers (the table, or `anthropic`), except
/// DeepInfra, whose vision model comes from its live catalog ([`build`]).
pub(super) fn is_keyed(provider: &str) -> bool {
    provider == "anthropic"
        || providers::api_key_provider(provider).is_some_and(|p| p.name != "deepinfra")
}

/// An API-key provider's client (apikey.rs), as a resolution; `Err` says
/// why it cannot run.
pub(super) fn keyed(
    ctx: &Context,
    task: &str,
    provider: &str,
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
    why: &str,
) -> Result<Resolution, Unusable> {
    let ep = apikey::endpoint(ctx, provider, model, base_url, api_key)?;
    let mode =
        match auxiliary::aux_config(ctx, task, provider, ep.base_url, Some(ep.api_key), ep.model) {
            Ok(mut cfg) => {
                cfg.wire = ep.wire;
                // OpenAI wire: the provider's headers after any aux_config adds
                // by host; the other wires build their own headers.
                if cfg.wire == Wire::OpenAi {
                    cfg.extra_headers.extend(ep.headers);
                } else {
                    cfg.extra_headers.clear();
                }
                Mode::Auxiliary(cfg)
            }
            Err(e) => Mode::Misconfigured(e.0),
        };
    Ok(Resolution {
        mode,
        provider: provider.to_string(),
        why: why.to_string(),
    })
}

/// Steps 3–4: the main provider, then OpenRouter, Nous, DeepInfra.
fn auto(ctx: &Context, model: Option<String>) -> Option<Resolution> {
    let (r, skipped) = auto_chain(ctx, model);
    match (r, skipped) {
        (Some(mut r), Some(s)) => {
            r.why = format!("{} ({s}: skipped)", r.why);
            Some(r)
        }
        (None, Some(s)) => Some(native(format!(
            "{s}, and no auxiliary vision provider is available (OPENROUTER_API_KEY, Nous Portal login, DEEPINFRA_API_KEY): Codex's own model looks at the image"
        ))),
        (r, None) => r,
    }
}

/// The auto chain, and why the main provider was skipped (if it was).
fn auto_chain(ctx: &Context, model: Option<String>) -> (Option<Resolution>, Option<String>) {
    let mut skipped: Option<String> = None;
    let main = main_provider(ctx).filter(|p| p != "auto");
    if let Some(mp) = main.as_deref() {
        let mp = normalize(ctx, Some(mp));
        let why = format!("main provider (model.provider: {mp})");
        // The main model, unless the task names one (Hermes' `_finalize`).
        let m = model.clone().or_else(|| main_model(ctx));
        // A dedicated vision model beats the chat model (Hermes'
        // `_resolve_provider_vision_default`); the task's model beats both.
        let vm = providers::vision_model(&mp)
            .map(String::from)
            .or_else(|| main_model(ctx));
        let text_only = |m: &Option<String>| {
            let m = m.as_deref().unwrap_or("");
            capability::supports_vision(ctx, &mp, m) == Some(false)
        };
        let hit = match mp.as_str() {
            "nous" => build(ctx, "vision", "nous", None, None, model.clone(), &why),
            p if providers::WITHOUT_VISION.contains(&p) => {
                skipped = Some(format!("main provider {p} has no vision"));
                None
            }
            "openai-codex" => {
                return (
                    Some(native(format!(
                        "{why}: Codex's own model looks at the image"
                    ))),
                    None,
                );
            }
            p if providers::uncallable(p).is_some() => {
                return (
                    Some(native(format!(
                        "main provider {p} (model.provider): {} — hermes-mcp cannot call it, so Codex's own model looks at the image",
                        providers::uncallable(p).unwrap_or_default()
                    ))),
                    None,
                );
            }
            // DeepInfra's catalog vision default wins over the chat model.
            "deepinfra" => build(ctx, "vision", "deepinfra", None, None, model.clone(), &why),
            _ if text_only(&vm) => {
                skipped = Some(format!(
                    "main model {} of {mp} is text-only (models.dev / supports_vision)",
                    vm.as_deref().unwrap_or_default()
                ));
                None
            }
            "openrouter" => build(ctx, "vision", "openrouter", None, None, m, &why),
            "custom" => main_custom(ctx, "vision", model.clone(), &why),
            p if is_keyed(p) => {
                match keyed(ctx, "vision", p, None, None, model.clone().or(vm), &why) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        skipped = Some(format!("main provider {p} cannot run: {e}"));
                        None
                    }
                }
            }
            // Not a provider Hermes' router knows: on to the aggregators.
            other => {
                skipped = Some(format!(
                    "main provider {other} is not one of Hermes' providers"
                ));
                None
            }
        };
        if hit.is_some() {
            return (hit, None);
        }
    }
    for p in ["openrouter", "nous", "deepinfra"] {
        if main.as_deref() == Some(p) {
            continue;
        }
        let why = match p {
            "openrouter" => "auto: OPENROUTER_API_KEY is set",
            "nous" => "auto: Nous Portal login in auth.json",
            _ => "auto: DEEPINFRA_API_KEY is set",
        };
        if let Some(r) = build(ctx, "vision", p, None, None, model.clone(), why) {
            return (Some(r), skipped);
        }
    }
    (None, skipped)
}

/// The main custom endpoint (`model.base_url` + `model.api_key`).
pub(super) fn main_custom(
    ctx: &Context,
    task: &str,
    model: Option<String>,
    why: &str,
) -> Option<Resolution> {
    let base = ctx
        .config_str("model.base_url")
        .map(|b| b.trim().trim_end_matches('/').to_string())
        .filter(|b| !b.is_empty())?;
    let key = ctx
        .config_str("model.api_key")
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty());
    build(
        ctx,
        task,
        "custom",
        Some(base),
        key,
        model,
        &format!("{why} → model.base_url"),
    )
}

/// One provider's client, or `None` when its credentials are missing.
pub(super) fn build(
    ctx: &Context,
    task: &str,
    provider: &str,
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
    why: &str,
) -> Option<Resolution> {
    let (base, key, model, catalog) = match provider {
        "openrouter" => (
            base_url.unwrap_or_else(|| OPENROUTER_BASE_URL.into()),
            api_key.or_else(|| ctx.env.get(envvars::OPENROUTER_API_KEY))?,
            model.unwrap_or_else(|| DEFAULT_AGGREGATOR_MODEL.into()),
            None,
        ),
        "nous" => {
            let (k, b) = nous_auth(ctx)?;
            (
                base_url.unwrap_or(b),
                api_key.unwrap_or(k),
                model.unwrap_or_else(|| DEFAULT_AGGREGATOR_MODEL.into()),
                None,
            )
        }
        "deepinfra" => {
            let key = api_key.or_else(|| ctx.env.get(envvars::DEEPINFRA_API_KEY))?;
            let env_base = ctx
                .env
                .get(envvars::DEEPINFRA_BASE_URL)
                .map(|b| b.trim().trim_end_matches('/').to_string())
                .filter(|b| !b.is_empty());
            let base = base_url
                .or(env_base)
                .unwrap_or_else(|| DEEPINFRA_BASE_URL.into());
            match model {
                Some(m) => (base, key, m, None),
                // Model chosen from the live catalog at call time.
                None => (base.clone(), key, String::new(), Some(base)),
            }
        }
        _ => {
            // custom: explicit key, OPENAI_API_KEY, the main key on the same
            // host, else Hermes' placeholder for keyless local servers.
            let base = base_url?;
            let same_host_main_key = || {
                let main = ctx.config_str("model.base_url")?;
                (host_of(&main)? == host_of(&base)?)
                    .then(|| ctx.config_str("model.api_key"))
                    .flatten()
            };
            let key = api_key
                .or_else(|| ctx.env.get(envvars::OPENAI_API_KEY))
                .or_else(same_host_main_key)
                .unwrap_or_else(|| "no-key-required".into());
            let model = model
                .or_else(|| main_model(ctx))
                .unwrap_or_else(|| CUSTOM_DEFAULT_MODEL.into());
            (base, key, model, None)
        }
    };
    let provider = if provider == "custom" {
        "custom"
    } else {
        provider
    };
    let mode = match auxiliary::aux_config(ctx, task, provider, base, Some(key), model) {
        Ok(mut cfg) => {
            cfg.catalog = catalog;
            Mode::Auxiliary(cfg)
        }
        Err(why) => Mode::Misconfigured(why.0),
    };
    Some(Resolution {
        provider: provider.to_string(),
        why: why.to_string(),
        mode,
    })
}

/// A usable Nous Portal token and base URL from `$HERMES_HOME/auth.json`
/// (hermes-agent: agent/auxiliary_client.py `_read_nous_auth`): the
/// credential pool's `nous` entries first, else `providers.nous` when Nous is
/// the active provider; `agent_key` before `access_token`, skipping expired.
fn nous_auth(ctx: &Context) -> Option<(String, String)> {
    let store = nous_auth::load_store(&ctx.home)?;
    let env_base = ctx
        .env
        .get(envvars::NOUS_INFERENCE_BASE_URL)
        .unwrap_or_else(|| NOUS_BASE_URL.into());
    let usable = |e: &serde_json::Map<String, Value>| -> Option<(String, String)> {
        let tok = [
            ("agent_key", "agent_key_expires_at"),
            ("access_token", "expires_at"),
        ]
        .into_iter()
        .find_map(|(k, exp)| {
            let t = e.get(k)?.as_str()?.trim();
            (!t.is_empty() && !nous_auth::expired(e.get(exp))).then(|| t.to_string())
        })?;
        let base = e
            .get("inference_base_url")
            .and_then(Value::as_str)
            .map(|b| b.trim().trim_end_matches('/').to_string())
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| env_base.trim_end_matches('/').to_string());
        Some((tok, base))
    };
    let pool = nous_auth::pool_entries(&store);
    if !pool.is_empty() {
        return pool.into_iter().find_map(&usable);
    }
    if store.get("active_provider").and_then(Value::as_str) != Some("nous") {
        return None;
    }
    usable(nous_auth::provider_state(&store)?)
}

#[cfg(test)]
mod tests {
    use super::auxiliary::request_body;
    use super::*;
    use std::time::Duration;

    use crate::hermes::context::test_ctx as ctx;

    #[test]
    fn native_by_default() {
        assert_eq!(mode(&ctx("", &[])), Mode::Native);
        assert_eq!(
            mode(&ctx("auxiliary:\n  vision:\n    provider: auto\n", &[])),
            Mode::Native
        );
        // A key alone picks that provider, as Hermes' auto chain does.
        assert!(matches!(
            mode(&ctx("", &[("OPENROUTER_API_KEY", "k")])),
            Mode::Auxiliary(a) if a.provider == "openrouter"
        ));
    }

    #[test]
    fn explicit_provider_needs_its_key() {
        let m = mode(&ctx(
            "auxiliary:\n  vision:\n    provider: openrouter\n",
            &[],
        ));
        let Mode::Misconfigured(why) = m else {
            panic!("{m:?}")
        };
        assert!(why.contains("OPENROUTER_API_KEY"), "{why}");
        let m = mode(&ctx(
            "auxiliary:\n  vision:\n    provider: openrouter\n",
            &[("OPENROUTER_API_KEY", "sk-or")],
        ));
        let Mode::Auxiliary(a) = m else {
            panic!("{m:?}")
        };
        assert_eq!(a.base_url, OPENROUTER_BASE_URL);
        assert_eq!(a.model, DEFAULT_AGGREGATOR_MODEL);
        assert_eq!(a.api_key.as_deref(), Some("sk-or"));
        assert!(a.extra_headers.iter().any(|(k, _)| k == "X-Title"));
    }

    #[test]
    fn env_model_picks_a_provider_with_a_key() {
        let m = mode(&ctx(
            "",
            &[
                ("AUXILIARY_VISION_MODEL", "m1"),
                ("OPENROUTER_API_KEY", "k"),
            ],
        ));
        let Mode::Auxiliary(a) = m else {
            panic!("{m:?}")
        };
        assert_eq!(
            (a.provider.as_str(), a.model.as_str()),
            ("openrouter", "m1")
        );
        // A model with no provider anywhere: Hermes has none, so native.
        assert_eq!(
            mode(&ctx("", &[("AUXILIARY_VISION_MODEL", "m1")])),
            Mode::Native
        );
    }

    #[test]
    fn custom_endpoint_settings() {
        let yaml = "auxiliary:\n  vision:\n    provider: custom\n    base_url: http://127.0.0.1:9/v1/\n    model: llava\n    timeout: 7\n    temperature: 0.3\n    max_tokens: 99\n    extra_body: {top_k: 3}\n";
        let Mode::Auxiliary(a) = mode(&ctx(yaml, &[])) else {
            panic!()
        };
        assert_eq!(a.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(a.api_key.as_deref(), Some("no-key-required"));
        assert_eq!(a.timeout, Duration::from_secs(7));
        let body = request_body(&a, "p", "data:image/png;base64,AA");
        assert_eq!(body["model"], "llava");
        assert_eq!(body["temperature"], 0.3);
        assert_eq!(body["max_tokens"], 99);
        assert_eq!(body["top_k"], 3);
        assert_eq!(
            body["messages"][0]["content"][1]["image_url"]["url"],
            "data:image/png;base64,AA"
        );
        let Mode::Misconfigured(why) =
            mode(&ctx("auxiliary:\n  vision:\n    provider: custom\n", &[]))
        else {
            panic!()
        };
        assert!(why.contains("base_url"));
        assert!(matches!(
            mode(&ctx(
                "auxiliary:\n  vision:\n    provider: gemini-cli\n",
                &[]
            )),
            Mode::Misconfigured(_)
        ));
    }
}
