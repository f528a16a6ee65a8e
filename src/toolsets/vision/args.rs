//! `vision_analyze`'s arguments: typed from the JSON arguments the server has
//! already checked against the schema in [`super::schema`].

use serde::Deserialize;

/// `vision_analyze`'s arguments (after schema validation; both required).
#[derive(Debug, Default, Deserialize)]
pub(super) struct AnalyzeArgs {
    #[serde(default)]
    pub(super) image_url: String,
    #[serde(default)]
    pub(super) question: String,
}
