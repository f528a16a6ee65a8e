//! Which model Hermes' auxiliary *text* tasks run on (`web_extract` for long
//! browser snapshots, `tts_audio_tags` for speech-tag rewrites), decided as
//! Hermes 0.19 decides it (hermes-agent: agent/auxiliary_client.py
//! `call_llm(task=...)` → `_resolve_task_provider_model` →
//! `resolve_provider_client` / `_resolve_auto`), and the call itself.
//!
//! Order:
//! 1. `auxiliary.<task>.base_url`: with `api_key` (or no named provider) →
//!    `custom` at that URL; a named provider keeps its identity there.
//! 2. `auxiliary.<task>.provider` (not `auto`): that provider with the task's
//!    model, else the provider's auxiliary model, else the main model
//!    (`openai-codex` → the Codex Responses wire with the ChatGPT sign-in).
//!    When it cannot run: `openrouter` and `custom` fall back to auto (3);
//!    any other provider is Hermes' "is set in config.yaml but no API key"
//!    error.
//! 3. auto (`_resolve_auto`): step 1, the main provider (`model.provider`)
//!    with the main model (`model.default`), whatever its type —
//!    `openai-codex` included; step 2, OpenRouter → Nous Portal → the main
//!    custom endpoint → the first API-key provider (registry order) that has
//!    a key and a default auxiliary model. The task's model replaces the
//!    resolved one (Hermes drops an OpenRouter-style `vendor/model` for a
//!    provider whose model has no slash).
//! 4. nothing usable: skipped with the reason (the caller truncates or
//!    speaks untagged, as before).
//!
//! Vision keeps its own rules (resolve.rs): vision model overrides,
//! text-only main models skipped, Codex as native.

use serde_json::json;

use super::auxiliary::{self, AuxConfig, CallError, Mode};
use super::providers::{self, CodexSignIn, Wire};
use super::resolve::{
    Resolution, build, is_keyed, keyed, main_custom, main_model, main_provider, missing, normalize,
};
use crate::auth::codex::{self as codex_auth, codex_home};
use crate::auth::store::{self as auth_store, now};
use crate::hermes::Context;
use crate::net::HttpClient;

/// `auxiliary.<task>.*` as Hermes reads it.
struct TaskCfg {
    provider: String,
    model: Option<String>,
    base_url: Option<String>,
    api_key: Option<String>,
}

fn task_cfg(ctx: &Context, task: &str, model_var: Option<&'static str>) -> TaskCfg {
    let s = |k: &str| {
        ctx.config_str(&format!("auxiliary.{task}.{k}"))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let model = s("model")
        .filter(|m| !m.eq_ignore_ascii_case("auto"))
        .or_else(|| {
            model_var
                .and_then(|v| ctx.env.get(v))
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty())
        });
    let api_key = s("api_key").or_else(|| {
        // `key_env` / `api_key_env`: the variable holding the key.
        let var = s("key_env").or_else(|| s("api_key_env"))?;
        ctx.env
            .get(&var)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    });
    TaskCfg {
        provider: normalize(ctx, s("provider").as_deref()),
        model,
        base_url: s("base_url").map(|b| b.trim_end_matches('/').to_string()),
        api_key,
    }
}

fn skipped(provider: &str, why: String) -> Resolution {
    Resolution {
        mode: Mode::Native,
        provider: provider.to_string(),
        why,
    }
}

fn misconfigured(provider: &str, why: String) -> Resolution {
    Resolution {
        mode: Mode::Misconfigured(why.clone()),
        provider: provider.to_string(),
        why,
    }
}

/// The auxiliary model for text task `task` (see the module doc).
/// `Mode::Native` means "none": the caller does without.
pub(crate) fn resolve(ctx: &Context, task: &str, model_var: Option<&'static str>) -> Resolution {
    // The shared provider code words its hints for vision; name this task.
    let fix = |s: &str| s.replace("auxiliary.vision.", &format!("auxiliary.{task}."));
    let mut r = resolve_in(ctx, task, model_var);
    r.why = fix(&r.why);
    if let Mode::Misconfigured(m) = &mut r.mode {
        *m = fix(m);
    }
    r
}

fn resolve_in(ctx: &Context, task: &str, model_var: Option<&'static str>) -> Resolution {
    let t = task_cfg(ctx, task, model_var);
    // `provider: openai` is the direct-API alias: custom at api.openai.com.
    let (provider, base_url) = if t.provider == "openai" {
        (
            "custom".to_string(),
            Some(
                t.base_url
                    .clone()
                    .unwrap_or_else(|| auxiliary::OPENAI_BASE_URL.into()),
            ),
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
        let why = format!("auxiliary.{task}.base_url ({base})");
        let r = match p.as_str() {
            "openai-codex" => codex(ctx, task, Some(base), t.model.clone(), &why),
            p if is_keyed(p) || p == "deepinfra" => {
                keyed(ctx, task, p, Some(base), None, t.model.clone(), &why).ok()
            }
            p => build(
                ctx,
                task,
                p,
                Some(base),
                t.api_key.clone(),
                t.model.clone(),
                &why,
            ),
        };
        return r.unwrap_or_else(|| {
            misconfigured(
                &p,
                format!(
                    "No LLM provider configured for task={task} provider={p} ({}). Run: hermes setup",
                    missing(&p)
                ),
            )
        });
    }

    // 2. An explicit provider.
    if provider != "auto" {
        let why = format!("auxiliary.{task}.provider: {provider}");
        // resolve_provider_client: the task's model, else the provider's
        // auxiliary model, else the main model.
        let model = t.model.clone().or_else(|| {
            providers::api_key_provider(&provider)
                .map(|p| p.aux_model)
                .filter(|m| !m.is_empty())
                .map(String::from)
                .or_else(|| main_model(ctx))
        });
        let mut reason = missing(&provider);
        let hit = match provider.as_str() {
            "openrouter" | "nous" => build(
                ctx,
                task,
                &provider,
                None,
                t.api_key.clone(),
                t.model.clone(),
                &why,
            ),
            "custom" => main_custom(ctx, task, t.model.clone(), &why),
            "openai-codex" => {
                reason = "no ChatGPT sign-in (run: hermes auth codex) or no model (auxiliary.<task>.model / model.default)".into();
                codex(ctx, task, None, model, &why)
            }
            p if providers::uncallable(p).is_some() => {
                reason = providers::uncallable(p).unwrap_or_default().to_string()
                    + ": hermes-mcp cannot call it";
                None
            }
            p if is_keyed(p) || p == "deepinfra" => {
                match keyed(ctx, task, p, None, t.api_key.clone(), model, &why) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        reason = e.0;
                        None
                    }
                }
            }
            other => {
                return misconfigured(
                    other,
                    format!(
                        "auxiliary.{task}.provider '{other}' is not a provider Hermes knows: use one of Hermes' providers (openrouter, nous, openai-codex, anthropic, gemini, zai, ...), custom with auxiliary.{task}.base_url, or auto"
                    ),
                );
            }
        };
        if let Some(r) = hit {
            return r;
        }
        // call_llm: only openrouter and custom fall back to auto detection.
        if matches!(provider.as_str(), "openrouter" | "custom")
            && let Some(mut r) = auto(ctx, task, t.model.clone())
        {
            r.why = format!("{} ({provider} unavailable: {reason})", r.why);
            return r;
        }
        return misconfigured(
            &provider,
            format!(
                "Provider '{provider}' is set in config.yaml (auxiliary.{task}.provider) but cannot be used: {reason}"
            ),
        );
    }

    // 3. auto.
    auto(ctx, task, t.model).unwrap_or_else(|| {
        skipped(
            "none",
            format!(
                "no auxiliary model for {task}: auxiliary.{task} is auto and neither the main provider (model.provider + model.default) nor OpenRouter, a Nous Portal login, a custom endpoint or an API-key provider is usable"
            ),
        )
    })
}

/// `_resolve_auto`: the main provider with the main model, then the chain.
fn auto(ctx: &Context, task: &str, task_model: Option<String>) -> Option<Resolution> {
    let mut notes: Vec<String> = Vec::new();
    let main = main_provider(ctx).filter(|p| p != "auto" && p != "main");
    let mm = main_model(ctx);
    if let (Some(mp), Some(mm)) = (main.as_deref(), mm.clone()) {
        let mp = normalize(ctx, Some(mp));
        let why = format!("auto: main provider (model.provider: {mp}, model.default: {mm})");
        let hit = match mp.as_str() {
            "openrouter" | "nous" => build(ctx, task, &mp, None, None, Some(mm.clone()), &why),
            "custom" => main_custom(ctx, task, Some(mm.clone()), &why),
            "openai-codex" => codex(ctx, task, None, Some(mm.clone()), &why),
            p if providers::uncallable(p).is_some() => {
                notes.push(format!(
                    "main provider {p}: {} — hermes-mcp cannot call it",
                    providers::uncallable(p).unwrap_or_default()
                ));
                None
            }
            p if is_keyed(p) || p == "deepinfra" => {
                match keyed(ctx, task, p, None, None, Some(mm.clone()), &why) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        notes.push(format!("main provider {p} cannot run: {e}"));
                        None
                    }
                }
            }
            other => {
                notes.push(format!(
                    "main provider {other} is not one of Hermes' providers"
                ));
                None
            }
        };
        if let Some(r) = hit {
            if hit_is_usable(&r) {
                return Some(with_task_model(r, task_model));
            }
            notes.push(format!("main provider {mp}: {}", reason_of(&r)));
        } else if notes.is_empty() {
            notes.push(format!(
                "main provider {mp} has no credentials ({})",
                missing(&mp)
            ));
        }
    }
    // Step 3: OpenRouter → Nous → custom → API-key providers.
    let chain = [
        ("openrouter", "auto: OPENROUTER_API_KEY is set"),
        ("nous", "auto: Nous Portal login in auth.json"),
    ];
    for (p, why) in chain {
        if let Some(r) = build(ctx, task, p, None, None, None, why).filter(hit_is_usable) {
            return Some(with_task_model(annotate(r, &notes), task_model));
        }
    }
    if let Some(r) = main_custom(ctx, task, None, "auto: custom endpoint").filter(hit_is_usable) {
        return Some(with_task_model(annotate(r, &notes), task_model));
    }
    for p in providers::API_KEY_PROVIDERS {
        // Anthropic joins the chain only when explicitly configured (not modelled);
        // providers without a default auxiliary model are skipped.
        if p.name == "anthropic" || p.aux_model.is_empty() {
            continue;
        }
        if !p.key_vars.iter().any(|v| ctx.env.is_set(v)) {
            continue;
        }
        let why = format!("auto: {} is set", p.key_vars.join(" / "));
        if let Ok(r) = keyed(
            ctx,
            task,
            p.name,
            None,
            None,
            Some(p.aux_model.into()),
            &why,
        ) && hit_is_usable(&r)
        {
            return Some(with_task_model(annotate(r, &notes), task_model));
        }
    }
    if notes.is_empty() {
        None
    } else {
        Some(skipped(
            "none",
            format!(
                "{}; no fallback provider (OPENROUTER_API_KEY, Nous Portal login, custom endpoint, API-key provider) is usable",
                notes.join("; ")
            ),
        ))
    }
}

fn hit_is_usable(r: &Resolution) -> bool {
    matches!(r.mode, Mode::Auxiliary(_))
}

fn reason_of(r: &Resolution) -> String {
    match &r.mode {
        Mode::Misconfigured(m) => m.clone(),
        _ => r.why.clone(),
    }
}

fn annotate(mut r: Resolution, notes: &[String]) -> Resolution {
    if !notes.is_empty() {
        r.why = format!("{} ({}: skipped)", r.why, notes.join("; "));
    }
    r
}

/// The task's own model replaces the resolved one (`resolve_provider_client`
/// for `auto`), unless it is an OpenRouter-style id for a provider whose
/// model has no slash.
fn with_task_model(mut r: Resolution, task_model: Option<String>) -> Resolution {
    if let (Mode::Auxiliary(c), Some(m)) = (&mut r.mode, task_model)
        && !(m.contains('/') && !c.model.is_empty() && !c.model.contains('/'))
    {
        c.model = m;
    }
    r
}

/// The first `credential_pool["openai-codex"]` entry's `base_url` (Hermes'
/// `_pool_runtime_base_url`), if any.
fn pool_base_url(ctx: &Context) -> Option<String> {
    let path = auth_store::path_for(&ctx.home.path, codex_auth::PROVIDER);
    let store = auth_store::load(&path).ok()?;
    auth_store::pool_entries(&store, codex_auth::PROVIDER)
        .into_iter()
        .find_map(|e| {
            auth_store::nonempty(e.base_url.as_deref()).map(|b| b.trim_end_matches('/').to_string())
        })
}

/// `_build_codex_client(model)`: the ChatGPT sign-in on the Codex Responses
/// endpoint; `None` without a sign-in or a model (Hermes picks no default).
fn codex(
    ctx: &Context,
    task: &str,
    base_url: Option<String>,
    model: Option<String>,
    why: &str,
) -> Option<Resolution> {
    let model = model?;
    let source = codex_auth::sign_in_source(&ctx.home.path, codex_home(ctx).as_deref(), now())?;
    let base = base_url
        .or_else(|| pool_base_url(ctx))
        .unwrap_or_else(|| codex_auth::DEFAULT_CODEX_BASE_URL.into());
    let mode = match auxiliary::aux_config(ctx, task, "openai-codex", base, None, model) {
        Ok(mut c) => {
            c.wire = Wire::CodexResponses;
            c.extra_headers.clear();
            c.codex = Some(CodexSignIn {
                hermes_home: ctx.home.path.clone(),
                codex_home: codex_home(ctx),
                token_url: codex_auth::OAUTH_TOKEN_URL.into(),
            });
            Mode::Auxiliary(c)
        }
        Err(e) => Mode::Misconfigured(e.0),
    };
    let from = match source {
        codex_auth::TokenSource::CredentialPool { id } => format!("credential pool entry '{id}'"),
        codex_auth::TokenSource::HermesAuthStore => "Hermes' auth.json".into(),
        codex_auth::TokenSource::CodexCli => "Codex's auth.json".into(),
    };
    Some(Resolution {
        mode,
        provider: "openai-codex".into(),
        why: format!("{why}, ChatGPT sign-in from {from}"),
    })
}

/// One text call as Hermes' `call_llm` makes it: `messages` (role, text),
/// `temperature` and `max_tokens` as the task passes them, adjusted per
/// model and provider (`_build_call_kwargs`: the token limit only reaches
/// Anthropic-style and NVIDIA endpoints), `extra_body` merged; on the
/// endpoint's wire. Returns the answer text (may be empty).
pub(crate) async fn complete(
    http: &HttpClient,
    cfg: &AuxConfig,
    messages: &[(&str, &str)],
    temperature: Option<f64>,
    max_tokens: Option<u64>,
) -> Result<String, CallError> {
    let mut body = json!({
        "model": cfg.model,
        "messages": messages
            .iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect::<Vec<_>>(),
    });
    if let Some(t) = temperature {
        body["temperature"] = json!(t);
    }
    let nvidia = cfg.provider == "nvidia" || is_host(&cfg.base_url, "integrate.api.nvidia.com");
    let mut cfg = cfg.clone();
    if let Some(m) = max_tokens {
        if nvidia || matches!(cfg.wire, Wire::Anthropic(_)) {
            body["max_tokens"] = json!(m);
        }
        cfg.max_tokens = m;
    } else if matches!(cfg.wire, Wire::Anthropic(_)) {
        // The Messages API needs a limit: Hermes sends the model's output limit.
        cfg.max_tokens = super::anthropic::max_output(&cfg.model);
    }
    super::wire::fix_temperature(&mut body);
    if cfg.wire == Wire::OpenAi {
        for (k, v) in &cfg.extra_body {
            body[k] = v.clone();
        }
    }
    super::wire::send(http, &cfg, &body).await
}

fn is_host(base_url: &str, host: &str) -> bool {
    url::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.eq_ignore_ascii_case(host)))
        .unwrap_or(false)
}

/// The line `hermes-mcp tools` shows for a text task.
pub(crate) fn describe(r: &Resolution) -> (String, String) {
    match &r.mode {
        Mode::Auxiliary(c) => {
            let wire = match c.wire {
                Wire::OpenAi => "",
                Wire::Anthropic(_) => ", Anthropic Messages",
                Wire::Gemini => ", Gemini generateContent",
                Wire::CodexResponses => ", Codex Responses",
            };
            (format!("{} ({}{wire})", r.provider, c.model), r.why.clone())
        }
        Mode::Misconfigured(m) => ("none".into(), m.clone()),
        Mode::Native => ("none".into(), r.why.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::hermes::context::test_ctx as ctx;

    fn aux(r: &Resolution) -> &AuxConfig {
        match &r.mode {
            Mode::Auxiliary(c) => c,
            m => panic!("{m:?} ({})", r.why),
        }
    }

    #[test]
    fn main_provider_and_model_first() {
        let c = ctx(
            "model:\n  provider: deepseek\n  default: deepseek-reasoner\n",
            &[
                ("DEEPSEEK_API_KEY", "dk-1234"),
                ("OPENROUTER_API_KEY", "or"),
            ],
        );
        let r = resolve(&c, "web_extract", None);
        assert_eq!(r.provider, "deepseek");
        assert_eq!(aux(&r).model, "deepseek-reasoner");
        assert_eq!(aux(&r).task, "web_extract");
        // The task's model replaces the main one.
        let c = ctx(
            "model:\n  provider: deepseek\n  default: deepseek-reasoner\nauxiliary:\n  web_extract:\n    model: deepseek-chat\n",
            &[("DEEPSEEK_API_KEY", "dk-1234")],
        );
        assert_eq!(
            aux(&resolve(&c, "web_extract", None)).model,
            "deepseek-chat"
        );
        // ... unless it is an OpenRouter id for a provider without slashes.
        let c = ctx(
            "model:\n  provider: deepseek\n  default: deepseek-reasoner\n",
            &[
                ("DEEPSEEK_API_KEY", "dk-1234"),
                (
                    "AUXILIARY_WEB_EXTRACT_MODEL",
                    "google/gemini-3-flash-preview",
                ),
            ],
        );
        let r = resolve(
            &c,
            "web_extract",
            Some(crate::hermes::envvars::AUXILIARY_WEB_EXTRACT_MODEL),
        );
        assert_eq!(aux(&r).model, "deepseek-reasoner");
    }

    #[test]
    fn main_provider_without_credentials_falls_back_to_the_chain() {
        let c = ctx(
            "model:\n  provider: deepseek\n  default: deepseek-reasoner\n",
            &[("OPENROUTER_API_KEY", "or")],
        );
        let r = resolve(&c, "tts_audio_tags", None);
        assert_eq!(r.provider, "openrouter");
        assert_eq!(aux(&r).model, auxiliary::DEFAULT_AGGREGATOR_MODEL);
        assert!(r.why.contains("skipped"), "{}", r.why);
        // Hermes' default timeout for the tag rewrite.
        assert_eq!(aux(&r).timeout, std::time::Duration::from_secs(30));
        // The API-key chain: the first provider with a key and an aux model.
        let c = ctx("", &[("DEEPSEEK_API_KEY", "dk-1234")]);
        let r = resolve(&c, "web_extract", None);
        assert_eq!(
            (r.provider.as_str(), aux(&r).model.as_str()),
            ("deepseek", "deepseek-chat")
        );
        // Nothing at all.
        let r = resolve(&ctx("", &[]), "web_extract", None);
        assert_eq!(r.mode, Mode::Native);
        assert_eq!(r.provider, "none");
    }

    #[test]
    fn explicit_provider_rules() {
        // An explicit provider without its key is Hermes' error, no fallback.
        let c = ctx(
            "auxiliary:\n  web_extract:\n    provider: zai\n",
            &[("OPENROUTER_API_KEY", "or")],
        );
        let r = resolve(&c, "web_extract", None);
        let Mode::Misconfigured(m) = &r.mode else {
            panic!("{r:?}")
        };
        assert!(m.contains("Provider 'zai' is set in config.yaml"), "{m}");
        // openrouter unavailable falls back to auto.
        let c = ctx(
            "auxiliary:\n  web_extract:\n    provider: openrouter\nmodel:\n  provider: custom\n  default: local-1\n  base_url: http://127.0.0.1:9/v1\n",
            &[],
        );
        let r = resolve(&c, "web_extract", None);
        assert_eq!(r.provider, "custom");
        assert_eq!(aux(&r).model, "local-1");
        assert!(r.why.contains("openrouter unavailable"), "{}", r.why);
        // A base URL: custom there, with the task's key and model.
        let c = ctx(
            "auxiliary:\n  web_extract:\n    base_url: http://127.0.0.1:9/v1/\n    api_key: k\n    model: m\n",
            &[],
        );
        let a = aux(&resolve(&c, "web_extract", None)).clone();
        assert_eq!(
            (a.base_url.as_str(), a.api_key.as_deref(), a.model.as_str()),
            ("http://127.0.0.1:9/v1", Some("k"), "m")
        );
        // Codex without a sign-in or model cannot run.
        let c = ctx("auxiliary:\n  web_extract:\n    provider: codex\n", &[]);
        assert!(matches!(
            resolve(&c, "web_extract", None).mode,
            Mode::Misconfigured(_)
        ));
    }
}
