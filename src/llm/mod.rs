//! Hermes' auxiliary model (hermes-agent: `agent/auxiliary_client.py`): which
//! provider and model a side task runs on (vision, long browser snapshots,
//! TTS speech tags, and whatever task comes next), and the clients that speak
//! each provider's wire.
//!
//! * [`resolve`] / [`textaux`]: the task resolver, as Hermes' `call_llm(task=…)`.
//! * [`providers`], [`apikey`], [`capability`]: Hermes' provider table, its
//!   API-key rules, and which models accept images.
//! * Wires: [`auxiliary`] (OpenAI chat completions), [`anthropic`] (Messages),
//!   [`gemini`] (native generateContent), [`codex`] (Codex Responses, with the
//!   ChatGPT sign-in), and [`post`] (one JSON POST with Hermes' error texts).
//! * [`prep`]: turning image bytes into something every vision API accepts;
//!   [`vision`]: asking the vision model about an image, with Hermes' retries.
//!
//! Layer: `llm` imports `auth`, `net` and `hermes`; toolsets import `llm`.

pub(crate) mod anthropic;
pub(crate) mod apikey;
pub(crate) mod auxiliary;
pub(crate) mod capability;
pub(crate) mod codex;
pub(crate) mod gemini;
pub(crate) mod post;
pub(crate) mod prep;
#[doc(hidden)] // public for the test that checks the table against Hermes' registry
pub mod providers;
pub(crate) mod resolve;
pub(crate) mod textaux;
pub(crate) mod vision;
pub(crate) mod wire;
