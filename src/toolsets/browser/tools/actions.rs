//! The tools that act on the page as a user would: `browser_click`,
//! `browser_type`, `browser_press` (which also answers a pending JavaScript
//! dialog) and `browser_scroll`. Elements are named by the refs of the latest
//! snapshot (`snapshot/outline.rs`); input goes through CDP's `Input` domain, so pages
//! see trusted events.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::keys;
use crate::toolsets::browser::args::Direction;
use crate::toolsets::browser::cdp::protocol::{LayoutMetrics, decode};
use crate::toolsets::browser::chromium::settings::Settings;
use crate::toolsets::browser::chromium::urlcheck;
use crate::toolsets::browser::reply::{Fail, R, ok};
use crate::toolsets::browser::session::page::{
    CmdError, cmd, cmd_as, current_url_title, dialog_block, eval_value, settle,
};
use crate::toolsets::browser::session::walk;
use crate::toolsets::browser::session::{self, Session};
use crate::toolsets::browser::snapshot::textsafety;
use crate::toolsets::browser::snapshot::{RefEntry, RefError};

/// Hermes' `_SCROLL_PIXELS` (hermes-agent: tools/browser_tool.py).
const SCROLL_PIXELS: i64 = 500;

/// Resolve a ref for the current document.
fn resolve(s: &Session, raw: &str) -> Result<(String, RefEntry), Fail> {
    let (n, e) = s
        .refs
        .resolve(raw, s.tab.state.doc_gen())
        .map_err(Fail::msg)?;
    Ok((format!("@e{n}"), e))
}

fn stale(r: &str) -> Fail {
    Fail::msg(RefError::Stale(r.to_string()))
}

/// The ref's element: its frame and a JS object id (see `session/walk.rs`).
async fn object_for(
    st: &Settings,
    s: &Session,
    shown: &str,
    key: i64,
) -> Result<(u32, String), Fail> {
    match walk::element(st, s, key).await {
        Ok(Some(x)) => Ok(x),
        Ok(None) => Err(stale(shown)),
        Err(e) if e.is_node_gone() => Err(stale(shown)),
        Err(e) => Err(Fail::msg(e)),
    }
}

/// Centre of the element's border box in the tab's viewport, after
/// scrolling it into view.
async fn center(
    st: &Settings,
    s: &Session,
    shown: &str,
    frame: u32,
    obj: &str,
) -> Result<Option<(f64, f64)>, Fail> {
    match walk::element_box(st, s, frame, obj, true).await {
        Ok(b) => Ok(b.map(|[x0, y0, x1, y1]| ((x0 + x1) / 2.0, (y0 + y1) / 2.0))),
        Err(e) if e.is_node_gone() => Err(stale(shown)),
        Err(e) if e.is_dialog_open() => Err(Fail::msg(e)),
        Err(_) => Ok(None),
    }
}

async fn mouse_click(st: &Settings, s: &Session, x: f64, y: f64) -> Result<(), CmdError> {
    cmd(
        st,
        s,
        "Input.dispatchMouseEvent",
        json!({"type": "mouseMoved", "x": x, "y": y}),
    )
    .await?;
    cmd(
        st,
        s,
        "Input.dispatchMouseEvent",
        json!({"type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 1}),
    )
    .await?;
    cmd(
        st,
        s,
        "Input.dispatchMouseEvent",
        json!({"type": "mouseReleased", "x": x, "y": y, "button": "left", "clickCount": 1}),
    )
    .await?;
    Ok(())
}

/// `browser_click`.
pub(crate) async fn click(st: &Settings, s: &mut Session, raw: &str) -> R {
    let (shown, e) = resolve(s, raw)?;
    let done = json!({"clicked": shown});
    if e.role == "option" {
        // A <select>'s option: choose it the way a user's pick does.
        let (frame, obj) = object_for(st, s, &shown, e.backend).await?;
        let r = walk::call_on(st, s, frame, &obj, "function(){const sel=this.closest('select'); if(!sel){this.click(); return true;} this.selected=true; sel.dispatchEvent(new Event('input',{bubbles:true})); sel.dispatchEvent(new Event('change',{bubbles:true})); return true;}", vec![]).await;
        return match r {
            Ok(_) => Ok(ok(done)),
            Err(er) if er.is_dialog_open() => Ok(ok(done)),
            Err(er) => Err(Fail::msg(format!("Failed to click {shown}: {er}"))),
        };
    }
    let (frame, obj) = object_for(st, s, &shown, e.backend).await?;
    let point = center(st, s, &shown, frame, &obj).await?;
    let r = match point {
        Some((x, y)) => mouse_click(st, s, x, y).await,
        None => {
            // Not rendered as a box (e.g. zero size): fall back to a DOM click.
            walk::call_on(
                st,
                s,
                frame,
                &obj,
                "function(){this.click(); return true;}",
                vec![],
            )
            .await
            .map(|_| ())
        }
    };
    match r {
        Ok(()) => {
            settle(st, s, Duration::from_millis(60)).await;
            let mut done = done;
            follow_popup(st, s, &mut done).await;
            Ok(ok(done))
        }
        Err(er) if er.is_dialog_open() => Ok(ok(done)),
        Err(er) => Err(Fail::msg(format!("Failed to click {shown}: {er}"))),
    }
}

/// Prepares a field for `browser_type`: picks a `<select>`'s option by value
/// or label, or focuses a text field and selects its text (so that typing
/// replaces it). Answers a [`FillOutcome`].
const FILL_JS: &str = r#"function(text){
  const el=this;
  if(el.tagName==='SELECT'){
    const want=String(text).trim().toLowerCase();
    const opts=[...el.options];
    const o=opts.find(o=>o.value.toLowerCase()===want)||opts.find(o=>o.label.trim().toLowerCase()===want)||opts.find(o=>o.label.trim().toLowerCase().includes(want));
    if(!o) return {select:true, ok:false, options:opts.map(o=>o.label.trim())};
    el.value=o.value; o.selected=true;
    el.dispatchEvent(new Event('input',{bubbles:true}));
    el.dispatchEvent(new Event('change',{bubbles:true}));
    return {select:true, ok:true, chosen:o.label.trim()};
  }
  const editable = el.isContentEditable || el.tagName==='TEXTAREA' || (el.tagName==='INPUT' && !['checkbox','radio','button','submit','reset','file','image','range','color'].includes((el.type||'').toLowerCase()));
  if(!editable) return {ok:false, notEditable:true, tag:el.tagName.toLowerCase(), type:el.type||''};
  if(el.disabled||el.readOnly) return {ok:false, readonly:true};
  el.focus();
  if(el.isContentEditable){ const r=document.createRange(); r.selectNodeContents(el); const s=getSelection(); s.removeAllRanges(); s.addRange(r); }
  else { el.select(); }
  return {ok:true};
}"#;

/// What [`FILL_JS`] answers.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct FillOutcome {
    /// The element is a `<select>`.
    select: bool,
    ok: bool,
    /// The option label chosen.
    chosen: Option<String>,
    /// All option labels, when none matched.
    options: Option<Vec<String>>,
    not_editable: bool,
    /// The `<input>` type of an element that takes no text.
    #[serde(rename = "type")]
    input_type: String,
    readonly: bool,
}

/// `browser_type`.
pub(crate) async fn type_text(st: &Settings, s: &mut Session, raw: &str, text: &str) -> R {
    let (shown, e) = resolve(s, raw)?;
    let (frame, obj) = object_for(st, s, &shown, e.backend).await?;
    if walk::is_oop(s, frame)
        && !matches!(e.role.as_str(), "combobox" | "listbox")
        && let Some((x, y)) = center(st, s, &shown, frame, &obj).await?
    {
        // A frame in another process takes keyboard input once a click
        // has focused it.
        let _ = mouse_click(st, s, x, y).await;
    }
    let r: FillOutcome = decode(
        walk::call_on(st, s, frame, &obj, FILL_JS, vec![json!(text)])
            .await
            .map_err(|er| Fail::msg(format!("Failed to type into {shown}: {er}")))?,
    );
    let typed = textsafety::redact(text);
    if r.select {
        if r.ok {
            return Ok(ok(
                json!({"typed": typed, "element": shown, "selected": r.chosen}),
            ));
        }
        return Err(Fail::msg(format!(
            "No option matching '{typed}' in {shown}; options are: {}",
            r.options
                .map(|o| Value::from(o).to_string())
                .unwrap_or_default()
        )));
    }
    if r.not_editable {
        return Err(Fail::msg(format!(
            "Failed to type into {shown}: it is a {} element ({}) that does not take text; use browser_click for it",
            e.role, r.input_type
        )));
    }
    if r.readonly {
        return Err(Fail::msg(format!(
            "Failed to type into {shown}: the field is disabled or read-only"
        )));
    }
    // The field's text is selected: replace it (empty text clears it).
    let r = if text.is_empty() {
        walk::fcmd(st, s, frame, "Input.dispatchKeyEvent", json!({"type": "rawKeyDown", "key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46}))
            .await
            .and(walk::fcmd(st, s, frame, "Input.dispatchKeyEvent", json!({"type": "keyUp", "key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46})).await)
    } else {
        walk::fcmd(st, s, frame, "Input.insertText", json!({"text": text})).await
    };
    match r {
        Ok(_) => Ok(ok(json!({"typed": typed, "element": shown}))),
        Err(er) if er.is_dialog_open() => Ok(ok(json!({"typed": typed, "element": shown}))),
        Err(er) => Err(Fail::msg(format!("Failed to type into {shown}: {er}"))),
    }
}

/// `Control+Shift+a` → (modifier bits, key).
fn parse_key(spec: &str) -> (i64, String) {
    let parts: Vec<&str> = spec.split('+').collect();
    if parts.len() == 1 || spec == "+" {
        return (0, spec.to_string());
    }
    let mut mods = 0;
    for m in &parts[..parts.len() - 1] {
        mods |= match m.to_ascii_lowercase().as_str() {
            "alt" | "option" => 1,
            "control" | "ctrl" => 2,
            "meta" | "cmd" | "command" | "super" => 4,
            "shift" => 8,
            _ => 0,
        };
    }
    (mods, parts[parts.len() - 1].to_string())
}

fn key_alias(k: &str) -> String {
    match k.to_ascii_lowercase().as_str() {
        "enter" | "return" => "Enter".into(),
        "tab" => "Tab".into(),
        "escape" | "esc" => "Escape".into(),
        "backspace" => "Backspace".into(),
        "delete" | "del" => "Delete".into(),
        "space" => " ".into(),
        "arrowup" | "up" => "ArrowUp".into(),
        "arrowdown" | "down" => "ArrowDown".into(),
        "arrowleft" | "left" => "ArrowLeft".into(),
        "arrowright" | "right" => "ArrowRight".into(),
        "pageup" => "PageUp".into(),
        "pagedown" => "PageDown".into(),
        "home" => "Home".into(),
        "end" => "End".into(),
        _ => k.to_string(),
    }
}

/// `browser_press`.
pub(crate) async fn press(st: &Settings, s: &mut Session, key: &str) -> R {
    let done = json!({"pressed": key});
    // A pending dialog: Enter accepts, Escape dismisses.
    let pending = s.tab.state.pending();
    if let Some(d) = pending.first() {
        let k = key_alias(key);
        if k == "Enter" || k == "Escape" {
            let accept = k == "Enter";
            let prompt = (accept && d.kind == "prompt").then_some(d.default_prompt.as_str());
            answer_dialog_now(s, accept, prompt).await?;
            s.tab
                .state
                .pending_dialogs
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .retain(|x| x.id != d.id);
            s.tab.state.handled_dialogs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(json!({"type": d.kind, "message": d.message, "action": if accept {"accepted"} else {"dismissed"}}));
            settle(st, s, Duration::from_millis(30)).await;
            return Ok(ok(done));
        }
        return Err(Fail::msg(dialog_block(s)));
    }
    let (mods, k) = parse_key(key);
    let k = key_alias(&k);
    let Some(def) = keys::find(&k) else {
        return Err(Fail::msg(format!(
            "Failed to press {key}: unknown key. Use a key name like Enter, Tab, Escape, Backspace, ArrowDown, PageDown, a single character, or a combination like Control+a."
        )));
    };
    let text = if mods & (1 | 2 | 4) != 0 {
        None
    } else {
        def.text()
    };
    let down_type = if text.is_some() {
        "keyDown"
    } else {
        "rawKeyDown"
    };
    let mut down = json!({"type": down_type, "key": def.key, "code": def.code, "windowsVirtualKeyCode": def.key_code, "modifiers": mods});
    if let Some(t) = text {
        down["text"] = json!(t);
        down["unmodifiedText"] = json!(t);
    }
    let r = async {
        cmd(st, s, "Input.dispatchKeyEvent", down).await?;
        cmd(st, s, "Input.dispatchKeyEvent", json!({"type": "keyUp", "key": def.key, "code": def.code, "windowsVirtualKeyCode": def.key_code, "modifiers": mods})).await
    }
    .await;
    match r {
        Ok(_) => {
            settle(st, s, Duration::from_millis(60)).await;
            let mut done = done;
            follow_popup(st, s, &mut done).await;
            Ok(ok(done))
        }
        Err(er) if er.is_dialog_open() => Ok(ok(done)),
        Err(er) => Err(Fail::msg(format!("Failed to press {key}: {er}"))),
    }
}

async fn answer_dialog_now(s: &Session, accept: bool, prompt: Option<&str>) -> Result<(), Fail> {
    session::answer_dialog(&s.tab.page, accept, prompt)
        .await
        .map_err(|e| Fail::msg(format!("Failed to answer the dialog: {e}")))
}

/// `browser_scroll`.
pub(crate) async fn scroll(st: &Settings, s: &mut Session, dir: Direction) -> R {
    let dy = match dir {
        Direction::Up => -SCROLL_PIXELS,
        Direction::Down => SCROLL_PIXELS,
    };
    let dir = dir.as_str();
    // A wheel event over the page centre scrolls what a user would scroll.
    let vp: LayoutMetrics = cmd_as(st, s, "Page.getLayoutMetrics", json!({}))
        .await
        .unwrap_or_default();
    let w = vp.css_layout_viewport.client_width.unwrap_or(800.0);
    let h = vp.css_layout_viewport.client_height.unwrap_or(600.0);
    cmd(
        st,
        s,
        "Input.dispatchMouseEvent",
        json!({"type": "mouseWheel", "x": w / 2.0, "y": h / 2.0, "deltaX": 0, "deltaY": dy}),
    )
    .await
    .map_err(|e| Fail::msg(format!("Failed to scroll {dir}: {e}")))?;
    // Wheel scrolling is applied asynchronously; wait for the next frame.
    let _ = eval_value(
        st,
        s,
        "new Promise(r=>requestAnimationFrame(()=>requestAnimationFrame(()=>r(1))))",
    )
    .await;
    Ok(ok(json!({"scrolled": dir})))
}

/// After an action: if the page asked for a new tab, open it and continue
/// there; say so in `done`.
async fn follow_popup(st: &Settings, s: &mut Session, done: &mut Value) {
    let urls: Vec<String> = std::mem::take(
        &mut *s
            .tab
            .state
            .popups
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(parse_key("Control+a"), (2, "a".into()));
        assert_eq!(parse_key("Enter"), (0, "Enter".into()));
        assert_eq!(key_alias("esc"), "Escape");
        assert!(keys::find("Enter").is_some());
    }

    #[test]
    fn fill_outcomes_read_leniently() {
        let r: FillOutcome = decode(json!({"select": true, "ok": false, "options": ["A", "B"]}));
        assert!(r.select && !r.ok);
        assert_eq!(Value::from(r.options.unwrap()).to_string(), r#"["A","B"]"#);
        let r: FillOutcome =
            decode(json!({"ok": false, "notEditable": true, "tag": "input", "type": "checkbox"}));
        assert!(r.not_editable);
        assert_eq!(r.input_type, "checkbox");
        let r: FillOutcome = decode(Value::Null);
        assert!(!r.select && !r.not_editable && !r.readonly);
    }
}
