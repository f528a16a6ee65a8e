//! New tabs and pop-ups (`target=_blank` links, `window.open`).
//!
//! Chromium runs with `--block-new-web-contents` (see `launch.rs`): a page
//! cannot open a window of its own, which would escape the URL policy that
//! the tab's `Fetch` interception applies. Instead a script installed in
//! every document reports what the page tried to open through a CDP binding
//! ([`BINDING`]), and the action that caused it opens the URL in a tab of
//! ours (policy checked, interception on) and continues there, as Hermes'
//! agent-browser does when a click opens a tab (hermes-agent:
//! tools/browser_tool.py drives it; the click result says a tab opened).

use serde_json::{Value, json};

use super::page::current_url_title;
use super::session::Session;
use super::settings::Settings;
use super::urlcheck;

/// The binding the page script calls with the URL it wanted to open.
pub(crate) const BINDING: &str = "__hermesPopup";

/// Installed before any page script (`Page.addScriptToEvaluateOnNewDocument`).
pub(crate) const POPUP_JS: &str = r#"(() => {
  if (window.__hermesPopupHooked) return;
  Object.defineProperty(window, '__hermesPopupHooked', { value: true });
  const send = (u) => { const f = window.__hermesPopup; if (typeof f === 'function') f(String(u)); };
  const abs = (u) => { try { return new URL(u == null || u === '' ? 'about:blank' : String(u), document.baseURI).href; } catch (e) { return String(u); } };
  const SELF = /^_(self|top|parent)$/i;
  const open = window.open;
  window.open = function (u, target) {
    if (target && SELF.test(String(target))) return open.apply(this, arguments);
    send(abs(u));
    return null;
  };
  window.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0) return;
    const a = (e.composedPath ? e.composedPath() : []).find((n) => n.tagName === 'A' || n.tagName === 'AREA');
    if (!a || !a.href) return;
    const b = document.querySelector('base[target]');
    const t = a.getAttribute('target') || (b ? b.getAttribute('target') : '') || '';
    if (t && !SELF.test(t)) send(a.href);
  });
})();"#;

/// After an action: if the page asked for a new tab, open it and continue
/// there; say so in `done`.
pub(crate) async fn follow(st: &Settings, s: &mut Session, done: &mut Value) {
    let urls: Vec<String> = std::mem::take(&mut *s.tab.state.popups.lock().unwrap());
    let Some(url) = urls.last().cloned() else {
        return;
    };
    if let Err(r) = urlcheck::check(&url, &s.policy).await {
        done["new_tab_blocked"] = json!(format!(
            "The page tried to open a new tab at {url}, which was refused: {}",
            r.message
        ));
        return;
    }
    match s.open_tab_at(st, &url).await {
        Ok(warning) => {
            let (u, t) = current_url_title(st, s).await;
            done["new_tab"] = json!({"url": u, "title": t});
            done["note"] = json!(
                "This action opened a new tab; the browser session now continues in it. Call browser_snapshot for its content (refs from the previous tab no longer apply)."
            );
            if let Some(w) = warning {
                done["warning"] = json!(w);
            }
        }
        Err(e) => {
            done["new_tab_error"] = json!(format!(
                "The page tried to open a new tab at {url}, but it could not be opened: {e}"
            ));
        }
    }
}
