//! `text_to_speech` (toolset `tts`), after Hermes' `tools/tts_tool.py`.
//!
//! Providers (`tts.provider`; [`plan`] chooses exactly as Hermes does):
//! * unset or `edge` (Hermes' default): Microsoft's Read Aloud voices over our port of
//!   the `edge-tts` client ([`providers::edge`]; `tts.edge.voice|speed|base_url`). Any
//!   name that is neither built-in nor a command provider falls through to it, as in
//!   Hermes.
//! * `espeak-ng` / `espeak` (a hermes-mcp extension, offline): a local `espeak-ng`
//!   (`tts.espeak.voice`, default `en`; speed from `tts.espeak.speed` / `tts.speed`).
//! * `piper`, `neutts`, `kittentts`: Hermes' local models through their Python
//!   packages, run by Hermes' Python ([`python`]: `HERMES_PYTHON`, else the `hermes`
//!   command's interpreter, ...) as Hermes runs them ([`providers::pylocal`];
//!   `tts.piper.voice|voices_dir|use_cuda|length_scale|noise_scale|noise_w_scale|volume|normalize_audio|speaker_id`,
//!   voices downloaded on first use into `$HERMES_HOME/cache/piper-voices/`;
//!   `tts.neutts.ref_audio|ref_text|model|device`; `tts.kittentts.model|voice|speed|clean_text`).
//!   When piper-tts is not importable, a `piper` command on PATH runs instead with a
//!   voice already on disk (`-m <voice>.onnx`).
//! * `openai` (`VOICE_TOOLS_OPENAI_KEY` or `OPENAI_API_KEY`; `tts.openai.model|voice|speed|base_url`).
//! * `minimax` (`MINIMAX_API_KEY`), `xai` (`XAI_API_KEY`), `mistral` (`MISTRAL_API_KEY`),
//!   `gemini` (`GEMINI_API_KEY` / `GOOGLE_API_KEY`), `deepinfra` (`DEEPINFRA_API_KEY`):
//!   [`providers::cloud`], each with `tts.<provider>.*` as Hermes reads it.
//! * `elevenlabs` (`ELEVENLABS_API_KEY`; `tts.elevenlabs.voice_id|model_id|base_url`,
//!   base URL default `https://api.elevenlabs.io`).
//! * any other name: `tts.providers.<name>` with `type: command` (Hermes' command providers).
//!
//! The audio is written in the format the output path's extension asks for (mp3, ogg,
//! wav or flac): APIs that can answer in it are asked for it (OpenAI, ElevenLabs); the
//! WAV of the local engines and the MP3 of Edge and some cloud APIs are converted with
//! ffmpeg, lame or sox. When no installed tool can write that format, the engine's file
//! is kept under its own extension and the result's `note` says so. A command provider
//! with `voice_compatible` also gets Opus in Ogg (Hermes' voice bubble).
//!
//! Layout:
//! * [`plan`]: which engine speaks, from `tts.*`, the environment and what is installed;
//!   how much text it takes.
//! * [`providers`]: the engines, one module per family, and the delivery in the
//!   requested format.
//! * [`edge`]: our port of the `edge-tts` client (public: the suite drives it directly).
//! * [`tags`]: the speech tags xAI and Gemini get from the auxiliary model.
//! * [`python`]: Hermes' Python, which runs the local models' packages.
//! * [`shell`]: rendering and running `tts.providers.<name>` command templates.
//! * [`audio`]: WAV and MP3 headers, and the ffmpeg/lame/sox conversions.
//! * [`config`] (reading the `tts` section as Hermes does), [`error`] (Hermes' error
//!   families and wording).

pub mod audio;
mod config;
pub mod edge;
mod error;
mod plan;
mod providers;
mod python;
pub(crate) mod shell;
mod tags;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::hermes::Context;
use crate::net::vendor::LazyHttp;
use crate::server::args::ArgsExt;
use crate::server::toolset::BoxFuture;
use crate::server::{
    Availability, Hints, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset,
};

use config::tts_config;
use error::TtsError;
use plan::{Engine, Plan, PlanError, max_text_length, plan};
use providers::Produced;
use providers::cloud::cloud_speech;
use providers::command::{command_format, run_command_provider};
use providers::edge::edge_speech;
use providers::elevenlabs::elevenlabs_speech;
use providers::local::run_local;
use providers::openai::openai_speech;
use providers::pylocal::run_python_model;

/// `~/…` when the home is under the user's home directory (Hermes' `display_hermes_home`).
fn display_home(ctx: &Context) -> String {
    if let Some(h) = std::env::home_dir()
        && let Ok(rel) = ctx.home.path.strip_prefix(&h)
    {
        return format!("~/{}", rel.display());
    }
    ctx.home.path.display().to_string()
}

pub(crate) fn description(ctx: &Context, plan: &Result<Plan, PlanError>) -> String {
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

pub(crate) fn schema(ctx: &Context) -> Value {
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
pub(crate) struct TtsToolset {
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
            entry.availability = Availability::Unavailable(r.to_string());
        }
        entry
    }

    fn providers(&self, ctx: &Context) -> Vec<ProviderChoice> {
        let (provider, why) = match plan(ctx) {
            Ok(p) => {
                let name = match p.engine {
                    Engine::Edge if p.provider != "edge" => format!("edge (as {})", p.provider),
                    Engine::OpenAi { key: None } => {
                        format!("openai ({})", crate::gateway::PROVIDER_LABEL)
                    }
                    _ => p.provider.clone(),
                };
                (name, p.why)
            }
            Err(e) => ("none".to_string(), e.to_string()),
        };
        let tagger = tag_rewrite_for(ctx, &provider);
        let mut out = vec![ProviderChoice {
            job: "text_to_speech",
            provider,
            why,
        }];
        if let Some(why_tags) = tagger {
            let r = tags::rewrite_model(ctx);
            let (provider, why) = crate::llm::task::textaux::describe(&r);
            out.push(ProviderChoice {
                job: "text_to_speech tags",
                provider,
                why: format!("{why_tags}; auxiliary.tts_audio_tags: {why}"),
            });
        }
        out
    }

    fn call<'a>(&'a self, ctx: &'a Context, call: ToolCall) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { self.speak(ctx, &call).await })
    }
}

/// Whether the planned provider rewrites the text with the auxiliary model
/// first (xAI `tts.xai.auto_speech_tags`, Gemini `tts.gemini.audio_tags` on a
/// model that takes tags), and the setting that says so.
fn tag_rewrite_for(ctx: &Context, provider: &str) -> Option<&'static str> {
    let sec = |name: &str| match ctx.config().get(&format!("tts.{name}")) {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    match provider {
        "xai" => {
            let x = sec("xai");
            crate::pycompat::config_bool(
                x.get("auto_speech_tags").or_else(|| x.get("speech_tags")),
                false,
            )
            .then_some("tts.xai.auto_speech_tags")
        }
        "gemini" => {
            let g = sec("gemini");
            let model = g
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or(providers::cloud::DEFAULT_GEMINI_MODEL)
                .to_string();
            matches!(tags::gemini_tags_enabled(&g, &model), Ok(true))
                .then_some("tts.gemini.audio_tags")
        }
        _ => None,
    }
}

fn fail(msg: impl Into<String>) -> ToolOutput {
    ToolOutput::error_json(json!({"error": msg.into(), "success": false}))
}

/// `text_to_speech`'s arguments (already checked against [`schema`]).
struct TtsArgs<'a> {
    text: &'a str,
    /// Unset or empty: a new file under `$HERMES_HOME/cache/audio/`.
    output_path: Option<&'a str>,
}

impl<'a> TtsArgs<'a> {
    fn from_args(args: &'a Map<String, Value>) -> Self {
        TtsArgs {
            text: args.str_arg("text").unwrap_or(""),
            output_path: args.str_arg("output_path").filter(|p| !p.is_empty()),
        }
    }
}

impl TtsToolset {
    /// `text_to_speech`: choose the engine, cap the text, pick the output file, speak,
    /// then make the voice bubble if asked and report what was written.
    async fn speak(&self, ctx: &Context, call: &ToolCall) -> ToolOutput {
        let TtsArgs { text, output_path } = TtsArgs::from_args(&call.args);
        if text.trim().is_empty() {
            return fail("Text is required");
        }
        self.warm_gateway(ctx).await;
        let plan = match plan(ctx) {
            Ok(p) => p,
            Err(e) => return fail(format!("TTS configuration error: {e}")),
        };
        let cfg = tts_config(ctx);
        let (text, warning) = cap_text(text, &plan, &cfg);
        let mut file_path = match output_file(ctx, &plan, output_path) {
            Ok(p) => p,
            Err(out) => return out,
        };
        let produced = self.produce(ctx, &cfg, &plan, &text, &mut file_path).await;
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
        let voice_compatible = voice_bubble(ctx, &plan, &mut produced).await;
        if produced.duration.is_none() {
            produced.duration = duration_of(&produced.path);
        }
        ToolOutput::json(result_json(&plan, produced, voice_compatible, warning))
    }

    /// OpenAI may go through the Nous tool gateway: let the portal answer
    /// (cached) before the cheap plan reads the entitlement.
    async fn warm_gateway(&self, ctx: &Context) {
        if tts_config(ctx)
            .get("provider")
            .and_then(Value::as_str)
            .is_some_and(|p| p.trim().eq_ignore_ascii_case("openai"))
            && let Ok(h) = self.http.get(ctx)
        {
            crate::gateway::warm(ctx, &h).await;
        }
    }

    /// Run the planned engine; it writes `file_path` (or a sibling in another format).
    async fn produce(
        &self,
        ctx: &Context,
        cfg: &Map<String, Value>,
        plan: &Plan,
        text: &str,
        file_path: &mut PathBuf,
    ) -> Result<Produced, TtsError> {
        match &plan.engine {
            Engine::Edge => edge_speech(ctx, text, file_path).await,
            Engine::Espeak { bin } => run_local(ctx, cfg, plan, bin, None, text, file_path).await,
            Engine::Piper { bin, model } => {
                run_local(ctx, cfg, plan, bin, Some(model), text, file_path).await
            }
            Engine::Python { model, python } => {
                run_python_model(ctx, cfg, *model, python, text, file_path).await
            }
            Engine::Command { name, config } => {
                run_command_provider(name, config, cfg, text, file_path).await
            }
            Engine::OpenAi { key } => match self.http.get(ctx) {
                Ok(h) => openai_speech(ctx, &h, cfg, key.as_deref(), text, file_path).await,
                Err(e) => Err(TtsError::Failed(e.to_string())),
            },
            Engine::Cloud { api, key } => match self.http.get(ctx) {
                Ok(h) => cloud_speech(ctx, &h, cfg, *api, key, text, file_path).await,
                Err(e) => Err(TtsError::Failed(e.to_string())),
            },
            Engine::ElevenLabs { key } => match self.http.get(ctx) {
                Ok(h) => elevenlabs_speech(ctx, &h, cfg, key, text, file_path).await,
                Err(e) => Err(TtsError::Failed(e.to_string())),
            },
        }
    }
}

/// The text cut to the provider's cap (Hermes' `_resolve_max_text_length`), and the
/// warning that says so when it was cut.
fn cap_text(text: &str, plan: &Plan, cfg: &Map<String, Value>) -> (String, Option<String>) {
    let max_len = max_text_length(plan, cfg);
    let chars = text.chars().count();
    if chars <= max_len {
        return (text.to_string(), None);
    }
    let w = format!(
        "TTS text too long for provider {} ({chars} chars), truncated to {max_len}",
        plan.provider
    );
    tracing::warn!("{w}");
    (text.chars().take(max_len).collect(), Some(w))
}

/// Where the audio goes: `output_path` (absolute, a command provider's format as its
/// extension) or a new `tts_<stamp>.<ext>` under `$HERMES_HOME/cache/audio/`, with
/// its directory created. `Err` is the tool's answer when the path cannot be used.
fn output_file(
    ctx: &Context,
    plan: &Plan,
    output_path: Option<&str>,
) -> Result<PathBuf, ToolOutput> {
    let file_path = match output_path {
        Some(p) => {
            if crate::fs::has_traversal_component(p) {
                return Err(fail(format!(
                    "output_path contains '..' traversal component: {p}. Use an absolute path or one relative to the current directory without '..'."
                )));
            }
            let mut fp = crate::fs::absolute(p);
            if let Engine::Command { config, .. } = &plan.engine {
                fp = fp.with_extension(command_format(config, None));
            }
            fp
        }
        None => default_output_file(ctx, plan),
    };
    if file_path.is_dir() {
        return Err(fail(format!(
            "output_path {} is a directory; give a file path such as {}/speech.mp3",
            file_path.display(),
            file_path.display()
        )));
    }
    if let Some(parent) = file_path.parent()
        && let Err(e) = std::fs::create_dir_all(parent)
    {
        return Err(fail(
            TtsError::Failed(format!("cannot create {}: {e}", parent.display()))
                .message(&plan.provider),
        ));
    }
    Ok(file_path)
}

/// `$HERMES_HOME/cache/audio/tts_<local stamp>[_<n>].<ext>`, the first name free under
/// every extension the file may end up with (a kept WAV must not overwrite the
/// previous call's).
fn default_output_file(ctx: &Context, plan: &Plan) -> PathBuf {
    let ext = match &plan.engine {
        Engine::Command { config, .. } => command_format(config, None),
        _ => "mp3",
    };
    let dir = ctx.home.cache_dir("audio");
    let stem = format!("tts_{}", crate::time::local_stamp());
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
        .expect("an unbounded counter finds a free name")
}

/// Voice-bubble delivery: only command providers that opt in (`voice_compatible`;
/// Hermes converts to Opus with ffmpeg; without a messaging platform nothing else
/// asks). Whether the audio is now Ogg; a failed conversion is noted.
async fn voice_bubble(ctx: &Context, plan: &Plan, produced: &mut Produced) -> bool {
    let Engine::Command { config, .. } = &plan.engine else {
        return false;
    };
    if !crate::pycompat::is_truthy_value(config.get("voice_compatible"), false) {
        return false;
    }
    if audio::format_of(&produced.path) != Some("ogg") {
        if let Some(ff) = ctx.which("ffmpeg") {
            let ogg = produced.path.with_extension("ogg");
            match audio::convert(&audio::Converter::Ffmpeg(ff), &produced.path, &ogg, true).await {
                Ok(()) => produced.path = ogg,
                Err(e) => produced.notes.push(e.to_string()),
            }
        } else {
            produced
                .notes
                .push("voice_compatible needs ffmpeg for Opus conversion".into());
        }
    }
    audio::format_of(&produced.path) == Some("ogg")
}

/// The length of a WAV or MP3 file, read from its headers.
fn duration_of(path: &Path) -> Option<f64> {
    match audio::format_of(path) {
        Some("wav") => audio::wav_file_info(path).map(|i| i.duration_secs()),
        Some("mp3") => audio::mp3_file_info(path).map(|i| i.duration_secs()),
        _ => None,
    }
}

/// The tool's answer: the file and its `MEDIA:` tag, the provider, and the format,
/// duration, notes and truncation warning when there are any.
fn result_json(
    plan: &Plan,
    produced: Produced,
    voice_compatible: bool,
    warning: Option<String>,
) -> Value {
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
    let o = out.as_object_mut().expect("built as an object above");
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
    if !produced.notes.is_empty() {
        o.insert("note".into(), json!(produced.notes.join("; ")));
    }
    if let Some(w) = warning {
        o.insert("warning".into(), json!(w));
    }
    out
}
