//! One provider's client, as the task resolver (resolve.rs, auto.rs) hands
//! it out: OpenRouter, Nous Portal, DeepInfra and custom endpoints
//! ([`build`]: hermes-agent: agent/auxiliary_client.py `_try_openrouter`,
//! `_try_nous`, `_try_custom_endpoint`), the main custom endpoint
//! ([`main_custom`]), Hermes' API-key providers ([`keyed`], through
//! apikey.rs) and the ChatGPT sign-in on the Codex Responses endpoint
//! ([`codex`]: `_build_codex_client`); DeepInfra's catalog lookup of its
//! vision model, which waits until call time ([`catalog_vision_model`]).

use std::sync::LazyLock;
use std::time::Duration;

use serde_json::Value;

use super::apikey;
use super::providers;
use super::resolve::{Resolution, Task, main_model};
use crate::auth::codex::{self as codex_auth, codex_home};
use crate::auth::nous as nous_auth;
use crate::auth::store::{self as auth_store, now};
use crate::hermes::{Context, envvars};
use crate::llm::endpoint::{
    self as auxiliary, DEFAULT_AGGREGATOR_MODEL, HERMES_VERSION, Mode, NOUS_BASE_URL,
    OPENROUTER_BASE_URL, Unusable,
};
use crate::llm::provider::Provider;
use crate::llm::wire::Wire;
use crate::llm::wire::codex::CodexSignIn;
use crate::net::HttpClient;

pub(crate) const DEEPINFRA_BASE_URL: &str = "https://api.deepinfra.com/v1/openai";
/// Hermes' default model for `custom` endpoints with no model anywhere.
const CUSTOM_DEFAULT_MODEL: &str = "gpt-4o-mini";

/// One of Hermes' API-key providers (the table, or `anthropic`), except
/// DeepInfra, whose vision model comes from its live catalog ([`build`]).
pub(super) fn is_keyed(provider: &Provider) -> bool {
    *provider == Provider::Anthropic
        || providers::api_key_provider(provider.as_str())
            .is_some_and(|p| Provider::parse(p.name) != Provider::DeepInfra)
}

/// An API-key provider's client (apikey.rs), as a resolution; `Err` says
/// why it cannot run.
pub(super) fn keyed(
    ctx: &Context,
    task: Task,
    provider: &Provider,
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
    why: &str,
) -> Result<Resolution, Unusable> {
    let ep = apikey::endpoint(ctx, provider, model, base_url, api_key).map_err(|e| {
        // apikey.rs words its model hint for vision; name this task's section.
        Unusable(e.0.replace("auxiliary.vision.", &format!("auxiliary.{}.", task.name)))
    })?;
    let mode = match auxiliary::aux_config(
        ctx,
        task.name,
        provider.clone(),
        ep.base_url,
        Some(ep.api_key),
        ep.model,
    ) {
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

/// The main custom endpoint (`model.base_url` + `model.api_key`).
pub(super) fn main_custom(
    ctx: &Context,
    task: Task,
    model: Option<String>,
    why: &str,
) -> Option<Resolution> {
    let main = &ctx.sections().model;
    let base = main
        .base_url
        .as_deref()
        .map(|b| b.trim().trim_end_matches('/').to_string())
        .filter(|b| !b.is_empty())?;
    let key = main
        .api_key
        .as_deref()
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty());
    build(
        ctx,
        task,
        &Provider::Custom,
        Some(base),
        key,
        model,
        &format!("{why} → model.base_url"),
    )
}

/// One provider's client, or `None` when its credentials are missing.
pub(super) fn build(
    ctx: &Context,
    task: Task,
    provider: &Provider,
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
    why: &str,
) -> Option<Resolution> {
    let (base, key, model, catalog) = match provider {
        Provider::OpenRouter => (
            base_url.unwrap_or_else(|| OPENROUTER_BASE_URL.into()),
            api_key.or_else(|| ctx.env.get(envvars::OPENROUTER_API_KEY))?,
            model.unwrap_or_else(|| DEFAULT_AGGREGATOR_MODEL.into()),
            None,
        ),
        Provider::Nous => {
            let (k, b) = nous_sign_in(ctx)?;
            (
                base_url.unwrap_or(b),
                api_key.unwrap_or(k),
                model.unwrap_or_else(|| DEFAULT_AGGREGATOR_MODEL.into()),
                None,
            )
        }
        Provider::DeepInfra => {
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
                let main = &ctx.sections().model;
                (host_of(main.base_url.as_deref()?)? == host_of(&base)?)
                    .then(|| main.api_key.clone())
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
    let mode = match auxiliary::aux_config(ctx, task.name, provider.clone(), base, Some(key), model)
    {
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

fn host_of(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
}

/// A usable Nous Portal token and base URL from `$HERMES_HOME/auth.json`
/// (hermes-agent: agent/auxiliary_client.py `_read_nous_auth`): the
/// credential pool's `nous` entries first, else `providers.nous` when Nous is
/// the active provider; `agent_key` before `access_token`, skipping expired.
fn nous_sign_in(ctx: &Context) -> Option<(String, String)> {
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
    if store.get("active_provider").and_then(Value::as_str) != Some(Provider::Nous.as_str()) {
        return None;
    }
    usable(nous_auth::provider_state(&store)?)
}

/// The first `credential_pool["openai-codex"]` entry's `base_url` (Hermes'
/// `_pool_runtime_base_url`), if any.
fn pool_base_url(ctx: &Context) -> Option<String> {
    let path = auth_store::path_for(&ctx.home.path, codex_auth::PROVIDER);
    let store = auth_store::load(&path).ok()?;
    auth_store::pool_entries(&store, codex_auth::PROVIDER)
        .into_iter()
        .find_map(|e| {
            auth_store::nonempty(e.base_url()).map(|b| b.trim_end_matches('/').to_string())
        })
}

/// `_build_codex_client(model)`: the ChatGPT sign-in on the Codex Responses
/// endpoint; without a sign-in or a model (Hermes picks no default), `Err`
/// says which of the two is missing, with what gives it.
pub(super) fn codex(
    ctx: &Context,
    task: Task,
    base_url: Option<String>,
    model: Option<String>,
    why: &str,
) -> Result<Resolution, String> {
    let source = codex_auth::sign_in_source(&ctx.home.path, codex_home(ctx).as_deref(), now());
    let no_sign_in = "no ChatGPT sign-in (neither Hermes' auth.json nor Codex's has one): run `hermes auth codex` or `codex login`";
    let no_model = || {
        format!(
            "no model: model.default (or auxiliary.{}.model) is not set in config.yaml",
            task.name
        )
    };
    let (source, model) = match (source, model) {
        (Some(source), Some(model)) => (source, model),
        (None, Some(_)) => return Err(no_sign_in.to_string()),
        (Some(_), None) => return Err(format!("signed in to ChatGPT, but {}", no_model())),
        (None, None) => return Err(format!("{no_sign_in}; and {}", no_model())),
    };
    let base = base_url
        .or_else(|| pool_base_url(ctx))
        .unwrap_or_else(|| codex_auth::DEFAULT_CODEX_BASE_URL.into());
    let mode = match auxiliary::aux_config(ctx, task.name, Provider::OpenAiCodex, base, None, model)
    {
        Ok(mut c) => {
            c.wire = Wire::CodexResponses;
            c.extra_headers.clear();
            c.codex = Some(CodexSignIn::new(ctx, codex_auth::OAUTH_TOKEN_URL.into()));
            Mode::Auxiliary(c)
        }
        Err(e) => Mode::Misconfigured(e.0),
    };
    let from = match source {
        codex_auth::TokenSource::CredentialPool { id } => format!("credential pool entry '{id}'"),
        codex_auth::TokenSource::HermesAuthStore => "Hermes' auth.json".into(),
        codex_auth::TokenSource::CodexCli => "Codex's auth.json".into(),
    };
    Ok(Resolution {
        mode,
        provider: Provider::OpenAiCodex.to_string(),
        why: format!("{why}, ChatGPT sign-in from {from}"),
    })
}

/// DeepInfra's default vision model: the first catalog entry tagged both
/// `chat` (or, for entries with no surface tag, an id that is not an
/// embedding/speech/image model) and `vision` (hermes-agent:
/// plugins/model-providers/deepinfra `default_vision_model`,
/// hermes_cli/models.py `_fetch_deepinfra_models_by_tag("chat")`).
pub(crate) async fn catalog_vision_model(
    http: &HttpClient,
    base: &str,
    key: &str,
) -> Option<String> {
    static EXCLUDE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)(embed|rerank|whisper|stable-diffusion|flux|sdxl|tts|bark|speech|image-gen|clip|vit-|dpt-)",
        )
        .expect("valid regex")
    });
    const SURFACES: [&str; 6] = ["chat", "embed", "image-gen", "tts", "stt", "video-gen"];
    let url = format!(
        "{}/models?filter=true&sort_by=hermes",
        base.trim_end_matches('/')
    );
    let req = http
        .api()
        .get(&url)
        .timeout(Duration::from_secs(5))
        .header("User-Agent", format!("hermes-cli/{HERMES_VERSION}"))
        .bearer_auth(key);
    let resp = http
        .send_api("vision:deepinfra", Duration::ZERO, req)
        .await
        .ok()?;
    if !(200..300).contains(&resp.status) {
        return None;
    }
    let v = resp.json().ok()?;
    v.get("data")?.as_array()?.iter().find_map(|item| {
        let id = item.get("id")?.as_str().filter(|s| !s.is_empty())?;
        let meta = item.get("metadata").filter(|m| !m.is_null())?;
        let tags: Vec<&str> = meta
            .get("tags")
            .and_then(Value::as_array)
            .map(|t| t.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let chat = if tags.iter().any(|t| SURFACES.contains(t)) {
            tags.contains(&"chat")
        } else {
            !EXCLUDE.is_match(id)
        };
        (chat && tags.contains(&"vision")).then(|| id.to_string())
    })
}
