//! Hermes' auxiliary *text* tasks on the model the task resolver picked
//! (route/resolve.rs): one call ([`complete`], as Hermes' `call_llm(task=…)` makes
//! it for `web_extract` summaries and `tts_audio_tags` rewrites), and the
//! line `hermes-mcp tools` shows for the chosen model ([`describe`]).

use crate::llm::endpoint::{AuxConfig, Mode, is_host};
use crate::llm::provider::Provider;
use crate::llm::request::{Limits, Request, Turn};
use crate::llm::route::{NO_PROVIDER, Resolution};
use crate::llm::wire::{self, CallError};
use crate::net::HttpClient;

/// The canonical request of one text call as Hermes' `call_llm` builds it:
/// `messages` (role, text; system ones apart), `temperature` and
/// `max_tokens` as the task passes them, adjusted per model and provider
/// (`_build_call_kwargs`: on the chat-completions wire the token limit only
/// reaches NVIDIA endpoints), `extra_body` over the chat-completions body.
pub(crate) fn request(
    cfg: &AuxConfig,
    messages: &[(&str, &str)],
    temperature: Option<f64>,
    max_tokens: Option<u64>,
) -> Request {
    let nvidia =
        cfg.provider == Provider::Nvidia || is_host(&cfg.base_url, "integrate.api.nvidia.com");
    let (system, turns): (Vec<_>, Vec<_>) = messages.iter().partition(|(r, _)| *r == "system");
    let mut req = Request {
        model: cfg.model.clone(),
        system: system.iter().map(|(_, t)| t.to_string()).collect(),
        turns: turns
            .iter()
            .map(|(role, text)| Turn {
                role: role.to_string(),
                text: text.to_string(),
            })
            .collect(),
        image: None,
        temperature,
        limits: Limits {
            max_tokens,
            openai: nvidia,
        },
        extra: cfg.extra_body.clone(),
    };
    req.fix_temperature();
    req
}

/// One text call as Hermes' `call_llm(task=…)` makes it ([`request`]), on
/// the endpoint's wire. Returns the answer text (may be empty).
pub(crate) async fn complete(
    http: &HttpClient,
    cfg: &AuxConfig,
    messages: &[(&str, &str)],
    temperature: Option<f64>,
    max_tokens: Option<u64>,
) -> Result<String, CallError> {
    wire::send(http, cfg, &request(cfg, messages, temperature, max_tokens)).await
}

/// The line `hermes-mcp tools` shows for a text task.
pub(crate) fn describe(r: &Resolution) -> (String, String) {
    match &r.mode {
        Mode::Auxiliary(c) => (
            format!("{} ({}{})", r.provider, c.model, c.wire.shown()),
            r.why.clone(),
        ),
        Mode::Misconfigured(m) => (NO_PROVIDER.into(), m.clone()),
        Mode::Native => (NO_PROVIDER.into(), r.why.clone()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::hermes::context::test_ctx as ctx;
    use crate::llm::endpoint::aux_config;
    use crate::llm::wire::{AnthropicAuth, anthropic, gemini, openai};

    fn cfg(yaml: &str, provider: Provider) -> AuxConfig {
        let base = "http://127.0.0.1:9/v1".to_string();
        aux_config(
            &ctx(yaml, &[]),
            "tts_audio_tags",
            provider,
            base,
            None,
            "m-1".into(),
        )
        .unwrap()
    }

    #[test]
    fn one_request_on_every_wire() {
        let c = cfg(
            "auxiliary:\n  tts_audio_tags:\n    extra_body: {top_k: 3}\n",
            Provider::Custom,
        );
        let msgs = [("system", "S"), ("user", "U")];
        let req = request(&c, &msgs, Some(0.7), None);
        assert_eq!(
            openai::body(&req),
            json!({"model": "m-1", "messages": [
                {"role": "system", "content": "S"}, {"role": "user", "content": "U"}
            ], "temperature": 0.7, "top_k": 3})
        );
        let a = anthropic::request(&c, AnthropicAuth::ApiKey, &req);
        assert_eq!(a["system"], "S");
        assert_eq!(a["messages"], json!([{"role": "user", "content": "U"}]));
        assert_eq!(a["max_tokens"], 128_000);
        assert_eq!(a["temperature"], 0.7);
        let g = gemini::request(&c, &req);
        assert_eq!(g["systemInstruction"]["parts"][0]["text"], "S");
        assert_eq!(g["generationConfig"]["maxOutputTokens"], 2000);
        // The limit reaches the chat-completions body only on NVIDIA.
        let req = request(&c, &msgs, None, Some(50));
        assert!(openai::body(&req).get("max_tokens").is_none());
        let n = request(&cfg("", Provider::Nvidia), &msgs, None, Some(50));
        assert_eq!(openai::body(&n)["max_tokens"], 50);
        assert_eq!(
            anthropic::request(&c, AnthropicAuth::ApiKey, &req)["max_tokens"],
            50
        );
    }
}
