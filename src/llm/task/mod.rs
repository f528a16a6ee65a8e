//! The auxiliary tasks: what each asks the model and how it retries —
//! [`vision`] (an image and a question, with Hermes' size and empty-answer
//! retries) and [`textaux`] (`web_extract` summaries, `tts_audio_tags`
//! rewrites). Apart from routing and wires: a task builds the canonical
//! request and reads the answer text, whichever provider and wire serve it.

pub(crate) mod textaux;
pub(crate) mod vision;
