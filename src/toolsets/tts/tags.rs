//! Expressive tags added to the text before it is spoken, as Hermes adds them
//! (hermes-agent: `tools/tts_tool.py`):
//! * xAI, `tts.xai.auto_speech_tags` (or `speech_tags`; default off): a local pass
//!   puts `[pause]` between paragraphs and after the first sentence
//!   (`_apply_xai_auto_speech_tags`); unless the text already has xAI speech tags,
//!   the auxiliary model then rewrites it with xAI's tag set. Any failure keeps
//!   the local pass.
//! * Gemini, `tts.gemini.audio_tags` (or `audio_tags.enabled`; default off), only
//!   for models known to take tags (`gemini-3.1…tts…`,
//!   `_gemini_model_supports_audio_tags`): the auxiliary model inserts freeform
//!   `[tags]`, given the persona prompt as context (`_rewrite_gemini_tts_audio_tags`).
//!   Any failure sends the text untagged.
//!
//! Both call Hermes' auxiliary task `tts_audio_tags` (`GEMINI_AUDIO_TAG_REWRITE_TASK`):
//! `auxiliary.tts_audio_tags.{provider, model, base_url, api_key, timeout, extra_body}`,
//! through the auxiliary chat client vision and browser snapshots use. Hermes'
//! `auto` provider uses the main provider and model (`model.provider`,
//! `model.default`; `openai-codex` on the Codex Responses endpoint), then its
//! fallback chain (llm/route/resolve.rs); with nothing usable the rewrite is
//! skipped and the result's `note` says so.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use crate::hermes::Context;
use crate::llm::route::resolve::{self, Resolution, Task};
use crate::llm::task::textaux;
use crate::llm::{CallError, Mode};
use crate::net::HttpClient;
use crate::pycompat::config_bool;

/// Hermes' `GEMINI_AUDIO_TAG_REWRITE_TASK`, which the xAI rewrite uses too.
pub(crate) const AUDIO_TAGS_TASK: Task = Task::new("tts_audio_tags", None);
/// Hermes passes `temperature=0.7` to both rewrites.
const REWRITE_TEMPERATURE: f64 = 0.7;

const XAI_INLINE_TAGS: &[&str] = &[
    "pause",
    "long-pause",
    "hum-tune",
    "laugh",
    "chuckle",
    "giggle",
    "cry",
    "tsk",
    "tongue-click",
    "lip-smack",
    "breath",
    "inhale",
    "exhale",
    "sigh",
];
const XAI_WRAPPING_TAGS: &[&str] = &[
    "soft",
    "whisper",
    "loud",
    "build-intensity",
    "decrease-intensity",
    "higher-pitch",
    "lower-pitch",
    "slow",
    "fast",
    "sing-song",
    "singing",
    "laugh-speak",
    "emphasis",
];

// Static patterns: they compile.
static XAI_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)(\[(?:{})\]|</?(?:{})>)",
        XAI_INLINE_TAGS.join("|"),
        XAI_WRAPPING_TAGS.join("|")
    ))
    .expect("static regex")
});
/// `^(.{12,120}?[.!?…])\s+(?=\S)`; the lookahead is the trailing `\S`, kept out of
/// the replacement.
static XAI_FIRST_SENTENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)^(.{12,120}?[.!?…])\s+\S").expect("static regex"));
static PARAGRAPHS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\n\s*\n+").expect("static regex"));
static NEWLINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s*\n\s*").expect("static regex"));
static SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s{2,}").expect("static regex"));
static FENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)^```(?:[A-Za-z0-9_-]+)?\s*(.*?)\s*```$").expect("static regex")
});

/// The answer without a Markdown fence around it (Hermes' `_clean_gemini_audio_tag_rewrite`).
fn unfence(s: &str) -> String {
    let s = s.trim();
    match FENCE.captures(s) {
        Some(c) => c[1].trim().to_string(),
        None => s.to_string(),
    }
}

/// The local pass of `_apply_xai_auto_speech_tags`: `[pause]` between paragraphs,
/// and after the first sentence when the text has no speech tag yet.
pub(crate) fn xai_local_tags(clean: &str) -> String {
    let local = PARAGRAPHS.replace_all(clean, " [pause] ");
    let mut local = NEWLINE.replace_all(&local, " ").into_owned();
    if !XAI_TAG.is_match(&local)
        && let Some(c) = XAI_FIRST_SENTENCE.captures(&local)
    {
        let g1 = c.get(1).expect("group 1 always participates").as_str();
        // Everything from the non-space character the lookahead saw.
        let rest_at =
            c.get(0).expect("whole match").end() - c[0].chars().last().map_or(0, char::len_utf8);
        local = format!("{g1} [pause] {}", &local[rest_at..]);
    }
    SPACES.replace_all(&local, " ").trim().to_string()
}

/// What a rewrite did, for the result's `note`.
pub(crate) struct Rewritten {
    pub text: String,
    pub note: Option<String>,
}

/// Why a rewrite did not run (the result's note says it).
#[derive(Debug, thiserror::Error)]
enum RewriteError {
    #[error("no auxiliary model for it: {0}")]
    NoModel(String),
    #[error("{0}")]
    Misconfigured(String),
    #[error(transparent)]
    Call(#[from] CallError),
}

/// The auxiliary call of both rewrites: the tagged script, or why there is none.
async fn rewrite(
    ctx: &Context,
    http: &HttpClient,
    system: &str,
    user: &str,
) -> Result<String, RewriteError> {
    let resolved = rewrite_model(ctx);
    let cfg = match resolved.mode {
        Mode::Auxiliary(c) => c,
        Mode::Native => return Err(RewriteError::NoModel(resolved.why)),
        Mode::Misconfigured(why) => return Err(RewriteError::Misconfigured(why)),
    };
    // Hermes: `call_llm(task="tts_audio_tags", messages=[system, user], temperature=0.7)`.
    textaux::complete(
        http,
        &cfg,
        &[("system", system), ("user", user)],
        Some(REWRITE_TEMPERATURE),
        None,
    )
    .await
    .map(|a| unfence(&a))
    .map_err(RewriteError::from)
}

/// The model that rewrites speech tags: Hermes' auxiliary task
/// `tts_audio_tags` (`auxiliary.tts_audio_tags.*`, else the main provider
/// and model, else Hermes' fallback chain).
pub(crate) fn rewrite_model(ctx: &Context) -> Resolution {
    resolve::resolve(ctx, AUDIO_TAGS_TASK)
}

/// Hermes' `_apply_xai_auto_speech_tags`.
pub(crate) async fn xai_auto_speech_tags(
    ctx: &Context,
    http: &HttpClient,
    text: &str,
) -> Rewritten {
    let clean = text.trim();
    if clean.is_empty() {
        return Rewritten {
            text: text.to_string(),
            note: None,
        };
    }
    let local = xai_local_tags(clean);
    // Tags the user or model wrote are trusted as they are.
    if XAI_TAG.is_match(clean) {
        return Rewritten {
            text: local,
            note: None,
        };
    }
    let system = format!(
        "You rewrite transcripts for the xAI /v1/tts endpoint by inserting expressive speech tags.\n\nValid inline tags (use as `[tag]`): {}.\nValid wrapping tags (use as `[tag]...[/tag]`): {}.\n\nRules:\n- Preserve the spoken words, order, and meaning.\n- Do not add new spoken sentences or remove existing spoken words.\n- Use inline `[tag]` for short modifiers (laughs, sighs, pause, etc.).\n- Use wrapping `[tag]...[/tag]` for sustained effects (whisper, soft, slow, fast, loud, etc.).\n- Do not use angle-bracket tags like `<tag>...</tag>` — xAI uses BBCode-style closing tags with `[/tag]`.\n- Do not use SSML.\n- Do not explain or comment.\n- Return only the tagged TTS script.",
        XAI_INLINE_TAGS.join(", "),
        XAI_WRAPPING_TAGS.join(", ")
    );
    let user = format!("TRANSCRIPT TO TAG:\n{local}");
    match rewrite(ctx, http, &system, &user).await {
        Ok(tagged) if !tagged.is_empty() => Rewritten {
            text: tagged,
            note: None,
        },
        Ok(_) => Rewritten {
            text: local,
            note: None,
        },
        Err(why) => {
            tracing::debug!("xAI TTS audio tag rewrite failed; using locally-tagged text: {why}");
            Rewritten {
                text: local,
                note: Some(format!(
                    "tts.xai.auto_speech_tags: only local [pause] tags were added; the auxiliary rewrite did not run: {why}"
                )),
            }
        }
    }
}

/// Hermes' `_gemini_model_supports_audio_tags`.
pub(crate) fn gemini_model_supports_tags(model: &str) -> bool {
    let m = model.trim().to_lowercase();
    let m = m.rsplit('/').next().unwrap_or("");
    m.contains("gemini-3.1") && m.contains("tts")
}

/// `audio_tags` is on for a Gemini model that does not take tags (the
/// result's note; Hermes logs it and skips the rewrite).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "Gemini TTS audio_tags enabled, but model {0} is not known to support Gemini audio tags; skipping hidden tag rewrite"
)]
pub(crate) struct TagsUnsupported(String);

/// Hermes' `_gemini_audio_tags_enabled`: `Err` when enabled for a model that
/// does not take tags.
pub(crate) fn gemini_tags_enabled(
    g: &Map<String, Value>,
    model: &str,
) -> Result<bool, TagsUnsupported> {
    let raw = match g.get("audio_tags") {
        Some(Value::Object(o)) => o.get("enabled"),
        other => other,
    };
    if !config_bool(raw, false) {
        return Ok(false);
    }
    if !gemini_model_supports_tags(model) {
        let w = TagsUnsupported(model.to_string());
        tracing::warn!("{w}");
        return Err(w);
    }
    Ok(true)
}

/// Hermes' `_rewrite_gemini_tts_audio_tags`.
pub(crate) async fn gemini_audio_tags(
    ctx: &Context,
    http: &HttpClient,
    text: &str,
    persona: &str,
) -> Rewritten {
    let transcript = text.trim();
    if transcript.is_empty() {
        return Rewritten {
            text: text.to_string(),
            note: None,
        };
    }
    const SYSTEM: &str = "You rewrite transcripts for Gemini 3.1 Flash TTS by inserting expressive audio tags.\n\nAudio tags are inline square-bracket modifiers such as [whispers], [excitedly], [very slow], [sarcastically], [laughs], [sighs], or [gasp]. There is no fixed allowlist. Use creative freeform tags generously but naturally to control tone, pace, emotional vibe, emphasis, section-level delivery, and non-verbal sounds. Use English audio tags even when the spoken transcript is not English.\n\nRules:\n- Preserve the spoken words, order, and meaning.\n- Do not add new spoken sentences or remove existing spoken words.\n- Use square brackets for every audio tag.\n- Do not use SSML or XML tags.\n- Do not explain or comment.\n- Return only the tagged TTS script.";
    let context = match persona.trim() {
        "" => "(none)",
        p => p,
    };
    let user =
        format!("PERSONA AND DIRECTOR CONTEXT:\n{context}\n\nTRANSCRIPT TO TAG:\n{transcript}");
    match rewrite(ctx, http, SYSTEM, &user).await {
        Ok(tagged) if !tagged.is_empty() => Rewritten {
            text: tagged,
            note: None,
        },
        Ok(_) => Rewritten {
            text: text.to_string(),
            note: None,
        },
        Err(why) => {
            tracing::warn!("Gemini TTS audio tag rewrite failed; using untagged text: {why}");
            Rewritten {
                text: text.to_string(),
                note: Some(format!(
                    "tts.gemini.audio_tags: the text was sent without audio tags: {why}"
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn xai_local_pass_matches_hermes() {
        // Outputs of hermes-agent 0.19.0's `_apply_xai_auto_speech_tags` local pass.
        assert_eq!(
            xai_local_tags("Hello there, friend. How are you today?"),
            "Hello there, friend. [pause] How are you today?"
        );
        assert_eq!(
            xai_local_tags("First paragraph here.\n\nSecond one\nwraps."),
            "First paragraph here. [pause] Second one wraps."
        );
        // Too short a first sentence: the next sentence end is used.
        assert_eq!(
            xai_local_tags("Hi. I am fine. Thanks a lot."),
            "Hi. I am fine. [pause] Thanks a lot."
        );
        // Existing tags: no first-sentence pause.
        assert_eq!(
            xai_local_tags("Well, that is <soft>funny</soft>. Really now."),
            "Well, that is <soft>funny</soft>. Really now."
        );
        assert_eq!(xai_local_tags("One sentence only."), "One sentence only.");
        assert_eq!(
            xai_local_tags("Ünïcödé sentence… and more   words"),
            "Ünïcödé sentence… [pause] and more words"
        );
    }

    #[test]
    fn gemini_tag_models_and_switches() {
        assert!(gemini_model_supports_tags(
            "models/Gemini-3.1-flash-tts-preview"
        ));
        assert!(!gemini_model_supports_tags("gemini-2.5-flash-preview-tts"));
        assert!(!gemini_model_supports_tags("gemini-3.1-flash"));
        let m = |j: Value| j.as_object().unwrap().clone();
        let model = "gemini-3.1-flash-tts-preview";
        assert_eq!(gemini_tags_enabled(&m(json!({})), model), Ok(false));
        assert_eq!(
            gemini_tags_enabled(&m(json!({"audio_tags": "enabled"})), model),
            Ok(true)
        );
        assert_eq!(
            gemini_tags_enabled(&m(json!({"audio_tags": {"enabled": true}})), model),
            Ok(true)
        );
        assert_eq!(
            gemini_tags_enabled(&m(json!({"audio_tags": "maybe"})), model),
            Ok(false)
        );
        assert!(
            gemini_tags_enabled(&m(json!({"audio_tags": true})), "gemini-2.5-pro-tts").is_err()
        );
    }

    #[test]
    fn fences_are_removed() {
        assert_eq!(unfence("```text\n[laughs] Hi.\n```"), "[laughs] Hi.");
        assert_eq!(unfence("  [sighs] Ok.  "), "[sighs] Ok.");
    }
}
