//! Reading the image out of a provider's answer: the Images-API shape that OpenAI, xAI and
//! DeepInfra share (`data[0]` with `b64_json` or `url`), and turning what was found into the
//! [`Generated`] image that [`save`](super::save) writes to the cache.

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::GenError;
use super::save::Generated;
use crate::lenient;

/// An Images-API answer (`data[0]` is read).
#[derive(Deserialize, Default)]
#[serde(default)]
struct ImagesAnswer {
    #[serde(deserialize_with = "lenient::objects")]
    data: Option<Vec<ImageItem>>,
}

/// One item of an Images-API answer's `data`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct ImageItem {
    #[serde(deserialize_with = "lenient::opt")]
    b64_json: Option<String>,
    #[serde(deserialize_with = "lenient::opt")]
    url: Option<String>,
    /// OpenAI: the prompt the model really used.
    #[serde(deserialize_with = "lenient::opt")]
    pub(super) revised_prompt: Option<String>,
    /// xAI: where it stored the file (`public_url`, `expires_at`, ...).
    #[serde(deserialize_with = "lenient::opt")]
    pub(super) file_output: Option<Map<String, Value>>,
}

impl ImageItem {
    /// `data[0]` of an Images-API answer, when `data` is a non-empty list.
    pub(super) fn first(answer: &Value) -> Option<ImageItem> {
        lenient::object::<ImagesAnswer>(answer)
            .data?
            .into_iter()
            .next()
    }

    /// `b64_json`, else `url`, each only when a non-empty string (Hermes' plugins:
    /// `if b64: … elif url: …`).
    pub(super) fn image(self) -> Option<Found> {
        let nonempty = |s: Option<String>| s.filter(|s| !s.is_empty());
        match (nonempty(self.b64_json), nonempty(self.url)) {
            (Some(b), _) => Some(Found::Base64(b)),
            (None, Some(u)) => Some(Found::Url(u)),
            (None, None) => None,
        }
    }
}

/// An image a provider answered with.
pub(super) enum Found {
    /// Inline, base64-encoded.
    Base64(String),
    /// To download (http(s) or data:).
    Url(String),
}

impl Found {
    /// The image to save: base64 decoded (`bad_base64` words a decoding error), a URL as is.
    pub(super) fn into_generated(
        self,
        extra: Map<String, Value>,
        model: Option<String>,
        bad_base64: impl FnOnce(base64::DecodeError) -> GenError,
    ) -> Result<Generated, GenError> {
        Ok(match self {
            Found::Base64(b) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b.trim())
                    .map_err(bad_base64)?;
                Generated::from_bytes(bytes, extra, model)
            }
            Found::Url(u) => Generated::from_url(u, extra, model),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn images_answers_like_hermes() {
        let first = |v: Value| ImageItem::first(&v).and_then(ImageItem::image);
        assert!(matches!(
            first(json!({"data": [{"b64_json": "aGk=", "url": "https://x/y.png"}]})),
            Some(Found::Base64(b)) if b == "aGk="
        ));
        assert!(matches!(
            first(json!({"data": [{"b64_json": "", "url": "https://x/y.png"}]})),
            Some(Found::Url(u)) if u == "https://x/y.png"
        ));
        assert!(first(json!({"data": [{"b64_json": 1}]})).is_none());
        assert!(first(json!({"data": ["x"]})).is_none());
        assert!(ImageItem::first(&json!({"data": []})).is_none());
        assert!(ImageItem::first(&json!({"data": {}})).is_none());
        assert!(ImageItem::first(&json!([1])).is_none());
    }
}
