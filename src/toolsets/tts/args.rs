//! `text_to_speech`'s arguments, typed from the JSON arguments.

use serde_json::{Map, Value};

use crate::server::args::ArgsExt;

/// `text_to_speech`'s arguments (already checked against [`super::schema`]).
pub(super) struct TtsArgs<'a> {
    pub(super) text: &'a str,
    /// Unset or empty: a new file under `$HERMES_HOME/cache/audio/`.
    pub(super) output_path: Option<&'a str>,
}

impl<'a> TtsArgs<'a> {
    pub(super) fn from_args(args: &'a Map<String, Value>) -> Self {
        TtsArgs {
            text: args.str_arg("text").unwrap_or(""),
            output_path: args.str_arg("output_path").filter(|p| !p.is_empty()),
        }
    }
}
