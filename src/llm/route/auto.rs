//! Step 3 of the task resolver (resolve.rs), `auxiliary.<task>.provider:
//! auto`: Hermes' auto-detection chains.
//!
//! Vision (hermes-agent: agent/auxiliary_client.py
//! `resolve_vision_provider_client`, auto): the main provider
//! (`model.provider`) with the main model (`model.default`), or the
//! provider's dedicated vision model (zai, xiaomi): `nous` strictly;
//! `kimi-coding*` skipped (no vision); a main model known to be text-only
//! (capability.rs) skipped; `openrouter`, `deepinfra`, `custom` and the
//! API-key providers served; `openai-codex` and providers hermes-mcp cannot
//! call (Bedrock, Vertex, Copilot, OAuth-only logins) → native, saying why.
//! Then OpenRouter (`OPENROUTER_API_KEY`), Nous Portal (`auth.json`),
//! DeepInfra (`DEEPINFRA_API_KEY`, model from the live catalog).
//!
//! Text tasks (`_resolve_auto`): the main provider with the main model,
//! whatever its type — `openai-codex` included; then OpenRouter → Nous
//! Portal → the main custom endpoint → the first API-key provider (registry
//! order) that has a key and a default auxiliary model. The task's model
//! replaces the resolved one (Hermes drops an OpenRouter-style `vendor/model`
//! for a provider whose model has no slash).

use super::capability;
use super::clients::{build, codex, is_keyed, keyed, main_custom};
use super::providers;
use super::resolve::{
    Resolution, Task, main_model, main_provider, missing, native, normalize, skipped,
};
use crate::hermes::Context;
use crate::llm::endpoint::Mode;
use crate::llm::provider::Provider;

/// Steps 3–4: the task's auto chain, else what the task does with no model.
pub(super) fn resolve(ctx: &Context, task: Task, model: Option<String>) -> Resolution {
    auto(ctx, task, model).unwrap_or_else(|| {
        if task.is_vision() {
            native("no auxiliary vision provider configured or available (auxiliary.vision, model.provider, OPENROUTER_API_KEY, Nous Portal login, DEEPINFRA_API_KEY): Codex's own model looks at the image")
        } else {
            let task = task.name;
            skipped(
                format!(
                    "no auxiliary model for {task}: auxiliary.{task} is auto and neither the main provider (model.provider + model.default) nor OpenRouter, a Nous Portal login, a custom endpoint or an API-key provider is usable"
                ),
            )
        }
    })
}

/// The task's auto chain (`None`: nothing configured at all); `model` is
/// the task's own.
pub(super) fn auto(ctx: &Context, task: Task, model: Option<String>) -> Option<Resolution> {
    if task.is_vision() {
        vision_auto(ctx, task, model)
    } else {
        text_auto(ctx, task, model)
    }
}

/// Vision: the main provider, then OpenRouter, Nous, DeepInfra.
fn vision_auto(ctx: &Context, task: Task, model: Option<String>) -> Option<Resolution> {
    let (r, skipped) = vision_chain(ctx, task, model);
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

/// Vision's chain, and why the main provider was skipped (if it was).
fn vision_chain(
    ctx: &Context,
    task: Task,
    model: Option<String>,
) -> (Option<Resolution>, Option<String>) {
    let mut skipped: Option<String> = None;
    let main = main_provider(ctx).filter(|p| *p != Provider::Auto);
    if let Some(mp) = &main {
        let mp = normalize(ctx, Some(mp.as_str()));
        let why = format!("main provider (model.provider: {mp})");
        // The main model, unless the task names one (Hermes' `_finalize`).
        let m = model.clone().or_else(|| main_model(ctx));
        // A dedicated vision model beats the chat model (Hermes'
        // `_resolve_provider_vision_default`); the task's model beats both.
        let vm = providers::vision_model(mp.as_str())
            .map(String::from)
            .or_else(|| main_model(ctx));
        let text_only = |m: &Option<String>| {
            let m = m.as_deref().unwrap_or("");
            capability::supports_vision(ctx, mp.as_str(), m) == Some(false)
        };
        let hit = match &mp {
            Provider::Nous => build(ctx, task, &mp, None, None, model.clone(), &why),
            p if providers::WITHOUT_VISION.contains(&p.as_str()) => {
                skipped = Some(format!("main provider {p} has no vision"));
                None
            }
            Provider::OpenAiCodex => {
                return (
                    Some(native(format!(
                        "{why}: Codex's own model looks at the image"
                    ))),
                    None,
                );
            }
            p if providers::uncallable(p.as_str()).is_some() => {
                return (
                    Some(native(format!(
                        "main provider {p} (model.provider): {} — hermes-mcp cannot call it, so Codex's own model looks at the image",
                        providers::uncallable(p.as_str()).unwrap_or_default()
                    ))),
                    None,
                );
            }
            // DeepInfra's catalog vision default wins over the chat model.
            Provider::DeepInfra => build(ctx, task, &mp, None, None, model.clone(), &why),
            _ if text_only(&vm) => {
                skipped = Some(format!(
                    "main model {} of {mp} is text-only (models.dev / supports_vision)",
                    vm.as_deref().unwrap_or_default()
                ));
                None
            }
            Provider::OpenRouter => build(ctx, task, &mp, None, None, m, &why),
            Provider::Custom => main_custom(ctx, task, model.clone(), &why),
            p if is_keyed(p) => match keyed(ctx, task, p, None, None, model.clone().or(vm), &why) {
                Ok(r) => Some(r),
                Err(e) => {
                    skipped = Some(format!("main provider {p} cannot run: {e}"));
                    None
                }
            },
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
    let chain = [
        (Provider::OpenRouter, "auto: OPENROUTER_API_KEY is set"),
        (Provider::Nous, "auto: Nous Portal login in auth.json"),
        (Provider::DeepInfra, "auto: DEEPINFRA_API_KEY is set"),
    ];
    for (p, why) in &chain {
        if main.as_ref() == Some(p) {
            continue;
        }
        if let Some(r) = build(ctx, task, p, None, None, model.clone(), why) {
            return (Some(r), skipped);
        }
    }
    (None, skipped)
}

/// Text tasks, `_resolve_auto`: the main provider with the main model, then
/// the chain; `notes` say why earlier candidates were skipped.
fn text_auto(ctx: &Context, task: Task, task_model: Option<String>) -> Option<Resolution> {
    let mut notes: Vec<String> = Vec::new();
    if let Some(r) = text_main(ctx, task, &mut notes) {
        return Some(with_task_model(r, task_model));
    }
    if let Some(r) = text_chain(ctx, task) {
        return Some(with_task_model(annotate(r, &notes), task_model));
    }
    if notes.is_empty() {
        None
    } else {
        Some(skipped(format!(
            "{}; no fallback provider (OPENROUTER_API_KEY, Nous Portal login, custom endpoint, API-key provider) is usable",
            notes.join("; ")
        )))
    }
}

/// `_resolve_auto` step 1: the main provider with the main model, whatever
/// its type; why it cannot serve goes to `notes`.
fn text_main(ctx: &Context, task: Task, notes: &mut Vec<String>) -> Option<Resolution> {
    let main = main_provider(ctx).filter(|p| !matches!(p, Provider::Auto | Provider::Main));
    let (Some(mp), Some(mm)) = (main.clone(), main_model(ctx)) else {
        if let Some(mp) = main {
            notes.push(format!(
                "main provider {mp}: no model.default in config.yaml"
            ));
        }
        return None;
    };
    let mp = normalize(ctx, Some(mp.as_str()));
    let why = format!("auto: main provider (model.provider: {mp}, model.default: {mm})");
    let hit = match &mp {
        Provider::OpenRouter | Provider::Nous => {
            build(ctx, task, &mp, None, None, Some(mm.clone()), &why)
        }
        Provider::Custom => main_custom(ctx, task, Some(mm.clone()), &why),
        Provider::OpenAiCodex => match codex(ctx, task, None, Some(mm.clone()), &why) {
            Ok(r) => Some(r),
            Err(e) => {
                notes.push(format!("main provider {mp}: {e}"));
                None
            }
        },
        p if providers::uncallable(p.as_str()).is_some() => {
            notes.push(format!(
                "main provider {p}: {} — hermes-mcp cannot call it",
                providers::uncallable(p.as_str()).unwrap_or_default()
            ));
            None
        }
        p if is_keyed(p) || *p == Provider::DeepInfra => {
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
    match hit {
        Some(r) if usable(&r) => return Some(r),
        Some(r) => notes.push(format!("main provider {mp}: {}", reason_of(&r))),
        None if notes.is_empty() => notes.push(format!(
            "main provider {mp} has no credentials: {}",
            missing(task, &mp)
        )),
        None => {}
    }
    None
}

/// `_resolve_auto` step 2: OpenRouter → Nous → custom → API-key providers.
fn text_chain(ctx: &Context, task: Task) -> Option<Resolution> {
    let chain = [
        (Provider::OpenRouter, "auto: OPENROUTER_API_KEY is set"),
        (Provider::Nous, "auto: Nous Portal login in auth.json"),
    ];
    for (p, why) in &chain {
        if let Some(r) = build(ctx, task, p, None, None, None, why).filter(usable) {
            return Some(r);
        }
    }
    if let Some(r) = main_custom(ctx, task, None, "auto: custom endpoint").filter(usable) {
        return Some(r);
    }
    for p in providers::API_KEY_PROVIDERS {
        // Anthropic joins the chain only when explicitly configured (not modelled);
        // providers without a default auxiliary model are skipped.
        let name = Provider::parse(p.name);
        if name == Provider::Anthropic || p.aux_model.is_empty() {
            continue;
        }
        if !p.key_vars.iter().any(|v| ctx.env.is_set(v)) {
            continue;
        }
        let why = format!("auto: {} is set", p.key_vars.join(" / "));
        if let Ok(r) = keyed(ctx, task, &name, None, None, Some(p.aux_model.into()), &why)
            && usable(&r)
        {
            return Some(r);
        }
    }
    None
}

fn usable(r: &Resolution) -> bool {
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
