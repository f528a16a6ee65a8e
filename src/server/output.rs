//! Tool results in Hermes' shapes.
//!
//! Text content is compact JSON, as Hermes' handlers return it. Failures set
//! `isError`. We never send `structuredContent`: Codex would show the model only
//! that and drop images and text (observed with codex 0.169: `mcp_tool_call`
//! turns `structuredContent`, when present, into the whole function output).

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// Hermes cuts error bodies longer than this and appends `… [truncated]`.
pub(crate) const MAX_ERROR_CHARS: usize = 2048;

#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub content: Vec<ContentBlock>,
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result: the value as compact JSON text.
    pub(crate) fn json(value: Value) -> Self {
        ToolOutput {
            content: vec![ContentBlock::text(value.to_string())],
            is_error: false,
        }
    }

    /// A failed result whose JSON body the toolset shaped itself
    /// (e.g. `{"success": false, "error": ...}`).
    pub(crate) fn error_json(value: Value) -> Self {
        ToolOutput {
            content: vec![ContentBlock::text(value.to_string())],
            is_error: true,
        }
    }

    /// Hermes' `tool_error(msg)`: `{"error": msg}` with `isError`.
    pub(crate) fn error(message: impl Into<String>) -> Self {
        Self::error_json(json!({ "error": truncate_error(message.into()) }))
    }

    /// Plain text (rarely right: prefer JSON shapes).
    pub(crate) fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ContentBlock::text(text)],
            is_error: false,
        }
    }

    /// Append an image (base64 data) as MCP image content.
    pub(crate) fn with_image(mut self, base64_data: String, mime_type: &str) -> Self {
        self.content
            .push(ContentBlock::image(base64_data, mime_type));
        self
    }

    /// The first text block parsed as JSON (tests and benchmarks).
    pub fn first_json(&self) -> Option<Value> {
        self.content
            .iter()
            .find_map(|c| c.as_text())
            .and_then(|t| serde_json::from_str(&t.text).ok())
    }

    pub(crate) fn into_call_result(self) -> CallToolResult {
        if self.is_error {
            CallToolResult::error(self.content)
        } else {
            CallToolResult::success(self.content)
        }
    }
}

fn truncate_error(mut s: String) -> String {
    if s.chars().count() > MAX_ERROR_CHARS {
        let cut: String = s.chars().take(MAX_ERROR_CHARS).collect();
        s = format!("{cut}… [truncated]");
    }
    s
}
