//! Hermes' auxiliary *text* tasks on the model the task resolver picked
//! (resolve.rs): one call ([`complete`], as Hermes' `call_llm(task=…)` makes
//! it for `web_extract` summaries and `tts_audio_tags` rewrites), and the
//! line `hermes-mcp tools` shows for the chosen model ([`describe`]).

use serde_json::json;

use super::auxiliary::{self, AuxConfig, CallError, Mode};
use super::providers::Wire;
use super::resolve::Resolution;
use crate::net::HttpClient;

/// One text call as Hermes' `call_llm` makes it: `messages` (role, text),
/// `temperature` and `max_tokens` as the task passes them, adjusted per
/// model and provider (`_build_call_kwargs`: the token limit only reaches
/// Anthropic-style and NVIDIA endpoints), `extra_body` merged; on the
/// endpoint's wire. Returns the answer text (may be empty).
pub(crate) async fn complete(
    http: &HttpClient,
    cfg: &AuxConfig,
    messages: &[(&str, &str)],
    temperature: Option<f64>,
    max_tokens: Option<u64>,
) -> Result<String, CallError> {
    let mut body = json!({
        "model": cfg.model,
        "messages": messages
            .iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect::<Vec<_>>(),
    });
    if let Some(t) = temperature {
        body["temperature"] = json!(t);
    }
    let nvidia =
        cfg.provider == "nvidia" || auxiliary::is_host(&cfg.base_url, "integrate.api.nvidia.com");
    let mut cfg = cfg.clone();
    if let Some(m) = max_tokens {
        if nvidia || matches!(cfg.wire, Wire::Anthropic(_)) {
            body["max_tokens"] = json!(m);
        }
        cfg.max_tokens = m;
    } else if matches!(cfg.wire, Wire::Anthropic(_)) {
        // The Messages API needs a limit: Hermes sends the model's output limit.
        cfg.max_tokens = super::anthropic::max_output(&cfg.model);
    }
    super::wire::fix_temperature(&mut body);
    if cfg.wire == Wire::OpenAi {
        for (k, v) in &cfg.extra_body {
            body[k] = v.clone();
        }
    }
    super::wire::send(http, &cfg, &body).await
}

/// The line `hermes-mcp tools` shows for a text task.
pub(crate) fn describe(r: &Resolution) -> (String, String) {
    match &r.mode {
        Mode::Auxiliary(c) => (
            format!("{} ({}{})", r.provider, c.model, c.wire.shown()),
            r.why.clone(),
        ),
        Mode::Misconfigured(m) => ("none".into(), m.clone()),
        Mode::Native => ("none".into(), r.why.clone()),
    }
}
