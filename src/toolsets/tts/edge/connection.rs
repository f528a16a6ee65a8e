//! The conversation with the Read Aloud service: one websocket per text chunk, over TCP
//! (and TLS for `wss://`) dialled on addresses that passed the SSRF floor, with Edge's
//! headers; the two request frames go out, and the answer is read until `turn.end`
//! (`turn.start`, `response`, `audio.metadata` text frames; binary `Path:audio` frames
//! with a 2-byte big-endian header length, the headers and MP3 bytes). This is edge-tts'
//! `Communicate.__stream` (`edge_tts/communicate.py`), with its 403 retry.

use std::time::Duration;

use async_tungstenite::tungstenite::client::IntoClientRequest;
use async_tungstenite::tungstenite::handshake::client::Request;
use async_tungstenite::tungstenite::http::HeaderValue;
use async_tungstenite::tungstenite::{self, Message};
use futures::{Stream, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use url::Url;

use super::EdgeTtsError;
use super::date_to_string;
use super::ssml::{speech_config_message, ssml_message};
use super::token::{GecVersion, TRUSTED_CLIENT_TOKEN, correct_clock_skew};

/// edge-tts' `CHROMIUM_FULL_VERSION` (7.2.7 and 7.3.1 agree).
pub const CHROMIUM_FULL_VERSION: &str = "143.0.3650.75";
const CHROMIUM_MAJOR_VERSION: &str = "143";
const ORIGIN: &str = "chrome-extension://jdiccldimpdaibmpdkjnbmckianbfold";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const RECEIVE_TIMEOUT: Duration = Duration::from_secs(60);

fn user_agent() -> String {
    format!(
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) \
         Chrome/{CHROMIUM_MAJOR_VERSION}.0.0.0 Safari/537.36 Edg/{CHROMIUM_MAJOR_VERSION}.0.0.0"
    )
}

/// One chunk, with edge-tts' 403 handling (skew correction) and our token-version fallback.
pub(super) async fn speak_chunk(target: &Target, ssml: &str) -> Result<Vec<u8>, EdgeTtsError> {
    let attempts = [GecVersion::V2, GecVersion::V2, GecVersion::V1];
    let mut last = None;
    for version in attempts {
        match stream_once(target, ssml, version).await {
            Err(Attempt::Forbidden { date, body }) => {
                correct_clock_skew(date.as_deref());
                last = Some(EdgeTtsError::Handshake { status: 403, body });
            }
            Err(Attempt::Failed(e)) => return Err(e),
            Ok(audio) => return Ok(audio),
        }
    }
    Err(last.unwrap_or(EdgeTtsError::NoAudio))
}

/// How one connection failed: refused with 403 (worth another try, with the server's
/// `Date`), or for good.
enum Attempt {
    Forbidden { date: Option<String>, body: String },
    Failed(EdgeTtsError),
}

impl From<EdgeTtsError> for Attempt {
    fn from(e: EdgeTtsError) -> Self {
        Attempt::Failed(e)
    }
}

/// The stream the websocket runs over: plain TCP, or TLS over it.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// Where the service is: the configured `base_url`, and the address and TLS it needs.
pub(super) struct Target {
    url: Url,
    host: String,
    port: u16,
    tls: bool,
}

impl Target {
    /// `base_url`, when it is a `ws://` or `wss://` URL with a host.
    pub(super) fn parse(base_url: &str) -> Result<Self, EdgeTtsError> {
        let bad = || EdgeTtsError::BadUrl {
            url: base_url.to_string(),
        };
        let url = Url::parse(base_url.trim()).map_err(|_| bad())?;
        let tls = match url.scheme() {
            "wss" => true,
            "ws" => false,
            _ => return Err(bad()),
        };
        let host = url.host_str().ok_or_else(bad)?.to_string();
        let port = url.port_or_known_default().ok_or_else(bad)?;
        Ok(Target {
            url,
            host,
            port,
            tls,
        })
    }

    /// The URL with edge-tts' query: the client token, a fresh connection id and the token.
    fn request_url(&self, version: GecVersion) -> String {
        let mut url = self.url.clone();
        let (token, ver) = version.token_now();
        // edge-tts appends to a URL that already carries TrustedClientToken.
        let mut query: String = url.query().map(|q| format!("{q}&")).unwrap_or_default();
        if !query.contains("TrustedClientToken=") {
            query.push_str(&format!("TrustedClientToken={TRUSTED_CLIENT_TOKEN}&"));
        }
        query.push_str(&format!(
            "ConnectionId={}&Sec-MS-GEC={token}&Sec-MS-GEC-Version={ver}-{CHROMIUM_FULL_VERSION}",
            connect_id()
        ));
        url.set_query(Some(&query));
        url.to_string()
    }

    /// A TCP (and, for `wss`, TLS) stream to the service, dialled on addresses that passed
    /// the SSRF floor.
    async fn connect(&self) -> Result<Box<dyn Io>, EdgeTtsError> {
        let err = |reason: String| EdgeTtsError::Connect {
            host: self.host.clone(),
            reason,
        };
        // The SSRF floor every configured provider endpoint gets (`net::HttpClient::send_api`):
        // any address but cloud metadata, checked on the resolved addresses we then dial.
        let floor = crate::net::Policy {
            allow_private: true,
            ..crate::net::Policy::default()
        };
        let scheme = if self.tls { "https" } else { "http" };
        let host = crate::net::policy::normalize_host(&self.host);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let ips = crate::net::client::resolve_checked(
            &crate::net::SystemLookup,
            &floor,
            host,
            scheme,
            false,
        )
        .await
        .map_err(|b| err(b.to_string()))?;
        let addrs: Vec<std::net::SocketAddr> = ips
            .into_iter()
            .map(|ip| std::net::SocketAddr::new(ip, self.port))
            .collect();
        let tcp = tokio::net::TcpStream::connect(&addrs[..])
            .await
            .map_err(|e| err(e.to_string()))?;
        let _ = tcp.set_nodelay(true);
        if !self.tls {
            return Ok(Box::new(tcp));
        }
        use crate::net::client::TlsConnectError;
        let tls = crate::net::client::tls_connect(&self.host, tcp)
            .await
            .map_err(|e| match e {
                TlsConnectError::Setup(e) => err(format!("TLS setup: {e}")),
                TlsConnectError::Name(e) => err(e.to_string()),
                TlsConnectError::Handshake(e) => err(format!("TLS: {e}")),
            })?;
        Ok(Box::new(tls))
    }
}

/// One websocket: connect with `version`'s token, send the two request frames, read the audio.
async fn stream_once(target: &Target, ssml: &str, version: GecVersion) -> Result<Vec<u8>, Attempt> {
    let request = upgrade_request(target, version)?;
    let handshake = async {
        let io = target.connect().await?;
        async_tungstenite::tokio::client_async(request, io)
            .await
            .map_err(Attempt::from_handshake)
    };
    let (mut ws, _) = tokio::time::timeout(CONNECT_TIMEOUT, handshake)
        .await
        .map_err(|_| EdgeTtsError::Timeout(CONNECT_TIMEOUT))??;

    let send = |m: String| Message::Text(m.into());
    ws.send(send(speech_config_message()))
        .await
        .map_err(ws_err)?;
    ws.send(send(ssml_message(&connect_id(), &date_to_string(), ssml)))
        .await
        .map_err(ws_err)?;

    let audio = receive_audio(&mut ws).await?;
    let _ = ws.close(None).await;
    if audio.is_empty() {
        return Err(EdgeTtsError::NoAudio.into());
    }
    Ok(audio)
}

/// The websocket upgrade request with the headers Edge sends (and a random `muid` cookie).
fn upgrade_request(target: &Target, version: GecVersion) -> Result<Request, EdgeTtsError> {
    let mut request = target
        .request_url(version)
        .into_client_request()
        .map_err(ws_err)?;
    let h = request.headers_mut();
    let ua = user_agent();
    let muid = format!("muid={};", random_hex(16).to_uppercase());
    for (k, v) in [
        ("Pragma", "no-cache"),
        ("Cache-Control", "no-cache"),
        ("Origin", ORIGIN),
        ("User-Agent", ua.as_str()),
        ("Accept-Encoding", "gzip, deflate, br, zstd"),
        ("Accept-Language", "en-US,en;q=0.9"),
        ("Cookie", muid.as_str()),
    ] {
        h.insert(k, HeaderValue::from_str(v).expect("static header value"));
    }
    Ok(request)
}

/// The MP3 bytes of the answer's audio frames, read until `turn.end` or the close.
async fn receive_audio<S>(ws: &mut S) -> Result<Vec<u8>, EdgeTtsError>
where
    S: Stream<Item = Result<Message, tungstenite::Error>> + Unpin,
{
    let mut audio = Vec::new();
    loop {
        let next = tokio::time::timeout(RECEIVE_TIMEOUT, ws.next())
            .await
            .map_err(|_| EdgeTtsError::Timeout(RECEIVE_TIMEOUT))?;
        let msg = match next {
            None => break,
            Some(Ok(m)) => m,
            Some(Err(tungstenite::Error::ConnectionClosed)) => break,
            Some(Err(e)) => return Err(ws_err(e)),
        };
        match msg {
            Message::Text(t) => match text_frame_path(t.as_bytes())? {
                Some(p) if p == "turn.end" => break,
                Some(p) if p == "audio.metadata" || p == "response" || p == "turn.start" => {}
                _ => return Err(EdgeTtsError::Protocol("Unknown path received".into())),
            },
            Message::Binary(b) => {
                if let Some(data) = audio_frame(&b)? {
                    audio.extend_from_slice(data);
                }
            }
            Message::Close(_) => break,
            _ => {}
        }
    }
    Ok(audio)
}

impl Attempt {
    fn from_handshake(e: tungstenite::Error) -> Attempt {
        match e {
            tungstenite::Error::Http(resp) => {
                let status = resp.status().as_u16();
                let body = resp
                    .body()
                    .as_ref()
                    .map(|b| String::from_utf8_lossy(b).chars().take(300).collect())
                    .unwrap_or_default();
                if status == 403 {
                    let date = resp
                        .headers()
                        .get("date")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    Attempt::Forbidden { date, body }
                } else {
                    Attempt::Failed(EdgeTtsError::Handshake { status, body })
                }
            }
            other => Attempt::Failed(ws_err(other)),
        }
    }
}

pub(super) fn ws_err(e: tungstenite::Error) -> EdgeTtsError {
    EdgeTtsError::WebSocket(Box::new(e))
}

/// `(name, value)` pairs of a frame's header block.
type Headers<'a> = Vec<(&'a [u8], &'a [u8])>;

/// Headers of a frame's header block (`Key:Value` lines split by CRLF).
fn parse_headers(block: &[u8]) -> Result<Headers<'_>, EdgeTtsError> {
    block
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .map(|l| {
            let i = l.iter().position(|&b| b == b':').ok_or_else(|| {
                EdgeTtsError::Protocol(format!(
                    "header line without ':': {:?}",
                    String::from_utf8_lossy(l)
                ))
            })?;
            Ok((&l[..i], &l[i + 1..]))
        })
        .collect()
}

fn header<'a>(headers: &[(&[u8], &'a [u8])], name: &str) -> Option<&'a [u8]> {
    headers
        .iter()
        .find(|(k, _)| *k == name.as_bytes())
        .map(|(_, v)| *v)
}

/// The `Path` of a text frame (headers, blank line, body).
fn text_frame_path(frame: &[u8]) -> Result<Option<String>, EdgeTtsError> {
    let end = find(frame, b"\r\n\r\n").unwrap_or(frame.len());
    let headers = parse_headers(&frame[..end])?;
    Ok(header(&headers, "Path").map(|p| String::from_utf8_lossy(p).into_owned()))
}

/// The MP3 bytes of a binary frame, `None` for the empty end-of-stream frame.
fn audio_frame(frame: &[u8]) -> Result<Option<&[u8]>, EdgeTtsError> {
    let unexpected = |m: &str| EdgeTtsError::Protocol(m.to_string());
    if frame.len() < 2 {
        return Err(unexpected(
            "We received a binary message, but it is missing the header length.",
        ));
    }
    let header_len = u16::from_be_bytes([frame[0], frame[1]]) as usize;
    if header_len > frame.len() - 2 {
        return Err(unexpected(
            "The header length is greater than the length of the data.",
        ));
    }
    let headers = parse_headers(&frame[2..2 + header_len])?;
    let data = &frame[2 + header_len..];
    if header(&headers, "Path") != Some(b"audio") {
        return Err(unexpected(
            "Received binary message, but the path is not audio.",
        ));
    }
    match header(&headers, "Content-Type") {
        None if data.is_empty() => Ok(None),
        None => Err(unexpected(
            "Received binary message with no Content-Type, but with data.",
        )),
        Some(b"audio/mpeg") if data.is_empty() => Err(unexpected(
            "Received binary message, but it is missing the audio data.",
        )),
        Some(b"audio/mpeg") => Ok(Some(data)),
        Some(_) => Err(unexpected(
            "Received binary message, but with an unexpected Content-Type.",
        )),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `uuid4().hex`.
pub fn connect_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

fn random_hex(bytes: usize) -> String {
    (0..bytes)
        .map(|_| format!("{:02x}", fastrand::u8(..)))
        .collect()
}
