//! Hermes' `browser` toolset on a real headless Chromium driven over the
//! DevTools protocol (Hermes drives the Node `agent-browser` CLI instead;
//! hermes-agent: tools/browser_tool.py).
//!
//! * [`settings`]: `browser.*` config, executable lookup (cheap, for `tools/list`);
//! * [`launch`]: Chromium in its own process group with a fresh profile;
//! * [`session`]: the CDP connection, the tab and its event tasks;
//! * [`navigator`]: `Page.navigate` on a connection of our own;
//! * [`cdp`], [`protocol`], [`page`]: raw commands, their typed results, and
//!   the bounded, dialog-aware way every tool sends them;
//! * [`snapshot`]: the snapshot outline and `eN` refs; [`domsnap`] reads the
//!   in-page walker's tree (`snapshot.js`), [`walk`] runs it over CDP (frames
//!   included) and finds the element behind a ref;
//! * [`urlcheck`]: the single URL gate (rules from `crate::net::policy`);
//! * [`textsafety`]: redaction of page text and the evaluate policy;
//! * [`schemas`]: the tool definitions; [`args`]: a call parsed into [`args::Tool`];
//! * the tools: [`navigate`] (navigate, back), [`snapshot_tool`],
//!   [`actions`] (click, type, press, scroll), [`pageinfo`] (images,
//!   console, evaluate), [`screenshot`] (vision);
//! * this file: the toolset, the session's lifetime, and dispatch.
//!
//! Chromium starts on the first browser call, never before; idle sessions
//! close after `browser.inactivity_timeout`; `shutdown` leaves no process.

mod actions;
mod args;
mod cdp;
mod domsnap;
mod frames;
mod launch;
mod navigate;
mod navigator;
mod page;
mod pageinfo;
mod popup;
mod protocol;
mod reply;
mod schemas;
mod screenshot;
mod session;
mod settings;
mod snapshot;
mod snapshot_tool;
mod textsafety;
mod urlcheck;
mod walk;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::hermes::Context;
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};
use args::{ConsoleArgs, Tool};
use reply::{Fail, Reply};
use session::Session;
use settings::Settings;

#[derive(Default)]
pub struct BrowserToolset {
    session: Arc<Mutex<Option<Session>>>,
    reaper: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
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
        schemas::DEFS
    }

    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        def.entry(availability(ctx))
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let settings = Settings::from_context(ctx);
            let mut guard = self.session.lock().await;
            let res = self.dispatch(ctx, &settings, &mut guard, &call).await;
            if let Some(s) = guard.as_mut() {
                s.last_used = Instant::now();
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
            if let Some(h) = self.reaper.lock().unwrap().take() {
                h.abort();
            }
            let s = self.session.lock().await.take();
            if let Some(s) = s {
                s.close().await;
            }
        })
    }
}

fn availability(ctx: &Context) -> Availability {
    let s = Settings::from_context(ctx);
    if s.cdp_url.is_some() {
        return Availability::Available;
    }
    match settings::find_executable(ctx) {
        Ok(_) => Availability::Available,
        Err(e) => Availability::Unavailable(e.to_string()),
    }
}

/// Dialog news rides along with every result: dialogs still open (with how
/// to answer them) and dialogs handled since the last result.
fn add_dialog_news(sess: &Session, r: &mut Result<Reply, Fail>) {
    let handled: Vec<Value> = std::mem::take(&mut *sess.tab.state.handled_dialogs.lock().unwrap());
    let pending: Vec<Value> = sess
        .tab
        .state
        .pending()
        .iter()
        .map(|d| d.to_json())
        .collect();
    let (Ok(Reply::Json(v)) | Ok(Reply::Image(v, _, _)) | Err(Fail(v))) = r;
    if let Some(o) = v.as_object_mut() {
        if !pending.is_empty() {
            o.insert("pending_dialogs".into(), Value::Array(pending));
            o.insert("dialog_hint".into(), json!("A JavaScript dialog is open and blocks the page. Respond with browser_press key=\"Enter\" to accept (a prompt gets its default text) or key=\"Escape\" to dismiss."));
        }
        if !handled.is_empty() {
            o.insert("dialogs_handled".into(), Value::Array(handled));
        }
    }
}

impl BrowserToolset {
    async fn dispatch(
        &self,
        ctx: &Context,
        st: &Settings,
        slot: &mut Option<Session>,
        call: &ToolCall,
    ) -> Result<Reply, Fail> {
        // Cheap argument checks before any browser starts.
        let tool = Tool::parse(call.name, &call.args).map_err(Fail::msg)?;
        if let Tool::Console(ConsoleArgs {
            expression: Some(e),
            ..
        }) = &tool
            && let Some(err) =
                textsafety::eval_policy_error(e, st.restrict_evaluate, st.allow_unsafe_evaluate)
        {
            return Err(Fail::msg(err));
        }
        // The browser went away (killed, crashed, connection lost): drop it;
        // browser_navigate starts a new one.
        let mut gone = false;
        if let Some(sess) = slot.as_mut()
            && !sess.is_alive()
        {
            tracing::warn!("browser: the browser exited or its connection closed");
            if let Some(x) = slot.take() {
                x.close().await;
            }
            gone = true;
        }
        let url = match &tool {
            Tool::Navigate(a) => {
                Some(navigate::precheck_url(&a.url, ctx, st, slot.as_ref()).await?)
            }
            _ if slot.is_none() => {
                return Err(Fail::msg(if gone {
                    "The browser exited unexpectedly. Call browser_navigate to start a new one."
                } else {
                    "No browser session: call browser_navigate first to open a page."
                }));
            }
            _ => None,
        };
        let sess = self.ensure(ctx, st, slot).await?;
        // A crashed tab: say so, and replace it on the next navigation.
        if sess.tab.state.crashed.load(Ordering::SeqCst) {
            if url.is_some() {
                sess.replace_tab(st).await.map_err(Fail::msg)?;
            } else {
                return Err(Fail::msg(
                    "The browser tab crashed (the page's renderer process died). Call browser_navigate to open the page again in a fresh tab.",
                ));
            }
        }
        let mut r = match tool {
            Tool::Navigate(_) => {
                navigate::navigate(ctx, st, sess, url.as_deref().unwrap_or_default())
                    .await
                    .map(Reply::Json)
            }
            Tool::Snapshot(a) => snapshot_tool::snapshot_tool(ctx, st, sess, a.full, &a.task)
                .await
                .map(Reply::Json),
            Tool::Click(a) => actions::click(st, sess, &a.element).await.map(Reply::Json),
            Tool::Type(a) => actions::type_text(st, sess, &a.element, &a.text)
                .await
                .map(Reply::Json),
            Tool::Press(a) => actions::press(st, sess, &a.key).await.map(Reply::Json),
            Tool::Scroll(dir) => actions::scroll(st, sess, dir).await.map(Reply::Json),
            Tool::Back => navigate::back(st, sess).await.map(Reply::Json),
            Tool::GetImages => pageinfo::images(st, sess).await.map(Reply::Json),
            Tool::Console(a) => match a.expression {
                Some(e) => pageinfo::evaluate(st, sess, &e).await.map(Reply::Json),
                None => Ok(Reply::Json(pageinfo::console(sess, a.clear))),
            },
            Tool::Vision(a) => screenshot::vision(ctx, st, sess, &a.question, a.annotate).await,
        };
        add_dialog_news(sess, &mut r);
        if r.is_ok() && url.is_some() {
            sess.first_nav_done = true;
        }
        r
    }

    async fn ensure<'s>(
        &self,
        ctx: &Context,
        st: &Settings,
        slot: &'s mut Option<Session>,
    ) -> Result<&'s mut Session, Fail> {
        if slot.is_none() {
            let exe = if st.cdp_url.is_some() {
                None
            } else {
                Some(settings::find_executable(ctx).map_err(Fail::msg)?)
            };
            let policy = urlcheck::BrowserPolicy::from_context(ctx, st.cdp_url.is_some());
            let s = Session::start(exe, st, policy).await.map_err(Fail::msg)?;
            tracing::info!(
                "browser: {} (pid {:?})",
                if s.attached {
                    "attached over CDP"
                } else {
                    "launched Chromium"
                },
                s.process_id()
            );
            *slot = Some(s);
            self.start_reaper(st.inactivity_timeout);
        }
        Ok(slot.as_mut().unwrap())
    }

    fn start_reaper(&self, idle: Duration) {
        let mut g = self.reaper.lock().unwrap();
        if g.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        let slot = self.session.clone();
        let tick = (idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(15));
        *g = Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(tick).await;
                let mut s = slot.lock().await;
                let idle_for = match s.as_ref() {
                    Some(x) => x.last_used.elapsed(),
                    None => return,
                };
                if idle_for >= idle {
                    tracing::info!(
                        "browser: closing after {}s idle (browser.inactivity_timeout)",
                        idle.as_secs()
                    );
                    if let Some(x) = s.take() {
                        x.close().await;
                    }
                    return;
                }
            }
        }));
    }
}
