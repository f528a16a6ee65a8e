//! The parts of CDP results and events the tools read, as small lenient
//! structs.
//!
//! Commands go out as raw JSON (see `connection.rs`); what comes back is read
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
    pub(crate) description: Option<String>,
    pub(crate) object_id: Option<String>,
}

impl RemoteObject {
    /// The object as text, as a console line shows it: its value (a string
    /// as is), else its unserializable value (`NaN`, `-0`, ...), else its
    /// description, else its type.
    pub(crate) fn text(&self) -> String {
        if let Some(v) = &self.value {
            return match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
        }
        self.unserializable_value
            .clone()
            .or_else(|| self.description.clone())
            .unwrap_or_else(|| self.kind.clone())
    }
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
    pub(crate) value: Option<Value>,
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

/// `Target.createTarget`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct CreatedTarget {
    pub(crate) target_id: String,
}

/// Event `Runtime.consoleAPICalled`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ConsoleApiCalled {
    /// `log`, `warning`, `error`, ...
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) args: Vec<RemoteObject>,
}

/// Event `Runtime.exceptionThrown`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ExceptionThrown {
    pub(crate) exception_details: ExceptionDetails,
}

impl ExceptionThrown {
    /// The exception's description, else its value, else the message.
    pub(crate) fn message(&self) -> String {
        let d = &self.exception_details;
        d.exception
            .as_ref()
            .and_then(|e| {
                e.description
                    .clone()
                    .or_else(|| e.value.as_ref().map(Value::to_string))
            })
            .unwrap_or_else(|| d.text.clone().unwrap_or_default())
    }
}

/// Event `Page.frameNavigated`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FrameNavigated {
    pub(crate) frame: Frame,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Frame {
    /// Absent for a tab's main frame.
    pub(crate) parent_id: Option<String>,
}

/// Events `Page.frameStartedLoading` and `Page.frameStoppedLoading`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct FrameLoading {
    pub(crate) frame_id: String,
}

/// Event `Runtime.bindingCalled`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct BindingCalled {
    pub(crate) name: String,
    pub(crate) payload: String,
}

/// Event `Fetch.requestPaused`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RequestPaused {
    pub(crate) request_id: String,
    pub(crate) request: PausedRequest,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PausedRequest {
    pub(crate) url: String,
}

/// Event `Page.javascriptDialogOpening`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct DialogOpening {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) message: String,
    pub(crate) default_prompt: Option<String>,
}

/// Event `Page.screencastFrame`: a base64 JPEG, acknowledged by `session_id`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ScreencastFrame {
    pub(crate) data: String,
    pub(crate) session_id: i64,
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

    #[test]
    fn events_read_as_the_console_and_error_buffers_need() {
        let c: ConsoleApiCalled = decode(json!({"type": "warning", "args": [
            {"type": "string", "value": "hi"}, {"type": "number", "value": 2},
            {"type": "number", "unserializableValue": "NaN", "description": "NaN"},
            {"type": "object", "className": "Object", "description": "Object"},
            {"type": "object", "subtype": "null", "value": null},
            {"type": "undefined"}]}));
        assert_eq!(c.kind, "warning");
        let texts: Vec<String> = c.args.iter().map(RemoteObject::text).collect();
        assert_eq!(texts, ["hi", "2", "NaN", "Object", "object", "undefined"]);
        let e: ExceptionThrown = decode(json!({"exceptionDetails": {"text": "Uncaught",
            "exception": {"type": "object", "description": "Error: boom\n    at x"}}}));
        assert_eq!(e.message(), "Error: boom\n    at x");
        let e: ExceptionThrown = decode(json!({"exceptionDetails": {"text": "Uncaught",
            "exception": {"type": "number", "value": 42}}}));
        assert_eq!(e.message(), "42");
        let e: ExceptionThrown = decode(json!({"exceptionDetails": {"text": "Uncaught"}}));
        assert_eq!(e.message(), "Uncaught");
        let n: FrameNavigated = decode(json!({"frame": {"id": "F", "parentId": "P"}}));
        assert_eq!(n.frame.parent_id.as_deref(), Some("P"));
        let d: DialogOpening = decode(json!({"type": "prompt", "message": "Name?",
            "defaultPrompt": "ada", "url": "x", "hasBrowserHandler": false}));
        assert_eq!(
            (d.kind.as_str(), d.default_prompt.as_deref()),
            ("prompt", Some("ada"))
        );
        let p: RequestPaused = decode(json!({"requestId": "interception-1",
            "request": {"url": "http://a/", "method": "GET"}, "resourceType": "Document"}));
        assert_eq!(
            (p.request_id.as_str(), p.request.url.as_str()),
            ("interception-1", "http://a/")
        );
        let f: ScreencastFrame = decode(json!({"data": "AAAA", "sessionId": 3, "metadata": {}}));
        assert_eq!(f.session_id, 3);
    }
}
