//! The suite's one loopback fake server: every test that needs a remote side (a vendor API,
//! an OAuth endpoint, web pages for Chromium, Microsoft's Read Aloud websocket) serves it from
//! here, in the spirit of codex-rs' `core_test_support` (`responses::start_mock_server`).
//!
//! A [`TestServer`] listens on a loopback port and answers each request through a handler — a
//! closure over the [`Req`] or a [`Routes`] table of method + path — with a [`Resp`]: canned
//! JSON, SSE, HTML or raw bytes, any status, optionally after a delay or held open without an
//! answer. Every request is logged (method, path, query, headers, body, arrival time) for the
//! test to assert on. [`TestServer::websocket`] hands each connection to an async session
//! instead (the Edge TTS fake speaks the websocket protocol itself), and [`free_port`] names a
//! port nobody listens on. One OS thread per connection; nothing runs until a test starts a
//! server, so the module costs the suite no time.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde_json::Value;

/// One request the fake received.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    /// The path without the query.
    pub path: String,
    /// The query string without `?` (empty when there is none).
    pub query: String,
    /// The request target as sent: path and query.
    pub target: String,
    /// Header names as the client spelled them, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub at: Instant,
    /// Position in the server's request log, from 1.
    pub n: usize,
    /// The server's own base URL (`http://127.0.0.1:PORT`), for answers that link back.
    pub base: String,
}

impl Req {
    /// The body as JSON; fails the test when it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "request body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
    /// The body as JSON, `null` when it is empty or not JSON.
    pub fn json_or_null(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
    /// The header of this name (any case); the last one when the client sent it twice (the
    /// Anthropic SDK sends its own `User-Agent` before the caller's).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    /// The query's name/value pairs, percent-decoded.
    pub fn query_pairs(&self) -> HashMap<String, String> {
        url::form_urlencoded::parse(self.query.as_bytes())
            .into_owned()
            .collect()
    }
    /// An `application/x-www-form-urlencoded` body's pairs.
    pub fn form(&self) -> HashMap<String, String> {
        url::form_urlencoded::parse(&self.body)
            .into_owned()
            .collect()
    }
}

/// The fake's answer to one request.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Sleep before answering (timeouts, cancellation); a client that hangs up meanwhile is
    /// counted in [`TestServer::hangups`].
    pub delay: Duration,
    /// Write these bytes as they are instead of a status line, headers and body (a response
    /// cut short, a malformed one, or nothing at all).
    pub raw: Option<Vec<u8>>,
    /// Keep the connection open this long after writing, without closing it.
    pub hold: Duration,
}

impl Resp {
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Resp {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
            raw: None,
            hold: Duration::ZERO,
        }
    }
    pub fn json(status: u16, v: Value) -> Self {
        Self::new(status, "application/json", v.to_string())
    }
    /// A 200 with this content type.
    pub fn bytes(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self::new(200, content_type, body)
    }
    /// A 200 `text/event-stream` body (the events already framed: `data: …\n\n`).
    pub fn sse(events: impl Into<Vec<u8>>) -> Self {
        Self::new(200, "text/event-stream", events)
    }
    pub fn html(body: &str) -> Self {
        Self::new(200, "text/html; charset=utf-8", body)
    }
    pub fn redirect(location: &str) -> Self {
        Self::new(302, "text/plain", "").header("Location", location)
    }
    /// These bytes on the wire, nothing else.
    pub fn raw(bytes: impl Into<Vec<u8>>) -> Self {
        Resp {
            raw: Some(bytes.into()),
            ..Self::new(200, "", "")
        }
    }
    /// No answer at all: the connection stays open for `d`.
    pub fn hang(d: Duration) -> Self {
        Self::raw("").held(d)
    }
    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.into(), v.into()));
        self
    }
    pub fn delayed(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
    pub fn held(mut self, d: Duration) -> Self {
        self.hold = d;
        self
    }
}

type Handler = dyn Fn(&Req) -> Resp + Send + Sync;

/// A route table: the first route whose method (`"*"`: any) and path (without the query)
/// match answers; otherwise the fallback (404 `{"error": "not found"}` unless set).
pub struct Routes {
    routes: Vec<(String, String, Box<Handler>)>,
    fallback: Box<Handler>,
}

impl Default for Routes {
    fn default() -> Self {
        Routes {
            routes: Vec::new(),
            fallback: Box::new(|_| Resp::json(404, serde_json::json!({"error": "not found"}))),
        }
    }
}

impl Routes {
    pub fn new() -> Self {
        Self::default()
    }
    /// Answer `method path` with a copy of `reply`.
    pub fn on(self, method: &str, path: &str, reply: Resp) -> Self {
        self.on_fn(method, path, move |_| reply.clone())
    }
    /// Answer `method path` through `f`.
    pub fn on_fn(
        mut self,
        method: &str,
        path: &str,
        f: impl Fn(&Req) -> Resp + Send + Sync + 'static,
    ) -> Self {
        self.routes.push((method.into(), path.into(), Box::new(f)));
        self
    }
    /// Answer requests no route matches through `f`.
    pub fn otherwise(mut self, f: impl Fn(&Req) -> Resp + Send + Sync + 'static) -> Self {
        self.fallback = Box::new(f);
        self
    }
    fn answer(&self, req: &Req) -> Resp {
        self.routes
            .iter()
            .find(|(m, p, _)| (m == "*" || *m == req.method) && *p == req.path)
            .map_or_else(|| (self.fallback)(req), |(_, _, f)| f(req))
    }
    /// Serve this table on 127.0.0.1.
    pub fn start(self) -> TestServer {
        TestServer::start(move |req| self.answer(req))
    }
}

/// A loopback HTTP/1.1 server that logs every request and answers through a handler. Each
/// connection carries one request (`Connection: close`) unless the server was started with
/// [`TestServer::keep_alive`].
pub struct TestServer {
    pub addr: SocketAddr,
    pub requests: Arc<Mutex<Vec<Req>>>,
    /// Clients that hung up while a delayed response was pending.
    pub hangups: Arc<AtomicUsize>,
}

/// How a server treats its connections.
#[derive(Clone, Copy)]
struct Mode {
    keep_alive: bool,
}

impl TestServer {
    /// Serve on 127.0.0.1, one request per connection.
    pub fn start(handler: impl Fn(&Req) -> Resp + Send + Sync + 'static) -> Self {
        Self::bind("127.0.0.1", Mode { keep_alive: false }, Arc::new(handler))
    }
    /// Serve on another loopback address (127.0.0.2 is another site for Chromium).
    pub fn start_on(ip: &str, handler: impl Fn(&Req) -> Resp + Send + Sync + 'static) -> Self {
        Self::bind(ip, Mode { keep_alive: false }, Arc::new(handler))
    }
    /// Serve on 127.0.0.1, answering any number of requests per connection (HTTP/1.1
    /// persistent connections, as the REST services the browser providers call keep them).
    pub fn keep_alive(handler: impl Fn(&Req) -> Resp + Send + Sync + 'static) -> Self {
        Self::bind("127.0.0.1", Mode { keep_alive: true }, Arc::new(handler))
    }

    fn bind(ip: &str, mode: Mode, handler: Arc<Handler>) -> Self {
        let ip: IpAddr = ip.parse().expect("a loopback IP address");
        let listener = TcpListener::bind((ip, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let base = format!("http://{addr}");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let hangups = Arc::new(AtomicUsize::new(0));
        let (reqs, hups) = (requests.clone(), hangups.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let conn = Conn {
                    handler: handler.clone(),
                    requests: reqs.clone(),
                    hangups: hups.clone(),
                    base: base.clone(),
                    mode,
                };
                std::thread::spawn(move || conn.serve(stream));
            }
        });
        TestServer {
            addr,
            requests,
            hangups,
        }
    }

    /// Serve a websocket (or any raw TCP protocol) on 127.0.0.1: each accepted connection goes
    /// to `session` on a runtime of the server's own thread, so sync and async tests can use it.
    /// Nothing is logged here; the session keeps its own record.
    pub fn websocket(
        session: impl Fn(tokio::net::TcpStream) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                while let Ok((tcp, _)) = listener.accept().await {
                    tokio::spawn(session(tcp));
                }
            });
        });
        TestServer {
            addr,
            requests: Arc::default(),
            hangups: Arc::default(),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }
    /// `http://IP:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
    /// `http://IP:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
    /// The request log so far.
    pub fn reqs(&self) -> Vec<Req> {
        self.requests.lock().unwrap().clone()
    }
    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
    /// The logged requests' paths (without queries).
    pub fn paths(&self) -> Vec<String> {
        self.reqs().into_iter().map(|r| r.path).collect()
    }
    /// Forget the requests logged so far (numbering starts again).
    pub fn clear(&self) {
        self.requests.lock().unwrap().clear();
    }
    /// Wait up to `secs` until the log satisfies `f`; fail the test naming `what` otherwise.
    pub fn wait_for(&self, what: &str, f: impl Fn(&[Req]) -> bool, secs: u64) -> Vec<Req> {
        super::common::poll_until(what, secs, || self.reqs(), |r| f(r))
    }
}

/// A loopback port nobody listens on (bound, then let go), for "cannot connect" tests.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One accepted connection and what it needs to answer.
struct Conn {
    handler: Arc<Handler>,
    requests: Arc<Mutex<Vec<Req>>>,
    hangups: Arc<AtomicUsize>,
    base: String,
    mode: Mode,
}

impl Conn {
    /// Read, log and answer requests until the client leaves (or after one, unless keep-alive).
    fn serve(&self, stream: TcpStream) {
        let Ok(read_half) = stream.try_clone() else {
            return;
        };
        let mut reader = BufReader::new(read_half);
        let mut stream = stream;
        while let Some(mut req) = read_request(&mut reader, &self.base) {
            {
                let mut log = self.requests.lock().unwrap();
                req.n = log.len() + 1;
                log.push(req.clone());
            }
            let resp = (self.handler)(&req);
            if !self.wait(&mut stream, resp.delay)
                || write_resp(&mut stream, &resp, self.mode).is_err()
            {
                return;
            }
            if !resp.hold.is_zero() {
                std::thread::sleep(resp.hold);
            }
            if !self.mode.keep_alive || resp.raw.is_some() {
                return;
            }
        }
    }

    /// Sleep `d` before answering, but notice a client that gives up (EOF on the socket):
    /// false when it did.
    fn wait(&self, stream: &mut TcpStream, d: Duration) -> bool {
        if d.is_zero() {
            return true;
        }
        stream
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let end = Instant::now() + d;
        let mut buf = [0u8; 64];
        while Instant::now() < end {
            if let Ok(0) = stream.read(&mut buf) {
                self.hangups.fetch_add(1, Ordering::SeqCst);
                return false;
            }
        }
        stream.set_read_timeout(None).unwrap();
        true
    }
}

/// Parse one request (request line, headers, a `Content-Length` body); None at EOF.
fn read_request(reader: &mut BufReader<TcpStream>, base: &str) -> Option<Req> {
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (target.clone(), String::new()),
    };
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            break;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .rev()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    let _ = reader.read_exact(&mut body);
    Some(Req {
        method,
        path,
        query,
        target,
        headers,
        body,
        at: Instant::now(),
        n: 0,
        base: base.to_string(),
    })
}

/// Write `resp`: its raw bytes, or a status line, its headers, `Content-Length` (and
/// `Connection: close` unless keep-alive) and the body.
fn write_resp(stream: &mut TcpStream, resp: &Resp, mode: Mode) -> std::io::Result<()> {
    if let Some(raw) = &resp.raw {
        stream.write_all(raw)?;
        return stream.flush();
    }
    let mut head = format!("HTTP/1.1 {} {}\r\n", resp.status, reason(resp.status));
    for (k, v) in &resp.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n", resp.body.len()));
    if !mode.keep_alive {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(&resp.body)?;
    stream.flush()
}

/// The status line's reason phrase (Python clients put it in their error messages).
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}
