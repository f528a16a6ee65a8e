//! Hermes' auxiliary model (hermes-agent: `agent/auxiliary_client.py`): which
//! provider and model a side task runs on (vision, long browser snapshots,
//! TTS speech tags, and whatever task comes next), and the clients that speak
//! each provider's wire.
//!
//! * [`resolve`]: the one task resolver, as Hermes' `call_llm(task=…)`
//!   decides (`auxiliary.<task>.*`, then the task's endpoint or provider);
//!   [`auto`]: its auto-detection chains (vision's, and `_resolve_auto` for
//!   text tasks); [`clients`]: one provider's client as the resolver hands it
//!   out (OpenRouter, Nous Portal, DeepInfra, custom, API-key providers, the
//!   ChatGPT sign-in).
//! * [`providers`], [`apikey`], [`capability`]: Hermes' provider tables, its
//!   API-key rules, and which models accept images.
//! * [`auxiliary`]: the resolved endpoint ([`auxiliary::AuxConfig`],
//!   [`auxiliary::Mode`]) and the OpenAI chat-completions client.
//! * Wires: [`wire`] (one call on whichever wire the endpoint speaks),
//!   [`auxiliary`] (OpenAI chat completions), [`anthropic`] (Messages),
//!   [`gemini`] (native generateContent), [`codex`] (Codex Responses with the
//!   ChatGPT sign-in: the one client for text tasks and `image_generate`),
//!   and [`post`] (one JSON POST with Hermes' error texts).
//! * [`textaux`]: one text-task call (`web_extract`, `tts_audio_tags`) and
//!   how `tools` shows its model.
//! * [`prep`]: turning image bytes into something every vision API accepts;
//!   [`vision`]: asking the vision model about an image, with Hermes' retries.
//!
//! Layer: `llm` imports `auth`, `net` and `hermes`; toolsets import `llm`.

pub(crate) mod anthropic;
pub(crate) mod apikey;
pub(crate) mod auto;
pub(crate) mod auxiliary;
pub(crate) mod capability;
pub(crate) mod clients;
pub(crate) mod codex;
pub(crate) mod gemini;
pub(crate) mod post;
#[doc(hidden)] // public for the test that checks the table against Hermes' registry
pub mod providers;
pub(crate) mod resolve;
pub(crate) mod textaux;
pub(crate) mod vision;
pub(crate) mod wire;
