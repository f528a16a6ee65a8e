//! Hermes' `browser` toolset on a real headless Chromium driven over the
//! DevTools protocol (Hermes drives the Node `agent-browser` CLI instead;
//! hermes-agent: tools/browser_tool.py).
//!
//! The rooms, each a folder whose `mod.rs` says what it owns:
//!
//! * [`cdp`]: the DevTools transport (one WebSocket, flat sessions) and the
//!   typed results and events;
//! * [`chromium`]: settings, launching Chromium, the URL gate and the proxy
//!   that applies it to every connection;
//! * [`session`]: the live browser, its tab, frames and pop-ups, the bounded
//!   way commands are sent, recording;
//! * [`snapshot`]: the snapshot outline and its `eN` refs, text safety;
//! * [`tools`]: the tool handlers;
//! * [`providers`]: cloud browsers and Camofox;
//! * [`schema`]: the tool definitions; [`args`]: a call parsed into
//!   [`args::Tool`]; [`reply`]: what a call answers;
//! * [`dispatch`]: which session a call goes to, and the sessions' lifetime;
//! * this file: the toolset (its [`Toolset`] impl).
//!
//! Chromium starts on the first browser call, never before; idle sessions
//! close after `browser.inactivity_timeout`; `shutdown` leaves no process.
//!
//! With a cloud provider ([`cloud`]: `browser.cloud_provider` or Hermes'
//! credential auto-detect) the main session is a remote browser created
//! through the provider's REST API and driven over CDP like a local one; it
//! is released on idle and on shutdown. As in Hermes, a navigation to a
//! private/loopback URL then goes to a local Chromium "sidecar" instead
//! (`browser.auto_local_for_private_urls`, default on), and the other tools
//! act on whichever session the last navigation used.
//!
//! With `CAMOFOX_URL` set (and no CDP override) the tools go to a Camofox
//! server's REST API instead ([`camofox`]); that session lives in its own
//! slot and is released on idle and shutdown like the others.

mod args;
mod cdp;
pub mod chromium;
mod dispatch;
mod providers;
mod reply;
mod schema;
mod session;
mod snapshot;
#[cfg(test)]
mod testutil;
mod tools;

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Mutex;

use crate::hermes::Context;
use crate::server::toolset::BoxFuture;
use crate::server::{
    Availability, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset,
};
use chromium::settings::{self, Settings};
use providers::{camofox, cloud};
use reply::{Fail, Reply};
use session::recording;

#[derive(Default)]
pub struct BrowserToolset {
    session: Arc<Mutex<dispatch::Slots>>,
    reaper: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    http: crate::net::LazyClient,
    /// Camofox's own client: no 20 s idle cut, so a call may wait as long as
    /// Hermes lets it (`browser.command_timeout`, 30 s by default).
    camofox_http: crate::net::LazyClient,
    camofox: camofox::Shared,
}

impl BrowserToolset {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Toolset for BrowserToolset {
    fn name(&self) -> &'static str {
        "browser"
    }

    fn defs(&self) -> &'static [ToolDef] {
        schema::DEFS
    }

    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        def.entry(availability(ctx))
    }

    fn resolve_all(&self, ctx: &Context) -> Vec<ToolEntry> {
        let available = availability(ctx);
        self.defs()
            .iter()
            .map(|def| def.entry(available.clone()))
            .collect()
    }

    fn providers(&self, ctx: &Context) -> Vec<ProviderChoice> {
        let (provider, why) =
            crate::llm::task::textaux::describe(&snapshot::summary::summary_model(ctx));
        // Printed as "JOB  PROVIDER — WHY": no parentheses of its own around `why`.
        let what = if provider == "none" {
            "so snapshots over 15,000 characters are truncated"
        } else {
            "it summarizes snapshots over 15,000 characters"
        };
        vec![
            provider_choice(ctx),
            ProviderChoice {
                job: "browser_snapshot summaries",
                provider,
                why: format!("{why}; {what}"),
            },
        ]
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let settings = Settings::from_context(ctx);
            let mut guard = self.session.lock().await;
            let res = self.dispatch(ctx, &settings, &mut guard, &call).await;
            if let Some(s) = guard.active().as_mut() {
                s.last_used = Instant::now();
            }
            if let Some(c) = guard.camofox.as_mut() {
                c.last_used = Instant::now();
            }
            drop(guard);
            match res {
                Ok(Reply::Json(v)) => ToolOutput::json(v),
                Ok(Reply::Image(v, b64, mime)) => ToolOutput::json(v).with_image(b64, mime),
                Err(Fail(v)) => ToolOutput::error_json(v),
            }
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(h) = self
                .reaper
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take()
            {
                h.abort();
            }
            let mut g = self.session.lock().await;
            for s in [g.main.take(), g.local.take()].into_iter().flatten() {
                s.close().await;
            }
            if let Some(c) = g.camofox.take() {
                c.close().await;
            }
        })
    }
}

fn availability(ctx: &Context) -> Availability {
    let s = Settings::from_context(ctx);
    if s.cdp_url.is_some()
        || matches!(
            providers::select(ctx, false).backend,
            providers::Backend::Cloud(_) | providers::Backend::Camofox
        )
    {
        return Availability::Available;
    }
    match settings::find_executable(ctx) {
        Ok(_) => Availability::Available,
        Err(e) => Availability::Unavailable(e.to_string()),
    }
}

/// What `hermes-mcp tools` shows for the browser: the backend that runs and why.
fn provider_choice(ctx: &Context) -> ProviderChoice {
    let st = Settings::from_context(ctx);
    let sel = providers::select(ctx, st.cdp_url.is_some());
    let (provider, mut why) = match sel.backend {
        providers::Backend::Cdp => ("cdp".to_string(), sel.why),
        providers::Backend::Local => match settings::find_executable(ctx) {
            Ok(p) => (
                "chromium".to_string(),
                format!("{} ({})", sel.why, p.display()),
            ),
            Err(e) => ("none".to_string(), format!("{}; {e}", sel.why)),
        },
        providers::Backend::Camofox => (
            "camofox".to_string(),
            format!("{}{}", sel.why, camofox::describe(ctx)),
        ),
        providers::Backend::Cloud(p) => {
            let local = if providers::auto_local_for_private_urls(ctx) {
                "; private/loopback URLs use local Chromium (browser.auto_local_for_private_urls)"
            } else {
                ""
            };
            (cloud::provider_label(ctx, p), format!("{}{local}", sel.why))
        }
    };
    if st.record_sessions && provider == "camofox" {
        why.push_str("; browser.record_sessions does not apply to Camofox (Hermes records only its own Chromium sessions)");
    } else if st.record_sessions {
        match recording::ffmpeg(ctx) {
            Some(ff) => why.push_str(&format!(
                "; browser.record_sessions: each session is recorded to {}/session_<time>_<task>.webm (ffmpeg {}; kept 72 h)",
                recording::dir(ctx).display(),
                ff.display()
            )),
            None => why.push_str(&format!("; {}", recording::NEEDS_FFMPEG)),
        }
    }
    ProviderChoice {
        job: "browser",
        provider,
        why,
    }
}
