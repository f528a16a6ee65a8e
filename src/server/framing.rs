//! The stdio channel: a line guard in front of rmcp.
//!
//! rmcp drops a line that is not JSON without a word, answers a message it
//! cannot parse with `-32600` and no id, stops for good when the first message
//! is not a request, and reads lines with its own length limit. So rmcp never
//! reads stdio here: this layer reads stdin line by line (at most [`MAX_LINE`]
//! bytes before the newline, the one limit), parses each line into an rmcp
//! message itself, answers what cannot be a valid request (`-32700` parse
//! error, `-32600` invalid request, `-32602` invalid params) with the request's
//! id whenever one can be read, drops what needs no answer (a notification or
//! response it cannot use), and hands rmcp whole messages through
//! [`GuardTransport`]. All stdout writes go through one task, so replies never
//! interleave. End of input is announced on [`Guard::eof`] before rmcp sees it,
//! so the server can cancel running calls at once.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The longest message accepted: the bytes of one line before its `\n` (a
/// tool call's arguments are small; images travel the other way). A line of
/// `MAX_LINE` bytes is read; one of `MAX_LINE + 1` is refused with `-32600`
/// without being buffered.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// How many parsed messages may wait for rmcp before stdin reading pauses.
const QUEUE: usize = 64;

/// What to do with one input line.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Hand this message to rmcp.
    Forward(Box<ClientJsonRpcMessage>),
    /// Nothing to do (a blank line, or a notification or response that cannot
    /// be used: those are never answered).
    Skip,
    /// Reply with this JSON-RPC error message (one line).
    Reply(Value),
}

fn error(id: Value, code: i64, message: String) -> Verdict {
    Verdict::Reply(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

/// Methods rmcp knows the parameters of (a parse failure there is `-32602`).
fn known_request(method: &str) -> bool {
    matches!(
        method,
        "initialize"
            | "ping"
            | "server/discover"
            | "prompts/get"
            | "prompts/list"
            | "resources/list"
            | "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "resources/templates/list"
            | "subscriptions/listen"
            | "tools/call"
            | "tools/list"
            | "completion/complete"
            | "logging/setLevel"
    )
}

/// Judge one line (without its newline).
pub(crate) fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Verdict::Skip;
    }
    let msg: Value = match serde_json::from_slice(trimmed) {
        Ok(v) => v,
        Err(e) => {
            return error(
                readable_id(trimmed),
                -32700,
                format!("Parse error: not a JSON-RPC message ({e})"),
            );
        }
    };
    let Value::Object(obj) = &msg else {
        let what = if msg.is_array() {
            "batches are not supported"
        } else {
            "expected a JSON object"
        };
        return error(Value::Null, -32600, format!("Invalid request: {what}"));
    };
    let Some(method) = obj.get("method") else {
        if obj.contains_key("result") || obj.contains_key("error") {
            // A response to us: used when rmcp can parse it, never answered.
            return forward_or_skip(msg, "response");
        }
        let id = obj.get("id").cloned().unwrap_or(Value::Null);
        return error(
            id,
            -32600,
            "Invalid request: no method (and not a response)".into(),
        );
    };
    let Some(id) = obj.get("id").cloned() else {
        // A notification: never answered, whatever is wrong with it.
        return forward_or_skip(msg, "notification");
    };
    // A request: every error from here on carries its id.
    let method = match check_request(obj, method, &id) {
        Ok(m) => m.to_string(),
        Err(v) => return v,
    };
    hand_to_rmcp(msg, &method, id)
}

/// The id of a line that is valid JSON syntax but holds a lone UTF-16
/// surrogate escape (`"\ud800"`) or bytes that are not UTF-8 (a raw CESU-8
/// surrogate), which serde_json refuses: with each read as U+FFFD the line parses, and its id (when it is a valid
/// request id) is the one to answer with. The answer stays `-32700`: such a
/// string is not Unicode text, so the line is not a JSON text a JSON-RPC
/// peer must accept (RFC 8259 §8.2, I-JSON RFC 7493 §2.1), and the request is
/// not run with a substituted character; but the id was readable, and
/// JSON-RPC 2.0 sends `null` only when it was not.
fn readable_id(line: &[u8]) -> Value {
    // Bytes that are not UTF-8 (raw CESU-8 surrogates `ED A0 80`, stray
    // continuation bytes) are read as U+FFFD the same way.
    let text = String::from_utf8_lossy(line);
    let not_utf8 = matches!(text, std::borrow::Cow::Owned(_));
    let fixed = match replace_lone_surrogates(text.as_bytes()) {
        Some(fixed) => fixed,
        None if not_utf8 => text.into_owned().into_bytes(),
        None => return Value::Null,
    };
    let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(&fixed) else {
        return Value::Null;
    };
    obj.get("id")
        .filter(|id| serde_json::from_value::<RequestId>((*id).clone()).is_ok())
        .cloned()
        .unwrap_or(Value::Null)
}

/// `line` with every `\uD800`–`\uDFFF` escape that is not half of a valid
/// pair replaced by `\uFFFD`; `None` when there was none. Escapes only occur
/// inside JSON strings, so no string tracking is needed; `\\` is skipped as a
/// unit so an escaped backslash followed by `u` is left alone.
fn replace_lone_surrogates(line: &[u8]) -> Option<Vec<u8>> {
    let unit = |at: usize| -> Option<u16> {
        let hex = line.get(at..at + 6)?.strip_prefix(b"\\u")?;
        u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    };
    let (mut out, mut i, mut changed) = (Vec::with_capacity(line.len()), 0, false);
    while i < line.len() {
        if line[i] != b'\\' {
            out.push(line[i]);
            i += 1;
            continue;
        }
        let Some(u) = unit(i) else {
            // Any other escape: copy it whole (two bytes).
            out.extend_from_slice(&line[i..(i + 2).min(line.len())]);
            i += 2;
            continue;
        };
        let high = (0xD800..0xDC00).contains(&u);
        let paired = high && unit(i + 6).is_some_and(|l| (0xDC00..0xE000).contains(&l));
        if paired {
            out.extend_from_slice(&line[i..i + 12]);
            i += 12;
        } else if (0xD800..0xE000).contains(&u) {
            out.extend_from_slice(b"\\uFFFD");
            changed = true;
            i += 6;
        } else {
            out.extend_from_slice(&line[i..i + 6]);
            i += 6;
        }
    }
    changed.then_some(out)
}

/// A request's envelope and params, as far as they can be checked without
/// rmcp: the method name, the id, `"jsonrpc": "2.0"`, params (and `_meta`)
/// as objects, and what `tools/call` needs. Gives the method name, or the reply.
fn check_request<'a>(
    obj: &'a serde_json::Map<String, Value>,
    method: &'a Value,
    id: &Value,
) -> Result<&'a str, Verdict> {
    let fail = |code, message: String| Err(error(id.clone(), code, message));
    let Some(method) = method.as_str() else {
        return fail(-32600, "Invalid request: method must be a string".into());
    };
    if serde_json::from_value::<RequestId>(id.clone()).is_err() {
        return fail(
            -32600,
            "Invalid request: id must be a string or an integer from -2^63 to 2^63-1".into(),
        );
    }
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return fail(-32600, r#"Invalid request: "jsonrpc" must be "2.0""#.into());
    }
    let params = obj.get("params");
    if params.is_some_and(|p| !p.is_object()) {
        return fail(
            -32602,
            format!("Invalid params for {method}: params must be an object"),
        );
    }
    if params
        .and_then(|p| p.get("_meta"))
        .is_some_and(|m| !m.is_object())
    {
        return fail(
            -32602,
            format!("Invalid params for {method}: params._meta must be an object"),
        );
    }
    if method == "tools/call" {
        if !params
            .and_then(|p| p.get("name"))
            .is_some_and(Value::is_string)
        {
            return fail(
                -32602,
                "Invalid params for tools/call: params.name (the tool name) is required".into(),
            );
        }
        if params
            .and_then(|p| p.get("arguments"))
            .is_some_and(|a| !a.is_object() && !a.is_null())
        {
            return fail(
                -32602,
                "Invalid params for tools/call: arguments must be an object".into(),
            );
        }
    }
    Ok(method)
}

/// A checked request, parsed as rmcp will: forwarded, or answered with
/// `-32602` (a known method whose params do not fit) or `-32600`.
fn hand_to_rmcp(msg: Value, method: &str, id: Value) -> Verdict {
    match serde_json::from_value::<ClientJsonRpcMessage>(msg) {
        // rmcp takes a known method whose params do not fit for a custom one
        // and answers "method not found".
        Ok(ClientJsonRpcMessage::Request(r))
            if known_request(method) && matches!(r.request, ClientRequest::CustomRequest(_)) =>
        {
            error(
                id,
                -32602,
                format!("Invalid params for {method}: params do not match the method's schema"),
            )
        }
        Ok(m) => Verdict::Forward(Box::new(m)),
        Err(e) if known_request(method) => {
            error(id, -32602, format!("Invalid params for {method}: {e}"))
        }
        Err(e) => error(id, -32600, format!("Invalid request: {e}")),
    }
}

fn forward_or_skip(msg: Value, what: &str) -> Verdict {
    match serde_json::from_value::<ClientJsonRpcMessage>(msg) {
        Ok(m) => Verdict::Forward(Box::new(m)),
        Err(e) => {
            tracing::debug!("ignored a {what} that does not parse: {e}");
            Verdict::Skip
        }
    }
}

/// rmcp's side of the channel: whole messages in, whole messages out.
pub(crate) struct GuardTransport {
    rx: Arc<Mutex<mpsc::Receiver<ClientJsonRpcMessage>>>,
    out: mpsc::UnboundedSender<Vec<u8>>,
}

impl Transport<RoleServer> for GuardTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_vec(&item)
            .map_err(std::io::Error::other)
            .and_then(|line| {
                self.out.send(line).map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
                })
            });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        // Cancel-safe: a dropped `recv` loses nothing.
        self.rx.lock().await.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The running guard: a stdin reader task and the single stdout writer task.
pub(crate) struct Guard {
    /// Cancelled when stdin ends (EOF or a read error), before rmcp sees the end.
    pub(crate) eof: CancellationToken,
    rx: Arc<Mutex<mpsc::Receiver<ClientJsonRpcMessage>>>,
    out: Option<mpsc::UnboundedSender<Vec<u8>>>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Guard {
    /// Start reading `input` and writing `output`.
    pub(crate) fn spawn<R, W>(input: R, output: W) -> Guard
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            let mut output = output;
            while let Some(mut line) = out_rx.recv().await {
                line.push(b'\n');
                if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                    tracing::debug!("stdout closed");
                    break;
                }
            }
        });
        let (tx, rx) = mpsc::channel(QUEUE);
        let eof = CancellationToken::new();
        let reader = tokio::spawn(read_loop(input, tx, out.clone(), eof.clone()));
        Guard {
            eof,
            rx: Arc::new(Mutex::new(rx)),
            out: Some(out),
            reader,
            writer,
        }
    }

    /// A transport for one `serve` attempt (all attempts share the input queue).
    pub(crate) fn transport(&self) -> GuardTransport {
        GuardTransport {
            rx: self.rx.clone(),
            out: self.out.clone().expect("guard is running"),
        }
    }

    /// Stop reading and write what is queued for stdout, for at most `drain`
    /// (zero: drop it). Call after rmcp has stopped.
    pub(crate) async fn finish(mut self, drain: std::time::Duration) {
        self.reader.abort();
        drop(self.out.take());
        if drain.is_zero() || tokio::time::timeout(drain, &mut self.writer).await.is_err() {
            self.writer.abort();
        }
    }
}

/// stdin -> judge -> rmcp or a direct reply.
async fn read_loop<R>(
    input: R,
    tx: mpsc::Sender<ClientJsonRpcMessage>,
    out: mpsc::UnboundedSender<Vec<u8>>,
    eof: CancellationToken,
) where
    R: AsyncRead + Unpin + Send + 'static,
{
    let mut input = BufReader::with_capacity(64 * 1024, input);
    loop {
        match read_line_capped(&mut input, MAX_LINE).await {
            Ok(None) => break,
            Ok(Some(Line::TooLong(n))) => {
                tracing::warn!("refused a request line of {n} bytes (limit {MAX_LINE})");
                if let Verdict::Reply(v) = error(
                    Value::Null,
                    -32600,
                    format!(
                        "Invalid request: line longer than {MAX_LINE} bytes ({} MiB)",
                        MAX_LINE / (1024 * 1024)
                    ),
                ) {
                    let _ = out.send(v.to_string().into_bytes());
                }
            }
            Ok(Some(Line::Full(line))) => match judge(&line) {
                Verdict::Skip => {}
                Verdict::Reply(v) => {
                    tracing::debug!("answered a bad line: {v}");
                    let _ = out.send(v.to_string().into_bytes());
                }
                Verdict::Forward(m) => {
                    if tx.send(*m).await.is_err() {
                        break;
                    }
                }
            },
            Err(e) => {
                tracing::debug!("stdin read error: {e}");
                break;
            }
        }
    }
    // Announce the end first (running calls are cancelled), then let rmcp see it.
    eof.cancel();
    drop(tx);
}

enum Line {
    Full(Vec<u8>),
    TooLong(usize),
}

/// Read one `\n`-terminated line, keeping at most `cap` bytes before the
/// `\n`; a longer line is consumed to its end and reported as too long.
/// `None` at EOF.
async fn read_line_capped<R: AsyncBufReadExt + Unpin>(
    r: &mut R,
    cap: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut total = 0usize;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if total == 0 {
                None
            } else if total > cap {
                Some(Line::TooLong(total))
            } else {
                Some(Line::Full(line))
            });
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        total += chunk.len();
        if total <= cap {
            line.extend_from_slice(chunk);
        } else {
            line = Vec::new();
        }
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(if total > cap {
                Line::TooLong(total)
            } else {
                Line::Full(line)
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: &Verdict) -> Option<(Value, i64)> {
        match v {
            Verdict::Reply(r) => Some((r["id"].clone(), r["error"]["code"].as_i64().unwrap())),
            _ => None,
        }
    }

    fn forwards(v: &Verdict) -> bool {
        matches!(v, Verdict::Forward(_))
    }

    #[test]
    fn judges_lines() {
        assert!(matches!(judge(b"  "), Verdict::Skip));
        assert_eq!(code(&judge(b"not json")), Some((Value::Null, -32700)));
        assert_eq!(code(&judge(b"[]")), Some((Value::Null, -32600)));
        assert_eq!(
            code(&judge(
                br#"{"jsonrpc":"2.0","id":7,"method":"x","params":"bad"}"#
            )),
            Some((json!(7), -32602))
        );
        assert_eq!(
            code(&judge(
                br#"{"jsonrpc":"2.0","id":"a","method":"tools/call"}"#
            )),
            Some((json!("a"), -32602))
        );
        assert_eq!(
            code(&judge(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#)),
            Some((json!(1), -32602))
        );
        assert!(forwards(&judge(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#
        )));
        assert!(forwards(&judge(
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
        )));
        assert!(forwards(&judge(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        )));
        assert!(forwards(&judge(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#)));
    }

    #[test]
    fn lone_surrogates_keep_the_id() {
        let line = |x: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":"s","method":"ping","params":{{"x":"{x}"}}}}"#)
        };
        for lone in [
            r"\ud800",
            r"\uDFFF",
            r"a\ud83d",
            r"\ude00\ud83d",
            r"\\\ud800",
        ] {
            let got = code(&judge(line(lone).as_bytes()));
            assert_eq!(got, Some((json!("s"), -32700)), "{lone}");
        }
        // A valid pair and an escaped backslash before `u` are not lone surrogates.
        for fine in [r"\ud83d\ude00", r"\\ud800"] {
            assert!(
                matches!(judge(line(fine).as_bytes()), Verdict::Forward(_)),
                "{fine}"
            );
        }
        assert_eq!(replace_lone_surrogates(br#""\ud83d\ude00""#), None);
    }

    #[test]
    fn raw_surrogate_bytes_keep_the_id() {
        for raw in [
            &b"\xed\xa0\x80"[..],
            b"\xed\xbf\xbf",
            b"a\xed\xa0\xbd\xed\xb8\x80",
            b"\xff",
        ] {
            let mut line = br#"{"jsonrpc":"2.0","id":"s","method":"ping","params":{"x":""#.to_vec();
            line.extend_from_slice(raw);
            line.extend_from_slice(br#""}}"#);
            assert_eq!(code(&judge(&line)), Some((json!("s"), -32700)), "{raw:?}");
        }
        // Not JSON at all, with or without such bytes: no id to read.
        assert_eq!(code(&judge(b"\xed\xa0\x80")), Some((Value::Null, -32700)));
    }

    #[test]
    fn errors_carry_the_id_when_it_can_be_read() {
        for (line, id, want) in [
            (r#"{"id":7,"method":"ping"}"#, json!(7), -32600),
            (
                r#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#,
                json!("x"),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":5}}"#,
                json!(8),
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
                json!(9223372036854775808u64),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                json!(1.5),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
                json!({}),
                -32600,
            ),
            (r#"{"jsonrpc":"2.0","id":3,"method":7}"#, json!(3), -32600),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"x":1}}"#,
                json!(4),
                -32602,
            ),
        ] {
            assert_eq!(code(&judge(line.as_bytes())), Some((id, want)), "{line}");
        }
        // Notifications and responses are never answered, even when unusable.
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[]}}"#,
            r#"{"method":"notifications/initialized"}"#,
            r#"{"id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#,
        ] {
            assert!(
                !matches!(judge(line.as_bytes()), Verdict::Reply(_)),
                "{line}"
            );
        }
    }

    #[tokio::test]
    async fn caps_line_length_and_keeps_reading() {
        let mut data = vec![b'x'; 100];
        data.extend_from_slice(b"\nok\r\ntail");
        let mut r = BufReader::with_capacity(8, &data[..]);
        assert!(matches!(
            read_line_capped(&mut r, 10).await.unwrap(),
            Some(Line::TooLong(100))
        ));
        assert!(
            matches!(read_line_capped(&mut r, 10).await.unwrap(), Some(Line::Full(l)) if l == b"ok")
        );
        assert!(
            matches!(read_line_capped(&mut r, 10).await.unwrap(), Some(Line::Full(l)) if l == b"tail")
        );
        assert!(read_line_capped(&mut r, 10).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn the_limit_counts_the_bytes_before_the_newline() {
        for (n, fits) in [(9, true), (10, true), (11, false)] {
            let mut data = vec![b'x'; n];
            data.push(b'\n');
            let mut r = BufReader::with_capacity(4, &data[..]);
            let got = read_line_capped(&mut r, 10).await.unwrap();
            assert_eq!(matches!(got, Some(Line::Full(_))), fits, "{n}");
        }
    }
}
