//! A thin Chrome DevTools Protocol client: one WebSocket to the browser, and
//! flat sessions on it (`Target.attachToTarget` with `flatten`), as the
//! DevTools protocol describes them
//! (<https://chromedevtools.github.io/devtools-protocol/>).
//!
//! A connection task sends `{id, method, params, sessionId}` and routes what
//! comes back: an answer to the call waiting for its id, an event to the
//! subscribers of its (session, method). Commands and results are raw JSON:
//! typed bindings break when Chromium adds an enum value (e.g. a new AX
//! property); raw JSON does not. What the tools read from results and events
//! is typed in `protocol.rs`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_tungstenite::tungstenite::{self, Message, protocol::WebSocketConfig};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::protocol::{Attached, CreatedTarget, decode};

/// Why a CDP command (or the connection) failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CdpError {
    /// Chromium's own error answer to the command.
    #[error("Error {code}: {message}")]
    Chrome { code: i64, message: String },
    #[error("{0}")]
    Ws(#[from] tungstenite::Error),
    #[error("Request timed out.")]
    Timeout,
    #[error("the browser connection closed")]
    Closed,
    /// The HTTP discovery endpoint (`/json/version`) did not answer.
    #[error("Received no response from the chromium instance.")]
    NoResponse,
    #[error("the browser answered without a session id")]
    NoSession,
    /// The TLS handshake of a `wss` endpoint failed (an untrusted or
    /// mismatched certificate, a server that speaks no TLS).
    #[error("TLS to {host} failed: {reason}")]
    Tls { host: String, reason: String },
    /// The endpoint is refused by the metadata rule (`urlcheck::check_endpoint`).
    #[error("{0}")]
    Refused(String),
}

type Reply = oneshot::Sender<Result<Value, CdpError>>;

/// Who waits for what on one connection.
#[derive(Default)]
struct Routes {
    /// Calls waiting for their answer, by id.
    pending: HashMap<u64, Reply>,
    /// Event subscribers by (session id, "" for the browser; method).
    events: HashMap<(String, String), Vec<mpsc::UnboundedSender<Value>>>,
    /// The socket is gone: calls fail at once, subscriptions end.
    closed: bool,
}

fn lock(r: &Mutex<Routes>) -> std::sync::MutexGuard<'_, Routes> {
    r.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One message from Chromium: an answer (`id`) or an event (`method`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Incoming {
    id: Option<u64>,
    result: Option<Value>,
    error: Option<ErrorBody>,
    method: Option<String>,
    params: Option<Value>,
    session_id: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
}

/// A WebSocket to the browser; clones share it. The connection task ends
/// when the socket closes or the last clone is dropped.
#[derive(Clone)]
pub(crate) struct Connection {
    out: mpsc::UnboundedSender<String>,
    routes: Arc<Mutex<Routes>>,
    next_id: Arc<AtomicU64>,
    /// No command waits longer than this for its answer.
    timeout: Duration,
}

/// Removes a call's entry when the caller stops waiting (timeout, cancel).
struct Forget<'a> {
    routes: &'a Mutex<Routes>,
    id: u64,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(self.routes).pending.remove(&self.id);
    }
}

impl Connection {
    /// Open the WebSocket at `ws_url` (dialled only at the addresses the
    /// metadata rule passed; `wss` over TLS verified as the HTTP client
    /// verifies) and start its connection task.
    async fn open(ws_url: &str, timeout: Duration) -> Result<(Self, JoinHandle<()>), CdpError> {
        use async_tungstenite::tungstenite::client::IntoClientRequest;
        let addrs = crate::toolsets::browser::chromium::urlcheck::check_endpoint(ws_url)
            .await
            .map_err(CdpError::Refused)?;
        let config = WebSocketConfig::default()
            .max_message_size(None)
            .max_frame_size(None);
        let request = ws_url.into_client_request()?;
        let socket = tokio::net::TcpStream::connect(&addrs[..])
            .await
            .map_err(|e| CdpError::Ws(tungstenite::Error::Io(e)))?;
        let io: Box<dyn Io> = match request.uri().scheme_str() {
            Some("wss") => Box::new(tls(request.uri().host().unwrap_or(""), socket).await?),
            _ => Box::new(socket),
        };
        let (ws, _) =
            async_tungstenite::tokio::client_async_with_config(request, io, Some(config)).await?;
        let (out, rx) = mpsc::unbounded_channel();
        let routes = Arc::new(Mutex::new(Routes::default()));
        let task = tokio::spawn(run(ws, rx, routes.clone()));
        let conn = Connection {
            out,
            routes,
            next_id: Arc::new(AtomicU64::new(1)),
            timeout,
        };
        Ok((conn, task))
    }

    /// Send `method` on `session` (the browser's own when `None`) and wait
    /// for the answer.
    pub(crate) async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut r = lock(&self.routes);
            if r.closed {
                return Err(CdpError::Closed);
            }
            r.pending.insert(id, tx);
        }
        let _forget = Forget {
            routes: &self.routes,
            id,
        };
        self.out
            .send(message(id, session, method, params))
            .map_err(|_| CdpError::Closed)?;
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(CdpError::Closed),
            Err(_) => Err(CdpError::Timeout),
        }
    }

    /// Send `method` without waiting for (or reading) the answer.
    fn send(&self, session: Option<&str>, method: &str, params: Value) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let _ = self.out.send(message(id, session, method, params));
    }

    /// Every `method` event of `session` from now on (the params); the
    /// stream ends when the connection closes.
    pub(crate) fn subscribe(&self, session: &str, method: &str) -> mpsc::UnboundedReceiver<Value> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut r = lock(&self.routes);
        if !r.closed {
            r.events
                .entry((session.to_string(), method.to_string()))
                .or_default()
                .push(tx);
        }
        rx
    }

    /// Attach a flat session to target `target_id` (a tab, or an
    /// out-of-process frame: its target id is its frame id).
    pub(crate) async fn attach(&self, target_id: &str) -> Result<String, CdpError> {
        let r = self
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await?;
        decode::<Attached>(r).session_id.ok_or(CdpError::NoSession)
    }

    /// Let a session we attached go (answer not awaited).
    pub(crate) fn detach(&self, session: &str) {
        self.send(
            None,
            "Target.detachFromTarget",
            json!({"sessionId": session}),
        );
    }
}

fn message(id: u64, session: Option<&str>, method: &str, params: Value) -> String {
    let mut m = json!({"id": id, "method": method, "params": params});
    if let Some(s) = session {
        m["sessionId"] = json!(s);
    }
    m.to_string()
}

/// The byte stream under the WebSocket: TCP, or TLS over it.
trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}

/// TLS over `tcp` to `host` (the URL's host: the name sent and verified),
/// with the HTTP client's verifier.
async fn tls(
    host: &str,
    tcp: tokio::net::TcpStream,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, CdpError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    crate::net::client::tls_connect(bare, tcp)
        .await
        .map_err(|e| CdpError::Tls {
            host: host.to_string(),
            reason: e.to_string(),
        })
}

/// The connection task: writes queued commands, routes what Chromium sends;
/// when the socket ends, fails the waiting calls and ends every event stream.
async fn run(
    mut ws: async_tungstenite::WebSocketStream<async_tungstenite::tokio::TokioAdapter<Box<dyn Io>>>,
    mut out: mpsc::UnboundedReceiver<String>,
    routes: Arc<Mutex<Routes>>,
) {
    loop {
        tokio::select! {
            m = out.recv() => match m {
                Some(text) => {
                    if let Err(e) = ws.send(Message::text(text)).await {
                        tracing::debug!("cdp: send failed: {e}");
                        break;
                    }
                }
                None => break,
            },
            m = ws.next() => match m {
                Some(Ok(Message::Text(t))) => route(&routes, t.as_str()),
                Some(Ok(Message::Close(_))) | None => break,
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::debug!("cdp: connection lost: {e}");
                    break;
                }
            },
        }
    }
    let mut r = lock(&routes);
    r.closed = true;
    for (_, reply) in r.pending.drain() {
        let _ = reply.send(Err(CdpError::Closed));
    }
    r.events.clear();
}

/// Hand one message to the call or the subscribers it is for.
fn route(routes: &Mutex<Routes>, text: &str) {
    let m: Incoming = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) => {
            tracing::debug!("cdp: unreadable message: {e}");
            return;
        }
    };
    let mut r = lock(routes);
    if let Some(id) = m.id {
        if let Some(reply) = r.pending.remove(&id) {
            let _ = reply.send(match m.error {
                Some(e) => Err(CdpError::Chrome {
                    code: e.code,
                    message: e.message,
                }),
                None => Ok(m.result.unwrap_or(Value::Null)),
            });
        }
        return;
    }
    let Some(method) = m.method else { return };
    let key = (m.session_id.unwrap_or_default(), method);
    if let Some(subs) = r.events.get_mut(&key) {
        let params = m.params.unwrap_or(Value::Null);
        subs.retain(|s| s.send(params.clone()).is_ok());
        if subs.is_empty() {
            r.events.remove(&key);
        }
    }
}

/// The browser: its connection and the task that runs it.
pub(crate) struct Browser {
    conn: Connection,
    task: JoinHandle<()>,
}

/// `/json/version`'s answer.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct VersionInfo {
    web_socket_debugger_url: String,
}

/// An http(s) DevTools endpoint → its browser WebSocket URL (from
/// `/json/version`, with `127.0.0.1` replaced by the address that answered,
/// so that a proxy's local address is not dialled); the URL itself when the
/// answer names none.
async fn discover(url: &str) -> Result<String, CdpError> {
    let version = if url.ends_with("/json/version") || url.ends_with("/json/version/") {
        url.to_string()
    } else {
        let slash = if url.ends_with('/') { "" } else { "/" };
        format!("{url}{slash}json/version")
    };
    let addrs = crate::toolsets::browser::chromium::urlcheck::check_endpoint(&version)
        .await
        .map_err(CdpError::Refused)?;
    crate::net::client::install_crypto();
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none());
    // Dial only the addresses checked above.
    if let Some(url::Host::Domain(d)) = url::Url::parse(&version)
        .ok()
        .as_ref()
        .and_then(|u| u.host())
    {
        builder = builder.resolve_to_addrs(d, &addrs);
    }
    let client = builder.build().map_err(|_| CdpError::NoResponse)?;
    let r = client
        .get(version)
        .header("content-type", "application/json")
        .send()
        .await
        .map_err(|_| CdpError::NoResponse)?;
    let peer = r.remote_addr();
    let body = r.bytes().await.unwrap_or_default();
    let ws = serde_json::from_slice::<VersionInfo>(&body)
        .unwrap_or_default()
        .web_socket_debugger_url;
    Ok(match (ws.is_empty(), peer) {
        (true, _) => url.to_string(),
        (false, Some(a)) => ws.replace("127.0.0.1", &a.ip().to_string()),
        (false, None) => ws,
    })
}

impl Browser {
    /// Connect to the browser at `url`: its WebSocket URL, or an http(s)
    /// DevTools endpoint resolved through `/json/version`. No command waits
    /// longer than `timeout`.
    pub(crate) async fn connect(url: &str, timeout: Duration) -> Result<Browser, CdpError> {
        let ws_url = if url.starts_with("http") {
            discover(url).await?
        } else {
            url.to_string()
        };
        let (conn, task) = Connection::open(&ws_url, timeout).await?;
        Ok(Browser { conn, task })
    }

    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The connection is gone (socket closed or lost).
    pub(crate) fn is_closed(&self) -> bool {
        self.task.is_finished()
    }

    /// A new tab at `about:blank` with its own session, Page and Runtime
    /// events on. A tab that cannot be set up is closed again.
    pub(crate) async fn new_page(&self) -> Result<Page, CdpError> {
        let created: CreatedTarget = decode(
            self.conn
                .call(None, "Target.createTarget", json!({"url": "about:blank"}))
                .await?,
        );
        let target_id = created.target_id;
        let page = async {
            let session = self.conn.attach(&target_id).await?;
            let page = Page {
                conn: self.conn.clone(),
                session: session.into(),
                target_id: target_id.as_str().into(),
            };
            // Sent together: Chromium runs a session's commands in order.
            futures::try_join!(
                page.call("Page.enable", json!({})),
                page.call("Runtime.enable", json!({}))
            )?;
            Ok(page)
        }
        .await;
        if page.is_err() {
            self.conn
                .send(None, "Target.closeTarget", json!({"targetId": target_id}));
        }
        page
    }

    /// Ask the browser to exit (`Browser.close`).
    pub(crate) async fn close(&self) -> Result<(), CdpError> {
        self.conn
            .call(None, "Browser.close", json!({}))
            .await
            .map(|_| ())
    }

    /// Drop the connection now.
    pub(crate) fn abort(&self) {
        self.task.abort();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A tab (target) and our session on it; clones share both.
#[derive(Clone)]
pub(crate) struct Page {
    conn: Connection,
    session: Arc<str>,
    target_id: Arc<str>,
}

impl Page {
    /// Send one command on the tab's session.
    pub(crate) async fn call(&self, method: &str, params: Value) -> Result<Value, CdpError> {
        self.conn.call(Some(&self.session), method, params).await
    }

    /// The tab's `method` events from now on (see [`Connection::subscribe`]).
    pub(crate) fn events(&self, method: &str) -> mpsc::UnboundedReceiver<Value> {
        self.conn.subscribe(&self.session, method)
    }

    /// The tab's target id (also its main frame's id).
    pub(crate) fn target_id(&self) -> &str {
        &self.target_id
    }

    /// Close the tab from the browser's side (`Target.closeTarget`), which
    /// works when the page itself no longer answers.
    pub(crate) async fn close_target(&self) -> Result<(), CdpError> {
        self.conn
            .call(
                None,
                "Target.closeTarget",
                json!({"targetId": &*self.target_id}),
            )
            .await
            .map(|_| ())
    }

    /// Close the tab (`Page.close`, which runs its `beforeunload` hooks).
    pub(crate) async fn close(&self) -> Result<(), CdpError> {
        self.call("Page.close", json!({})).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes_with(id: u64) -> (Mutex<Routes>, oneshot::Receiver<Result<Value, CdpError>>) {
        let (tx, rx) = oneshot::channel();
        let mut r = Routes::default();
        r.pending.insert(id, tx);
        (Mutex::new(r), rx)
    }

    #[test]
    fn answers_go_to_their_call_and_errors_read_as_chromium_says() {
        let (routes, mut rx) = routes_with(7);
        route(&routes, r#"{"id":8,"result":{"x":1}}"#);
        assert!(rx.try_recv().is_err());
        route(&routes, r#"{"id":7,"result":{"x":1}}"#);
        assert_eq!(rx.try_recv().unwrap().unwrap(), json!({"x": 1}));
        let (routes, mut rx) = routes_with(3);
        route(
            &routes,
            r#"{"id":3,"error":{"code":-32000,"message":"No node with given id found"}}"#,
        );
        let e = rx.try_recv().unwrap().unwrap_err();
        assert_eq!(e.to_string(), "Error -32000: No node with given id found");
        assert!(lock(&routes).pending.is_empty());
    }

    #[test]
    fn events_go_to_the_subscribers_of_their_session_and_method() {
        let routes = Mutex::new(Routes::default());
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (btx, mut brx) = mpsc::unbounded_channel();
        lock(&routes)
            .events
            .insert(("S1".into(), "Page.loadEventFired".into()), vec![tx]);
        lock(&routes)
            .events
            .insert((String::new(), "Target.targetCreated".into()), vec![btx]);
        route(
            &routes,
            r#"{"method":"Page.loadEventFired","params":{"t":1},"sessionId":"S2"}"#,
        );
        route(
            &routes,
            r#"{"method":"Page.loadEventFired","params":{"t":2},"sessionId":"S1"}"#,
        );
        route(&routes, r#"{"method":"Target.targetCreated","params":{}}"#);
        assert_eq!(rx.try_recv().unwrap(), json!({"t": 2}));
        assert!(rx.try_recv().is_err());
        assert_eq!(brx.try_recv().unwrap(), json!({}));
        // A subscriber that went away is forgotten.
        drop(rx);
        route(
            &routes,
            r#"{"method":"Page.loadEventFired","params":{},"sessionId":"S1"}"#,
        );
        assert_eq!(lock(&routes).events.len(), 1);
    }

    #[test]
    fn messages_carry_the_session_only_when_there_is_one() {
        let m: Value =
            serde_json::from_str(&message(4, Some("S"), "Page.enable", json!({}))).unwrap();
        assert_eq!(
            m,
            json!({"id": 4, "method": "Page.enable", "params": {}, "sessionId": "S"})
        );
        let m: Value = serde_json::from_str(&message(5, None, "Browser.close", json!({}))).unwrap();
        assert!(m.get("sessionId").is_none());
    }
}
