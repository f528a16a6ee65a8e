//! One `text_to_speech` call: the engine chosen ([`super::plan`]), the text
//! capped, the output file picked, the engine run ([`super::providers`]), and
//! the answer in Hermes' result shape.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::TtsToolset;
use super::args::TtsArgs;
use super::audio;
use super::config::tts_config;
use super::error::TtsError;
use super::plan::{Engine, Plan, max_text_length, plan};
use super::providers::Produced;
use super::providers::cloud::{Speech, cloud_speech};
use super::providers::command::{command_format, run_command_provider};
use super::providers::edge::edge_speech;
use super::providers::elevenlabs::elevenlabs_speech;
use super::providers::local::run_local;
use super::providers::openai::openai_speech;
use super::providers::pylocal::run_python_model;
use crate::hermes::Context;
use crate::server::{ToolCall, ToolOutput};

fn fail(msg: impl Into<String>) -> ToolOutput {
    ToolOutput::error_json(json!({"error": msg.into(), "success": false}))
}

impl TtsToolset {
    /// `text_to_speech`: choose the engine, cap the text, pick the output file, speak,
    /// then make the voice bubble if asked and report what was written.
    pub(super) async fn speak(&self, ctx: &Context, call: &ToolCall) -> ToolOutput {
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
        let (text, warning) = cap_text(text, &plan, cfg);
        let mut file_path = match output_file(ctx, &plan, output_path) {
            Ok(p) => p,
            Err(out) => return out,
        };
        let produced = self.produce(ctx, cfg, &plan, &text, &mut file_path).await;
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
                Err(e) => Err(TtsError::failed_by(e.to_string(), e)),
            },
            Engine::Cloud { api, key } => match self.http.get(ctx) {
                Ok(h) => {
                    let job = Speech {
                        ctx,
                        http: &h,
                        cfg,
                        key,
                        text,
                        output: file_path,
                    };
                    cloud_speech(job, *api).await
                }
                Err(e) => Err(TtsError::failed_by(e.to_string(), e)),
            },
            Engine::ElevenLabs { key } => match self.http.get(ctx) {
                Ok(h) => elevenlabs_speech(ctx, &h, cfg, key, text, file_path).await,
                Err(e) => Err(TtsError::failed_by(e.to_string(), e)),
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
            TtsError::failed(format!("cannot create {}: {e}", parent.display()))
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
