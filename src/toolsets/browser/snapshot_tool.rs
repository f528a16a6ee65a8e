//! `browser_snapshot`, and the snapshot `browser_navigate` returns: walk the
//! page once in the page (`walk.rs`), render it (`snapshot.rs`), redact it,
//! and cut it at Hermes' size limit with the full text stored in a file the
//! model can page through.

use std::time::{Duration, Instant};

use serde_json::json;

use super::domsnap;
use super::page::{CmdError, settle};
use super::reply::{Fail, R, ok};
use super::session::Session;
use super::settings::Settings;
use super::snapshot;
use super::textsafety;
use super::walk;
use crate::hermes::Context;

/// Hermes' `SNAPSHOT_SUMMARIZE_THRESHOLD` (hermes-agent: tools/browser_tool.py).
const SNAPSHOT_MAX_CHARS: usize = 15_000;
/// Hermes' `MAX_STORED_SNAPSHOT_CHARS` (hermes-agent: tools/browser_tool.py).
const MAX_STORED_SNAPSHOT_CHARS: usize = 2_000_000;

/// Take a snapshot, store the full text when it is cut, redact.
pub(crate) async fn take_snapshot(
    ctx: &Context,
    st: &Settings,
    s: &mut Session,
    full: bool,
) -> Result<(String, usize), CmdError> {
    let t0 = Instant::now();
    settle(st, s, Duration::ZERO).await;
    let t1 = Instant::now();
    let tree = walk::walk(st, s).await?;
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
    let text = if text.chars().count() > SNAPSHOT_MAX_CHARS {
        let stored = store_full_snapshot(ctx, &text);
        snapshot::truncate(&text, SNAPSHOT_MAX_CHARS, stored.as_deref())
    } else {
        text
    };
    Ok((text, snap.element_count))
}

/// Hermes' `_store_full_snapshot` (hermes-agent: tools/browser_tool.py):
/// `$HERMES_HOME/cache/web/browser-snapshot-<sha10>.txt`.
fn store_full_snapshot(ctx: &Context, text: &str) -> Option<String> {
    use sha2::Digest;
    let mut content = text.to_string();
    let n = content.chars().count();
    if n > MAX_STORED_SNAPSHOT_CHARS {
        content = content
            .chars()
            .take(MAX_STORED_SNAPSHOT_CHARS)
            .collect::<String>()
            + &format!(
                "\n\n[... stored copy truncated at {MAX_STORED_SNAPSHOT_CHARS} chars of {n} ...]"
            );
    }
    let dir = ctx.home.cache_dir("web");
    std::fs::create_dir_all(&dir).ok()?;
    let digest = sha2::Sha256::digest(content.as_bytes());
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    let path = dir.join(format!("browser-snapshot-{hex}.txt"));
    std::fs::write(&path, content).ok()?;
    Some(path.display().to_string())
}

/// `browser_snapshot`.
pub(crate) async fn snapshot_tool(ctx: &Context, st: &Settings, s: &mut Session, full: bool) -> R {
    let (text, n) = take_snapshot(ctx, st, s, full).await.map_err(|e| {
        let e = e.to_string();
        Fail::msg(if e.is_empty() {
            "Failed to get snapshot".into()
        } else {
            e
        })
    })?;
    Ok(ok(json!({"snapshot": text, "element_count": n})))
}
