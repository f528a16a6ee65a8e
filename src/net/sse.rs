//! Server-sent events as the Python SDKs Hermes uses read them (hermes-agent:
//! `_iter_sse_json`): one push parser for every streamed answer (the Codex
//! Responses endpoint for images and text), bounded per event.

use serde_json::Value;

/// One SSE event larger than this is refused (a final 1536x1024 PNG is a few MB of base64).
pub(crate) const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// Why an event stream could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StreamError {
    /// One event outgrew [`MAX_EVENT_BYTES`] ([`SseParser`]).
    #[error("an event in the stream is larger than {} MB", MAX_EVENT_BYTES >> 20)]
    EventTooLarge,
    /// An event's `data:` is not JSON ([`SseParser`]).
    #[error("the event stream carried invalid JSON: {0}")]
    BadJson(#[source] serde_json::Error),
}

/// `_iter_sse_json` as a push parser: lines in, JSON payloads out.
#[derive(Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
    data_len: usize,
}

impl SseParser {
    /// Feed bytes; complete events are handed to `on_event`.
    pub(crate) fn push(
        &mut self,
        bytes: &[u8],
        on_event: &mut dyn FnMut(Value),
    ) -> Result<(), StreamError> {
        for &b in bytes {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.line_done(&String::from_utf8_lossy(&line), on_event)?;
            } else {
                self.line.push(b);
                if self.line.len() + self.data_len > MAX_EVENT_BYTES {
                    return Err(StreamError::EventTooLarge);
                }
            }
        }
        Ok(())
    }

    /// End of stream: a last line and event without a trailing blank line still count.
    pub(crate) fn finish(&mut self, on_event: &mut dyn FnMut(Value)) -> Result<(), StreamError> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&String::from_utf8_lossy(&line), on_event)?;
        }
        self.flush(on_event)
    }

    fn line_done(
        &mut self,
        line: &str,
        on_event: &mut dyn FnMut(Value),
    ) -> Result<(), StreamError> {
        if line.is_empty() {
            return self.flush(on_event);
        }
        if line.starts_with(':') {
            return Ok(());
        }
        if let Some(e) = line.strip_prefix("event:") {
            self.event = Some(e.trim().to_string());
        } else if let Some(d) = line.strip_prefix("data:") {
            let d = d.trim_start().to_string();
            self.data_len += d.len();
            self.data.push(d);
        }
        Ok(())
    }

    fn flush(&mut self, on_event: &mut dyn FnMut(Value)) -> Result<(), StreamError> {
        let event = self.event.take();
        if self.data.is_empty() {
            return Ok(());
        }
        let raw = std::mem::take(&mut self.data).join("\n");
        self.data_len = 0;
        let raw = raw.trim();
        if raw.is_empty() || raw == "[DONE]" {
            return Ok(());
        }
        let mut v: Value = serde_json::from_str(raw).map_err(StreamError::BadJson)?;
        if let (Value::Object(m), Some(e)) = (&mut v, event)
            && !m.contains_key("type")
        {
            m.insert("type".into(), Value::String(e));
        }
        on_event(v);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn events(text: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut p = SseParser::default();
        // Byte by byte: events split across chunks must still parse.
        for b in text.as_bytes() {
            p.push(&[*b], &mut |v| out.push(v)).unwrap();
        }
        p.finish(&mut |v| out.push(v)).unwrap();
        out
    }

    #[test]
    fn sse_events_as_hermes_reads_them() {
        let v = events(
            ": keepalive\r\nevent: response.created\r\ndata: {\"response\":{}}\r\n\r\ndata: {\"type\":\"x\",\r\ndata: \"a\":1}\n\ndata: [DONE]\n\nevent: tail\ndata: {}",
        );
        assert_eq!(
            v,
            vec![
                json!({"response": {}, "type": "response.created"}),
                json!({"type": "x", "a": 1}),
                json!({"type": "tail"})
            ]
        );
    }
}
