//! The task resolver: which provider and model an auxiliary task runs on —
//! `vision` (`vision_analyze`, `browser_vision`), `web_extract` (long browser
//! snapshots), `tts_audio_tags` (speech tags), and whatever task comes next —
//! decided as Hermes 0.19 decides it (hermes-agent: agent/auxiliary_client.py
//! `call_llm(task=…)` → `_resolve_task_provider_model`, then
//! `resolve_vision_provider_client` for vision, `resolve_provider_client` /
//! `_resolve_auto` for the others). One [`resolve`] serves every [`Task`].
//!
//! Every task reads `auxiliary.<task>.{provider, model, base_url, api_key,
//! key_env}` the same way ([`TaskCfg`]); then:
//! 0. vision only: `agent.image_input_mode: native` → native (Hermes' fast
//!    path).
//! 1. `auxiliary.<task>.base_url`: with `api_key` (or no named provider) →
//!    `custom` at that URL; a named first-class provider keeps its identity
//!    there (its key, headers, model). `provider: openai` is `custom` at
//!    api.openai.com/v1. Hermes ignores the URL for openrouter; we honour it
//!    so tests and proxies work.
//! 2. `auxiliary.<task>.provider` (not `auto`): that provider's client
//!    ([`named_client`]). When it cannot run, vision falls back to the auto
//!    chain (Hermes: "Vision provider %s unavailable, falling back to auto");
//!    a text task only from `openrouter` and `custom` (`call_llm`), else
//!    Hermes' "is set in config.yaml" error.
//! 3. auto (auto.rs): vision's chain (the main provider with vision's rules,
//!    then OpenRouter, Nous Portal, DeepInfra) or Hermes' `_resolve_auto` for
//!    text tasks (the main provider and model, then OpenRouter, Nous, the main
//!    custom endpoint, the API-key providers).
//! 4. nothing: vision goes native (Codex's own model looks at the image) when
//!    nothing was asked for; a text task does without (the caller truncates
//!    or speaks untagged). A provider that was asked for and cannot run is
//!    Hermes' "No LLM provider configured" error, with what to set.
//!
//! The provider clients themselves (OpenRouter, Nous, DeepInfra, custom, the
//! API-key providers, the ChatGPT sign-in) are built in clients.rs.

use super::clients::{build, codex, is_keyed, keyed, main_custom};
use super::{apikey, auto, providers};
use crate::hermes::{Context, envvars};
use crate::llm::endpoint::{Mode, OPENAI_BASE_URL};
use crate::llm::provider::Provider;

/// What `tools` shows as the provider when a task has none.
pub(crate) const NO_PROVIDER: &str = "none";

/// An auxiliary task: its `auxiliary.<name>` config section and the legacy
/// environment variable that names its model when the config does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Task {
    pub name: &'static str,
    pub model_var: Option<&'static str>,
}

impl Task {
    /// `vision_analyze` / `browser_vision` (`AUXILIARY_VISION_MODEL` is the
    /// override hermes-agent's tools/vision_tools.py reads).
    pub(crate) const VISION: Task = Task::new("vision", Some(envvars::AUXILIARY_VISION_MODEL));

    pub(crate) const fn new(name: &'static str, model_var: Option<&'static str>) -> Task {
        Task { name, model_var }
    }

    /// Vision has its own client rules (Hermes' `resolve_vision_provider_client`):
    /// Codex's own model instead of the Codex wire, dedicated vision models,
    /// text-only main models skipped.
    pub(crate) fn is_vision(self) -> bool {
        self.name == "vision"
    }
}

/// The mode plus what `tools`/`doctor` show: the provider and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolution {
    pub mode: Mode,
    /// The provider as `tools` shows it (`native`, or [`NO_PROVIDER`]).
    pub provider: String,
    pub why: String,
}

/// `auxiliary.<task>.*` as Hermes reads it (`_resolve_task_provider_model`).
struct TaskCfg {
    provider: Provider,
    model: Option<String>,
    base_url: Option<String>,
    api_key: Option<String>,
}

impl TaskCfg {
    fn read(ctx: &Context, task: Task) -> TaskCfg {
        let cfg = ctx.sections().auxiliary.task(task.name);
        let s = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let env = |var: &str| {
            ctx.env
                .get(var)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        // `model: auto` means "inherit", not a model id; the task's legacy
        // variable names the model when the key is unset.
        let model = s(&cfg.model)
            .filter(|m| !m.eq_ignore_ascii_case("auto"))
            .or_else(|| task.model_var.and_then(env));
        // `key_env` / `api_key_env`: the variable holding the key.
        let api_key =
            s(&cfg.api_key).or_else(|| env(&s(&cfg.key_env).or_else(|| s(&cfg.api_key_env))?));
        TaskCfg {
            provider: normalize(ctx, s(&cfg.provider).as_deref()),
            model,
            base_url: s(&cfg.base_url).map(|b| b.trim_end_matches('/').to_string()),
            api_key,
        }
    }
}

/// The auxiliary model for `task` (see the module doc). Cheap: config,
/// environment and `auth.json` only. `Mode::Native` means none: vision hands
/// the image to Codex's own model, a text task does without.
pub(crate) fn resolve(ctx: &Context, task: Task) -> Resolution {
    if task.is_vision()
        && ctx
            .sections()
            .agent
            .image_input_mode
            .as_deref()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("native"))
    {
        return native("agent.image_input_mode: native (Hermes' native fast path)");
    }
    let t = TaskCfg::read(ctx, task);
    // `provider: openai` is a direct-API alias: custom at api.openai.com/v1.
    let (provider, base_url) = if t.provider == Provider::OpenAi {
        (
            Provider::Custom,
            Some(t.base_url.clone().unwrap_or_else(|| OPENAI_BASE_URL.into())),
        )
    } else {
        (t.provider.clone(), t.base_url.clone())
    };
    match base_url {
        Some(base) => explicit_endpoint(ctx, task, &t, &provider, base),
        None if provider != Provider::Auto => explicit_provider(ctx, task, &t, &provider),
        None => auto::resolve(ctx, task, t.model),
    }
}

/// The mode vision runs in (see [`resolve`]).
pub(crate) fn vision_mode(ctx: &Context) -> Mode {
    resolve(ctx, Task::VISION).mode
}

/// Step 1, `auxiliary.<task>.base_url`: `custom` there when the task gives
/// a key or names no provider; else the named provider at that URL.
fn explicit_endpoint(
    ctx: &Context,
    task: Task,
    t: &TaskCfg,
    provider: &Provider,
    base: String,
) -> Resolution {
    let keep = !matches!(provider, Provider::Auto | Provider::Custom) && t.api_key.is_none();
    let p = &if keep {
        provider.clone()
    } else {
        Provider::Custom
    };
    let why = format!("auxiliary.{}.base_url ({base})", task.name);
    let model = t.model.clone();
    let hit = match p {
        // Text tasks speak Codex Responses with the ChatGPT sign-in; vision
        // never does (Codex's own model looks instead).
        Provider::OpenAiCodex if !task.is_vision() => codex(ctx, task, Some(base), model, &why),
        // Vision takes DeepInfra's model from its live catalog (`build`).
        _ if is_keyed(p) || (*p == Provider::DeepInfra && !task.is_vision()) => {
            keyed(ctx, task, p, Some(base), None, model, &why).map_err(|e| e.0)
        }
        _ => build(ctx, task, p, Some(base), t.api_key.clone(), model, &why)
            .ok_or_else(|| missing(task, p)),
    };
    hit.unwrap_or_else(|reason| no_client(task, p, reason))
}

/// Step 2, `auxiliary.<task>.provider` (not `auto`): the provider's client,
/// else the fallback its task allows, else Hermes' error.
fn explicit_provider(ctx: &Context, task: Task, t: &TaskCfg, provider: &Provider) -> Resolution {
    let why = format!("auxiliary.{}.provider: {provider}", task.name);
    let reason = match named_client(ctx, task, t, provider, &why) {
        Ok(r) => return r,
        Err(reason) => reason,
    };
    // Vision: "Vision provider %s unavailable, falling back to auto"; text
    // tasks (call_llm): only openrouter and custom fall back to auto detection.
    if (task.is_vision() || matches!(provider, Provider::OpenRouter | Provider::Custom))
        && let Some(mut r) = auto::auto(ctx, task, t.model.clone())
    {
        r.why = format!("{} ({provider} unavailable: {reason})", r.why);
        return r;
    }
    cannot_run(task, provider, reason)
}

/// The client for provider `p` named by `auxiliary.<task>.provider`: `Ok` is
/// the answer (a client, native, or "not a provider Hermes knows"), `Err`
/// why the provider cannot run.
///
/// Vision: `openrouter`, `nous`, `deepinfra` strictly; `openai-codex` →
/// native (Codex is the model); `custom` → the main `model.base_url`; any of
/// Hermes' API-key providers (providers.rs, apikey.rs: Hermes' generic
/// router), `zai` at its pinned OpenAI-wire endpoint; providers hermes-mcp
/// cannot call → native, saying why. Text tasks: the same providers with the
/// task's model, else the provider's auxiliary model, else the main model
/// (`resolve_provider_client`); `openai-codex` on the Codex Responses wire.
fn named_client(
    ctx: &Context,
    task: Task,
    t: &TaskCfg,
    p: &Provider,
    why: &str,
) -> Result<Resolution, String> {
    let vision = task.is_vision();
    let model = if vision {
        t.model.clone()
    } else {
        t.model.clone().or_else(|| {
            providers::api_key_provider(p.as_str())
                .map(|p| p.aux_model)
                .filter(|m| !m.is_empty())
                .map(String::from)
                .or_else(|| main_model(ctx))
        })
    };
    let found = |r: Option<Resolution>| r.ok_or_else(|| missing(task, p));
    // The provider's client with the task's own key and model.
    let with_task_key = || {
        found(build(
            ctx,
            task,
            p,
            None,
            t.api_key.clone(),
            t.model.clone(),
            why,
        ))
    };
    match p {
        Provider::OpenAiCodex | Provider::Native if vision => Ok(native(format!(
            "{why}: Codex's own model looks at the image"
        ))),
        Provider::OpenAiCodex => codex(ctx, task, None, model, why),
        Provider::OpenRouter | Provider::Nous => with_task_key(),
        Provider::DeepInfra if vision => with_task_key(),
        Provider::Custom => found(main_custom(ctx, task, t.model.clone(), why)),
        p if providers::uncallable(p.as_str()).is_some() => {
            let u = providers::uncallable(p.as_str()).unwrap_or_default();
            if vision {
                Ok(native(format!(
                    "{why}: {u} — hermes-mcp cannot call it, so Codex's own model looks at the image"
                )))
            } else {
                Err(format!("{u}: hermes-mcp cannot call it"))
            }
        }
        // Hermes pins Z.AI's OpenAI-wire endpoint for explicit vision, and
        // passes the task's api_key to it (no other provider reads
        // auxiliary.vision.api_key without a base_url).
        Provider::Zai if vision => {
            let base = Some(providers::ZAI_OPENAI_URLS[0].to_string());
            keyed(ctx, task, p, base, t.api_key.clone(), model, why).map_err(|e| e.0)
        }
        p if is_keyed(p) || *p == Provider::DeepInfra => {
            let key = if vision { None } else { t.api_key.clone() };
            keyed(ctx, task, p, None, key, model, why).map_err(|e| e.0)
        }
        other => Ok(unknown_provider(task, other, why)),
    }
}

/// Hermes' `_normalize_aux_provider` (the aliases a task can meet).
pub(super) fn normalize(ctx: &Context, p: Option<&str>) -> Provider {
    let mut p = p
        .unwrap_or(Provider::Auto.as_str())
        .trim()
        .to_ascii_lowercase();
    if let Some(rest) = p.strip_prefix("custom:") {
        if rest.trim().is_empty() {
            return Provider::Custom;
        }
        p = rest.trim().to_string();
    }
    match Provider::parse(&p) {
        Provider::Codex => Provider::OpenAiCodex,
        Provider::Main => match main_provider(ctx) {
            Some(m) if !matches!(m, Provider::Auto | Provider::Main) => m,
            _ => Provider::Custom,
        },
        _ if matches!(p.as_str(), "deep-infra" | "deepinfra-ai") => Provider::DeepInfra,
        _ => Provider::parse(providers::aux_alias(&p)),
    }
}

/// `model.provider` (Hermes' `_read_main_provider`), lower-cased.
pub(super) fn main_provider(ctx: &Context) -> Option<Provider> {
    ctx.sections()
        .model
        .provider
        .as_deref()
        .map(|p| p.trim().to_ascii_lowercase())
        .filter(|p| !p.is_empty())
        .map(|p| Provider::parse(&p))
}

/// `model.default` (or `model: <string>`): Hermes' `_read_main_model`.
pub(super) fn main_model(ctx: &Context) -> Option<String> {
    ctx.sections().model.default.clone()
}

/// What `provider` needs and does not have, for the "why" texts.
pub(super) fn missing(task: Task, provider: &Provider) -> String {
    match provider {
        Provider::OpenRouter => "OPENROUTER_API_KEY not set in ~/.hermes/.env".into(),
        Provider::Nous => "no Nous Portal login in ~/.hermes/auth.json: run `hermes auth`".into(),
        Provider::DeepInfra => "DEEPINFRA_API_KEY not set in ~/.hermes/.env".into(),
        Provider::Custom => format!(
            "no endpoint: set auxiliary.{}.base_url or model.base_url",
            task.name
        ),
        Provider::OpenAiCodex => {
            "no ChatGPT sign-in in auth.json or no model.default: run `hermes auth codex`, or set model.default".into()
        }
        other => apikey::missing_key(other),
    }
}

// Hermes' answers when a task has no model, worded per task: vision's texts
// say Codex's own model looks instead; a text task's that it does without.

/// Mode native: vision hands the image to Codex's own model.
pub(super) fn native(why: impl Into<String>) -> Resolution {
    Resolution {
        mode: Mode::Native,
        provider: Provider::Native.to_string(),
        why: why.into(),
    }
}

/// Mode native for a text task: no model, the caller does without.
pub(super) fn skipped(why: String) -> Resolution {
    Resolution {
        mode: Mode::Native,
        provider: NO_PROVIDER.into(),
        why,
    }
}

fn misconfigured(provider: &Provider, why: String) -> Resolution {
    Resolution {
        mode: Mode::Misconfigured(why.clone()),
        provider: provider.to_string(),
        why,
    }
}

/// Vision's error when a requested provider has no client, with what to set.
fn unavailable(provider: &Provider, reason: String) -> Resolution {
    Resolution {
        mode: Mode::Misconfigured(format!(
            "No LLM provider configured for task=vision provider={provider}. Run: hermes setup ({provider}: {reason})"
        )),
        provider: NO_PROVIDER.into(),
        why: format!("auxiliary.vision.provider: {provider} cannot run: {reason}"),
    }
}

/// Hermes' "No LLM provider configured" when the task's endpoint (step 1)
/// has no client. Text tasks name what the provider needs (`missing`),
/// whatever stopped it.
fn no_client(task: Task, provider: &Provider, reason: String) -> Resolution {
    if task.is_vision() {
        return unavailable(provider, reason);
    }
    // The ChatGPT sign-in's reason says which of its two needs is missing.
    let what = if *provider == Provider::OpenAiCodex {
        reason
    } else {
        missing(task, provider)
    };
    misconfigured(
        provider,
        format!(
            "No LLM provider configured for task={} provider={provider} ({what}). Run: hermes setup",
            task.name
        ),
    )
}

/// Hermes' error when the task's provider (step 2) cannot run and no
/// fallback serves.
fn cannot_run(task: Task, provider: &Provider, reason: String) -> Resolution {
    if task.is_vision() {
        return unavailable(provider, reason);
    }
    misconfigured(
        provider,
        format!(
            "Provider '{provider}' is set in config.yaml (auxiliary.{}.provider) but cannot be used: {reason}",
            task.name
        ),
    )
}

/// `auxiliary.<task>.provider` names no provider Hermes knows.
fn unknown_provider(task: Task, other: &Provider, why: &str) -> Resolution {
    if task.is_vision() {
        return Resolution {
            mode: Mode::Misconfigured(format!(
                "auxiliary.vision.provider '{other}' is not a provider Hermes knows: use one of Hermes' providers (openrouter, nous, deepinfra, openai, anthropic, gemini, zai, xai, minimax, ...), or custom with auxiliary.vision.base_url (or remove auxiliary.vision to let Codex's own model look at images)"
            )),
            provider: other.to_string(),
            why: why.to_string(),
        };
    }
    let task = task.name;
    misconfigured(
        other,
        format!(
            "auxiliary.{task}.provider '{other}' is not a provider Hermes knows: use one of Hermes' providers (openrouter, nous, openai-codex, anthropic, gemini, zai, ...), custom with auxiliary.{task}.base_url, or auto"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::hermes::context::test_ctx as ctx;
    use crate::llm::endpoint::{
        self as auxiliary, AuxConfig, DEFAULT_AGGREGATOR_MODEL, OPENROUTER_BASE_URL,
    };
    use crate::llm::task::vision::request;
    use crate::llm::wire::openai::body as request_body;

    fn mode(c: &Context) -> Mode {
        vision_mode(c)
    }

    /// Text task `name` (with its legacy model variable `var`).
    fn text_task(c: &Context, name: &'static str, var: Option<&'static str>) -> Resolution {
        resolve(c, Task::new(name, var))
    }

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
            Mode::Auxiliary(a) if a.provider == Provider::OpenRouter
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
        let body = request_body(&request(&a, "p", "data:image/png;base64,AA".into()));
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
        let r = text_task(&c, "web_extract", None);
        assert_eq!(r.provider, "deepseek");
        assert_eq!(aux(&r).model, "deepseek-reasoner");
        assert_eq!(aux(&r).task, "web_extract");
        // The task's model replaces the main one.
        let c = ctx(
            "model:\n  provider: deepseek\n  default: deepseek-reasoner\nauxiliary:\n  web_extract:\n    model: deepseek-chat\n",
            &[("DEEPSEEK_API_KEY", "dk-1234")],
        );
        assert_eq!(
            aux(&text_task(&c, "web_extract", None)).model,
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
        let r = text_task(
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
        let r = text_task(&c, "tts_audio_tags", None);
        assert_eq!(r.provider, "openrouter");
        assert_eq!(aux(&r).model, auxiliary::DEFAULT_AGGREGATOR_MODEL);
        assert!(r.why.contains("skipped"), "{}", r.why);
        // Hermes' default timeout for the tag rewrite.
        assert_eq!(aux(&r).timeout, std::time::Duration::from_secs(30));
        // The API-key chain: the first provider with a key and an aux model.
        let c = ctx("", &[("DEEPSEEK_API_KEY", "dk-1234")]);
        let r = text_task(&c, "web_extract", None);
        assert_eq!(
            (r.provider.as_str(), aux(&r).model.as_str()),
            ("deepseek", "deepseek-chat")
        );
        // Nothing at all.
        let r = text_task(&ctx("", &[]), "web_extract", None);
        assert_eq!(r.mode, Mode::Native);
        assert_eq!(r.provider, "none");
    }

    /// The ChatGPT route needs a sign-in and a model: its message says which
    /// is missing (named provider, and the main provider in auto).
    #[test]
    fn the_chatgpt_route_says_which_of_its_needs_is_missing() {
        let codex = tempfile::tempdir().expect("tempdir");
        let home = codex.path().to_str().expect("utf-8");
        let explicit = "auxiliary:\n  web_extract:\n    provider: codex\n";
        let why =
            |yaml: &str| match text_task(&ctx(yaml, &[("CODEX_HOME", home)]), "web_extract", None)
                .mode
            {
                Mode::Misconfigured(m) => m,
                m => panic!("{m:?}"),
            };
        let m = why(explicit);
        assert!(
            m.contains("no ChatGPT sign-in (neither")
                && m.contains(
                    "; and no model: model.default (or auxiliary.web_extract.model) is not set"
                ),
            "{m}"
        );
        let m = why(&format!("{explicit}model:\n  default: gpt-5\n"));
        assert!(
            m.contains("no ChatGPT sign-in (neither") && !m.contains("no model"),
            "{m}"
        );
        std::fs::write(
            codex.path().join("auth.json"),
            r#"{"tokens": {"access_token": "a.b.c", "refresh_token": "r"}}"#,
        )
        .expect("auth.json");
        let m = why(explicit);
        assert!(m.contains("signed in to ChatGPT, but no model: model.default (or auxiliary.web_extract.model) is not set in config.yaml"), "{m}");
        assert!(!m.contains("no ChatGPT sign-in"), "{m}");
        std::fs::remove_file(codex.path().join("auth.json")).expect("rm");
        // auto with the ChatGPT route as the main provider.
        let auto =
            |yaml: &str| text_task(&ctx(yaml, &[("CODEX_HOME", home)]), "web_extract", None).why;
        let w = auto("model:\n  provider: openai-codex\n  default: gpt-5\n");
        assert!(
            w.contains("main provider openai-codex: no ChatGPT sign-in (neither"),
            "{w}"
        );
        assert!(!w.contains("model.default"), "{w}");
        let w = auto("model:\n  provider: openai-codex\n");
        assert!(
            w.contains("main provider openai-codex: no model.default in config.yaml"),
            "{w}"
        );
    }

    #[test]
    fn explicit_provider_rules() {
        // An explicit provider without its key is Hermes' error, no fallback.
        let c = ctx(
            "auxiliary:\n  web_extract:\n    provider: zai\n",
            &[("OPENROUTER_API_KEY", "or")],
        );
        let r = text_task(&c, "web_extract", None);
        let Mode::Misconfigured(m) = &r.mode else {
            panic!("{r:?}")
        };
        assert!(m.contains("Provider 'zai' is set in config.yaml"), "{m}");
        // openrouter unavailable falls back to auto.
        let c = ctx(
            "auxiliary:\n  web_extract:\n    provider: openrouter\nmodel:\n  provider: custom\n  default: local-1\n  base_url: http://127.0.0.1:9/v1\n",
            &[],
        );
        let r = text_task(&c, "web_extract", None);
        assert_eq!(r.provider, "custom");
        assert_eq!(aux(&r).model, "local-1");
        assert!(r.why.contains("openrouter unavailable"), "{}", r.why);
        // A base URL: custom there, with the task's key and model.
        let c = ctx(
            "auxiliary:\n  web_extract:\n    base_url: http://127.0.0.1:9/v1/\n    api_key: k\n    model: m\n",
            &[],
        );
        let a = aux(&text_task(&c, "web_extract", None)).clone();
        assert_eq!(
            (a.base_url.as_str(), a.api_key.as_deref(), a.model.as_str()),
            ("http://127.0.0.1:9/v1", Some("k"), "m")
        );
        // Codex without a sign-in or model cannot run.
        let c = ctx("auxiliary:\n  web_extract:\n    provider: codex\n", &[]);
        assert!(matches!(
            text_task(&c, "web_extract", None).mode,
            Mode::Misconfigured(_)
        ));
    }
}
