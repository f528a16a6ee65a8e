//! New tabs and pop-ups (`target=_blank` links, `window.open`).
//!
//! Chromium runs with `--block-new-web-contents` (see `chromium/launch.rs`): a page
//! cannot open a window of its own, which would escape the URL policy that
//! the tab's `Fetch` interception applies. Instead a script installed in
//! every document reports what the page tried to open through a CDP binding
//! ([`BINDING`]), and the action that caused it opens the URL in a tab of
//! ours (policy checked, interception on) and continues there, as Hermes'
//! agent-browser does when a click opens a tab (hermes-agent:
//! tools/browser_tool.py drives it; the click result says a tab opened).
//! The action side is `actions::follow_popup`; this module is a leaf that
//! the session (which installs the script) and the actions both use.

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
