//! Commands on the session's tab, as every tool sends them: bounded by
//! `browser.command_timeout`, cut short by a JavaScript dialog or a crashed
//! renderer, with typed errors; page-script evaluation; waiting for a load in
//! flight. The tool modules build on these and never call `cdp` directly.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{Session, TabState};
use crate::toolsets::browser::cdp::protocol::{Evaluated, NavigationHistory, decode};
use crate::toolsets::browser::cdp::{CdpError, Page};
use crate::toolsets::browser::chromium::settings::Settings;

/// Why a command on the tab failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CmdError {
    /// Chromium refused or failed the command (its own message).
    #[error(transparent)]
    Cdp(#[from] CdpError),
    #[error(
        "Browser command {method} timed out after {}s (browser.command_timeout)",
        crate::hermes::deadlines::unscaled(*.after).as_secs_f64()
    )]
    Timeout {
        method: &'static str,
        after: Duration,
    },
    #[error(
        "The browser tab crashed. Call browser_navigate to open the page again in a fresh tab."
    )]
    Crashed,
    /// A JavaScript dialog freezes the page until it is answered.
    #[error(
        "A JavaScript dialog is open ({kind} \"{message}\") and blocks the page. Respond with browser_press key=\"Enter\" to accept or key=\"Escape\" to dismiss."
    )]
    DialogOpen { kind: String, message: String },
    /// The page script threw: DevTools' description of the exception.
    #[error("{0}")]
    Exception(String),
    /// A cross-origin frame cannot be reached (gone, or no session in time).
    #[error("{0}")]
    Frame(String),
    /// A cross-origin frame's own session failed.
    #[error("{0}")]
    FrameSession(#[source] super::navigator::NavError),
}

impl CmdError {
    /// The element behind a ref is gone (Chromium's wording for a node or
    /// execution context that no longer exists).
    pub(crate) fn is_node_gone(&self) -> bool {
        let CmdError::Cdp(e) = self else {
            return false;
        };
        let l = e.to_string().to_ascii_lowercase();
        l.contains("no node with given id")
            || l.contains("could not find node")
            || l.contains("node is detached")
            || l.contains("no node found")
            || l.contains("cannot find context with specified id")
    }

    /// Actions that open a dialog succeed; the result then carries
    /// `pending_dialogs`.
    pub(crate) fn is_dialog_open(&self) -> bool {
        matches!(self, CmdError::DialogOpen { .. })
    }
}

/// One CDP call bounded by the command timeout, aborted early when a
/// JavaScript dialog opens (the page is frozen until it is answered) or the
/// tab crashes.
pub(crate) async fn cmd(
    st: &Settings,
    s: &Session,
    method: &'static str,
    params: Value,
) -> Result<Value, CmdError> {
    cmd_t(st.command_timeout, s, method, params).await
}

/// [`cmd`], its result read into `T` (see `cdp/protocol.rs`).
pub(crate) async fn cmd_as<T: DeserializeOwned + Default>(
    st: &Settings,
    s: &Session,
    method: &'static str,
    params: Value,
) -> Result<T, CmdError> {
    cmd(st, s, method, params).await.map(decode)
}

/// [`cmd`] with its own timeout.
pub(crate) async fn cmd_t(
    t: Duration,
    s: &Session,
    method: &'static str,
    params: Value,
) -> Result<Value, CmdError> {
    cmd_on(t, &s.tab.page, &s.tab.state, method, params).await
}

/// [`cmd_t`] on a tab's handles rather than the session (for a command
/// that runs beside another one).
async fn cmd_on(
    t: Duration,
    page: &Page,
    state: &TabState,
    method: &'static str,
    params: Value,
) -> Result<Value, CmdError> {
    let opened = state.dialog_opened.notified();
    tokio::pin!(opened);
    opened.as_mut().enable();
    if !state.pending().is_empty() && !method.starts_with("Page.handleJavaScriptDialog") {
        return Err(dialog_block_in(state));
    }
    tokio::select! {
        r = tokio::time::timeout(t, page.call(method, params)) => match r {
            Ok(r) => Ok(r?),
            Err(_) => Err(CmdError::Timeout { method, after: t }),
        },
        _ = &mut opened => {
            if state.crashed.load(Ordering::SeqCst) {
                Err(CmdError::Crashed)
            } else {
                Err(dialog_block_in(state))
            }
        }
    }
}

/// The error for a command refused because a dialog is open.
pub(crate) fn dialog_block(s: &Session) -> CmdError {
    dialog_block_in(&s.tab.state)
}

fn dialog_block_in(state: &TabState) -> CmdError {
    let p = state.pending();
    let d = p.first();
    CmdError::DialogOpen {
        kind: d.map(|d| d.kind.clone()).unwrap_or_else(|| "alert".into()),
        message: d.map(|d| d.message.clone()).unwrap_or_default(),
    }
}

/// The value of an evaluation (`returnByValue`), or its exception.
fn evaluated_value(r: Evaluated) -> Result<Value, CmdError> {
    if let Some(ex) = r.exception_details {
        return Err(CmdError::Exception(ex.message()));
    }
    Ok(r.result.value.unwrap_or(Value::Null))
}

/// Evaluate an expression, returning its value.
pub(crate) async fn eval_value(st: &Settings, s: &Session, expr: &str) -> Result<Value, CmdError> {
    let r: Evaluated = cmd_as(
        st,
        s,
        "Runtime.evaluate",
        json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
    )
    .await?;
    evaluated_value(r)
}

/// Call `func` with `this` bound to the remote object, returning its value.
pub(crate) async fn call_on(
    st: &Settings,
    s: &Session,
    object: &str,
    func: &str,
    args: Vec<Value>,
) -> Result<Value, CmdError> {
    let args: Vec<Value> = args.into_iter().map(|v| json!({"value": v})).collect();
    let r: Evaluated = cmd_as(
        st,
        s,
        "Runtime.callFunctionOn",
        json!({"objectId": object, "functionDeclaration": func, "arguments": args, "returnByValue": true, "awaitPromise": true}),
    )
    .await?;
    evaluated_value(r)
}

/// Wait until a main-frame load that is in flight finishes (bounded).
pub(crate) async fn settle(st: &Settings, s: &Session, grace: Duration) {
    let mut rx = s.tab.state.loading.subscribe();
    if !*rx.borrow() && !grace.is_zero() {
        // Give an action a moment to start a navigation.
        let _ = tokio::time::timeout(grace, rx.wait_for(|l| *l)).await;
    }
    if *rx.borrow() {
        let _ = tokio::time::timeout(st.navigation_timeout, rx.wait_for(|l| !*l)).await;
    }
}

/// The current history entry's URL and title (empty when unknown). The
/// future holds the tab's handles instead of borrowing the session, so that
/// it can run beside a snapshot of the same tab (the browser answers it
/// without the page).
pub(crate) fn current_url_title(
    st: &Settings,
    s: &Session,
) -> impl std::future::Future<Output = (String, String)> + Send + 'static {
    let (t, page, state) = (st.command_timeout, s.tab.page.clone(), s.tab.state.clone());
    async move {
        let h = cmd_on(t, &page, &state, "Page.getNavigationHistory", json!({})).await;
        match h.map(decode::<NavigationHistory>) {
            Ok(h) => {
                let e = h.entry(0);
                (e.url, e.title)
            }
            Err(_) => (String::new(), String::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_sessions_failure_is_the_source() {
        use super::super::navigator::NavError;
        use std::error::Error as _;
        let e = CmdError::FrameSession(NavError::Protocol("No frame with given id found".into()));
        assert_eq!(e.to_string(), "No frame with given id found");
        let src = e.source().expect("a source");
        assert!(
            matches!(src.downcast_ref::<NavError>(), Some(NavError::Protocol(m)) if m == "No frame with given id found"),
            "{src:?}"
        );
        let e = CmdError::FrameSession(NavError::BrowserClosed);
        assert_eq!(e.to_string(), "the browser connection closed");
        assert!(
            CmdError::Frame("the frame is gone".into())
                .source()
                .is_none()
        );
    }
}
