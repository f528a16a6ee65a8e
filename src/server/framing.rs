//! A line guard between stdio and rmcp.
//!
//! rmcp drops a line that is not JSON without a word, answers a `tools/call`
//! without `params` with "method not found", and reads lines of any size. This
//! layer reads stdin line by line (at most [`MAX_LINE`] bytes), answers what
//! cannot be a valid request itself (`-32700` parse error, `-32600`, `-32602`
//! with the request's id), and forwards everything else to rmcp unchanged.
//! All stdout writes go through one task, so replies never interleave.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The longest request line accepted (a tool call's arguments are small; images
/// travel the other way).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// What to do with one input line.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    Forward,
    Skip,
    /// Reply with this JSON-RPC error message (one line).
    Reply(Value),
}

fn error(id: Value, code: i64, message: String) -> Verdict {
    Verdict::Reply(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

/// Judge one line (without its newline).
pub fn judge(line: &[u8]) -> Verdict {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Verdict::Skip;
    }
    let msg: Value = match serde_json::from_slice(trimmed) {
        Ok(v) => v,
        Err(e) => {
            return error(
                Value::Null,
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
    let id = obj.get("id").cloned();
    let Some(method) = obj.get("method") else {
        return Verdict::Forward;
    }; // a response to us
    let Some(method) = method.as_str() else {
        return error(
            id.unwrap_or(Value::Null),
            -32600,
            "Invalid request: method must be a string".into(),
        );
    };
    let Some(id) = id else {
        return Verdict::Forward;
    }; // notification: nothing to answer
    match obj.get("params") {
        None | Some(Value::Object(_)) => {}
        Some(_) => {
            return error(
                id,
                -32602,
                format!("Invalid params for {method}: params must be an object"),
            );
        }
    }
    if method == "tools/call" {
        let params = obj.get("params");
        if !params
            .and_then(|p| p.get("name"))
            .is_some_and(Value::is_string)
        {
            return error(
                id,
                -32602,
                "Invalid params for tools/call: params.name (the tool name) is required".into(),
            );
        }
        if params
            .and_then(|p| p.get("arguments"))
            .is_some_and(|a| !a.is_object() && !a.is_null())
        {
            return error(
                id,
                -32602,
                "Invalid params for tools/call: arguments must be an object".into(),
            );
        }
    }
    Verdict::Forward
}

/// Read `input` into rmcp's side of `pipe` and rmcp's output to `output`,
/// answering bad lines directly. Returns when `input` ends (rmcp then sees EOF).
pub async fn pump<R, W>(input: R, output: W, pipe: DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (pipe_read, mut pipe_write) = tokio::io::split(pipe);
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();

    // The single stdout writer.
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut line) = rx.recv().await {
            line.push(b'\n');
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });

    // rmcp's replies and notifications -> the writer.
    let tx_out = tx.clone();
    let from_rmcp = tokio::spawn(async move {
        let mut lines = BufReader::new(pipe_read);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match lines.read_until(b'\n', &mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                        buf.pop();
                    }
                    if tx_out.send(std::mem::take(&mut buf)).is_err() {
                        break;
                    }
                }
            }
        }
    });

    // stdin -> judge -> rmcp or a direct reply.
    let mut input = BufReader::with_capacity(64 * 1024, input);
    loop {
        match read_line_capped(&mut input, MAX_LINE).await {
            Ok(None) => break,
            Ok(Some(Line::TooLong(n))) => {
                tracing::warn!("dropped a request line of {n} bytes (limit {MAX_LINE})");
                if let Verdict::Reply(v) = error(
                    Value::Null,
                    -32600,
                    format!(
                        "Invalid request: line longer than {} MiB",
                        MAX_LINE / (1024 * 1024)
                    ),
                ) {
                    let _ = tx.send(v.to_string().into_bytes());
                }
            }
            Ok(Some(Line::Full(line))) => match judge(&line) {
                Verdict::Skip => {}
                Verdict::Reply(v) => {
                    tracing::debug!("answered a bad line: {v}");
                    let _ = tx.send(v.to_string().into_bytes());
                }
                Verdict::Forward => {
                    let mut line = line;
                    line.push(b'\n');
                    if pipe_write.write_all(&line).await.is_err() {
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
    // EOF: let rmcp see it, then drain its last replies.
    let _ = pipe_write.shutdown().await;
    drop(pipe_write);
    let _ = from_rmcp.await;
    drop(tx);
    let _ = writer.await;
}

enum Line {
    Full(Vec<u8>),
    TooLong(usize),
}

/// Read one `\n`-terminated line, keeping at most `cap` bytes; a longer line is
/// consumed to its end and reported as too long. `None` at EOF.
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

    #[test]
    fn judges_lines() {
        assert_eq!(judge(b"  "), Verdict::Skip);
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
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#),
            Verdict::Forward
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Verdict::Forward
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Verdict::Forward
        );
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
}
