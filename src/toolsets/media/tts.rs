//! `text_to_speech` (toolset `tts`), after Hermes' `tools/tts_tool.py`.
//!
//! Providers (`tts.provider`):
//! * unset or `edge` (Hermes' default, an online Microsoft service reached through a
//!   Python package we cannot run): the offline default, a local `espeak-ng`
//!   (`tts.espeak.voice`, default `en`; speed from `tts.espeak.speed` / `tts.speed`).
//!   `espeak-ng` / `espeak` select it explicitly. The result's `provider` says it ran.
//! * `piper`: the `piper` command with a local voice model (`tts.piper.voice`, a
//!   `.onnx` path or a name under `tts.piper.voices_dir`, default
//!   `$HERMES_HOME/cache/piper-voices/`). Voices are not downloaded.
//! * `openai` (`VOICE_TOOLS_OPENAI_KEY` or `OPENAI_API_KEY`; `tts.openai.model|voice|speed|base_url`).
//! * `elevenlabs` (`ELEVENLABS_API_KEY`; `tts.elevenlabs.voice_id|model_id|base_url`,
//!   base URL default `https://api.elevenlabs.io`).
//! * any other name: `tts.providers.<name>` with `type: command` (Hermes' command providers).
//!
//! Local engines write WAV; it is converted to the requested format (the output
//! path's extension: mp3, ogg, wav or flac) with ffmpeg or sox. When no installed
//! tool can write that format, the WAV is kept (extension `.wav`) and the result's
//! `note` says so.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::process::Command;

use super::audio;
use super::command;
use super::http::{self, ApiRequest, Body, LazyHttp};
use crate::hermes::Context;
use crate::hermes::envvars;
use crate::server::args::ArgsExt;
use crate::server::toolset::BoxFuture;
use crate::server::{Availability, Hints, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset};

pub const DEFAULT_PROVIDER: &str = "edge";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini-tts";
pub const DEFAULT_OPENAI_VOICE: &str = "alloy";
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_ELEVENLABS_VOICE_ID: &str = "pNInz6obpgDQGcFmaJgB";
pub const DEFAULT_ELEVENLABS_MODEL_ID: &str = "eleven_multilingual_v2";
pub const DEFAULT_ELEVENLABS_BASE_URL: &str = "https://api.elevenlabs.io";
pub const DEFAULT_PIPER_VOICE: &str = "en_US-lessac-medium";
pub const DEFAULT_ESPEAK_VOICE: &str = "en";
/// espeak-ng's default rate (words per minute) at speed 1.0.
const ESPEAK_WPM: f64 = 175.0;
const DEFAULT_COMMAND_TIMEOUT_SECS: f64 = 120.0;
const DEFAULT_COMMAND_FORMAT: &str = "mp3";
const DEFAULT_COMMAND_MAX_TEXT_LENGTH: usize = 5000;
const FALLBACK_MAX_TEXT_LENGTH: usize = 4000;
const LOCAL_TIMEOUT: Duration = Duration::from_secs(120);
const API_TIMEOUT: Duration = Duration::from_secs(120);

/// Hermes' `BUILTIN_TTS_PROVIDERS`.
pub const BUILTIN_PROVIDERS: &[&str] = &[
    "edge",
    "elevenlabs",
    "openai",
    "minimax",
    "xai",
    "mistral",
    "gemini",
    "neutts",
    "kittentts",
    "piper",
    "deepinfra",
];

/// Hermes' `PROVIDER_MAX_TEXT_LENGTH` (+ espeak-ng, capped like the other local engines).
fn provider_max_text_length(key: &str) -> Option<usize> {
    Some(match key {
        "edge" => 5000,
        "openai" => 4096,
        "xai" => 15000,
        "minimax" => 10000,
        "mistral" => 4000,
        "gemini" => 32000,
        "elevenlabs" => 10000,
        "neutts" => 2000,
        "kittentts" => 2000,
        "piper" => 5000,
        "espeak" => 5000,
        _ => return None,
    })
}

fn elevenlabs_model_max(model: &str) -> Option<usize> {
    Some(match model {
        "eleven_v3" | "eleven_ttv_v3" => 5000,
        "eleven_multilingual_v2"
        | "eleven_multilingual_v1"
        | "eleven_english_sts_v2"
        | "eleven_english_sts_v1" => 10000,
        "eleven_flash_v2" => 30000,
        "eleven_flash_v2_5" => 40000,
        _ => return None,
    })
}

fn positive_int(v: Option<&Value>) -> Option<usize> {
    match v? {
        Value::Number(n) => n.as_u64().filter(|n| *n > 0).map(|n| n as usize),
        _ => None,
    }
}

/// The `tts` section of config.yaml (empty when missing or not a mapping).
fn tts_config(ctx: &Context) -> Map<String, Value> {
    ctx.config()
        .get("tts")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn section<'a>(cfg: &'a Map<String, Value>, name: &str) -> Option<&'a Map<String, Value>> {
    cfg.get(name).and_then(Value::as_object)
}

fn section_str(cfg: &Map<String, Value>, sec: &str, key: &str) -> Option<String> {
    section(cfg, sec)
        .and_then(|s| s.get(key))
        .and_then(|v| match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
}

fn num(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Hermes' `_get_named_provider_config`: `tts.providers.<name>`, else a
/// non-built-in `tts.<name>`.
fn named_provider_config<'a>(
    cfg: &'a Map<String, Value>,
    name: &str,
) -> Option<&'a Map<String, Value>> {
    if let Some(s) = section(cfg, "providers")
        .and_then(|p| p.get(name))
        .and_then(Value::as_object)
    {
        return Some(s);
    }
    if !BUILTIN_PROVIDERS.contains(&name.to_ascii_lowercase().as_str()) {
        return section(cfg, name).filter(|s| !s.is_empty());
    }
    None
}

/// Hermes' `_is_command_provider_config`.
fn is_command_config(c: &Map<String, Value>) -> bool {
    let ptype = c
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if !ptype.is_empty() && ptype != "command" {
        return false;
    }
    c.get("command")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

fn command_config(cfg: &Map<String, Value>, provider: &str) -> Option<Map<String, Value>> {
    if provider.is_empty() || BUILTIN_PROVIDERS.contains(&provider) {
        return None;
    }
    named_provider_config(cfg, provider)
        .filter(|c| is_command_config(c))
        .cloned()
}

/// Hermes' `_get_command_tts_output_format` (path suffix first, then config).
fn command_format(c: &Map<String, Value>, path: Option<&Path>) -> &'static str {
    if let Some(f) = path.and_then(audio::format_of) {
        return f;
    }
    let raw = c
        .get("format")
        .filter(|v| !v.is_null() && v.as_str() != Some(""))
        .or_else(|| c.get("output_format"))
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_COMMAND_FORMAT)
        .trim()
        .trim_start_matches('.')
        .to_ascii_lowercase();
    audio::FORMATS
        .iter()
        .copied()
        .find(|f| *f == raw)
        .unwrap_or(DEFAULT_COMMAND_FORMAT)
}

fn command_timeout(c: &Map<String, Value>) -> Duration {
    let v = num(c.get("timeout").or_else(|| c.get("timeout_seconds")))
        .filter(|v| v.is_finite() && *v > 0.0)
        .unwrap_or(DEFAULT_COMMAND_TIMEOUT_SECS);
    Duration::from_secs_f64(v.min(86_400.0))
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => matches!(
            s.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        ),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        _ => false,
    }
}

/// The engine that will run.
#[derive(Debug, Clone)]
pub enum Engine {
    Espeak {
        bin: PathBuf,
    },
    Piper {
        bin: PathBuf,
        model: PathBuf,
    },
    Command {
        name: String,
        config: Map<String, Value>,
    },
    OpenAi {
        key: String,
    },
    ElevenLabs {
        key: String,
    },
}

/// The provider resolved from config: what runs, and the name results report.
#[derive(Debug, Clone)]
pub struct Plan {
    /// `tts.provider` as configured (lower-cased), `edge` when unset.
    pub configured: String,
    /// The provider the result names (`espeak-ng` when the offline default runs).
    pub provider: String,
    pub engine: Engine,
}

impl Plan {
    fn is_local(&self) -> bool {
        matches!(self.engine, Engine::Espeak { .. } | Engine::Piper { .. })
    }
    /// The key of Hermes' text-length table and of `tts.<key>.max_text_length`.
    fn cap_key(&self) -> &str {
        match self.engine {
            Engine::Espeak { .. } => "espeak",
            _ => &self.configured,
        }
    }
}

const SUPPORTED: &str = "supported: edge (runs the offline espeak-ng), espeak-ng, piper, openai, elevenlabs, or a command provider under tts.providers.<name>";

fn espeak_bin(ctx: &Context) -> Option<PathBuf> {
    super::which(ctx, "espeak-ng").or_else(|| super::which(ctx, "espeak"))
}

/// Resolve `tts.provider` to an engine, or say what is missing. Cheap (a few stats).
pub fn plan(ctx: &Context) -> Result<Plan, String> {
    let cfg = tts_config(ctx);
    let configured = cfg
        .get("provider")
        .and_then(Value::as_str)
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_PROVIDER.to_string());
    let mk = |provider: &str, engine: Engine| Plan {
        configured: configured.clone(),
        provider: provider.to_string(),
        engine,
    };
    if let Some(c) = command_config(&cfg, &configured) {
        return Ok(mk(
            &configured,
            Engine::Command {
                name: configured.clone(),
                config: c,
            },
        ));
    }
    match configured.as_str() {
        "edge" => match espeak_bin(ctx) {
            Some(bin) => Ok(mk("espeak-ng", Engine::Espeak { bin })),
            None => Err("the default TTS provider (edge) is Microsoft's online service, which hermes-mcp replaces with the offline espeak-ng — not installed: `apt install espeak-ng` (or set tts.provider: openai / elevenlabs / piper, or a tts.providers.<name> command)".into()),
        },
        "espeak-ng" | "espeak" => match espeak_bin(ctx) {
            Some(bin) => Ok(mk("espeak-ng", Engine::Espeak { bin })),
            None => Err("tts.provider is espeak-ng but espeak-ng is not on PATH: `apt install espeak-ng`".into()),
        },
        "openai" => match ctx
            .env
            .get(envvars::VOICE_TOOLS_OPENAI_KEY)
            .or_else(|| ctx.env.get(envvars::OPENAI_API_KEY))
        {
            Some(key) => Ok(mk("openai", Engine::OpenAi { key })),
            None => Err("tts.provider is openai but neither VOICE_TOOLS_OPENAI_KEY nor OPENAI_API_KEY is set".into()),
        },
        "elevenlabs" => match ctx.env.get(envvars::ELEVENLABS_API_KEY) {
            Some(key) => Ok(mk("elevenlabs", Engine::ElevenLabs { key })),
            None => Err("tts.provider is elevenlabs but ELEVENLABS_API_KEY is not set (get one at https://elevenlabs.io/)".into()),
        },
        "piper" => {
            let Some(bin) = super::which(ctx, "piper") else {
                return Err("tts.provider is piper but the `piper` command is not on PATH: `pip install piper-tts`".into());
            };
            let model = piper_model(ctx, &cfg)?;
            Ok(mk("piper", Engine::Piper { bin, model }))
        }
        p if BUILTIN_PROVIDERS.contains(&p) => Err(format!(
            "tts.provider '{p}' is not supported by hermes-mcp ({SUPPORTED})"
        )),
        p => Err(format!(
            "tts.provider '{p}' is not a built-in provider and tts.providers.{p} has no `command` ({SUPPORTED})"
        )),
    }
}

/// Hermes' `_resolve_piper_voice_path`, without the download step.
fn piper_model(ctx: &Context, cfg: &Map<String, Value>) -> Result<PathBuf, String> {
    let voice = section_str(cfg, "piper", "voice").unwrap_or_else(|| DEFAULT_PIPER_VOICE.into());
    let direct = crate::hermes::home::expand_tilde(Path::new(&voice));
    if direct
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
        && direct.is_file()
    {
        return Ok(direct);
    }
    let dir = section_str(cfg, "piper", "voices_dir")
        .map(|d| crate::hermes::home::expand_tilde(Path::new(&d)))
        .unwrap_or_else(|| ctx.home.cache_dir("piper-voices"));
    let cached = dir.join(format!("{voice}.onnx"));
    if cached.is_file() && dir.join(format!("{voice}.onnx.json")).is_file() {
        return Ok(cached);
    }
    Err(format!(
        "Piper voice '{voice}' not found: put {voice}.onnx and {voice}.onnx.json in {} (hermes-mcp does not download voices; `python -m piper.download_voices {voice} --download-dir {}` does)",
        dir.display(),
        dir.display()
    ))
}

/// Hermes' `_resolve_max_text_length`.
pub fn max_text_length(plan: &Plan, cfg: &Map<String, Value>) -> usize {
    let key = plan.cap_key().to_string();
    if let Some(n) = positive_int(section(cfg, &key).and_then(|s| s.get("max_text_length"))) {
        return n;
    }
    if key == "elevenlabs" {
        let model = section_str(cfg, "elevenlabs", "model_id")
            .unwrap_or_else(|| DEFAULT_ELEVENLABS_MODEL_ID.into());
        if let Some(n) = elevenlabs_model_max(&model) {
            return n;
        }
    }
    if let Some(n) = provider_max_text_length(&key) {
        return n;
    }
    if let Engine::Command { config, .. } = &plan.engine {
        return positive_int(config.get("max_text_length"))
            .unwrap_or(DEFAULT_COMMAND_MAX_TEXT_LENGTH);
    }
    FALLBACK_MAX_TEXT_LENGTH
}

/// `~/…` when the home is under the user's home directory (Hermes' `display_hermes_home`).
fn display_home(ctx: &Context) -> String {
    if let Some(h) = std::env::home_dir()
        && let Ok(rel) = ctx.home.path.strip_prefix(&h)
    {
        return format!("~/{}", rel.display());
    }
    ctx.home.path.display().to_string()
}

pub fn description(ctx: &Context, plan: &Result<Plan, String>) -> String {
    let active = match plan {
        Ok(p) if matches!(p.engine, Engine::Espeak { .. }) => {
            "\nActive provider: espeak-ng (offline, local)".to_string()
        }
        Ok(p) => format!("\nActive provider: {}", p.provider),
        Err(_) => String::new(),
    };
    format!(
        "Convert text to speech audio. Returns a MEDIA: path that the platform delivers as native audio. Compatible providers render as a voice bubble on Telegram; otherwise audio is sent as a regular attachment. Saves to {}/cache/audio/ unless output_path is given. Voice and provider are user-configured (built-in providers like edge/openai or custom command providers under tts.providers.<name>), not model-selected.{active}",
        display_home(ctx)
    )
}

pub fn schema(ctx: &Context) -> Value {
    json!({
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "description": "The text to convert to speech. Provider-specific character caps apply and are enforced automatically (OpenAI 4096, xAI 15000, MiniMax 10000, ElevenLabs 5k-40k depending on model); over-long input is truncated."
            },
            "output_path": {
                "type": "string",
                "description": format!("Optional custom file path to save the audio. Defaults to {}/cache/audio/<timestamp>.mp3", display_home(ctx))
            }
        },
        "required": ["text"]
    })
}

#[derive(Default)]
pub struct TtsToolset {
    http: LazyHttp,
}

impl Toolset for TtsToolset {
    fn name(&self) -> &'static str {
        "tts"
    }

    fn defs(&self) -> &'static [ToolDef] {
        const DEFS: &[ToolDef] = &[ToolDef {
            name: "text_to_speech",
            description: "",
            schema: || Value::Null,
            hints: Hints::WRITE_OPEN,
        }];
        DEFS
    }

    /// Hermes words the description and schema from the configured provider;
    /// a local engine (no network) is not open-world.
    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        let plan = plan(ctx);
        let mut entry = def.entry(Availability::Available);
        if matches!(&plan, Ok(p) if p.is_local()) {
            entry.spec.hints = Hints::WRITE;
        }
        entry.spec.description = description(ctx, &plan);
        entry.spec.input_schema = schema(ctx);
        if let Err(r) = plan {
            entry.availability = Availability::Unavailable(r);
        }
        entry
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { self.speak(ctx, &call).await })
    }
}

/// Hermes' three error families.
#[derive(Debug)]
pub enum TtsError {
    /// `ValueError`: missing keys, bad config.
    Config(String),
    /// `FileNotFoundError`: a missing program or file.
    Dependency(String),
    /// Anything else.
    Failed(String),
}

impl TtsError {
    fn message(&self, provider: &str) -> String {
        match self {
            TtsError::Config(m) => format!("TTS configuration error ({provider}): {m}"),
            TtsError::Dependency(m) => format!("TTS dependency missing ({provider}): {m}"),
            TtsError::Failed(m) => format!("TTS generation failed ({provider}): {m}"),
        }
    }
}

fn fail(msg: impl Into<String>) -> ToolOutput {
    ToolOutput::error_json(json!({"error": msg.into(), "success": false}))
}

/// What a provider produced.
struct Produced {
    path: PathBuf,
    notes: Vec<String>,
    duration: Option<f64>,
}

impl TtsToolset {
    async fn speak(&self, ctx: &Context, call: &ToolCall) -> ToolOutput {
        let text = call.args.str_arg("text").unwrap_or("");
        if text.trim().is_empty() {
            return fail("Text is required");
        }
        let plan = match plan(ctx) {
            Ok(p) => p,
            Err(e) => return fail(format!("TTS configuration error: {e}")),
        };
        let cfg = tts_config(ctx);
        let max_len = max_text_length(&plan, &cfg);
        let chars = text.chars().count();
        let mut warning = None;
        let text: String = if chars > max_len {
            let w = format!(
                "TTS text too long for provider {} ({chars} chars), truncated to {max_len}",
                plan.provider
            );
            tracing::warn!("{w}");
            warning = Some(w);
            text.chars().take(max_len).collect()
        } else {
            text.to_string()
        };

        // The output path.
        let mut file_path = match call.args.str_arg("output_path").filter(|p| !p.is_empty()) {
            Some(p) => {
                if super::has_traversal_component(p) {
                    return fail(format!(
                        "output_path contains '..' traversal component: {p}. Use an absolute path or one relative to the current directory without '..'."
                    ));
                }
                let mut fp = super::absolute(p);
                if let Engine::Command { config, .. } = &plan.engine {
                    fp = fp.with_extension(command_format(config, None));
                }
                fp
            }
            None => {
                let ext = match &plan.engine {
                    Engine::Command { config, .. } => command_format(config, None),
                    _ => "mp3",
                };
                // Unique over every extension the file may end up with (a kept WAV
                // must not overwrite the previous call's).
                let dir = ctx.home.cache_dir("audio");
                let stem = format!("tts_{}", super::timestamp());
                (1..)
                    .map(|n| match n {
                        1 => stem.clone(),
                        n => format!("{stem}_{n}"),
                    })
                    .find(|s| {
                        audio::FORMATS
                            .iter()
                            .all(|f| !dir.join(format!("{s}.{f}")).exists())
                    })
                    .map(|s| dir.join(format!("{s}.{ext}")))
                    .unwrap()
            }
        };
        if file_path.is_dir() {
            return fail(format!(
                "output_path {} is a directory; give a file path such as {}/speech.mp3",
                file_path.display(),
                file_path.display()
            ));
        }
        if let Some(parent) = file_path.parent()
            && let Err(e) = std::fs::create_dir_all(parent)
        {
            return fail(
                TtsError::Failed(format!("cannot create {}: {e}", parent.display()))
                    .message(&plan.provider),
            );
        }

        let produced = match &plan.engine {
            Engine::Espeak { bin } => {
                self.local(ctx, &cfg, &plan, bin, None, &text, &file_path)
                    .await
            }
            Engine::Piper { bin, model } => {
                self.local(ctx, &cfg, &plan, bin, Some(model), &text, &file_path)
                    .await
            }
            Engine::Command { name, config } => {
                run_command_provider(name, config, &cfg, &text, &file_path).await
            }
            Engine::OpenAi { key } => match self.http.get(ctx) {
                Ok(h) => openai_speech(h, &cfg, key, &text, &file_path).await,
                Err(e) => Err(TtsError::Failed(e)),
            },
            Engine::ElevenLabs { key } => match self.http.get(ctx) {
                Ok(h) => elevenlabs_speech(ctx, h, &cfg, key, &text, &mut file_path).await,
                Err(e) => Err(TtsError::Failed(e)),
            },
        };
        let mut produced = match produced {
            Ok(p) => p,
            Err(e) => return fail(e.message(&plan.provider)),
        };
        match std::fs::metadata(&produced.path) {
            Ok(m) if m.len() > 0 => {}
            _ => {
                return fail(format!(
                    "TTS generation produced no output (provider: {})",
                    plan.provider
                ));
            }
        }

        // Voice-bubble delivery: only command providers that opt in (Hermes
        // converts to Opus with ffmpeg; without a messaging platform nothing else asks).
        let mut voice_compatible = false;
        if let Engine::Command { config, .. } = &plan.engine
            && truthy(config.get("voice_compatible"))
        {
            if audio::format_of(&produced.path) != Some("ogg") {
                if let Some(ff) = super::which(ctx, "ffmpeg") {
                    let ogg = produced.path.with_extension("ogg");
                    match audio::convert(&audio::Converter::Ffmpeg(ff), &produced.path, &ogg, true)
                        .await
                    {
                        Ok(()) => produced.path = ogg,
                        Err(e) => produced.notes.push(e.to_string()),
                    }
                } else {
                    produced
                        .notes
                        .push("voice_compatible needs ffmpeg for Opus conversion".into());
                }
            }
            voice_compatible = audio::format_of(&produced.path) == Some("ogg");
        }
        if produced.duration.is_none() && audio::format_of(&produced.path) == Some("wav") {
            produced.duration = audio::wav_file_info(&produced.path).map(|i| i.duration_secs());
        }

        let file_str = produced.path.display().to_string();
        let mut media_tag = format!("MEDIA:{file_str}");
        if voice_compatible {
            media_tag = format!("[[audio_as_voice]]\n{media_tag}");
        }
        let mut out = json!({
            "success": true,
            "file_path": file_str,
            "media_tag": media_tag,
            "provider": plan.provider,
            "voice_compatible": voice_compatible,
        });
        let o = out.as_object_mut().unwrap();
        if let Some(ext) = produced.path.extension() {
            o.insert(
                "format".into(),
                json!(ext.to_string_lossy().to_ascii_lowercase()),
            );
        }
        if let Some(d) = produced.duration {
            o.insert(
                "duration_seconds".into(),
                json!((d * 100.0).round() / 100.0),
            );
        }
        if plan.configured == "edge" && matches!(plan.engine, Engine::Espeak { .. }) {
            produced.notes.insert(
                0,
                "Edge TTS (online) is not available in hermes-mcp; spoke with the offline espeak-ng".into(),
            );
        }
        if !produced.notes.is_empty() {
            o.insert("note".into(), json!(produced.notes.join("; ")));
        }
        if let Some(w) = warning {
            o.insert("warning".into(), json!(w));
        }
        ToolOutput::json(out)
    }

    /// A local engine that writes WAV (espeak-ng, piper), then conversion to the
    /// requested format.
    #[allow(clippy::too_many_arguments)]
    async fn local(
        &self,
        ctx: &Context,
        cfg: &Map<String, Value>,
        plan: &Plan,
        bin: &Path,
        piper_model: Option<&PathBuf>,
        text: &str,
        requested: &Path,
    ) -> Result<Produced, TtsError> {
        let dir = requested.parent().unwrap_or(Path::new("."));
        let want = audio::format_of(requested);
        let tmp = tempfile::Builder::new()
            .prefix(".tts-")
            .suffix(".wav")
            .tempfile_in(dir)
            .map_err(|e| TtsError::Failed(format!("cannot write in {}: {e}", dir.display())))?;
        let wav_path = tmp.path().to_path_buf();
        let text_file = tempfile::NamedTempFile::new()
            .and_then(|mut f| {
                std::io::Write::write_all(&mut f, text.as_bytes())?;
                Ok(f)
            })
            .map_err(|e| TtsError::Failed(format!("cannot write the text file: {e}")))?;
        let speed = num(section(cfg, plan.cap_key()).and_then(|s| s.get("speed")))
            .or_else(|| num(cfg.get("speed")))
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(1.0);
        let mut cmd = Command::new(bin);
        match piper_model {
            None => {
                let voice = section_str(cfg, "espeak", "voice")
                    .unwrap_or_else(|| DEFAULT_ESPEAK_VOICE.into());
                let wpm = ((ESPEAK_WPM * speed).round().clamp(80.0, 500.0) as i64).to_string();
                cmd.args(["-b", "1", "-v", voice.as_str(), "-s", wpm.as_str(), "-w"])
                    .arg(&wav_path)
                    .arg("-f")
                    .arg(text_file.path())
                    .stdin(std::process::Stdio::null());
            }
            Some(model) => {
                cmd.arg("-m").arg(model).arg("-f").arg(&wav_path);
                if speed != 1.0 {
                    cmd.arg("--length_scale").arg(format!("{}", 1.0 / speed));
                }
                let f = std::fs::File::open(text_file.path())
                    .map_err(|e| TtsError::Failed(e.to_string()))?;
                cmd.stdin(f);
            }
        }
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let name = bin
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let child = cmd
            .spawn()
            .map_err(|e| TtsError::Dependency(format!("cannot run {}: {e}", bin.display())))?;
        let out = tokio::time::timeout(LOCAL_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| {
                TtsError::Failed(format!(
                    "{name} timed out after {}s",
                    LOCAL_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|e| TtsError::Failed(format!("{name}: {e}")))?;
        if !out.status.success() {
            return Err(TtsError::Failed(format!(
                "{name} exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let info = audio::wav_file_info(&wav_path)
            .ok_or_else(|| TtsError::Failed(format!("{name} did not write a WAV file")))?;
        let duration = Some(info.duration_secs());
        let mut notes = Vec::new();
        let keep_wav = |notes: &mut Vec<String>, note: String| -> Result<PathBuf, TtsError> {
            let final_path = requested.with_extension("wav");
            notes.push(note);
            Ok(final_path)
        };
        let final_path = match want {
            Some("wav") => requested.to_path_buf(),
            Some(fmt) => match audio::converter_for(ctx, fmt) {
                Some(conv) => match audio::convert(&conv, &wav_path, requested, false).await {
                    Ok(()) => {
                        return Ok(Produced {
                            path: requested.to_path_buf(),
                            notes,
                            duration,
                        });
                    }
                    Err(e) => keep_wav(&mut notes, format!("{e}; kept the WAV audio"))?,
                },
                None => keep_wav(&mut notes, audio::missing_converter_note(ctx, fmt))?,
            },
            None => keep_wav(
                &mut notes,
                format!(
                    "output_path extension is not one of mp3, ogg, wav, flac; wrote WAV audio to {}",
                    requested.with_extension("wav").display()
                ),
            )?,
        };
        tmp.persist(&final_path)
            .map_err(|e| TtsError::Failed(format!("cannot write {}: {e}", final_path.display())))?;
        Ok(Produced {
            path: final_path,
            notes,
            duration,
        })
    }
}

/// Hermes' `_generate_command_tts`.
async fn run_command_provider(
    name: &str,
    config: &Map<String, Value>,
    cfg: &Map<String, Value>,
    text: &str,
    output: &Path,
) -> Result<Produced, TtsError> {
    let template = config
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    if template.is_empty() {
        return Err(TtsError::Config(format!(
            "tts.providers.{name}.command is not configured"
        )));
    }
    if output.exists() {
        let _ = std::fs::remove_file(output);
    }
    let timeout = command_timeout(config);
    let format = command_format(config, Some(output));
    let speed = config
        .get("speed")
        .or_else(|| cfg.get("speed"))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => {
                // Python's str(float): 1.0 -> "1.0".
                let s = n.to_string();
                if n.is_f64() && !s.contains('.') && !s.contains('e') {
                    format!("{s}.0")
                } else {
                    s
                }
            }
            Value::Null => String::new(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    let str_of = |k: &str| match config.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    };
    let tmpdir = tempfile::tempdir()
        .map_err(|e| TtsError::Failed(format!("cannot create a temp dir: {e}")))?;
    let text_path = tmpdir.path().join("input.txt");
    std::fs::write(&text_path, text)
        .map_err(|e| TtsError::Failed(format!("cannot write {}: {e}", text_path.display())))?;
    let tp = text_path.display().to_string();
    let values = [
        ("input_path", tp.clone()),
        ("text_path", tp),
        ("output_path", output.display().to_string()),
        ("format", format.to_string()),
        ("voice", str_of("voice")),
        ("model", str_of("model")),
        ("speed", speed),
    ];
    let rendered = command::render(&template, &values);
    match command::run_shell(&rendered, timeout).await {
        Ok(()) => {}
        Err(command::RunError::Timeout(t)) => {
            return Err(TtsError::Failed(format!(
                "TTS provider '{name}' timed out after {t}s"
            )));
        }
        Err(command::RunError::Exit { code, detail }) => {
            return Err(TtsError::Failed(format!(
                "TTS provider '{name}' exited with code {code}: {detail}"
            )));
        }
        Err(command::RunError::Spawn(e)) => return Err(TtsError::Dependency(e)),
    }
    match std::fs::metadata(output) {
        Ok(m) if m.len() > 0 => {}
        _ => {
            return Err(TtsError::Failed(format!(
                "TTS provider '{name}' produced no output at {}",
                output.display()
            )));
        }
    }
    Ok(Produced {
        path: output.to_path_buf(),
        notes: Vec::new(),
        duration: None,
    })
}

fn write_audio(path: &Path, bytes: &[u8]) -> Result<(), TtsError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| TtsError::Failed(format!("cannot write in {}: {e}", dir.display())))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .and_then(|_| tmp.persist(path).map(|_| ()).map_err(|e| e.error))
        .map_err(|e| TtsError::Failed(format!("cannot write {}: {e}", path.display())))
}

/// Hermes' `_tts_response_format_from_path`.
pub fn openai_response_format(path: &Path) -> &'static str {
    match audio::format_of(path) {
        Some("ogg") => "opus",
        Some("wav") => "wav",
        Some("flac") => "flac",
        _ => "mp3",
    }
}

/// OpenAI `POST /audio/speech` (Hermes' `_generate_openai_tts`).
async fn openai_speech(
    http: &crate::net::HttpClient,
    cfg: &Map<String, Value>,
    key: &str,
    text: &str,
    output: &Path,
) -> Result<Produced, TtsError> {
    let model = section_str(cfg, "openai", "model").unwrap_or_else(|| DEFAULT_OPENAI_MODEL.into());
    let voice = section_str(cfg, "openai", "voice").unwrap_or_else(|| DEFAULT_OPENAI_VOICE.into());
    let base = section_str(cfg, "openai", "base_url")
        .unwrap_or_else(|| DEFAULT_OPENAI_BASE_URL.into())
        .trim_end_matches('/')
        .to_string();
    let speed = num(section(cfg, "openai").and_then(|s| s.get("speed")))
        .or_else(|| num(cfg.get("speed")))
        .unwrap_or(1.0);
    let mut body = json!({
        "model": model, "voice": voice, "input": text,
        "response_format": openai_response_format(output),
    });
    if speed != 1.0 {
        body["speed"] = json!(speed.clamp(0.25, 4.0));
    }
    let url = format!("{base}/audio/speech");
    let mut req = ApiRequest::new("openai", reqwest::Method::POST, &url);
    req.auth = Some(("Bearer", key.to_string()));
    req.headers
        .push(("x-idempotency-key", format!("{:032x}", fastrand::u128(..))));
    req.body = Body::Json(body);
    req.timeout = API_TIMEOUT;
    let resp = http::send(http, req).await.map_err(TtsError::Failed)?;
    if !(200..300).contains(&resp.status) {
        return Err(TtsError::Failed(format!(
            "OpenAI speech request failed: {}",
            http::status_error(&resp)
        )));
    }
    write_audio(output, &resp.body)?;
    Ok(Produced {
        path: output.to_path_buf(),
        notes: Vec::new(),
        duration: None,
    })
}

/// ElevenLabs `POST /v1/text-to-speech/{voice_id}` (Hermes' `_generate_elevenlabs`).
async fn elevenlabs_speech(
    ctx: &Context,
    http: &crate::net::HttpClient,
    cfg: &Map<String, Value>,
    key: &str,
    text: &str,
    output: &mut PathBuf,
) -> Result<Produced, TtsError> {
    let voice_id = section_str(cfg, "elevenlabs", "voice_id")
        .unwrap_or_else(|| DEFAULT_ELEVENLABS_VOICE_ID.into());
    let model_id = section_str(cfg, "elevenlabs", "model_id")
        .unwrap_or_else(|| DEFAULT_ELEVENLABS_MODEL_ID.into());
    if !voice_id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(TtsError::Config(format!(
            "tts.elevenlabs.voice_id {voice_id:?} is not a voice id (letters, digits, '_' and '-')"
        )));
    }
    let base = ctx
        .config_str("tts.elevenlabs.base_url")
        .unwrap_or_else(|| DEFAULT_ELEVENLABS_BASE_URL.into())
        .trim_end_matches('/')
        .to_string();
    let mut notes = Vec::new();
    // ElevenLabs sends Opus for .ogg and MP3 otherwise (as Hermes asks);
    // MP3 bytes are never written under a .wav/.flac name.
    let output_format = if audio::format_of(output) == Some("ogg") {
        "opus_48000_64"
    } else {
        if matches!(audio::format_of(output), Some("wav" | "flac")) {
            let mp3 = output.with_extension("mp3");
            notes.push(format!(
                "ElevenLabs returns MP3 here; wrote {}",
                mp3.display()
            ));
            *output = mp3;
        }
        "mp3_44100_128"
    };
    let url = format!("{base}/v1/text-to-speech/{voice_id}?output_format={output_format}");
    let mut req = ApiRequest::new("elevenlabs", reqwest::Method::POST, &url);
    req.headers.push(("xi-api-key", key.to_string()));
    req.headers.push(("accept", "audio/*".to_string()));
    req.body = Body::Json(json!({"text": text, "model_id": model_id}));
    req.timeout = API_TIMEOUT;
    let resp = http::send(http, req).await.map_err(TtsError::Failed)?;
    if !(200..300).contains(&resp.status) {
        return Err(TtsError::Failed(format!(
            "ElevenLabs request failed: {}",
            http::status_error(&resp)
        )));
    }
    write_audio(output, &resp.body)?;
    Ok(Produced {
        path: output.clone(),
        notes,
        duration: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::{Env, HermesConfig, HermesHome};

    fn ctx(yaml: &str, env: &[(&str, &str)]) -> Context {
        Context::with_parts(
            HermesHome {
                path: "/nonexistent-hermes".into(),
                explicit: true,
            },
            Env::from_map(env.iter().map(|(k, v)| (k.to_string(), v.to_string()))),
            HermesConfig::from_yaml(yaml).unwrap(),
        )
    }

    fn cfg(yaml: &str) -> Map<String, Value> {
        tts_config(&ctx(yaml, &[]))
    }

    #[test]
    fn default_is_espeak_when_installed_and_says_what_is_missing_otherwise() {
        let empty = tempfile::tempdir().unwrap();
        let c = ctx("", &[("PATH", empty.path().to_str().unwrap())]);
        let e = plan(&c).unwrap_err();
        assert!(e.contains("apt install espeak-ng"), "{e}");
        let bin = tempfile::tempdir().unwrap();
        let fake = bin.path().join("espeak-ng");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let c = ctx("", &[("PATH", bin.path().to_str().unwrap())]);
        let p = plan(&c).unwrap();
        assert_eq!(p.provider, "espeak-ng");
        assert_eq!(p.configured, "edge");
    }

    #[test]
    fn providers_need_their_keys() {
        let e = plan(&ctx("tts: {provider: openai}", &[])).unwrap_err();
        assert!(e.contains("VOICE_TOOLS_OPENAI_KEY"), "{e}");
        let p = plan(&ctx("tts: {provider: OpenAI}", &[("OPENAI_API_KEY", "k")])).unwrap();
        assert!(matches!(p.engine, Engine::OpenAi { ref key } if key == "k"));
        let p = plan(&ctx(
            "tts: {provider: openai}",
            &[("OPENAI_API_KEY", "k"), ("VOICE_TOOLS_OPENAI_KEY", "v")],
        ))
        .unwrap();
        assert!(matches!(p.engine, Engine::OpenAi { ref key } if key == "v"));
        assert!(
            plan(&ctx("tts: {provider: elevenlabs}", &[]))
                .unwrap_err()
                .contains("ELEVENLABS_API_KEY")
        );
        assert!(
            plan(&ctx("tts: {provider: gemini}", &[]))
                .unwrap_err()
                .contains("not supported")
        );
        assert!(
            plan(&ctx("tts: {provider: mine}", &[]))
                .unwrap_err()
                .contains("tts.providers.mine")
        );
    }

    #[test]
    fn command_providers_resolve_and_builtins_win() {
        let p = plan(&ctx(
            "tts: {provider: mine, providers: {mine: {type: command, command: 'x {output_path}'}}}",
            &[],
        ))
        .unwrap();
        assert!(matches!(p.engine, Engine::Command { ref name, .. } if name == "mine"));
        // A command under a built-in name never shadows the built-in.
        assert!(
            plan(&ctx(
                "tts: {provider: openai, providers: {openai: {command: 'x'}}}",
                &[]
            ))
            .is_err()
        );
        // Legacy layout tts.<name>.
        assert!(plan(&ctx("tts: {provider: legacy, legacy: {command: 'x'}}", &[])).is_ok());
        // type other than command is not a command provider.
        assert!(
            plan(&ctx(
                "tts: {provider: p, providers: {p: {type: plugin, command: 'x'}}}",
                &[]
            ))
            .is_err()
        );
    }

    #[test]
    fn text_caps_follow_hermes() {
        let p = |yaml: &str, env: &[(&str, &str)]| plan(&ctx(yaml, env)).unwrap();
        let k = [("OPENAI_API_KEY", "k"), ("ELEVENLABS_API_KEY", "k")];
        assert_eq!(
            max_text_length(&p("tts: {provider: openai}", &k), &cfg("")),
            4096
        );
        let c = cfg("tts: {openai: {max_text_length: 100}}");
        assert_eq!(max_text_length(&p("tts: {provider: openai}", &k), &c), 100);
        let c = cfg("tts: {elevenlabs: {model_id: eleven_flash_v2_5}}");
        assert_eq!(
            max_text_length(&p("tts: {provider: elevenlabs}", &k), &c),
            40000
        );
        assert_eq!(
            max_text_length(&p("tts: {provider: elevenlabs}", &k), &cfg("")),
            10000
        );
        let y = "tts: {provider: m, providers: {m: {command: x, max_text_length: 7}}}";
        assert_eq!(max_text_length(&p(y, &[]), &cfg(y)), 7);
        let y = "tts: {provider: m, providers: {m: {command: x}}}";
        assert_eq!(max_text_length(&p(y, &[]), &cfg(y)), 5000);
    }

    #[test]
    fn command_format_and_timeout() {
        let c = |y: &str| serde_json::from_str::<Map<String, Value>>(y).unwrap();
        assert_eq!(command_format(&c("{}"), None), "mp3");
        assert_eq!(
            command_format(&c(r#"{"output_format":"WAV"}"#), None),
            "wav"
        );
        assert_eq!(command_format(&c(r#"{"format":".ogg"}"#), None), "ogg");
        assert_eq!(command_format(&c(r#"{"format":"aiff"}"#), None), "mp3");
        assert_eq!(
            command_format(&c("{}"), Some(Path::new("/x/a.flac"))),
            "flac"
        );
        assert_eq!(command_timeout(&c("{}")), Duration::from_secs(120));
        assert_eq!(
            command_timeout(&c(r#"{"timeout":"2.5"}"#)),
            Duration::from_millis(2500)
        );
        assert_eq!(
            command_timeout(&c(r#"{"timeout":-1}"#)),
            Duration::from_secs(120)
        );
    }

    #[test]
    fn openai_formats_by_extension() {
        assert_eq!(openai_response_format(Path::new("a.ogg")), "opus");
        assert_eq!(openai_response_format(Path::new("a.wav")), "wav");
        assert_eq!(openai_response_format(Path::new("a.mp3")), "mp3");
        assert_eq!(openai_response_format(Path::new("a")), "mp3");
    }
}
