//! Hermes' auxiliary model (hermes-agent: `agent/auxiliary_client.py`): which
//! provider and model a side task runs on (vision, long browser snapshots,
//! TTS speech tags, and whatever task comes next), and the clients that speak
//! each provider's wire. Its own layer because toolsets share it (vision,
//! browser, tts) and none may import another.
//!
//! * [`route`]: the task resolver, its auto chains, provider tables, API-key
//!   rules and capabilities — which endpoint, decided from config alone.
//! * [`endpoint`]: what routing hands out ([`endpoint::AuxConfig`], [`Mode`]);
//!   [`provider`]: Hermes' provider names as one type.
//! * [`request`]: the one canonical request every task builds.
//! * [`wire`]: one adapter per wire (OpenAI chat completions, Anthropic
//!   Messages, Gemini generateContent, Codex Responses) turning the request
//!   into its body and the answer back into text.
//! * [`task`]: vision and the text tasks.
//!
//! Layer: `llm` imports `auth`, `net` and `hermes`; toolsets import `llm`.

pub(crate) mod endpoint;
pub(crate) mod provider;
pub(crate) mod request;
pub mod route;
pub(crate) mod task;
pub(crate) mod wire;

pub(crate) use endpoint::Mode;
pub(crate) use wire::CallError;
