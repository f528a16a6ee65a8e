//! The `vision` toolset's declaration: Hermes' `vision_analyze` description
//! and schema (hermes-agent: tools/vision_tools.py), as static data.

use serde_json::{Value, json};

use crate::server::{Hints, ToolDef};

const VISION_ANALYZE_DESCRIPTION: &str = "Load an image into the conversation so you can see it. Accepts a URL, local file path, or data URL. When your active model has native vision, the image is attached to your context directly and you read the pixels yourself on the next turn — call this any time the user references an image (filepath in their message, URL in tool output, screenshot from the browser, etc.). For non-vision models, falls back to an auxiliary vision model that returns a text description.";

pub(super) const DEFS: &[ToolDef] = &[ToolDef {
    name: "vision_analyze",
    description: VISION_ANALYZE_DESCRIPTION,
    schema: vision_analyze_schema,
    hints: Hints::READ_ONLY_OPEN,
}];

/// Hermes' `VISION_ANALYZE_SCHEMA` parameters (hermes-agent: tools/vision_tools.py).
fn vision_analyze_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "image_url": {
                "type": "string",
                "description": "Image URL (http/https), local file path, or data: URL to load."
            },
            "question": {
                "type": "string",
                "description": "Your specific question or request about the image. Optional context the model uses on the next turn after seeing the image."
            }
        },
        "required": ["image_url", "question"]
    })
}
