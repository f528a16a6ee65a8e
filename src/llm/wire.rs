//! One call on a resolved endpoint's wire, whichever it is (OpenAI chat
//! completions, Anthropic Messages, Gemini generateContent, Codex Responses),
//! with Hermes' per-model request fixes.

use serde_json::{Value, json};

use crate::net::HttpClient;

use super::auxiliary::{self, AuxConfig};
use super::{anthropic, codex, gemini, providers};

/// Hermes' per-model temperature rules (agent/auxiliary_client.py
/// `_build_call_kwargs`): none for Kimi models (the server picks), 0.5 for
/// Arcee's trinity-large-thinking, none for Claude models that reject
/// sampling parameters.
pub(crate) fn fix_temperature(body: &mut serde_json::Value) {
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let bare = model.trim().to_lowercase();
    let bare = bare.rsplit('/').next().unwrap_or_default();
    let Some(obj) = body.as_object_mut() else {
        return;
    };
    if bare.starts_with("kimi-") || bare == "kimi" || anthropic::forbids_sampling(&model) {
        obj.remove("temperature");
    } else if bare == "trinity-large-thinking" {
        obj.insert("temperature".into(), json!(0.5));
    }
}

/// One call on the endpoint's wire (OpenAI chat completions, Anthropic
/// Messages, Gemini generateContent or Codex Responses); the answer text.
pub(crate) async fn send(
    http: &HttpClient,
    cfg: &AuxConfig,
    body: &Value,
) -> Result<String, auxiliary::CallError> {
    match cfg.wire {
        providers::Wire::OpenAi => auxiliary::chat(http, cfg, body).await,
        providers::Wire::Anthropic(auth) => anthropic::chat(http, cfg, auth, body).await,
        providers::Wire::Gemini => gemini::chat(http, cfg, body).await,
        providers::Wire::CodexResponses => codex::chat(http, cfg, body).await,
    }
}
