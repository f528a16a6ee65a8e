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
//! * [`schema`] (the tool's declaration), [`args`] (its arguments), [`tool`] (one call).

mod args;
pub mod audio;
mod config;
pub mod edge;
mod error;
mod plan;
mod providers;
mod python;
mod schema;
pub(crate) mod shell;
mod tags;
mod tool;

use serde_json::Value;

use crate::hermes::Context;
use crate::net::vendor::LazyHttp;
use crate::server::toolset::BoxFuture;
use crate::server::{
    Availability, Hints, ProviderChoice, ToolCall, ToolDef, ToolEntry, ToolOutput, Toolset,
};
use plan::{Engine, plan};
use schema::{description, schema};

#[derive(Default)]
pub(crate) struct TtsToolset {
    http: LazyHttp,
}

impl Toolset for TtsToolset {
    fn name(&self) -> &'static str {
        "tts"
    }

    fn defs(&self) -> &'static [ToolDef] {
        schema::DEFS
    }

    /// Hermes words the description and schema from the configured provider;
    /// a local engine (no network) is not open-world.
    fn resolve(&self, ctx: &Context, def: &'static ToolDef) -> ToolEntry {
        let plan = plan(ctx);
        let mut entry = def.entry(Availability::Available);
        if matches!(&plan, Ok(p) if p.is_local()) {
            entry.spec.hints = Hints::DESTRUCTIVE;
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
    let sec = |name: &str| {
        config::section(config::tts_config(ctx), name)
            .cloned()
            .unwrap_or_default()
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
