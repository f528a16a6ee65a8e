//! `tts:` (hermes-agent: tools/tts_tool.py `_load_tts_config` and the
//! providers' `tts.<provider>:` sections). The endpoint and voice settings
//! read by dotted key are typed here; the providers that read their section
//! as Hermes reads a dict (`tts.get("openai", {}).get("speed")`, with
//! per-provider fallbacks) get the mapping itself from [`Tts::map`], read
//! once with the rest.

use serde_json::{Map, Value};

use super::Reader;
use crate::hermes::config::float_value;

/// `tts:`.
#[derive(Debug, Clone, Default)]
pub struct Tts {
    /// `tts.edge:`.
    pub edge: TtsEdge,
    /// `tts.elevenlabs.base_url`.
    pub elevenlabs_base_url: Option<String>,
    /// `tts.use_gateway` ([`super::Reader::use_gateway`]).
    pub use_gateway: bool,
    /// The `tts:` mapping as written (empty when missing or not a mapping).
    map: Map<String, Value>,
}

/// `tts.edge:`.
#[derive(Debug, Clone, Default)]
pub struct TtsEdge {
    pub base_url: Option<String>,
    pub voice: Option<String>,
    /// `tts.edge.speed`, or `tts.speed` when that is absent: a number, or
    /// text holding one (a present value that is neither reads as `None`,
    /// without falling back).
    pub speed: Option<f64>,
}

impl Tts {
    pub(crate) fn read(r: &Reader<'_>, sec: Option<&Map<String, Value>>) -> Self {
        let edge = r.section(sec, "edge");
        Tts {
            edge: TtsEdge {
                base_url: r.text(edge, "base_url"),
                voice: r.text(edge, "voice"),
                speed: r
                    .value(edge, "speed")
                    .or_else(|| r.value(sec, "speed"))
                    .and_then(float_value),
            },
            elevenlabs_base_url: r.text(r.section(sec, "elevenlabs"), "base_url"),
            use_gateway: r.use_gateway(sec),
            map: sec.cloned().unwrap_or_default(),
        }
    }

    /// The `tts:` mapping, for the providers that read it as a dict.
    pub fn map(&self) -> &Map<String, Value> {
        &self.map
    }
}
