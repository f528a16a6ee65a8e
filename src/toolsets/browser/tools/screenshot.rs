//! `browser_vision`: a screenshot of the page (optionally with the latest
//! snapshot's refs drawn on it), saved under the Hermes cache and answered
//! through the vision toolset, either as an image attached for Codex's own
//! model or as an auxiliary vision model's text.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::snapshot_tool::take_snapshot;
use crate::hermes::Context;
use crate::llm::task::vision::{Analysis, VisionClient};
use crate::toolsets::browser::cdp::protocol::{Evaluated, LayoutMetrics, Screenshot, decode};
use crate::toolsets::browser::chromium::settings::Settings;
use crate::toolsets::browser::reply::{Fail, Reply, ok};
use crate::toolsets::browser::session::Session;
use crate::toolsets::browser::session::page::{call_on, cmd_as, eval_value, settle};
use crate::toolsets::browser::session::walk;
use crate::toolsets::browser::snapshot::textsafety;

/// Screenshots older than this are deleted (Hermes' `_cleanup_old_screenshots`,
/// hermes-agent: tools/browser_tool.py: 24 h).
const SCREENSHOT_MAX_AGE: Duration = Duration::from_secs(24 * 3600);
/// Full-page screenshots are cut at this height (CSS px).
const MAX_SCREENSHOT_HEIGHT: f64 = 8000.0;
/// At most this many refs are drawn.
const MAX_ANNOTATIONS: usize = 300;

/// Delete `browser_screenshot_*.png` older than 24 h.
fn prune_screenshots(dir: &Path) {
    crate::fs::prune_older_than(dir, SCREENSHOT_MAX_AGE, |n| {
        n.starts_with("browser_screenshot_")
    });
}

/// Draws a labelled box per item (`{n, x, y, w, h}`, document px) in an
/// overlay that the screenshot captures and that is removed afterwards.
const ANNOTATE_JS: &str = r#"function(items){
  const root=document.createElement('div'); root.id='__hermes_annotations';
  root.style.cssText='position:absolute;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none';
  for(const it of items){
    const b=document.createElement('div');
    b.style.cssText=`position:absolute;left:${it.x}px;top:${it.y}px;width:${it.w}px;height:${it.h}px;outline:2px solid #e11d48;`;
    const l=document.createElement('div'); l.textContent='['+it.n+']';
    l.style.cssText='position:absolute;left:0;top:-14px;font:bold 11px/13px monospace;background:#e11d48;color:#fff;padding:0 2px;white-space:nowrap';
    b.appendChild(l); root.appendChild(b);
  }
  document.documentElement.appendChild(root); return items.length;
}"#;

/// Draw the latest snapshot's refs on the page (taking a snapshot first when
/// there is none for this document); returns the annotation list.
async fn annotate(ctx: &Context, st: &Settings, s: &mut Session) -> Result<Vec<Value>, Fail> {
    let mut annotations: Vec<Value> = Vec::new();
    if s.refs.latest.is_empty() || s.refs.doc_gen != s.tab.state.doc_gen() {
        take_snapshot(ctx, st, s, false).await.map_err(Fail::msg)?;
    }
    let (sx, sy): (f64, f64) = eval_value(st, s, "[scrollX, scrollY]")
        .await
        .map(decode)
        .unwrap_or_default();
    let mut items = Vec::new();
    for (n, e) in s.refs.latest_entries().into_iter().take(MAX_ANNOTATIONS) {
        let Ok(Some((frame, obj))) = walk::element(st, s, e.backend).await else {
            continue;
        };
        let Ok(Some([minx, miny, maxx, maxy])) = walk::element_box(st, s, frame, &obj, false).await
        else {
            continue;
        };
        items.push(
            json!({"n": n, "x": minx + sx, "y": miny + sy, "w": maxx - minx, "h": maxy - miny}),
        );
        annotations.push(json!({"label": format!("[{n}]"), "ref": format!("@e{n}"), "role": e.role, "name": textsafety::redact(&e.name)}));
    }

    let root = cmd_as::<Evaluated>(
        st,
        s,
        "Runtime.evaluate",
        json!({"expression": "document.documentElement", "objectGroup": "hermes"}),
    )
    .await;
    if let Ok(w) = root
        && let Some(obj) = w.result.object_id.as_deref()
    {
        let _ = call_on(st, s, obj, ANNOTATE_JS, vec![Value::Array(items)]).await;
    }
    Ok(annotations)
}

/// `browser_vision`.
pub(crate) async fn vision(
    ctx: &Context,
    st: &Settings,
    s: &mut Session,
    question: &str,
    annotate_refs: bool,
) -> Result<Reply, Fail> {
    settle(st, s, Duration::ZERO).await;
    let dir = ctx.home.cache_dir("screenshots");
    std::fs::create_dir_all(&dir).map_err(|e| {
        Fail::msg(format!(
            "Failed to take screenshot (local mode): cannot create {}: {e}",
            dir.display()
        ))
    })?;
    prune_screenshots(&dir);
    let annotations = if annotate_refs {
        annotate(ctx, st, s).await?
    } else {
        Vec::new()
    };
    let metrics: LayoutMetrics = cmd_as(st, s, "Page.getLayoutMetrics", json!({}))
        .await
        .unwrap_or_default();
    let cw = metrics.css_content_size.width.unwrap_or(1280.0);
    let ch = metrics.css_content_size.height.unwrap_or(800.0);
    let shot = cmd_as::<Screenshot>(
        st,
        s,
        "Page.captureScreenshot",
        json!({"format": "png", "captureBeyondViewport": true, "clip": {"x": 0, "y": 0, "width": cw.max(1.0), "height": ch.clamp(1.0, MAX_SCREENSHOT_HEIGHT), "scale": 1}}),
    )
    .await;
    if annotate_refs {
        let _ = eval_value(
            st,
            s,
            "document.getElementById('__hermes_annotations')?.remove(), 1",
        )
        .await;
    }
    let shot =
        shot.map_err(|e| Fail::msg(format!("Failed to take screenshot (local mode): {e}")))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&shot.data)
        .map_err(|e| {
            Fail::msg(format!(
                "Failed to take screenshot (local mode): bad image data: {e}"
            ))
        })?;
    let path: PathBuf = dir.join(format!(
        "browser_screenshot_{}.png",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::write(&path, &bytes).map_err(|e| {
        Fail::msg(format!(
            "Failed to take screenshot (local mode): cannot write {}: {e}",
            path.display()
        ))
    })?;
    // The vision toolset's path: native mode hands the (downscaled) pixels to
    // Codex's model; auxiliary mode asks the configured vision model, with
    // Hermes' browser_vision prompt (hermes-agent: tools/browser_tool.py).
    let prompt = format!(
        "You are analyzing a screenshot of a web browser.\n\nUser's question: {question}\n\n\
         Provide a detailed and helpful answer based on what you see in the screenshot. \
         If there are interactive elements, describe them. If there are verification challenges \
         or CAPTCHAs, describe what type they are and what action might be needed. \
         Focus on answering the user's specific question."
    );
    let analysis = VisionClient::new()
        .analyze_bytes(ctx, bytes, &prompt)
        .await
        .map_err(|e| {
            Fail::msg(format!(
                "Error analyzing screenshot: {e}. Screenshot path: {}",
                path.display()
            ))
        })?;
    let mut v = json!({
        "question": question,
        "screenshot_path": path.display().to_string(),
    });
    if annotate_refs {
        v["annotations"] = Value::Array(annotations);
    }
    match analysis {
        Analysis::Native(prepared) => {
            v["analysis"] = json!(format!(
                "The screenshot of the current page is attached as an image ({}). Inspect it to answer: {question}",
                prepared.describe()
            ));
            Ok(Reply::Image(ok(v), prepared.base64(), prepared.mime))
        }
        Analysis::Text(text) => {
            v["analysis"] = json!(textsafety::redact(&text));
            Ok(Reply::Json(ok(v)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolsets::browser::testutil::write_aged;

    #[test]
    fn screenshots_older_than_a_day_are_pruned() {
        let d = tempfile::tempdir().unwrap();
        let past = Duration::from_secs(25 * 3600);
        let [old, other] = write_aged(d.path(), ["browser_screenshot_old.png", "keep.png"], past);
        let [new] = write_aged(d.path(), ["browser_screenshot_new.png"], Duration::ZERO);
        prune_screenshots(d.path());
        assert!(!old.exists());
        assert!(new.exists());
        assert!(other.exists(), "only our screenshots are pruned");
    }
}
