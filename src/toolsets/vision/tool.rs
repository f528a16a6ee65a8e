//! One `vision_analyze` call: the image source loaded ([`super::source`]) and
//! prepared, then shown to Codex's model (native mode) or asked about through
//! the auxiliary vision model, answered in Hermes' result shapes.

use std::time::Duration;

use serde_json::json;

use crate::hermes::Context;
use crate::server::ToolOutput;

use super::source::{self, SourceError};
use crate::image::prep::{Budget, PrepError, Prepared};
use crate::llm::Mode;
use crate::llm::route::resolve;
use crate::llm::task::vision::{self as llm_vision, Analysis, VisionClient, VisionError};

/// Hermes' native fast-path text part.
pub(crate) fn native_text(question: &str) -> String {
    let mut t = String::from(
        "Image loaded into your context — you can see it natively now. Use your built-in vision to answer the user.",
    );
    if !question.trim().is_empty() {
        t.push_str("\n\nQuestion: ");
        t.push_str(question.trim());
    }
    t
}

/// Why an image source could not be loaded or analyzed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Vision(#[from] VisionError),
}

/// Load `image_url` (http(s), `file://`, local path or `data:`) as raw bytes.
pub(crate) async fn load(
    client: &VisionClient,
    ctx: &Context,
    image_url: &str,
) -> Result<source::Loaded, LoadError> {
    let lower = image_url.trim().to_ascii_lowercase();
    let http = if lower.starts_with("http://") || lower.starts_with("https://") {
        Some(client.http(ctx).map_err(VisionError::from)?)
    } else {
        None
    };
    let dl = http.as_deref().map(|h| source::Download {
        http: h,
        timeout: llm_vision::download_timeout(ctx),
        attempts: 3,
        backoff: Duration::from_secs(2),
    });
    Ok(source::load(image_url, dl).await?)
}

/// Load and prepare an image source for a model.
pub(crate) async fn load_prepared(
    client: &VisionClient,
    ctx: &Context,
    image_url: &str,
) -> Result<Prepared, LoadError> {
    let loaded = load(client, ctx, image_url).await?;
    let ctype = loaded.content_type.clone();
    llm_vision::prepare(client.slots(ctx), loaded.data, Budget::default())
        .await
        .map_err(|e| match (e, ctype) {
            (PrepError::NotAnImage(_), Some(ct)) => LoadError::Vision(VisionError::Prep(
                PrepError::NotAnImage(format!(" (the server sent {ct})")),
            )),
            (e, _) => LoadError::Vision(VisionError::Prep(e)),
        })
}

/// The result for a native-mode analysis: Hermes' text plus the image.
pub(crate) fn native_output(prepared: &Prepared, question: &str) -> ToolOutput {
    let mut text = native_text(question);
    text.push_str(&format!("\n\n(Image: {}.)", prepared.describe()));
    ToolOutput::text(text).with_image(prepared.base64(), prepared.mime)
}

/// `vision_analyze`'s full behaviour for an image source.
pub(crate) async fn vision_analyze(
    client: &VisionClient,
    ctx: &Context,
    image_url: &str,
    question: &str,
) -> ToolOutput {
    match resolve::vision_mode(ctx) {
        Mode::Native => match load_prepared(client, ctx, image_url).await {
            Ok(p) => native_output(&p, question),
            // Hermes' `tool_error(str(exc), success=False)`.
            Err(e) => ToolOutput::error_json(json!({"error": e.to_string(), "success": false})),
        },
        Mode::Misconfigured(why) => ToolOutput::error_json(json!({"error": why, "success": false})),
        Mode::Auxiliary(cfg) => {
            let prompt = llm_vision::analysis_prompt(question);
            let res = match load_prepared(client, ctx, image_url).await {
                Ok(p) => client
                    .analyze_prepared(ctx, p, &prompt)
                    .await
                    .map_err(LoadError::from),
                Err(e) => Err(e),
            };
            match res {
                Ok(Analysis::Text(analysis)) => {
                    ToolOutput::json(json!({"success": true, "analysis": analysis}))
                }
                Ok(Analysis::Native(p)) => native_output(&p, question),
                Err(e) => {
                    let msg = e.to_string();
                    ToolOutput::error_json(json!({
                        "success": false,
                        "error": format!("Error analyzing image: {msg}"),
                        "analysis": llm_vision::friendly_hint(&msg, &cfg.model),
                    }))
                }
            }
        }
    }
}
