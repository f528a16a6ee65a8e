//! `image_generate` (toolset `image_gen`): FAL.ai through its queue API
//! (Hermes' in-tree path, `tools/image_generation_tool.py`) or OpenAI's Images
//! API (`image_gen.provider: openai`, Hermes' `plugins/image_gen/openai`), or
//! the other plugins `image_gen.provider` may name (codex, xai, openrouter,
//! deepinfra, krea: [`providers`]).
//!
//! Every generated image is saved under `$HERMES_HOME/cache/images/`, `image`
//! in the result is that absolute path, and the image is also returned as MCP
//! image content. Config keys (besides Hermes' `image_gen.provider`/`model`):
//! `image_gen.fal.base_url` (default `https://queue.fal.run`),
//! `image_gen.fal.timeout` (seconds a queued request may take, default 300),
//! `image_gen.openai.timeout` (default 300); OpenAI's base URL is
//! `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), as the OpenAI SDK reads it.
//!
//! Every backend goes through one request skeleton and states only what differs: it
//! builds an `ApiRequest` (`net::vendor`), sends it with `vendor::exchange` (which sorts
//! what went wrong into a `vendor::Failure`), words each failure in the texts Hermes'
//! plugin gives ([`error::GenError`]; `providers::plugin_http` for the plugins that share
//! theirs), and reads the image out of the answer ([`answer`]). [`tool`] then
//! saves it ([`save`]) and answers in Hermes' result shape.
//!
//! Layout: [`schema`] (the tool's declaration), [`args`] (its arguments), [`tool`] (one
//! call), [`backend`] (which backend runs, and why), [`catalog`] (models, tiers,
//! config), [`providers`] (one module per backend; `managed` for the Nous tool
//! gateway's routes), [`answer`] (images in answers), [`source`] (local edit sources),
//! [`save`] (the cache file), [`error`].

mod answer;
mod args;
mod backend;
mod catalog;
mod error;
mod providers;
mod save;
mod schema;
mod source;
mod tool;

use crate::hermes::Context;
use crate::net::vendor::LazyHttp;
use crate::server::toolset::BoxFuture;
use crate::server::{ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};
use backend::{availability, provider_choice};
use schema::description;

#[derive(Default)]
pub(crate) struct ImageGenToolset {
    http: LazyHttp,
}

impl Toolset for ImageGenToolset {
    fn name(&self) -> &'static str {
        "image_gen"
    }

    fn defs(&self) -> &'static [ToolDef] {
        schema::DEFS
    }

    /// Hermes words the description from the configured model.
    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        let mut entry = def.entry(availability(ctx));
        entry.spec.description = description(ctx);
        entry
    }

    fn providers(&self, ctx: &Context) -> Vec<ProviderChoice> {
        vec![provider_choice(ctx)]
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { self.generate(ctx, call).await })
    }
}
