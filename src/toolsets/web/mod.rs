//! Hermes' `web` toolset: `web_search` and `web_extract` (tools/web_tools.py).
//!
//! Backends are chosen as Hermes chooses them (`web.search_backend` /
//! `web.extract_backend`, then `web.backend`, then the first configured of
//! Tavily, Exa, Parallel, Firecrawl, SearXNG, Brave, DuckDuckGo; xAI only
//! when named, as Hermes never auto-detects it). Search
//! always works: DuckDuckGo's HTML endpoint needs no account. Extraction
//! always works: without an extract provider the built-in extractor fetches
//! the page itself through the SSRF-guarded [`crate::net`] client.
//!
//! Layout: [`schema`] (the tools' declarations), [`args`] (their arguments),
//! [`tool`] (one call, in Hermes' steps), [`providers`] (the search and
//! extract backends), [`extract`] and [`pdf`] (the built-in extractor).

mod args;
pub(crate) mod extract;
pub mod pdf;
pub mod providers;
mod schema;
mod tool;

use std::path::PathBuf;
use std::sync::Arc;

use crate::hermes::Context;
use crate::net::{
    BuildError as ClientError, HttpClient, LazyClient, Limits, Lookup, Policy, SystemLookup,
};
use crate::server::toolset::BoxFuture;
use crate::server::{
    Availability, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset,
};
use args::WebCall;

/// How the toolset reaches the network (the defaults for `serve`; tests
/// inject a scripted resolver and the path of the `hermes-mcp` binary).
#[derive(Clone)]
pub struct WebOptions {
    pub lookup: Arc<dyn Lookup>,
    pub limits: Limits,
    /// The `hermes-mcp` executable for the PDF child (default: this executable).
    pub helper_exe: Option<PathBuf>,
}

impl Default for WebOptions {
    fn default() -> Self {
        WebOptions {
            lookup: Arc::new(SystemLookup),
            limits: Limits::default(),
            helper_exe: None,
        }
    }
}

pub struct WebToolset {
    opts: WebOptions,
    client: LazyClient,
}

impl Default for WebToolset {
    fn default() -> Self {
        Self::new(WebOptions::default())
    }
}

impl WebToolset {
    pub fn new(opts: WebOptions) -> Self {
        WebToolset {
            opts,
            client: LazyClient::default(),
        }
    }

    fn client(&self, ctx: &Context) -> Result<Arc<HttpClient>, ClientError> {
        self.client.get_or_build(|| {
            HttpClient::new(
                Policy::from_context(ctx),
                self.opts.lookup.clone(),
                self.opts.limits.clone(),
            )
        })
    }
}

impl Toolset for WebToolset {
    fn name(&self) -> &'static str {
        "web"
    }

    fn defs(&self) -> &'static [ToolDef] {
        schema::DEFS
    }

    fn resolve(&self, _ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        def.entry(Availability::Available)
    }

    fn providers(&self, ctx: &Context) -> Vec<ProviderChoice> {
        let s = providers::search_backend(ctx);
        let e = providers::extract_backend(ctx);
        vec![
            ProviderChoice {
                job: "web_search",
                provider: providers::provider_label(ctx, s),
                why: providers::choice_reason(ctx, "web.search_backend", s),
            },
            ProviderChoice {
                job: "web_extract",
                provider: providers::provider_label(ctx, e),
                why: providers::choice_reason(ctx, "web.extract_backend", e),
            },
        ]
    }

    /// The HTTP client (its TLS configuration) and one run of the built-in
    /// extractor over a small page in memory (its parser and patterns).
    fn warm_up(&self, ctx: &Context) {
        let _ = self.client(ctx);
        const PAGE: &str = "<html><head><title>warm</title></head><body><nav><a href=\"/\">home</a></nav>\
            <article><h1>Warm</h1><p>A paragraph with <a href=\"/x\">a link</a> and <code>code</code>.</p>\
            <img src=\"data:image/png;base64,AAAA\" alt=\"a\"><ul><li>one</li></ul><pre>x</pre></article></body></html>";
        let (md, _) = extract::html_to_markdown(PAGE, "https://warm.invalid/");
        let _ = extract::convert_base64_images(&md);
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let http = match self.client(ctx) {
                Ok(c) => c,
                Err(e) => return ToolOutput::error(e.to_string()),
            };
            match WebCall::parse(call.name, call.args) {
                Some(WebCall::Search(args)) => tool::web_search(ctx, &http, args).await,
                Some(WebCall::Extract(args)) => {
                    tool::web_extract(ctx, &http, &self.opts, args, &call.progress).await
                }
                None => ToolOutput::error(format!("Unknown tool: {}", call.name)),
            }
        })
    }
}
