//! `image_generate`'s arguments, typed from the JSON arguments.

use serde_json::{Map, Value};

use crate::server::args::ArgsExt;

/// `image_generate`'s arguments (already checked against [`super::schema`]).
pub(super) struct ImageArgs {
    pub(super) prompt: String,
    pub(super) aspect_ratio: Option<String>,
    /// `image_url` first, then `reference_image_urls`; trimmed, blanks dropped.
    pub(super) sources: Vec<String>,
}

impl ImageArgs {
    pub(super) fn from_args(args: &Map<String, Value>) -> Self {
        let mut sources = Vec::new();
        if let Some(u) = args.str_arg("image_url").map(str::trim)
            && !u.is_empty()
        {
            sources.push(u.to_string());
        }
        for r in args.str_list_arg("reference_image_urls") {
            if !r.trim().is_empty() {
                sources.push(r.trim().to_string());
            }
        }
        ImageArgs {
            prompt: args.str_arg("prompt").unwrap_or("").to_string(),
            aspect_ratio: args.str_arg("aspect_ratio").map(str::to_string),
            sources,
        }
    }
}
