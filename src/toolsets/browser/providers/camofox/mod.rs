//! The Camofox backend: with `CAMOFOX_URL` set (and no CDP override), every
//! browser tool is a call to a Camofox server's REST API instead of CDP, as
//! Hermes does it (hermes-agent: tools/browser_camofox.py, and the
//! `_is_camofox_mode()` branches of tools/browser_tool.py). Camofox is a
//! self-hosted Node server around Camoufox (a Firefox fork with fingerprint
//! spoofing); it renders its own accessibility snapshot with `eN` refs.
//!
//! * [`state`]: config, the `userId`/`listItemId` identity, loopback rewrite;
//! * [`client`]: the HTTP calls and their error texts;
//! * [`tools`]: the ten tools over those calls;
//! * this file: the session (one per `serve`, Hermes' task `"default"`), its
//!   creation, tab adoption, and its release on idle and exit.
//!
//! Camofox is a local backend for Hermes (`_is_local_backend()`): private
//! and loopback page URLs are allowed, cloud metadata and the website
//! blocklist are refused before any request (see `navigate::precheck_url`).

pub(crate) mod client;
pub(crate) mod state;
mod tools;

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use crate::hermes::Context;
use crate::net::HttpClient;
use crate::toolsets::browser::args::Tool;
use crate::toolsets::browser::reply::{Fail, Reply};
use client::{CfError, Client};
use state::{CamofoxConfig, Identity};

/// Process-wide Camofox facts (Hermes keeps them in module globals).
#[derive(Default)]
pub(crate) struct Shared {
    /// `get_vnc_url()`: probed once per process through `/health`.
    vnc: tokio::sync::OnceCell<Option<String>>,
}

/// One Camofox session: an identity on the server and, once a page was
/// opened, its tab.
pub(crate) struct CamofoxSession {
    pub(crate) client: Client,
    pub(crate) id: Identity,
    pub(crate) tab_id: Option<String>,
    /// Release leaves the server-side profile alone (managed persistence or
    /// an external identity: Hermes' `camofox_soft_cleanup`).
    pub(crate) keeps_profile: bool,
    pub(crate) last_used: Instant,
}

impl CamofoxSession {
    fn new(ctx: &Context, cfg: &CamofoxConfig, http: Arc<HttpClient>) -> Self {
        let id = state::identity(cfg, &ctx.home.path, state::TASK_ID);
        tracing::info!(
            "browser: Camofox session for userId {} ({})",
            id.user_id,
            if id.managed { "managed" } else { "ephemeral" }
        );
        CamofoxSession {
            client: Client::new(
                http,
                cfg.url.clone(),
                cfg.api_key.clone(),
                cfg.command_timeout,
            ),
            id,
            tab_id: None,
            keeps_profile: cfg.keeps_profile(),
            last_used: Instant::now(),
        }
    }

    /// Hermes' `_adopt_existing_tab`: an externally owned or persistent
    /// profile may already have a tab on the server (after a restart): use
    /// the latest one listed for our session key, else the latest one.
    async fn adopt_existing_tab(&mut self) {
        if self.tab_id.is_some() || !self.id.adopt_existing_tab {
            return;
        }
        let got = self
            .client
            .get(
                "/tabs",
                &[("userId", self.id.user_id.as_str())],
                Some(std::time::Duration::from_secs(5)),
            )
            .await;
        let tabs = match got {
            Ok(v) => v.get("tabs").cloned().unwrap_or(Value::Null),
            Err(e) => {
                tracing::debug!("Camofox tab adoption failed for {}: {e}", self.id.user_id);
                return;
            }
        };
        let Some(tabs) = tabs.as_array() else {
            return;
        };
        let objects: Vec<&Value> = tabs.iter().filter(|t| t.is_object()).collect();
        let matching: Vec<&Value> = objects
            .iter()
            .copied()
            .filter(|t| t.get("listItemId").and_then(Value::as_str) == Some(&self.id.session_key))
            .collect();
        let latest = if matching.is_empty() {
            objects.last()
        } else {
            matching.last()
        };
        if let Some(id) = latest
            .and_then(|t| t.get("tabId"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            tracing::debug!("Adopted existing Camofox tab {id} for {}", self.id.user_id);
            self.tab_id = Some(id.to_string());
        }
    }

    /// Hermes' `_ensure_tab`: `POST /tabs` opening `url` in a new tab.
    async fn create_tab(&mut self, url: &str) -> Result<(), CfError> {
        let body = json!({
            "userId": self.id.user_id,
            "listItemId": self.id.session_key,
            "url": url,
        });
        let data = self.client.post("/tabs", &body, None).await?;
        self.tab_id = data.get("tabId").and_then(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
        Ok(())
    }

    /// Release on idle and exit: Hermes' `cleanup_browser` for Camofox
    /// (`camofox_soft_cleanup`, else `camofox_close`: `DELETE
    /// /sessions/{userId}`). Never fails; a refusal is logged.
    pub(crate) async fn close(self) {
        if self.keeps_profile {
            tracing::debug!(
                "Camofox soft cleanup for {} (managed persistence: the server keeps the profile)",
                self.id.user_id
            );
            return;
        }
        match self
            .client
            .delete(&format!("/sessions/{}", self.id.user_id))
            .await
        {
            Ok(_) => tracing::info!("browser: closed Camofox session {}", self.id.user_id),
            Err(e) => tracing::warn!("Camofox close for {} failed: {e}", self.id.user_id),
        }
    }
}

/// What `hermes-mcp tools` says about Camofox mode (after "CAMOFOX_URL is
/// set ..."): whose profile the server uses.
pub(crate) fn describe(ctx: &Context) -> String {
    let Some(cfg) = CamofoxConfig::from_context(ctx) else {
        return String::new();
    };
    let profile = if cfg.user_id.is_some() {
        "the shared profile of CAMOFOX_USER_ID / browser.camofox.user_id (kept on exit)"
    } else if cfg.managed_persistence {
        "a persistent profile for this Hermes home (browser.camofox.managed_persistence; kept on exit)"
    } else {
        "a fresh profile per session (closed on idle and exit)"
    };
    let mut s = format!("; every browser tool is a Camofox REST call, no CDP; {profile}");
    if cfg.rewrite_loopback {
        s.push_str(&format!(
            "; loopback page URLs are opened on {} (CAMOFOX_REWRITE_LOOPBACK_URLS)",
            cfg.loopback_alias
        ));
    }
    s
}

/// Run one tool against Camofox. `url` is the navigation target that
/// passed `navigate::precheck_url`.
pub(crate) async fn dispatch(
    ctx: &Context,
    shared: &Shared,
    http: Arc<HttpClient>,
    slot: &mut Option<CamofoxSession>,
    tool: Tool,
    url: Option<String>,
) -> Result<Reply, Fail> {
    let Some(cfg) = CamofoxConfig::from_context(ctx) else {
        return Err(Fail::msg("CAMOFOX_URL is not set"));
    };
    if let Tool::Console(crate::toolsets::browser::args::ConsoleArgs {
        expression: None, ..
    }) = &tool
    {
        return Ok(Reply::Json(tools::console_note()));
    }
    // Hermes' `_get_session`: every tool has a session (an identity, no
    // server call); only a navigation or an evaluation opens a tab, and a
    // managed profile may adopt one the server already has.
    let sess = slot.get_or_insert_with(|| CamofoxSession::new(ctx, &cfg, http));
    sess.last_used = Instant::now();
    sess.adopt_existing_tab().await;
    let env = tools::Env {
        ctx,
        cfg: &cfg,
        shared,
    };
    tools::run(&env, sess, tool, url).await
}
