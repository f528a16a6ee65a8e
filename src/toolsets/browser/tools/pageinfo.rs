//! The tools that read the page without acting on it:
//! `browser_get_images`, and `browser_console` (the console and uncaught
//! errors collected by `session/mod.rs`, or with `expression` a JavaScript
//! evaluation, after the `browser.restrict_evaluate` policy in
//! `snapshot/textsafety.rs`). Everything the page says is redacted before it leaves.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::toolsets::browser::cdp::protocol::Evaluated;
use crate::toolsets::browser::chromium::settings::Settings;
use crate::toolsets::browser::reply::{Fail, R, ok};
use crate::toolsets::browser::session::Session;
use crate::toolsets::browser::session::page::{CmdError, call_on, cmd, cmd_as, eval_value, settle};
use crate::toolsets::browser::snapshot::textsafety;

/// The page's images, as Hermes' `browser_get_images` lists them
/// (hermes-agent: tools/browser_tool.py); `data:` URLs are left out.
const IMAGES_JS: &str = "[...document.images].map(img => ({src: img.src, alt: img.alt || '', width: img.naturalWidth, height: img.naturalHeight})).filter(img => img.src && !img.src.startsWith('data:'))";

/// One entry of [`IMAGES_JS`]; fields in the script's order, which is the
/// order they are shown in.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
struct Image {
    src: String,
    alt: String,
    width: Value,
    height: Value,
}

/// `browser_get_images`.
pub(crate) async fn images(st: &Settings, s: &mut Session) -> R {
    settle(st, s, Duration::ZERO).await;
    let v = eval_value(st, s, IMAGES_JS)
        .await
        .map_err(|e| Fail::msg(format!("Failed to get images: {e}")))?;
    match serde_json::from_value::<Vec<Image>>(v) {
        Ok(list) => {
            let n = list.len();
            let list: Vec<Image> = list
                .into_iter()
                .map(|i| Image {
                    src: textsafety::redact(&i.src),
                    alt: textsafety::redact(&i.alt),
                    ..i
                })
                .collect();
            Ok(ok(json!({"images": list, "count": n})))
        }
        Err(_) => Ok(ok(
            json!({"images": [], "count": 0, "warning": "Could not parse image data"}),
        )),
    }
}

/// `browser_console` without `expression`: what the page logged and threw
/// since the last `clear`.
pub(crate) fn console(s: &mut Session, clear: bool) -> Value {
    let st = &s.tab.state;
    let msgs = {
        let mut g = st
            .console
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let v = g.clone();
        if clear {
            g.clear();
        }
        v
    };
    let errs = {
        let mut g = st
            .errors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let v = g.clone();
        if clear {
            g.clear();
        }
        v
    };
    let messages: Vec<Value> = msgs
        .into_iter()
        .map(|m| json!({"type": m.kind, "text": textsafety::redact(&m.text), "source": "console"}))
        .collect();
    let errors: Vec<Value> = errs
        .into_iter()
        .map(|m| json!({"message": textsafety::redact(&m.message), "source": "exception"}))
        .collect();
    ok(json!({
        "console_messages": messages,
        "js_errors": errors,
        "total_messages": messages.len(),
        "total_errors": errors.len(),
    }))
}

// Python's `type(x).__name__` (Hermes' `result_type`).
use crate::pycompat::py_type;

const UNSERIALIZABLE: &str = "Expression returned a live DOM node / NodeList / Window, which can't be serialized. Extract a primitive value (e.g. .innerText, .href, .src, .value) or use JSON.stringify() / a snapshot tool instead.";

/// Objects returned by value can still fail to serialize (cycles, DOM
/// collections); Chromium says so in these words.
fn unserializable(e: &CmdError) -> bool {
    let e = e.to_string();
    e.to_lowercase().contains("reference chain is too long") || e.contains("circular")
}

/// `browser_console` with `expression`: Hermes' `browser_evaluate`
/// (hermes-agent: tools/browser_tool.py).
pub(crate) async fn evaluate(st: &Settings, s: &mut Session, expr: &str) -> R {
    let r: Evaluated = cmd_as(
        st,
        s,
        "Runtime.evaluate",
        json!({"expression": expr, "objectGroup": "hermes-eval", "awaitPromise": true, "userGesture": true, "replMode": true}),
    )
    .await
    .map_err(Fail::msg)?;
    if let Some(ex) = r.exception_details {
        return Err(Fail::msg(textsafety::redact(&ex.message())));
    }
    let res = r.result;
    let value = if res.kind == "object"
        && (res.subtype == "node" || res.class_name.as_deref() == Some("Window"))
    {
        let _ = cmd(
            st,
            s,
            "Runtime.releaseObjectGroup",
            json!({"objectGroup": "hermes-eval"}),
        )
        .await;
        return Err(Fail::msg(UNSERIALIZABLE));
    } else if let Some(obj) = res.object_id.as_deref() {
        let v = call_on(st, s, obj, "function(){return this}", vec![]).await;
        let _ = cmd(
            st,
            s,
            "Runtime.releaseObjectGroup",
            json!({"objectGroup": "hermes-eval"}),
        )
        .await;
        v.map_err(|e| {
            if unserializable(&e) {
                Fail::msg(UNSERIALIZABLE)
            } else {
                Fail::msg(e)
            }
        })?
    } else if let Some(v) = res.value {
        v
    } else if let Some(u) = res.unserializable_value {
        Value::String(u)
    } else {
        Value::Null
    };
    // Hermes: a string holding JSON is parsed.
    let parsed = match &value {
        Value::String(t) => serde_json::from_str::<Value>(t).unwrap_or(value.clone()),
        _ => value,
    };
    let rt = py_type(&parsed);
    Ok(ok(
        json!({"result": textsafety::redact_json(parsed), "result_type": rt}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_type_names() {
        assert_eq!(py_type(&json!(1)), "int");
        assert_eq!(py_type(&json!(1.5)), "float");
        assert_eq!(py_type(&json!(null)), "NoneType");
    }

    #[test]
    fn images_keep_the_scripts_field_order() {
        let list: Vec<Image> = serde_json::from_value(
            json!([{"src": "https://x/a.png", "alt": "", "width": 10, "height": 2}]),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&list).unwrap(),
            r#"[{"src":"https://x/a.png","alt":"","width":10,"height":2}]"#
        );
    }
}
