//! The one request every auxiliary task builds (task/) and every wire
//! adapter consumes (wire/): system text, turns, vision's image,
//! temperature and token limits, with Hermes' per-model request fixes.
//! Separate so that a task never speaks a wire and a wire never knows a
//! task: each adapter turns this into its own body.

use serde_json::{Map, Value};

use super::wire::anthropic;

/// One conversation turn that is not system text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Turn {
    /// `user` or `assistant`.
    pub role: String,
    pub text: String,
}

/// The output token limit and where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Limits {
    /// The limit the task sets; `None`: the wire's default (Anthropic: the
    /// model's output limit; Gemini: `auxiliary.<task>.max_tokens`).
    pub max_tokens: Option<u64>,
    /// Whether the OpenAI chat-completions body carries it too (Hermes'
    /// `_build_call_kwargs`: vision always, text tasks only on NVIDIA).
    pub openai: bool,
}

/// One auxiliary model call, whatever the wire.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request {
    pub model: String,
    /// System messages, in order (Anthropic and Gemini join them with a
    /// newline; Codex Responses takes the last as `instructions`).
    pub system: Vec<String>,
    pub turns: Vec<Turn>,
    /// Vision's image (a data URL), sent with the one user turn.
    pub image: Option<String>,
    pub temperature: Option<f64>,
    pub limits: Limits,
    /// Top-level fields of the OpenAI chat-completions body that win over
    /// the built ones (`auxiliary.<task>.extra_body`, as the OpenAI SDK
    /// merges it); the other wires read `extra_body` their own way.
    pub extra: Map<String, Value>,
}

impl Request {
    /// Hermes' per-model temperature rules (agent/auxiliary_client.py
    /// `_build_call_kwargs`): none for Kimi models (the server picks), 0.5
    /// for Arcee's trinity-large-thinking, none for Claude models that
    /// reject sampling parameters.
    pub(crate) fn fix_temperature(&mut self) {
        let bare = self.model.trim().to_lowercase();
        let bare = bare.rsplit('/').next().unwrap_or_default();
        if bare.starts_with("kimi-") || bare == "kimi" || anthropic::forbids_sampling(&self.model) {
            self.temperature = None;
        } else if bare == "trinity-large-thinking" {
            self.temperature = Some(0.5);
        }
    }

    /// The text of the user turns, joined (vision's prompt).
    pub(crate) fn prompt(&self) -> String {
        self.turns
            .iter()
            .filter(|t| t.role == "user")
            .map(|t| t.text.as_str())
            .collect()
    }
}

/// `data:<mime>;base64,<data>` → (mime, data); `None` for anything else.
pub(crate) fn split_data_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("data:")?;
    let (header, data) = rest.split_once(',')?;
    let mime = header.split(';').next().unwrap_or("").trim();
    header
        .contains(";base64")
        .then(|| (mime.to_string(), data.to_string()))
}
