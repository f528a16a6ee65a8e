//! Which `image_gen` backend runs and whether it can: `image_gen.provider`,
//! else Hermes' default (FAL), the Nous tool gateway's routes, or the ChatGPT
//! sign-in; and what `tools`/`doctor` show about that choice.

use crate::hermes::Context;
use crate::hermes::envvars;
use crate::server::{Availability, ProviderChoice};

use super::providers::{codex, managed};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Backend {
    Fal,
    OpenAi,
    /// gpt-image-2 through the ChatGPT sign-in ([`super::providers::codex`]).
    OpenAiCodex,
    /// xAI Grok Imagine ([`super::providers::xai`]).
    Xai,
    /// OpenRouter chat-completions image models ([`super::providers::openrouter`]).
    OpenRouter,
    /// DeepInfra's OpenAI-compatible images endpoint ([`super::providers::deepinfra`]).
    DeepInfra,
    /// Krea 2 through Krea's async job API ([`super::providers::krea`]).
    Krea,
    /// `image_gen.provider` names a backend hermes-mcp does not have.
    Unsupported(String),
}

impl Backend {
    /// The provider's name in results and in `tools`.
    pub(crate) fn name(&self) -> &str {
        match self {
            Backend::Fal => "fal",
            Backend::OpenAi => "openai",
            Backend::OpenAiCodex => codex::PROVIDER,
            Backend::Xai => "xai",
            Backend::OpenRouter => "openrouter",
            Backend::DeepInfra => "deepinfra",
            Backend::Krea => "krea",
            Backend::Unsupported(p) => p,
        }
    }
}

/// The backend and why: `image_gen.provider` when set (Hermes dispatches to that plugin);
/// else FAL (Hermes' in-tree default) when `FAL_KEY` is set; else, beyond Hermes, the
/// ChatGPT sign-in when there is one (a Codex user needs no key at all); else FAL, which
/// then reports what to set.
pub(crate) fn select(ctx: &Context) -> (Backend, String) {
    let configured = ctx
        .sections()
        .image_gen
        .provider
        .clone()
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty());
    if let Some(p) = configured {
        let b = match p.as_str() {
            "fal" => Backend::Fal,
            "openai" => Backend::OpenAi,
            codex::PROVIDER => Backend::OpenAiCodex,
            "xai" => Backend::Xai,
            "openrouter" => Backend::OpenRouter,
            "deepinfra" => Backend::DeepInfra,
            "krea" => Backend::Krea,
            other => Backend::Unsupported(other.to_string()),
        };
        if b == Backend::Fal
            && let Some(why) = fal_or_krea_route(ctx)
        {
            return why;
        }
        return (b, "image_gen.provider".into());
    }
    if let Some(why) = fal_or_krea_route(ctx) {
        return why;
    }
    if ctx.env.is_set(envvars::FAL_KEY) {
        return (
            Backend::Fal,
            "FAL_KEY is set and image_gen.provider is not (Hermes' default backend)".into(),
        );
    }
    if managed::fal_ready(ctx).is_ok() {
        return (
            Backend::Fal,
            format!(
                "no image_gen.provider (Hermes' default backend); {}",
                managed::why(ctx, managed::FAL_VENDOR, envvars::FAL_KEY)
            ),
        );
    }
    if let Some(src) = codex::sign_in(ctx) {
        return (
            Backend::OpenAiCodex,
            format!(
                "no image_gen.provider and no FAL_KEY; ChatGPT sign-in found in {}",
                codex::describe_source(&src)
            ),
        );
    }
    (
        Backend::Fal,
        "Hermes' default backend (no image_gen.provider)".into(),
    )
}

/// Hermes' managed Krea routing on the FAL path (see [`super::providers::managed`]).
fn fal_or_krea_route(ctx: &Context) -> Option<(Backend, String)> {
    let model = managed::krea_routed_model(ctx)?;
    Some((
        Backend::Krea,
        format!(
            "image_gen.model is Krea's {model} and the Nous tool gateway (krea) is ready (Hermes' managed Krea routing)"
        ),
    ))
}

pub(crate) fn backend(ctx: &Context) -> Backend {
    select(ctx).0
}

/// `_read_configured_image_model`: `image_gen.model`, trimmed.
pub(super) fn configured_model(ctx: &Context) -> Option<String> {
    ctx.sections()
        .image_gen
        .model
        .clone()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// A plugin provider is available when its key is set.
fn key_availability(ctx: &Context, var: &str, provider: &str) -> Availability {
    if ctx.env.is_set(var) {
        Availability::Available
    } else {
        Availability::Unavailable(format!(
            "image_gen.provider is {provider} but {var} is not set"
        ))
    }
}

pub(crate) fn availability(ctx: &Context) -> Availability {
    match backend(ctx) {
        Backend::Fal => {
            if ctx.env.is_set(envvars::FAL_KEY) {
                Availability::Available
            } else {
                match managed::fal_ready(ctx) {
                    Ok(_) => Availability::Available,
                    Err(u) => Availability::Unavailable(format!(
                        "FAL_KEY is not set: get a key at https://fal.ai/dashboard/keys and set FAL_KEY, or set image_gen.provider: openai with OPENAI_API_KEY (Nous tool gateway: {})",
                        u.reason()
                    )),
                }
            }
        }
        Backend::OpenAi => {
            if ctx.env.is_set(envvars::OPENAI_API_KEY) {
                Availability::Available
            } else {
                Availability::Unavailable(
                    "image_gen.provider is openai but OPENAI_API_KEY is not set".into(),
                )
            }
        }
        Backend::OpenAiCodex => {
            if codex::sign_in(ctx).is_some() {
                Availability::Available
            } else {
                Availability::Unavailable(format!(
                    "image_gen.provider is openai-codex but there is no ChatGPT sign-in: run `hermes auth codex` or `codex login` ({NO_SIGN_IN_WHERE})"
                ))
            }
        }
        Backend::Xai => match crate::auth::xai::peek(ctx) {
            Some(_) => Availability::Available,
            None => Availability::Unavailable(
                "image_gen.provider is xai but XAI_API_KEY is not set and Hermes holds no xAI Grok sign-in (auth.json xai-oauth)".into(),
            ),
        },
        Backend::OpenRouter => key_availability(ctx, envvars::OPENROUTER_API_KEY, "openrouter"),
        Backend::DeepInfra => key_availability(ctx, envvars::DEEPINFRA_API_KEY, "deepinfra"),
        // `is_available`: a Krea key or the managed Nous gateway.
        Backend::Krea if managed::krea_ready(ctx).is_some() => Availability::Available,
        Backend::Krea => key_availability(ctx, envvars::KREA_API_KEY, "krea"),
        Backend::Unsupported(p) => Availability::Unavailable(format!(
            "image_gen.provider '{p}' is not supported by hermes-mcp (supported: {SUPPORTED})"
        )),
    }
}

/// Where a sign-in is looked for, for messages.
const NO_SIGN_IN_WHERE: &str = "looked in $HERMES_HOME/auth.json and $CODEX_HOME/auth.json";

/// The providers `image_gen.provider` may name here.
pub(super) const SUPPORTED: &str = "fal, openai, openai-codex, xai, openrouter, deepinfra, krea";

/// `tools`/`doctor`: the provider that will run `image_generate`, and why.
pub(crate) fn provider_choice(ctx: &Context) -> ProviderChoice {
    let (b, why) = select(ctx);
    match availability(ctx) {
        Availability::Available => {
            let managed = match b {
                Backend::Fal => managed::fal_via_gateway(ctx),
                Backend::Krea => managed::krea_ready(ctx).is_some(),
                _ => false,
            };
            let (provider, why) = if managed {
                let (vendor, var) = match b {
                    Backend::Fal => (managed::FAL_VENDOR, envvars::FAL_KEY),
                    _ => (managed::KREA_VENDOR, envvars::KREA_API_KEY),
                };
                let detail = managed::why(ctx, vendor, var);
                (
                    format!("{} ({})", b.name(), crate::gateway::PROVIDER_LABEL),
                    if why.contains("Nous tool gateway") {
                        why
                    } else {
                        format!("{why}; {detail}")
                    },
                )
            } else {
                (b.name().to_string(), why)
            };
            ProviderChoice {
                job: "image_generate",
                provider,
                why,
            }
        }
        Availability::Unavailable(reason) => ProviderChoice {
            job: "image_generate",
            provider: "none".into(),
            why: format!("{} ({why}): {reason}", b.name()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::context::test_ctx as ctx;

    #[test]
    fn availability_names_what_is_missing() {
        assert!(
            matches!(availability(&ctx("", &[])), Availability::Unavailable(r) if r.contains("FAL_KEY"))
        );
        assert!(availability(&ctx("", &[("FAL_KEY", "k")])).is_available());
        assert!(
            matches!(availability(&ctx("image_gen: {provider: openai}", &[("FAL_KEY", "k")])),
            Availability::Unavailable(r) if r.contains("OPENAI_API_KEY"))
        );
        assert!(
            availability(&ctx(
                "image_gen: {provider: openai}",
                &[("OPENAI_API_KEY", "k")]
            ))
            .is_available()
        );
        assert!(
            matches!(availability(&ctx("image_gen: {provider: xai}", &[("FAL_KEY", "k")])),
            Availability::Unavailable(r) if r.contains("XAI_API_KEY is not set"))
        );
        assert!(
            matches!(availability(&ctx("image_gen: {provider: midjourney}", &[("FAL_KEY", "k")])),
            Availability::Unavailable(r) if r.contains("'midjourney' is not supported"))
        );
    }
}
