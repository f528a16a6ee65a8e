//! The parts of CDP results the tools read, as small lenient structs.
//!
//! Commands go out as raw JSON (see `cdp.rs`); what comes back is read
//! through these instead of walking `serde_json::Value`. Every field has a
//! default, so a field Chromium leaves out reads as empty, as it did when the
//! JSON was walked by hand. Field names follow the DevTools protocol
//! (<https://chromedevtools.github.io/devtools-protocol/>).

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Read a CDP (or page script) result; a result of another shape reads as
/// the default (every field empty).
pub(crate) fn decode<T: DeserializeOwned + Default>(v: Value) -> T {
    serde_json::from_value(v).unwrap_or_else(|e| {
        tracing::debug!("browser: unexpected result shape: {e}");
        T::default()
    })
}

/// `Runtime.RemoteObject`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RemoteObject {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) subtype: String,
    pub(crate) class_name: Option<String>,
    pub(crate) value: Option<Value>,
    pub(crate) unserializable_value: Option<String>,
    pub(crate) object_id: Option<String>,
}

/// `Runtime.ExceptionDetails`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ExceptionDetails {
    pub(crate) text: Option<String>,
    pub(crate) exception: Option<ExceptionObject>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ExceptionObject {
    pub(crate) description: Option<String>,
}

impl ExceptionDetails {
    /// The exception's description, else the message, as DevTools shows it.
    pub(crate) fn message(&self) -> String {
        self.exception
            .as_ref()
            .and_then(|e| e.description.clone())
            .or_else(|| self.text.clone())
            .unwrap_or_else(|| "JavaScript exception".into())
    }
}

/// `Runtime.evaluate` / `Runtime.callFunctionOn`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Evaluated {
    pub(crate) result: RemoteObject,
    pub(crate) exception_details: Option<ExceptionDetails>,
}

/// `DOM.getContentQuads`: quads of 8 numbers (x1 y1 .. x4 y4, viewport px).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ContentQuads {
    pub(crate) quads: Vec<Vec<f64>>,
}

impl ContentQuads {
    /// The first quad, when it has its 8 coordinates.
    pub(crate) fn first(&self) -> Option<&[f64]> {
        self.quads
            .first()
            .map(Vec::as_slice)
            .filter(|q| q.len() >= 8)
    }
}

/// `Page.getNavigationHistory`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct NavigationHistory {
    pub(crate) current_index: i64,
    pub(crate) entries: Vec<NavigationEntry>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NavigationEntry {
    pub(crate) id: Option<i64>,
    pub(crate) url: String,
    pub(crate) title: String,
}

impl NavigationHistory {
    /// The entry `offset` steps from the current one (empty when there is none).
    pub(crate) fn entry(&self, offset: i64) -> NavigationEntry {
        usize::try_from(self.current_index + offset)
            .ok()
            .and_then(|i| self.entries.get(i).cloned())
            .unwrap_or_default()
    }
}

/// `Page.navigate`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Navigated {
    pub(crate) loader_id: String,
    pub(crate) error_text: String,
}

/// `Page.getLayoutMetrics` (CSS pixels).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LayoutMetrics {
    pub(crate) css_layout_viewport: LayoutViewport,
    pub(crate) css_content_size: ContentSize,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct LayoutViewport {
    pub(crate) client_width: Option<f64>,
    pub(crate) client_height: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ContentSize {
    pub(crate) width: Option<f64>,
    pub(crate) height: Option<f64>,
}

/// `Page.captureScreenshot`: base64 image data.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Screenshot {
    pub(crate) data: String,
}

/// `Target.attachToTarget`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Attached {
    pub(crate) session_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lenient_reads() {
        let e: Evaluated = decode(json!({
            "result": {"type": "object", "subtype": "node", "objectId": "1"},
            "exceptionDetails": {"text": "Uncaught", "exception": {"description": "Error: x"}}
        }));
        assert_eq!(e.result.subtype, "node");
        assert_eq!(e.result.object_id.as_deref(), Some("1"));
        assert_eq!(e.exception_details.unwrap().message(), "Error: x");
        let d: ExceptionDetails = decode(json!({"text": "Uncaught"}));
        assert_eq!(d.message(), "Uncaught");
        assert_eq!(
            ExceptionDetails::default().message(),
            "JavaScript exception"
        );
        let h: NavigationHistory = decode(json!({"currentIndex": 1, "entries": [
            {"id": 3, "url": "a", "title": "A"}, {"id": 4, "url": "b", "title": "B"}]}));
        assert_eq!(h.entry(0).url, "b");
        assert_eq!(h.entry(-1).id, Some(3));
        assert_eq!(h.entry(-2).url, "");
        let n: Navigated = decode(Value::Null);
        assert!(n.loader_id.is_empty());
        let q: ContentQuads = decode(json!({"quads": [[0, 0, 10, 0, 10, 10, 0, 10]]}));
        assert_eq!(q.first().unwrap()[2], 10.0);
    }
}
