//! The in-page walker (`snapshot.js`) run over CDP, and the way back from a
//! ref to its element.
//!
//! One `Runtime.evaluate` walks the top document with its same-origin
//! iframes and open shadow roots (instead of `Accessibility.getFullAXTree`,
//! which costs 1.1–1.6 s on 10k nodes). Iframes the walker cannot enter
//! (cross-origin) are walked in their own context and grafted under their
//! `iframe` line: a frame in the tab's renderer through an isolated world
//! (`Page.createIsolatedWorld`), an out-of-process frame through a session
//! of its own (its target id is its frame id). Each such frame gets a number
//! (≥ 1) that stays the same for the document, so that its refs
//! ([`domsnap::ref_key`]) keep pointing at the same frame.
//!
//! Refs resolve through the page-side map the walker keeps
//! (`window.__hermesRefs`, walker id → element) to a remote object id in the
//! frame's session; every DOM/Input command about the element goes through
//! [`Frames`] to the right session.

use serde_json::{Value, json};

use super::Session;
use super::frames::{FrameCtx, Frames, Via};
use super::navigator::Navigator;
use super::page::{CmdError, cmd, cmd_as};
use crate::toolsets::browser::cdp::protocol::{ContentQuads, Evaluated, decode};
use crate::toolsets::browser::chromium::settings::Settings;
use crate::toolsets::browser::snapshot::domsnap::{self, WALKER_JS, Walk, split_key};

/// At most this many cross-origin frames are walked per snapshot.
const MAX_FRAMES: usize = 20;
/// The isolated world our scripts run in inside cross-origin frames.
const WORLD: &str = "hermes-snapshot";

fn walker_call(full: bool) -> &'static str {
    static CALLS: std::sync::OnceLock<[String; 2]> = std::sync::OnceLock::new();
    let calls = CALLS.get_or_init(|| {
        let js = domsnap::compact_js(WALKER_JS);
        let f = js.trim_end_matches(';');
        // Links' targets only for a full snapshot: the compact one does not
        // show them (a quarter of a link-heavy walk's bytes).
        [format!("({f})({{urls:false}})"), format!("({f})({{}})")]
    });
    &calls[full as usize]
}

fn walk_error(e: serde_json::Error) -> CmdError {
    CmdError::Exception(format!(
        "the snapshot walker returned an unexpected result: {e}"
    ))
}

/// Walk the page (and its cross-origin frames) once.
pub(crate) async fn walk(st: &Settings, s: &mut Session, full: bool) -> Result<Walk, CmdError> {
    let v = eval_in(st, s, 0, walker_call(full), true).await?;
    let mut w = domsnap::parse(&v.result.value.unwrap_or(Value::Null)).map_err(walk_error)?;
    let gen_ = s.tab.state.doc_gen();
    if s.frames.doc_gen != gen_ {
        s.frames = Frames {
            doc_gen: gen_,
            list: Vec::new(),
        };
    }
    let stubs = std::mem::take(&mut w.frames);
    for stub in stubs.into_iter().take(MAX_FRAMES) {
        match child_walk(st, s, stub.i, full).await {
            Ok(Some((n, child))) => {
                w.graft(stub.i, child, n);
            }
            Ok(None) => {}
            Err(e) => tracing::debug!("snapshot: frame {} not walked: {e}", stub.src),
        }
    }
    Ok(w)
}

/// Walk the cross-origin frame hosted by top-document element `host`.
async fn child_walk(
    st: &Settings,
    s: &mut Session,
    host: i64,
    full: bool,
) -> Result<Option<(u32, Walk)>, CmdError> {
    let Some(obj) = object_in(st, s, 0, host).await? else {
        return Ok(None);
    };
    let d = cmd(st, s, "DOM.describeNode", json!({"objectId": obj})).await?;
    let Some(frame_id) = d["node"]["frameId"].as_str().map(str::to_string) else {
        return Ok(None);
    };
    let n = match s.frames.list.iter().position(|f| f.frame_id == frame_id) {
        Some(i) => i as u32 + 1,
        None => {
            let via = match cmd(
                st,
                s,
                "Page.createIsolatedWorld",
                json!({"frameId": frame_id, "worldName": WORLD}),
            )
            .await
            {
                Ok(v) => Via::World(v["executionContextId"].as_i64().unwrap_or_default()),
                Err(_) => {
                    // Not in this renderer: an out-of-process frame target.
                    let nav = tokio::time::timeout(
                        st.command_timeout,
                        Navigator::attach(s.connection(), &frame_id),
                    )
                    .await
                    .map_err(|_| CmdError::Frame("timed out attaching to a frame".into()))?
                    .map_err(CmdError::FrameSession)?;
                    Via::Oop(nav)
                }
            };
            s.frames.list.push(FrameCtx {
                frame_id,
                host,
                via,
            });
            s.frames.list.len() as u32
        }
    };
    let mut r = eval_in(st, s, n, walker_call(full), true).await;
    if r.as_ref().is_err_and(context_gone)
        && let Some(f) = s.frames.list.get(n as usize - 1)
        && let Via::World(_) = f.via
    {
        // The frame navigated since: a new world for its new document.
        let frame_id = f.frame_id.clone();
        let v = cmd(
            st,
            s,
            "Page.createIsolatedWorld",
            json!({"frameId": frame_id, "worldName": WORLD}),
        )
        .await?;
        s.frames.list[n as usize - 1].via =
            Via::World(v["executionContextId"].as_i64().unwrap_or_default());
        r = eval_in(st, s, n, walker_call(full), true).await;
    }
    let v = r?;
    let w = domsnap::parse(&v.result.value.unwrap_or(Value::Null)).map_err(walk_error)?;
    Ok(Some((n, w)))
}

fn context_gone(e: &CmdError) -> bool {
    e.to_string()
        .to_ascii_lowercase()
        .contains("cannot find context")
}

/// A command about frame `frame`'s content, sent to that frame's session.
pub(crate) async fn fcmd(
    st: &Settings,
    s: &Session,
    frame: u32,
    method: &'static str,
    params: Value,
) -> Result<Value, CmdError> {
    match frame_ctx(s, frame) {
        Some(FrameCtx {
            via: Via::Oop(nav), ..
        }) => match tokio::time::timeout(st.command_timeout, nav.call(method, params)).await {
            Ok(r) => r.map_err(CmdError::FrameSession),
            Err(_) => Err(CmdError::Timeout {
                method,
                after: st.command_timeout,
            }),
        },
        _ => cmd(st, s, method, params).await,
    }
}

fn frame_ctx(s: &Session, frame: u32) -> Option<&FrameCtx> {
    if frame == 0 || s.frames.doc_gen != s.tab.state.doc_gen() {
        return None;
    }
    s.frames.list.get(frame as usize - 1)
}

/// `Runtime.evaluate` in frame `frame` (0: the top document's main world).
async fn eval_in(
    st: &Settings,
    s: &Session,
    frame: u32,
    expr: &str,
    by_value: bool,
) -> Result<Evaluated, CmdError> {
    let mut p = json!({"expression": expr, "returnByValue": by_value, "objectGroup": "hermes"});
    if let Some(FrameCtx {
        via: Via::World(ctx),
        ..
    }) = frame_ctx(s, frame)
    {
        p["contextId"] = json!(ctx);
    } else if frame != 0 && frame_ctx(s, frame).is_none() {
        return Err(CmdError::Frame("the frame is gone".into()));
    }
    let r: Evaluated = decode(fcmd(st, s, frame, "Runtime.evaluate", p).await?);
    if let Some(ex) = &r.exception_details {
        return Err(CmdError::Exception(ex.message()));
    }
    Ok(r)
}

/// The remote object of walker element `id` in frame `frame`, if it is
/// still there.
async fn object_in(
    st: &Settings,
    s: &Session,
    frame: u32,
    id: i64,
) -> Result<Option<String>, CmdError> {
    let expr = format!(
        "(()=>{{const m=window.__hermesRefs;const e=m&&m.get({id});return e&&e.isConnected?e:null}})()"
    );
    let r = eval_in(st, s, frame, &expr, false).await?;
    Ok(r.result.object_id)
}

/// The element behind ref key `key`: its frame and remote object id.
pub(crate) async fn element(
    st: &Settings,
    s: &Session,
    key: i64,
) -> Result<Option<(u32, String)>, CmdError> {
    let (frame, id) = split_key(key);
    match object_in(st, s, frame, id).await {
        Ok(o) => Ok(o.map(|o| (frame, o))),
        Err(CmdError::Frame(_) | CmdError::FrameSession(_)) => Ok(None),
        Err(e) if context_gone(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Where frame `frame`'s viewport starts in the tab's viewport: (0, 0) but
/// for out-of-process frames, whose coordinates are their own.
async fn frame_origin(st: &Settings, s: &Session, frame: u32) -> Option<(f64, f64)> {
    let Some(FrameCtx {
        via: Via::Oop(_),
        host,
        ..
    }) = frame_ctx(s, frame)
    else {
        return Some((0.0, 0.0));
    };
    let host_obj = object_in(st, s, 0, *host).await.ok()??;
    let _ = cmd(
        st,
        s,
        "DOM.scrollIntoViewIfNeeded",
        json!({"objectId": host_obj}),
    )
    .await;
    let q: ContentQuads = cmd_as(st, s, "DOM.getContentQuads", json!({"objectId": host_obj}))
        .await
        .ok()?;
    let f = q.first()?;
    // Border box corner, then the iframe's border and padding.
    let inset = super::page::call_on(
        st,
        s,
        &host_obj,
        "function(){const c=getComputedStyle(this);return [this.clientLeft+parseFloat(c.paddingLeft||0),this.clientTop+parseFloat(c.paddingTop||0)]}",
        vec![],
    )
    .await
    .ok()
    .map(decode::<(f64, f64)>)
    .unwrap_or_default();
    Some((
        f[0].min(f[2]).min(f[4]).min(f[6]) + inset.0,
        f[1].min(f[3]).min(f[5]).min(f[7]) + inset.1,
    ))
}

/// The element's border box in the tab's viewport (min x, min y, max x,
/// max y), after scrolling it into view when `scroll`. `Ok(None)`: not
/// rendered as a box.
pub(crate) async fn element_box(
    st: &Settings,
    s: &Session,
    frame: u32,
    obj: &str,
    scroll: bool,
) -> Result<Option<[f64; 4]>, CmdError> {
    let origin = frame_origin(st, s, frame).await.unwrap_or((0.0, 0.0));
    if scroll {
        let _ = fcmd(
            st,
            s,
            frame,
            "DOM.scrollIntoViewIfNeeded",
            json!({"objectId": obj}),
        )
        .await;
    }
    let q: ContentQuads = decode(
        fcmd(
            st,
            s,
            frame,
            "DOM.getContentQuads",
            json!({"objectId": obj}),
        )
        .await?,
    );
    Ok(q.first().map(|f| {
        [
            f[0].min(f[2]).min(f[4]).min(f[6]) + origin.0,
            f[1].min(f[3]).min(f[5]).min(f[7]) + origin.1,
            f[0].max(f[2]).max(f[4]).max(f[6]) + origin.0,
            f[1].max(f[3]).max(f[5]).max(f[7]) + origin.1,
        ]
    }))
}

/// `Runtime.callFunctionOn` in the element's frame, returning its value.
pub(crate) async fn call_on(
    st: &Settings,
    s: &Session,
    frame: u32,
    obj: &str,
    func: &str,
    args: Vec<Value>,
) -> Result<Value, CmdError> {
    let args: Vec<Value> = args.into_iter().map(|v| json!({"value": v})).collect();
    let r: Evaluated = decode(
        fcmd(
            st,
            s,
            frame,
            "Runtime.callFunctionOn",
            json!({"objectId": obj, "functionDeclaration": func, "arguments": args, "returnByValue": true, "awaitPromise": true}),
        )
        .await?,
    );
    if let Some(ex) = r.exception_details {
        return Err(CmdError::Exception(ex.message()));
    }
    Ok(r.result.value.unwrap_or(Value::Null))
}

/// Whether frame `frame` runs out of process (its text input goes to its
/// own session after a click has focused it).
pub(crate) fn is_oop(s: &Session, frame: u32) -> bool {
    matches!(
        frame_ctx(s, frame),
        Some(FrameCtx {
            via: Via::Oop(_),
            ..
        })
    )
}
