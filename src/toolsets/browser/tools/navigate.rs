//! `browser_navigate` and `browser_back`: the URL checks before a browser
//! starts, loading a document with our own timeouts (see `session/navigator.rs`),
//! redirects refused by the URL policy, and the snapshot a navigation
//! returns.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::snapshot_tool::take_snapshot;
use crate::hermes::Context;
use crate::toolsets::browser::cdp::protocol::{Navigated, NavigationHistory, decode};
use crate::toolsets::browser::chromium::settings::Settings;
use crate::toolsets::browser::chromium::urlcheck;
use crate::toolsets::browser::reply::{Fail, R, ok};
use crate::toolsets::browser::session::page::{cmd, cmd_as, current_url_title, settle};
use crate::toolsets::browser::session::{self, Session};

/// Page titles that suggest a bot wall (Hermes' `browser_navigate`,
/// hermes-agent: tools/browser_tool.py).
const BOT_PATTERNS: &[&str] = &[
    "access denied",
    "access to this page has been denied",
    "blocked",
    "bot detected",
    "verification required",
    "please verify",
    "are you a robot",
    "captcha",
    "cloudflare",
    "ddos protection",
    "checking your browser",
    "just a moment",
    "attention required",
];

/// A refused URL as a tool failure, with Hermes' `blocked_by_policy` when the
/// website blocklist refused it.
fn refused(message: String, blocked_by_policy: Option<Value>) -> Fail {
    let mut v = json!({"success": false, "error": message});
    if let Some(b) = blocked_by_policy {
        v["blocked_by_policy"] = b;
    }
    Fail(v)
}

/// Secret-in-URL and policy checks for `browser_navigate`, before any
/// browser starts. Returns the normalised URL.
pub(crate) async fn precheck_url(
    raw: &str,
    ctx: &Context,
    remote: bool,
    sess: Option<&Session>,
) -> Result<String, Fail> {
    use crate::net::guards;
    let secret = || {
        Fail::msg(
            "Blocked: URL contains what appears to be an API key or token. Secrets must not be sent in URLs.",
        )
    };
    if guards::url_has_secret(raw, raw) {
        return Err(secret());
    }
    let mut url = guards::normalize_url(raw);
    if !url.contains("://") && !url.starts_with("about:") && !url.is_empty() {
        url = guards::normalize_url(&format!("https://{url}"));
    }
    if guards::url_has_secret(&url, &url) {
        return Err(secret());
    }
    let policy = match sess {
        Some(s) => s.policy.clone(),
        None => urlcheck::BrowserPolicy::from_context(ctx, remote),
    };
    if !policy.local
        && let Some(k) = guards::sensitive_query_param(&url)
    {
        return Err(Fail::msg(format!(
            "Blocked: URL contains a credential-like query parameter ({k}). Cloud browser backends are third-party readers; use a local browser/CDP session or remove the sensitive query parameter before navigating."
        )));
    }
    if let Err(r) = urlcheck::check(&url, &policy).await {
        return Err(refused(r.message, r.blocked_by_policy));
    }
    Ok(url)
}

/// `browser_navigate` to a URL that passed [`precheck_url`].
pub(crate) async fn navigate(ctx: &Context, st: &Settings, s: &mut Session, url: &str) -> R {
    // Navigating answers any open dialog (as leaving the page would).
    for _ in s.tab.state.pending() {
        let _ = session::answer_dialog(&s.tab.page, false, None).await;
    }
    s.tab
        .state
        .pending_dialogs
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clear();
    *s.tab
        .state
        .blocked
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    let mut loads = s.tab.state.loads.subscribe();
    loads.borrow_and_update();
    let started = Instant::now();
    let nav_timeout = st.navigation_timeout;
    let gen_before = s.tab.state.doc_gen();
    let mut warning: Option<String> = None;
    // A fresh tab's first navigation gets the one retry (`navigate_fresh_tab`);
    // later ones are never sent twice (a slow server is not a stuck tab).
    let attempt = if s.first_nav_done && !s.fresh_tab {
        tokio::time::timeout(
            nav_timeout,
            s.tab.nav.call("Page.navigate", json!({"url": url})),
        )
        .await
    } else {
        crate::toolsets::browser::session::navigate_fresh_tab(&s.tab, url, nav_timeout).await
    };
    s.fresh_tab = false;
    let r = match attempt {
        Ok(r) => r,
        Err(_) => {
            let _ = cmd(st, s, "Page.stopLoading", json!({})).await;
            if s.tab.state.doc_gen() == gen_before {
                return Err(Fail::msg(format!(
                    "Navigation timed out after {}s: {url} did not respond (browser.navigation_timeout / browser.command_timeout)",
                    crate::hermes::deadlines::unscaled(nav_timeout).as_secs_f64()
                )));
            }
            // The document arrived in part: show what there is.
            warning = Some(format!(
                "The page did not finish loading within {}s; loading was stopped and the snapshot shows what had arrived.",
                crate::hermes::deadlines::unscaled(nav_timeout).as_secs_f64()
            ));
            Ok(json!({}))
        }
    };
    let r: Navigated = decode(r.map_err(|e| Fail::msg(format!("Navigation failed: {e}")))?);
    let committed = started.elapsed();
    refuse_blocked(s, url).await?;
    if !r.error_text.is_empty() {
        return Err(Fail::msg(format!(
            "Navigation failed: {} ({url})",
            r.error_text
        )));
    }
    // A new document (not a same-document fragment change): wait for load.
    if !r.loader_id.is_empty() {
        let left = nav_timeout.saturating_sub(started.elapsed());
        let waited = tokio::time::timeout(left, loads.changed()).await;
        if waited.is_err() {
            abandon_if_unresponsive(st, s, url).await?;
            let _ = cmd(st, s, "Page.stopLoading", json!({})).await;
            warning = Some(format!(
                "The page did not finish loading within {}s; loading was stopped and the snapshot shows what had arrived.",
                crate::hermes::deadlines::unscaled(nav_timeout).as_secs_f64()
            ));
        }
    }
    tracing::debug!(
        "navigate: committed after {committed:?}, loaded after {:?}",
        started.elapsed()
    );
    // The history entry (the browser's answer) and the snapshot (the
    // page's) are asked for together.
    let url_title = current_url_title(st, s);
    let (snapshot, (final_url, title)) = tokio::join!(take_snapshot(ctx, st, s, false), url_title);
    let mut resp = json!({"url": final_url, "title": title});
    if let Some(w) = bot_warning(&title) {
        resp["bot_detection_warning"] = json!(w);
    }
    if let Some(w) = warning {
        resp["warning"] = json!(w);
    }
    match snapshot {
        Ok((text, n)) => {
            resp["snapshot"] = json!(text);
            resp["element_count"] = json!(n);
        }
        Err(e) => tracing::debug!("auto-snapshot after navigate failed: {e}"),
    }
    Ok(ok(resp))
}

/// A document the URL policy refused during the navigation (a redirect to
/// a refused URL included): the tab goes to `about:blank` and the call fails
/// saying where it landed.
async fn refuse_blocked(s: &Session, url: &str) -> Result<(), Fail> {
    let blocked = s
        .tab
        .state
        .blocked
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    let Some((burl, refusal)) = blocked else {
        return Ok(());
    };
    let _ = s
        .tab
        .nav
        .call("Page.navigate", json!({"url": "about:blank"}))
        .await;
    let message = if burl != url {
        refusal
            .message
            .replacen("Blocked: URL targets", "Blocked: redirect landed on", 1)
            + &format!(" ({burl})")
    } else {
        refusal.message
    };
    Err(refused(message, refusal.blocked_by_policy))
}

/// Hermes' warning for a page title that suggests a bot wall.
fn bot_warning(title: &str) -> Option<String> {
    let tl = title.to_lowercase();
    BOT_PATTERNS.iter().any(|p| tl.contains(p)).then(|| format!(
        "Page title '{title}' suggests bot detection. The site may have blocked this request. Options: 1) Try adding delays between actions, 2) Access different pages first, 3) Enable advanced stealth (BROWSERBASE_ADVANCED_STEALTH=true, requires Scale plan), 4) Some sites have very aggressive bot detection that may be unavoidable."
    ))
}

/// How long a page may take to answer the liveness probe before it is
/// abandoned (never longer than `browser.command_timeout`).
pub(crate) fn probe_timeout(st: &Settings) -> Duration {
    st.command_timeout
        .min(crate::hermes::deadlines::scaled(Duration::from_secs(5)))
}

/// A page that did not finish loading and no longer answers (a script that
/// never yields) is abandoned for a fresh tab, and the navigation fails
/// saying so; the next call works in the fresh tab.
async fn abandon_if_unresponsive(st: &Settings, s: &mut Session, url: &str) -> Result<(), Fail> {
    let probe = probe_timeout(st);
    if s.responsive(probe).await {
        return Ok(());
    }
    s.abandon_tab(st).await.map_err(Fail::msg)?;
    Err(Fail::msg(format!(
        "The page stopped responding ({url} kept the browser busy: no load within {}s and no answer within {}s); its tab was closed and the next browser call runs in a fresh tab.",
        crate::hermes::deadlines::unscaled(st.navigation_timeout).as_secs_f64(),
        crate::hermes::deadlines::unscaled(probe).as_secs_f64()
    )))
}

/// `browser_back`: one step back in the tab's history, if the URL policy
/// allows the page it leads to.
pub(crate) async fn back(st: &Settings, s: &mut Session) -> R {
    let h: NavigationHistory = cmd_as(st, s, "Page.getNavigationHistory", json!({}))
        .await
        .map_err(|e| Fail::msg(format!("Failed to go back: {e}")))?;
    if h.current_index <= 0 {
        return Err(Fail::msg(
            "Failed to go back: there is no previous page in this tab's history",
        ));
    }
    let entry = h.entry(-1);
    let target = entry.url;
    if let Err(r) = urlcheck::check(&target, &s.policy).await {
        return Err(Fail::msg(format!(
            "{} ({target}). Browser history navigation (back) was refused.",
            r.message
        )));
    }
    let mut loads = s.tab.state.loads.subscribe();
    loads.borrow_and_update();
    cmd(
        st,
        s,
        "Page.navigateToHistoryEntry",
        json!({"entryId": entry.id}),
    )
    .await
    .map_err(|e| Fail::msg(format!("Failed to go back: {e}")))?;
    let _ = tokio::time::timeout(st.navigation_timeout, loads.changed()).await;
    settle(st, s, Duration::ZERO).await;
    let (url, _) = current_url_title(st, s).await;
    Ok(ok(json!({"url": url})))
}
