//! `browser_snapshot`, and the snapshot `browser_navigate` returns: walk the
//! page once in the page (`session/walk.rs`), render it (`snapshot/outline.rs`), redact it,
//! and cut it at Hermes' size limit with the full text stored in a file the
//! model can page through, or (`browser_snapshot`, when Hermes' auxiliary
//! `web_extract` resolves to a model) have that model summarise it
//! (`snapshot/summary.rs`).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::hermes::Context;
use crate::toolsets::browser::chromium::settings::Settings;
use crate::toolsets::browser::reply::{Fail, R, ok};
use crate::toolsets::browser::session::page::{CmdError, cmd, settle};
use crate::toolsets::browser::session::walk;
use crate::toolsets::browser::session::{Session, SnapCache};
use crate::toolsets::browser::snapshot;
use crate::toolsets::browser::snapshot::domsnap;
use crate::toolsets::browser::snapshot::{summary, textsafety};

/// Hermes' `SNAPSHOT_SUMMARIZE_THRESHOLD` (hermes-agent: tools/browser_tool.py).
const SNAPSHOT_MAX_CHARS: usize = 15_000;

/// Whether the page still shows what the walker saw last (see the change
/// watch at the end of `snapshot.js`): no mutation, focus change, input,
/// toggle, animation or transition event since; no CSS animation running
/// that can change visibility or generated content; every form control's
/// state as it was; no frames.
const UNCHANGED_JS: &str = "(()=>{const w=window.__hermesWatch;if(!w||w.dirty||w.frames)return false;if(w.mo.takeRecords().length){w.dirty=true;return false}if(document.getAnimations&&document.getAnimations().some(a=>a.playState==='running'&&a.effect&&a.effect.getKeyframes().some(k=>'visibility' in k||'display' in k||'content' in k)))return false;return w.fp()===w.fp0})()";

/// The cached snapshot, when it is for this document and `full`, and the
/// page provably has not changed since (one cheap `Runtime.evaluate`).
/// A failed check is the snapshot's error (a dead renderer must not cost a
/// second timeout in the walk).
async fn reusable(
    st: &Settings,
    s: &mut Session,
    full: bool,
) -> Result<Option<SnapCache>, CmdError> {
    let Some(c) = s.snap_cache.take() else {
        return Ok(None);
    };
    if c.doc_gen != s.tab.state.doc_gen() || c.full != full {
        return Ok(None);
    }
    let r = cmd(
        st,
        s,
        "Runtime.evaluate",
        json!({"expression": UNCHANGED_JS, "returnByValue": true}),
    )
    .await?;
    // A new document may have replaced it meanwhile.
    Ok((r["result"]["value"] == json!(true) && c.doc_gen == s.tab.state.doc_gen()).then_some(c))
}

/// Take a snapshot, store the full text when it is cut, redact.
pub(crate) async fn take_snapshot(
    ctx: &Context,
    st: &Settings,
    s: &mut Session,
    full: bool,
) -> Result<(String, usize), CmdError> {
    take(ctx, st, s, full, None).await
}

/// [`take_snapshot`]; with `summarize` (the model's task, possibly empty), a
/// long snapshot goes to the auxiliary model first.
async fn take(
    ctx: &Context,
    st: &Settings,
    s: &mut Session,
    full: bool,
    summarize: Option<&str>,
) -> Result<(String, usize), CmdError> {
    let t0 = Instant::now();
    settle(st, s, Duration::ZERO).await;
    let t1 = Instant::now();
    let (text, element_count) = match reusable(st, s, full).await? {
        Some(c) => {
            tracing::debug!(
                "snapshot: settle {:?}, unchanged page: previous snapshot reused ({:?})",
                t1 - t0,
                t1.elapsed()
            );
            (c.text, c.element_count)
        }
        None => {
            let tree = walk::walk(st, s, full).await?;
            let t2 = Instant::now();
            let gen_ = s.tab.state.doc_gen();
            let snap = domsnap::render(&tree, &mut s.refs, gen_, full);
            let t3 = Instant::now();
            let text = textsafety::redact(&snap.text);
            tracing::debug!(
                "snapshot: settle {:?}, walk {:?} ({} elements), render {:?}, redact {:?}",
                t1 - t0,
                t2 - t1,
                tree.count,
                t3 - t2,
                t3.elapsed()
            );
            (text, snap.element_count)
        }
    };
    // Cache the raw (redacted, uncut) text: a reuse cuts or summarises anew.
    s.snap_cache = Some(SnapCache {
        doc_gen: s.tab.state.doc_gen(),
        full,
        text: text.clone(),
        element_count,
    });
    let long = text.chars().count() > SNAPSHOT_MAX_CHARS;
    if long
        && let Some(task) = summarize
        && let Some(summary) = summary::summarize_snapshot(ctx, &text, task).await
    {
        return Ok((summary, element_count));
    }
    let text = if long {
        let stored = summary::store_full_snapshot(ctx, &text);
        snapshot::truncate(&text, SNAPSHOT_MAX_CHARS, stored.as_deref())
    } else {
        text
    };
    Ok((text, element_count))
}

/// `browser_snapshot`.
pub(crate) async fn snapshot_tool(
    ctx: &Context,
    st: &Settings,
    s: &mut Session,
    full: bool,
    task: &str,
) -> R {
    let (text, n) = take(ctx, st, s, full, Some(task)).await.map_err(|e| {
        let e = e.to_string();
        Fail::msg(if e.is_empty() {
            "Failed to get snapshot".into()
        } else {
            e
        })
    })?;
    Ok(ok(json!({"snapshot": text, "element_count": n})))
}
