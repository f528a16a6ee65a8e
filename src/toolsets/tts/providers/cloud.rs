//! The cloud speech APIs Hermes calls directly (hermes-agent: `tools/tts_tool.py`):
//! MiniMax (`_generate_minimax_tts`), xAI (`_generate_xai_tts`), Mistral Voxtral
//! (`_generate_mistral_tts`, through the `mistralai` SDK's `POST /v1/audio/speech`),
//! Google Gemini (`_generate_gemini_tts`) and DeepInfra (`_generate_deepinfra_tts`, the
//! OpenAI-compatible endpoint). Each sends what Hermes sends, reads `tts.<provider>.*`
//! with Hermes' defaults, and words its errors as Hermes does. Every endpoint can be
//! moved with `tts.<provider>.base_url` (Hermes already honours it for all but Mistral).
//!
//! Deliberate differences: Gemini's key goes in the `x-goog-api-key` header, which
//! Google documents as equivalent to Hermes' `?key=` query parameter, so it never
//! appears in a URL (error texts, proxy logs). The tag rewrites
//! (`tts.xai.auto_speech_tags`, `tts.gemini.audio_tags`) are [`super::super::tags`].
//! xAI's OAuth sign-in is not read; `XAI_API_KEY` is.

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::openai::{SpeechCall, speech};
use super::{Produced, check_status, deliver_mp3, deliver_wav_bytes, send, write_audio};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::net::HttpClient;
use crate::net::vendor::{self as http, ApiRequest, Body};
use crate::toolsets::tts::audio;
use crate::toolsets::tts::config::{num, section};
use crate::toolsets::tts::error::TtsError;
use crate::toolsets::tts::tags;

pub(crate) const DEFAULT_MINIMAX_MODEL: &str = "speech-02-hd";
pub(crate) const DEFAULT_MINIMAX_VOICE_ID: &str = "English_expressive_narrator";
pub(crate) const DEFAULT_MINIMAX_BASE_URL: &str = "https://api.minimax.io/v1/t2a_v2";
pub(crate) const DEFAULT_MISTRAL_MODEL: &str = "voxtral-mini-tts-2603";
/// "Paul - Neutral".
pub(crate) const DEFAULT_MISTRAL_VOICE_ID: &str = "c69964a6-ab8b-4f8a-9465-ec0925096ec8";
pub(crate) const DEFAULT_MISTRAL_BASE_URL: &str = "https://api.mistral.ai";
pub(crate) const DEFAULT_XAI_VOICE_ID: &str = "eve";
const XAI_SAMPLE_RATE: i64 = 24000;
const XAI_BIT_RATE: i64 = 128000;
pub(crate) const DEFAULT_GEMINI_MODEL: &str = "gemini-2.5-flash-preview-tts";
pub(crate) const DEFAULT_GEMINI_VOICE: &str = "Kore";
pub(crate) const DEFAULT_GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";
pub(crate) const DEFAULT_DEEPINFRA_BASE_URL: &str = "https://api.deepinfra.com/v1/openai";
const DEFAULT_DEEPINFRA_VOICE: &str = "default";
/// Hermes' `hermes_cli.__version__`, which it sends in its User-Agent / API-client headers.
const HERMES_VERSION: &str = "0.19.0";
/// Hermes' `requests.post(..., timeout=60)`.
const API_TIMEOUT: Duration = Duration::from_secs(60);

/// The cloud APIs of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    Minimax,
    Xai,
    Mistral,
    Gemini,
    DeepInfra,
}

const XAI_NO_CREDENTIALS: &str =
    "No xAI credentials found. Configure xAI OAuth in `hermes model` or set XAI_API_KEY.";

/// The key Hermes reads for `api`, or its missing-key text (its `ValueError`).
pub(crate) fn api_key(ctx: &Context, api: Api) -> Result<String, &'static str> {
    let get = |n| {
        ctx.env
            .get(n)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    match api {
        Api::Minimax => get(envvars::MINIMAX_API_KEY)
            .ok_or("MINIMAX_API_KEY not set. Get one at https://platform.minimax.io/"),
        // The sign-in's token is read (and refreshed) at call time.
        Api::Xai => crate::auth::xai::peek(ctx)
            .map(|_| get(envvars::XAI_API_KEY).unwrap_or_default())
            .ok_or(XAI_NO_CREDENTIALS),
        Api::Mistral => get(envvars::MISTRAL_API_KEY)
            .ok_or("MISTRAL_API_KEY not set. Get one at https://console.mistral.ai/"),
        Api::Gemini => get(envvars::GEMINI_API_KEY)
            .or_else(|| get(envvars::GOOGLE_API_KEY))
            .ok_or("GEMINI_API_KEY not set. Get one at https://aistudio.google.com/app/apikey"),
        Api::DeepInfra => get(envvars::DEEPINFRA_API_KEY).ok_or(
            "DEEPINFRA_API_KEY not set. Run `hermes setup` to configure, or set the env var directly.",
        ),
    }
}

/// `tts.<name>` as a mapping (empty when missing or not one).
fn sec(cfg: &Map<String, Value>, name: &str) -> Map<String, Value> {
    section(cfg, name).cloned().unwrap_or_default()
}

/// A string setting, Python-style `str(x).strip() or default`.
fn s(m: &Map<String, Value>, key: &str, default: &str) -> String {
    match m.get(key) {
        Some(Value::String(v)) if !v.trim().is_empty() => v.trim().to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => default.to_string(),
    }
}

/// A config value as given, or `default` (Hermes passes MiniMax's settings through untyped).
fn raw(m: &Map<String, Value>, key: &str, default: Value) -> Value {
    m.get(key)
        .filter(|v| !v.is_null())
        .cloned()
        .unwrap_or(default)
}

/// `tts.<provider>.base_url`, else the provider's variable, else its default;
/// without the trailing `/`.
fn base_url(ctx: &Context, m: &Map<String, Value>, var: &str, default: &str) -> String {
    let b = match m
        .get("base_url")
        .and_then(Value::as_str)
        .filter(|b| !b.trim().is_empty())
    {
        Some(b) => b.to_string(),
        None => ctx.env.get(var).unwrap_or_else(|| default.to_string()),
    };
    b.trim().trim_end_matches('/').to_string()
}

fn failed(m: impl Into<String>) -> TtsError {
    TtsError::failed(m)
}

async fn post(
    http: &HttpClient,
    who: &'static str,
    url: &str,
    auth: Option<(&'static str, String)>,
    headers: Vec<(&'static str, String)>,
    body: Value,
) -> Result<crate::net::ApiResponse, TtsError> {
    let mut req = ApiRequest::new(who, reqwest::Method::POST, url);
    req.auth = auth;
    req.headers = headers;
    req.body = Body::Json(body);
    req.timeout = API_TIMEOUT;
    send(http, req).await
}

/// One speech request, as every API of this module takes it.
#[derive(Clone, Copy)]
pub(crate) struct Speech<'a> {
    pub(crate) ctx: &'a Context,
    pub(crate) http: &'a HttpClient,
    /// The `tts` section.
    pub(crate) cfg: &'a Map<String, Value>,
    pub(crate) key: &'a str,
    pub(crate) text: &'a str,
    /// Where the audio goes; its extension is the format asked for.
    pub(crate) output: &'a Path,
}

/// Speak `text` with `api` into `output` (format by its extension, see each API).
pub(crate) async fn cloud_speech(job: Speech<'_>, api: Api) -> Result<Produced, TtsError> {
    match api {
        Api::Minimax => minimax(job).await,
        Api::Xai => xai(job).await,
        Api::Mistral => mistral(job).await,
        Api::Gemini => gemini(job).await,
        Api::DeepInfra => deepinfra(job).await,
    }
}

/// MiniMax: `t2a_v2` (JSON with hex audio, MP3) or the flat `text_to_speech` endpoint.
async fn minimax(job: Speech<'_>) -> Result<Produced, TtsError> {
    let Speech { ctx, http, cfg, .. } = job;
    let (key, text, output) = (job.key, job.text, job.output);
    let m = sec(cfg, "minimax");
    let model = raw(&m, "model", json!(DEFAULT_MINIMAX_MODEL));
    let voice_id = raw(&m, "voice_id", json!(DEFAULT_MINIMAX_VOICE_ID));
    let mut base_url = s(&m, "base_url", DEFAULT_MINIMAX_BASE_URL);
    let group_id = match m.get("group_id") {
        Some(Value::String(g)) if !g.trim().is_empty() => Some(g.trim().to_string()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => ctx
            .env
            .get(envvars::MINIMAX_GROUP_ID)
            .map(|g| g.trim().to_string()),
    }
    .filter(|g| !g.is_empty());
    if let Some(g) = group_id
        && !base_url.contains("GroupId=")
    {
        let sep = if base_url.contains('?') { '&' } else { '?' };
        base_url = format!("{base_url}{sep}GroupId={g}");
    }
    let t2a_v2 = base_url.contains("t2a_v2");
    let body = if t2a_v2 {
        json!({
            "model": model, "text": text,
            "voice_setting": {
                "voice_id": voice_id,
                "speed": raw(&m, "speed", json!(1.0)),
                "vol": raw(&m, "vol", json!(1.0)),
                "pitch": raw(&m, "pitch", json!(0)),
                "emotion": raw(&m, "emotion", json!("neutral")),
            },
            "audio_setting": {
                "sample_rate": raw(&m, "sample_rate", json!(32000)),
                "bitrate": raw(&m, "bitrate", json!(128000)),
                "format": "mp3",
                "channel": 1,
            },
        })
    } else {
        json!({"model": model, "text": text, "voice_id": voice_id})
    };
    let resp = post(
        http,
        "minimax",
        &base_url,
        Some(("Bearer", key.to_string())),
        Vec::new(),
        body,
    )
    .await?;
    let api_error = |v: &Value| -> Option<TtsError> {
        let base = v.get("base_resp").cloned().unwrap_or(json!({}));
        let code = base
            .get("status_code")
            .and_then(Value::as_i64)
            .unwrap_or(-1);
        (code != 0).then(|| {
            let msg = base
                .get("status_msg")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            failed(format!("MiniMax TTS API error (code {code}): {msg}"))
        })
    };
    let mp3 = if t2a_v2 {
        check_status(&resp, "MiniMax TTS")?;
        let v = resp
            .json()
            .map_err(|e| TtsError::failed_by(format!("MiniMax TTS {e}"), e))?;
        if let Some(e) = api_error(&v) {
            return Err(e);
        }
        let hex = v["data"]["audio"].as_str().unwrap_or("");
        if hex.is_empty() {
            return Err(failed("MiniMax TTS returned empty audio data"));
        }
        decode_hex(hex).ok_or_else(|| failed("MiniMax TTS returned audio that is not hex"))?
    } else {
        // Raw audio, or a JSON error body.
        match resp.json() {
            Ok(v) => {
                if let Some(e) = api_error(&v) {
                    return Err(e);
                }
                check_status(&resp, "MiniMax TTS")?;
                return Err(failed("MiniMax TTS returned no audio data"));
            }
            Err(_) => {
                check_status(&resp, "MiniMax TTS")?;
                resp.body.clone()
            }
        }
    };
    deliver_mp3(ctx, "MiniMax TTS", &mp3, output).await
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// xAI `POST {base}/tts`: MP3 by default, WAV for a `.wav` path.
async fn xai(job: Speech<'_>) -> Result<Produced, TtsError> {
    let Speech { ctx, http, cfg, .. } = job;
    let (text, output) = (job.text, job.output);
    let x = sec(cfg, "xai");
    let voice_id = s(&x, "voice_id", DEFAULT_XAI_VOICE_ID);
    let language = s(&x, "language", "en");
    let int = |k: &str, d: i64| -> Result<i64, TtsError> {
        match x.get(k) {
            None | Some(Value::Null) => Ok(d),
            Some(v) => num(Some(v)).map(|f| f as i64).ok_or_else(|| {
                TtsError::Config(format!("invalid literal for int() with base 10: {v}"))
            }),
        }
    };
    let sample_rate = int("sample_rate", XAI_SAMPLE_RATE)?;
    let bit_rate = int("bit_rate", XAI_BIT_RATE)?;
    // Hermes merges its defaults under the user's config (`tts.xai.speed: 1.0`,
    // `optimize_streaming_latency: 0`), so the global `tts.speed` never reaches xAI.
    let speed = num(x.get("speed")).map(|v| v.clamp(0.7, 1.5));
    let latency = num(x.get("optimize_streaming_latency")).map(|v| (v as i64).clamp(0, 2));
    let auto_tags = crate::pycompat::config_bool(
        x.get("auto_speech_tags").or_else(|| x.get("speech_tags")),
        false,
    );
    // `resolve_xai_http_credentials()`: the sign-in first, then XAI_API_KEY;
    // `tts.xai.base_url` wins over the credentials' base URL.
    let creds = crate::auth::xai::resolve(ctx, http.api())
        .await
        .map_err(|why| failed(why.or(XAI_NO_CREDENTIALS)))?;
    let key = creds.api_key.as_str();
    let mut tag_note = None;
    let tagged;
    let text = if auto_tags {
        let r = tags::xai_auto_speech_tags(ctx, http, text).await;
        tag_note = r.note;
        tagged = r.text;
        tagged.as_str()
    } else {
        text
    };
    let base = x
        .get("base_url")
        .and_then(Value::as_str)
        .filter(|b| !b.trim().is_empty())
        .unwrap_or(&creds.base_url)
        .trim()
        .trim_end_matches('/')
        .to_string();
    let base = base.as_str();
    let codec = if audio::format_of(output) == Some("wav") {
        "wav"
    } else {
        "mp3"
    };
    let mut body = json!({"text": text, "voice_id": voice_id, "language": language});
    if codec != "mp3" || sample_rate != XAI_SAMPLE_RATE || bit_rate != XAI_BIT_RATE {
        let mut f = json!({"codec": codec});
        if sample_rate != 0 {
            f["sample_rate"] = json!(sample_rate);
        }
        if codec == "mp3" && bit_rate != 0 {
            f["bit_rate"] = json!(bit_rate);
        }
        body["output_format"] = f;
    }
    if let Some(sp) = speed
        && sp != 1.0
    {
        body["speed"] = json!(sp);
    }
    if let Some(l) = latency
        && l != 0
    {
        body["optimize_streaming_latency"] = json!(l);
    }
    let ua = format!(
        "Hermes-Agent/{HERMES_VERSION} hermes-mcp/{}",
        env!("CARGO_PKG_VERSION")
    );
    let resp = post(
        http,
        "xai",
        &format!("{base}/tts"),
        Some(("Bearer", key.to_string())),
        vec![("user-agent", ua)],
        body,
    )
    .await?;
    check_status(&resp, "xAI TTS")?;
    let mut produced = if codec == "wav" {
        write_audio(output, &resp.body)?;
        Produced {
            path: output.to_path_buf(),
            notes: Vec::new(),
            duration: audio::parse_wav(&resp.body).map(|i| i.duration_secs()),
        }
    } else {
        deliver_mp3(ctx, "xAI TTS", &resp.body, output).await?
    };
    produced.notes.extend(tag_note);
    Ok(produced)
}

/// Mistral `POST /v1/audio/speech` (the `mistralai` SDK's `audio.speech.complete`):
/// JSON answer with base64 `audio_data` in the requested format.
async fn mistral(job: Speech<'_>) -> Result<Produced, TtsError> {
    let Speech { http, cfg, .. } = job;
    let (key, text, output) = (job.key, job.text, job.output);
    let m = sec(cfg, "mistral");
    let model = s(&m, "model", DEFAULT_MISTRAL_MODEL);
    let voice_id = s(&m, "voice_id", DEFAULT_MISTRAL_VOICE_ID);
    let base = s(&m, "base_url", DEFAULT_MISTRAL_BASE_URL);
    let format = match audio::format_of(output) {
        Some("ogg") => "opus",
        Some("wav") => "wav",
        Some("flac") => "flac",
        _ => "mp3",
    };
    let body = json!({
        "model": model, "input": text, "voice_id": voice_id,
        "response_format": format, "stream": false,
    });
    let url = format!("{}/v1/audio/speech", base.trim_end_matches('/'));
    let resp = post(
        http,
        "mistral",
        &url,
        Some(("Bearer", key.to_string())),
        vec![("accept", "application/json".into())],
        body,
    )
    .await?;
    // Hermes: `RuntimeError(f"Mistral TTS failed: {type(e).__name__}")` (the SDK's
    // HTTPValidationError for 422, SDKError otherwise); we add the status and detail.
    if !(200..300).contains(&resp.status) {
        let kind = if resp.status == 422 {
            "HTTPValidationError"
        } else {
            "SDKError"
        };
        return Err(failed(format!(
            "Mistral TTS failed: {kind} ({})",
            http::status_error(&resp)
        )));
    }
    let audio_b64 = resp
        .json()
        .ok()
        .and_then(|v| {
            v.get("audio_data")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .ok_or_else(|| failed("Mistral TTS failed: ResponseValidationError (no audio_data)"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(audio_b64.trim())
        .map_err(|_| failed("Mistral TTS failed: Error (audio_data is not base64)"))?;
    write_audio(output, &bytes)?;
    Ok(Produced::written(output))
}

/// Hermes' `_read_gemini_persona_prompt` (`tts.gemini.persona_prompt_file`).
fn gemini_persona(ctx: &Context, g: &Map<String, Value>) -> Option<String> {
    g.get("persona_prompt_file")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let expanded =
                crate::hermes::config::expand_vars(p.trim(), |n| ctx.env.get_unlisted(n));
            let path = crate::hermes::home::expand_tilde(Path::new(&expanded));
            if path.is_absolute() {
                path
            } else {
                ctx.home.path.join(path)
            }
        })
        .and_then(
            |p| match crate::fs::read_to_string_capped(&p, crate::fs::CONFIG_CAP) {
                Ok(t) => Some(t.trim().to_string()),
                Err(e) => {
                    tracing::warn!(
                        "Gemini TTS persona prompt file unavailable at {}: {e}",
                        p.display()
                    );
                    None
                }
            },
        )
        .filter(|t| !t.is_empty())
}

/// Hermes' `_compose_gemini_tts_prompt`.
fn gemini_prompt(persona: Option<&str>, text: &str) -> String {
    let transcript = text.trim();
    let Some(persona) = persona else {
        return transcript.to_string();
    };
    let preamble = "Synthesize speech from the TRANSCRIPT only. Treat AUDIO PROFILE, SCENE, DIRECTOR'S NOTES, and SAMPLE CONTEXT as performance direction; do not speak those sections aloud.";
    static PLACEHOLDERS: std::sync::LazyLock<[regex::Regex; 2]> = std::sync::LazyLock::new(|| {
        // Static patterns: they compile.
        [
            regex::Regex::new(r"(?i)\{\{\s*transcript\s*\}\}").expect("static regex"),
            regex::Regex::new(r"(?i)\{\s*transcript\s*\}").expect("static regex"),
        ]
    });
    for re in PLACEHOLDERS.iter() {
        if re.is_match(persona) {
            let prompt = re.replace_all(persona, regex::NoExpand(transcript));
            return format!("{preamble}\n\n{prompt}").trim().to_string();
        }
    }
    format!("{preamble}\n\n{persona}\n\n#### TRANSCRIPT\n{transcript}")
        .trim()
        .to_string()
}

/// Raw 16-bit little-endian PCM in a WAV header (Hermes' `_wrap_pcm_as_wav`).
pub(crate) fn pcm_to_wav(pcm: &[u8], sample_rate: u32, channels: u16) -> Vec<u8> {
    let mut v = audio::wav_head(sample_rate, channels, 16, pcm.len() as u32);
    v.extend_from_slice(b"data");
    v.extend_from_slice(&(pcm.len() as u32).to_le_bytes());
    v.extend_from_slice(pcm);
    v
}

/// Gemini `POST {base}/models/{model}:generateContent` with `responseModalities:
/// ["AUDIO"]`: base64 24 kHz mono L16 PCM, wrapped as WAV and converted.
async fn gemini(job: Speech<'_>) -> Result<Produced, TtsError> {
    let Speech { ctx, http, cfg, .. } = job;
    let (key, text, output) = (job.key, job.text, job.output);
    let g = sec(cfg, "gemini");
    let model = s(&g, "model", DEFAULT_GEMINI_MODEL);
    let voice = s(&g, "voice", DEFAULT_GEMINI_VOICE);
    let base = base_url(ctx, &g, envvars::GEMINI_BASE_URL, DEFAULT_GEMINI_BASE_URL);
    let base = base.as_str();
    let mut notes = Vec::new();
    let persona = gemini_persona(ctx, &g);
    let mut script = text.to_string();
    match tags::gemini_tags_enabled(&g, &model) {
        Ok(true) => {
            let r =
                tags::gemini_audio_tags(ctx, http, text, persona.as_deref().unwrap_or("")).await;
            script = r.text;
            notes.extend(r.note);
        }
        Ok(false) => {}
        Err(skipped) => notes.push(skipped.to_string()),
    }
    let mut prompt = gemini_prompt(persona.as_deref(), &script);
    let cap = crate::toolsets::tts::config::positive_int(g.get("max_text_length")).unwrap_or(32000);
    if prompt.chars().count() > cap {
        prompt = prompt.chars().take(cap).collect();
    }
    let body = json!({
        "contents": [{"parts": [{"text": prompt}]}],
        "generationConfig": {
            "responseModalities": ["AUDIO"],
            "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": voice}}},
        },
    });
    let url = format!("{base}/models/{model}:generateContent");
    let mut headers = vec![("x-goog-api-key", key.to_string())];
    if url::Url::parse(&url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .as_deref()
        == Some("generativelanguage.googleapis.com")
    {
        headers.push((
            "x-goog-api-client",
            format!("hermes-agent/{HERMES_VERSION}"),
        ));
    }
    let resp = post(http, "gemini", &url, None, headers, body).await?;
    if resp.status != 200 {
        let detail = resp
            .json()
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| resp.text().chars().take(300).collect());
        return Err(failed(format!(
            "Gemini TTS API error (HTTP {}): {detail}",
            resp.status
        )));
    }
    let v = resp
        .json()
        .map_err(|e| TtsError::failed_by(format!("Gemini TTS response was malformed: {e}"), e))?;
    let parts = v["candidates"][0]["content"]["parts"]
        .as_array()
        .ok_or_else(|| failed("Gemini TTS response was malformed: 'candidates'"))?;
    let part = parts
        .iter()
        .find(|p| p.get("inlineData").is_some() || p.get("inline_data").is_some())
        .ok_or_else(|| failed("Gemini TTS response contained no audio data"))?;
    let data = part
        .get("inlineData")
        .or_else(|| part.get("inline_data"))
        .and_then(|i| i.get("data"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if data.is_empty() {
        return Err(failed("Gemini TTS returned empty audio data"));
    }
    let pcm = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| TtsError::failed_by(format!("Gemini TTS response was malformed: {e}"), e))?;
    let mut produced = deliver_wav_bytes(ctx, &pcm_to_wav(&pcm, 24000, 1), output).await?;
    produced.notes.splice(0..0, notes);
    Ok(produced)
}

/// DeepInfra: `tts.deepinfra.model`, else the first `tts`-tagged model of the live
/// catalog (`GET {DEEPINFRA_BASE_URL}/models?filter=true&sort_by=hermes`, Hermes'
/// `deepinfra_model_ids("tts")`), then OpenAI-compatible `POST {base}/audio/speech`.
async fn deepinfra(job: Speech<'_>) -> Result<Produced, TtsError> {
    let Speech { ctx, http, cfg, .. } = job;
    let (key, text, output) = (job.key, job.text, job.output);
    let d = sec(cfg, "deepinfra");
    let env_base = ctx.env.get(envvars::DEEPINFRA_BASE_URL);
    let model = match d.get("model").and_then(Value::as_str).filter(|m| !m.trim().is_empty()) {
        Some(m) => m.to_string(),
        None => deepinfra_catalog_model(http, env_base.as_deref(), key)
            .await
            .ok_or_else(|| {
                TtsError::Config(
                    "No DeepInfra TTS model available. Pin one in config.yaml under tts.deepinfra.model, or check connectivity to api.deepinfra.com so the live catalog can be fetched.".into(),
                )
            })?,
    };
    let call = SpeechCall {
        service: "DeepInfra",
        base: base_url(
            ctx,
            &d,
            envvars::DEEPINFRA_BASE_URL,
            DEFAULT_DEEPINFRA_BASE_URL,
        ),
        key,
        model,
        voice: s(&d, "voice", DEFAULT_DEEPINFRA_VOICE),
        speed: num(d.get("speed").or_else(|| cfg.get("speed"))).unwrap_or(1.0),
    };
    speech(http, &call, text, output).await
}

async fn deepinfra_catalog_model(
    http: &HttpClient,
    env_base: Option<&str>,
    key: &str,
) -> Option<String> {
    let base = env_base
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .unwrap_or(DEFAULT_DEEPINFRA_BASE_URL)
        .trim_end_matches('/');
    let url = format!("{base}/models?filter=true&sort_by=hermes");
    let mut req = ApiRequest::new("deepinfra", reqwest::Method::GET, &url);
    req.auth = Some(("Bearer", key.to_string()));
    req.headers
        .push(("user-agent", format!("hermes-cli/{HERMES_VERSION}")));
    req.timeout = Duration::from_secs(5);
    let resp = http::send(http, req).await.ok()?;
    if !(200..300).contains(&resp.status) {
        return None;
    }
    let v = resp.json().ok()?;
    v["data"].as_array()?.iter().find_map(|item| {
        let id = item.get("id")?.as_str()?;
        let tags = item.get("metadata")?.get("tags")?.as_array()?;
        tags.iter()
            .any(|t| t.as_str() == Some("tts"))
            .then(|| id.to_string())
    })
}
