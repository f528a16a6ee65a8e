//! `text_to_speech`'s declaration: Hermes' description and schema, worded
//! from the configured provider and the Hermes home as Hermes words them.

use serde_json::{Value, json};

use super::plan::{Engine, Plan, PlanError};
use crate::hermes::Context;
use crate::server::{Hints, ToolDef};

/// The one tool; its description and schema are worded per call by
/// [`description`] and [`schema`] from the configured provider. Destructive:
/// `output_path` names a file it overwrites.
pub(super) const DEFS: &[ToolDef] = &[ToolDef {
    name: "text_to_speech",
    description: "",
    schema: || Value::Null,
    hints: Hints::DESTRUCTIVE_OPEN,
}];

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
