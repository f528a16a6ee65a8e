//! `image_generate` through the Nous tool gateway: FAL's queue (`fal-queue`)
//! and Krea 2 (`krea`), chosen as Hermes chooses them
//! (hermes-agent: tools/image_generation_tool.py `_resolve_managed_fal_gateway`,
//! `_maybe_route_managed_krea`; plugins/image_gen/krea `_resolve_managed_krea_gateway`).
//!
//! * FAL: direct `FAL_KEY` wins unless `image_gen.use_gateway`; without a
//!   key the gateway is Hermes' default backend.
//! * Krea: direct `KREA_API_KEY` wins unless `image_gen.use_gateway`. And when
//!   no plugin provider is configured (unset or `fal`) but `image_gen.model` is
//!   a native `krea-2-*` id, a gateway user is routed to Krea's gateway.
//!
//! These probes are cheap (no network): the tool call warms the entitlement
//! first ([`gateway::warm`]) so they see the portal's answer.

use super::krea;
use crate::gateway::{self, Gateway, Unavailable};
use crate::hermes::{Context, envvars};

pub(crate) const FAL_VENDOR: &str = "fal-queue";
pub(crate) const KREA_VENDOR: &str = "krea";

/// FAL calls go to the gateway (no `FAL_KEY`, or `image_gen.use_gateway`).
pub(crate) fn fal_via_gateway(ctx: &Context) -> bool {
    !ctx.env.is_set(envvars::FAL_KEY) || ctx.sections().image_gen.use_gateway
}

pub(crate) fn fal_ready(ctx: &Context) -> Result<Gateway, Unavailable> {
    gateway::peek(ctx, FAL_VENDOR)
}

/// Krea calls go to the gateway (no `KREA_API_KEY`, or `image_gen.use_gateway`).
pub(crate) fn krea_via_gateway(ctx: &Context) -> bool {
    !ctx.env.is_set(envvars::KREA_API_KEY) || ctx.sections().image_gen.use_gateway
}

/// `_resolve_managed_krea_gateway`, without the network.
pub(crate) fn krea_ready(ctx: &Context) -> Option<Gateway> {
    krea_via_gateway(ctx)
        .then(|| gateway::peek(ctx, KREA_VENDOR).ok())
        .flatten()
}

/// `_maybe_route_managed_krea`'s test: the native Krea model a FAL-path
/// config names, when a gateway user would be routed to Krea's gateway.
pub(crate) fn krea_routed_model(ctx: &Context) -> Option<&'static str> {
    let provider = ctx
        .sections()
        .image_gen
        .provider
        .clone()
        .map(|s| s.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if !(provider.is_empty() || provider == "fal") {
        return None;
    }
    let model = krea::native_model(ctx.sections().image_gen.model.as_deref()?.trim())?;
    krea_ready(ctx).map(|_| model)
}

/// Why the gateway, for `tools`/`doctor`.
pub(crate) fn why(ctx: &Context, vendor: &'static str, key_var: &str) -> String {
    let route = if ctx.env.is_set(key_var) {
        format!(
            "image_gen.use_gateway is set, so the Nous tool gateway ({vendor}) wins over {key_var}"
        )
    } else {
        format!("no {key_var}: Nous tool gateway ({vendor})")
    };
    match gateway::peek(ctx, vendor) {
        Ok(g) => format!("{route} at {}, Nous login entitled", g.origin),
        Err(u) => format!("{route}, not usable: {}", u.reason()),
    }
}
