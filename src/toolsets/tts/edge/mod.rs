//! TTS provider `edge` (Hermes' default): Microsoft Edge's "Read Aloud" voices, spoken over
//! the websocket protocol of the `edge-tts` Python package that Hermes calls
//! (`tools/tts_tool.py::_generate_edge_tts`; Hermes pins `edge-tts==7.2.7`, and 7.3.x speaks
//! the same protocol with a second token scheme).
//!
//! One synthesis, per text chunk (the escaped text split at 4096 bytes, as edge-tts does):
//! 1. connect to `{base_url}?TrustedClientToken=…&ConnectionId=<uuid hex>&Sec-MS-GEC=<token>
//!    &Sec-MS-GEC-Version=<v>-<chromium version>` with Edge's `Origin`, `User-Agent` and a
//!    random `muid` cookie;
//! 2. send the `speech.config` text frame (output `audio-24khz-48kbitrate-mono-mp3`), then the
//!    `ssml` text frame (`<speak><voice><prosody pitch rate volume>text</prosody></voice></speak>`);
//! 3. read `turn.start`, `response`, `audio.metadata` text frames and binary `Path:audio`
//!    frames (2-byte big-endian header length, headers, MP3 bytes) until `turn.end`.
//!
//! `Sec-MS-GEC` is derived from the Windows file time rounded down to 5 minutes: version 1
//! (edge-tts ≤ 7.2) is `SHA256(ticks + TrustedClientToken)`; version 2 (edge-tts 7.3) is a
//! CS64 digest and a SHA-256 with a fixed secret prefix (ported from `edge_tts/drm.py`). We
//! send version 2 first; on HTTP 403 we correct the clock skew from the server's `Date`
//! (as edge-tts does) and retry, then fall back to version 1.
//!
//! Config (`tts.edge.*`): `voice` (default [`DEFAULT_VOICE`]), `speed` (or `tts.speed`, a
//! factor: 1.5 → rate `+50%`), `base_url` (default [`DEFAULT_BASE_URL`]; `ws://` is accepted
//! so tests can point it at a loopback server).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use async_tungstenite::tungstenite::client::IntoClientRequest;
use async_tungstenite::tungstenite::http::HeaderValue;
use async_tungstenite::tungstenite::{self, Message};
use futures::StreamExt;
use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, AsyncWrite};
use url::Url;

use crate::hermes::Context;

/// The Read Aloud websocket endpoint (edge-tts' `WSS_URL` without its query).
pub const DEFAULT_BASE_URL: &str =
    "wss://speech.platform.bing.com/consumer/speech/synthesize/readaloud/edge/v1";
/// edge-tts' `TRUSTED_CLIENT_TOKEN`.
pub const TRUSTED_CLIENT_TOKEN: &str = "6A5AA1D4EAFF4E9FB37E23D68491D6F4";
/// Hermes' `DEFAULT_EDGE_VOICE` (edge-tts' own default is `en-US-EmmaMultilingualNeural`).
pub const DEFAULT_VOICE: &str = "en-US-AriaNeural";
/// The only format edge-tts requests: 48 kbit/s constant-bitrate mono MP3.
pub const OUTPUT_FORMAT: &str = "audio-24khz-48kbitrate-mono-mp3";
/// edge-tts' `CHROMIUM_FULL_VERSION` (7.2.7 and 7.3.1 agree).
pub const CHROMIUM_FULL_VERSION: &str = "143.0.3650.75";
const CHROMIUM_MAJOR_VERSION: &str = "143";
const ORIGIN: &str = "chrome-extension://jdiccldimpdaibmpdkjnbmckianbfold";
/// Longest UTF-8 text (after XML escaping) sent in one SSML request.
const CHUNK_BYTES: usize = 4096;
const WIN_EPOCH: i64 = 11_644_473_600;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const RECEIVE_TIMEOUT: Duration = Duration::from_secs(60);

fn user_agent() -> String {
    format!(
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) \
         Chrome/{CHROMIUM_MAJOR_VERSION}.0.0.0 Safari/537.36 Edg/{CHROMIUM_MAJOR_VERSION}.0.0.0"
    )
}

#[derive(Debug, thiserror::Error)]
pub enum EdgeTtsError {
    /// A voice/rate/volume/pitch edge-tts would reject (its `ValueError` texts).
    #[error("{0}")]
    InvalidParam(String),
    #[error("edge-tts base_url {url:?} is not a ws:// or wss:// URL")]
    BadUrl { url: String },
    #[error("cannot connect to the Edge TTS service at {host}: {reason}")]
    Connect { host: String, reason: String },
    /// The websocket upgrade was refused (edge-tts' `aiohttp.ClientResponseError`).
    #[error("Edge TTS service refused the connection: HTTP {status}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Handshake { status: u16, body: String },
    /// edge-tts' `UnexpectedResponse` / `UnknownResponse`.
    #[error("unexpected response from the Edge TTS service: {0}")]
    Protocol(String),
    #[error("Edge TTS websocket error: {0}")]
    WebSocket(String),
    /// edge-tts' `NoAudioReceived`, same text.
    #[error("No audio was received. Please verify that your parameters are correct.")]
    NoAudio,
    #[error("the Edge TTS service did not answer within {0:?}")]
    Timeout(Duration),
}

/// Voice parameters as edge-tts' `Communicate` takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prosody {
    /// `[+-]N%`.
    pub rate: String,
    /// `[+-]N%`.
    pub volume: String,
    /// `[+-]NHz`.
    pub pitch: String,
}

impl Default for Prosody {
    fn default() -> Self {
        Prosody {
            rate: "+0%".into(),
            volume: "+0%".into(),
            pitch: "+0Hz".into(),
        }
    }
}

/// What Hermes passes to edge-tts, from `tts.edge.*`.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeSettings {
    pub base_url: String,
    pub voice: String,
    /// `+0%` unless `speed` ≠ 1.
    pub rate: String,
}

/// `tts.edge.voice`, `tts.edge.speed` (falling back to `tts.speed`), `tts.edge.base_url`.
pub fn settings(ctx: &Context) -> EdgeSettings {
    let cfg = ctx.config();
    let speed = cfg
        .get("tts.edge.speed")
        .or_else(|| cfg.get("tts.speed"))
        .and_then(|v| match v {
            serde_json::Value::Number(n) => n.as_f64(),
            serde_json::Value::String(s) => s.trim().parse().ok(),
            _ => None,
        })
        .unwrap_or(1.0);
    EdgeSettings {
        base_url: ctx
            .config_str("tts.edge.base_url")
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
        voice: ctx
            .config_str("tts.edge.voice")
            .unwrap_or_else(|| DEFAULT_VOICE.to_string()),
        rate: rate_for_speed(speed),
    }
}

/// Hermes: `pct = round((speed - 1.0) * 100)`, `f"{pct:+d}%"` (Python rounds half to even).
pub fn rate_for_speed(speed: f64) -> String {
    if speed == 1.0 || !speed.is_finite() {
        return "+0%".into();
    }
    let pct = ((speed - 1.0) * 100.0).round_ties_even() as i64;
    format!("{pct:+}%")
}

/// Synthesize `text` with edge-tts' defaults for volume and pitch; returns MP3 bytes.
pub async fn synthesize(
    base_url: &str,
    voice: &str,
    rate: &str,
    text: &str,
) -> Result<Vec<u8>, EdgeTtsError> {
    let prosody = Prosody {
        rate: rate.to_string(),
        ..Prosody::default()
    };
    synthesize_with(base_url, voice, &prosody, text).await
}

/// [`synthesize`] with every prosody parameter.
pub async fn synthesize_with(
    base_url: &str,
    voice: &str,
    prosody: &Prosody,
    text: &str,
) -> Result<Vec<u8>, EdgeTtsError> {
    let voice = long_voice_name(voice)?;
    validate("rate", &prosody.rate, r"^[+-]\d+%$")?;
    validate("volume", &prosody.volume, r"^[+-]\d+%$")?;
    validate("pitch", &prosody.pitch, r"^[+-]\d+Hz$")?;
    let target = Target::parse(base_url)?;
    let escaped = xml_escape(&remove_incompatible_characters(text));
    let mut audio = Vec::new();
    for chunk in split_text_by_byte_length(escaped.as_bytes(), CHUNK_BYTES) {
        // The split never cuts a UTF-8 sequence of valid input.
        let chunk = String::from_utf8_lossy(chunk);
        let ssml = mkssml(&voice, prosody, &chunk);
        audio.extend(speak_chunk(&target, &ssml).await?);
    }
    if audio.is_empty() {
        return Err(EdgeTtsError::NoAudio);
    }
    Ok(audio)
}

/// One chunk, with edge-tts' 403 handling (skew correction) and our token-version fallback.
async fn speak_chunk(target: &Target, ssml: &str) -> Result<Vec<u8>, EdgeTtsError> {
    let attempts = [GecVersion::V2, GecVersion::V2, GecVersion::V1];
    let mut last = None;
    for version in attempts {
        match stream_once(target, ssml, version).await {
            Err(Attempt::Forbidden { date, body }) => {
                if let Some(server) = date.as_deref().and_then(parse_http_date) {
                    let client = unix_now() + CLOCK_SKEW.load(Ordering::Relaxed);
                    CLOCK_SKEW.fetch_add(server - client, Ordering::Relaxed);
                }
                last = Some(EdgeTtsError::Handshake { status: 403, body });
            }
            Err(Attempt::Failed(e)) => return Err(e),
            Ok(audio) => return Ok(audio),
        }
    }
    Err(last.unwrap_or(EdgeTtsError::NoAudio))
}

enum Attempt {
    Forbidden { date: Option<String>, body: String },
    Failed(EdgeTtsError),
}

impl From<EdgeTtsError> for Attempt {
    fn from(e: EdgeTtsError) -> Self {
        Attempt::Failed(e)
    }
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

struct Target {
    url: Url,
    host: String,
    port: u16,
    tls: bool,
}

impl Target {
    fn parse(base_url: &str) -> Result<Self, EdgeTtsError> {
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

    fn request_url(&self, version: GecVersion) -> String {
        let mut url = self.url.clone();
        let now = unix_now() + CLOCK_SKEW.load(Ordering::Relaxed);
        let (token, ver) = match version {
            GecVersion::V1 => (sec_ms_gec_v1(now), 1),
            GecVersion::V2 => (sec_ms_gec_v2(now), 2),
        };
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
        let connector = tokio_rustls::TlsConnector::from(
            tls_config().map_err(|e| err(format!("TLS setup: {e}")))?,
        );
        let name = rustls::pki_types::ServerName::try_from(self.host.clone())
            .map_err(|e| err(e.to_string()))?;
        let tls = connector
            .connect(name, tcp)
            .await
            .map_err(|e| err(format!("TLS: {e}")))?;
        Ok(Box::new(tls))
    }
}

/// rustls (ring) with the platform's roots, as the reqwest client verifies.
/// Built once; a failure (no usable root store) is kept and returned again.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
    use rustls_platform_verifier::ConfigVerifierExt;
    static CONFIG: std::sync::OnceLock<Result<Arc<rustls::ClientConfig>, rustls::Error>> =
        std::sync::OnceLock::new();
    CONFIG
        .get_or_init(|| {
            crate::net::client::install_crypto();
            rustls::ClientConfig::with_platform_verifier().map(Arc::new)
        })
        .clone()
}

async fn stream_once(target: &Target, ssml: &str, version: GecVersion) -> Result<Vec<u8>, Attempt> {
    let mut request = target
        .request_url(version)
        .into_client_request()
        .map_err(|e| EdgeTtsError::WebSocket(e.to_string()))?;
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

    let mut audio = Vec::new();
    loop {
        let next = tokio::time::timeout(RECEIVE_TIMEOUT, ws.next())
            .await
            .map_err(|_| EdgeTtsError::Timeout(RECEIVE_TIMEOUT))?;
        let msg = match next {
            None => break,
            Some(Ok(m)) => m,
            Some(Err(tungstenite::Error::ConnectionClosed)) => break,
            Some(Err(e)) => return Err(ws_err(e).into()),
        };
        match msg {
            Message::Text(t) => match text_frame_path(t.as_bytes())? {
                Some(p) if p == "turn.end" => break,
                Some(p) if p == "audio.metadata" || p == "response" || p == "turn.start" => {}
                _ => return Err(EdgeTtsError::Protocol("Unknown path received".into()).into()),
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
    let _ = ws.close(None).await;
    if audio.is_empty() {
        return Err(EdgeTtsError::NoAudio.into());
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

fn ws_err(e: tungstenite::Error) -> EdgeTtsError {
    EdgeTtsError::WebSocket(e.to_string())
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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MetadataOptions {
    sentence_boundary_enabled: &'static str,
    word_boundary_enabled: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AudioConfig {
    metadataoptions: MetadataOptions,
    output_format: &'static str,
}

#[derive(Serialize)]
struct Synthesis {
    audio: AudioConfig,
}

#[derive(Serialize)]
struct SpeechContext {
    synthesis: Synthesis,
}

#[derive(Serialize)]
struct SpeechConfig {
    context: SpeechContext,
}

/// The `speech.config` frame (edge-tts' default `SentenceBoundary` metadata).
pub fn speech_config_message() -> String {
    let body = SpeechConfig {
        context: SpeechContext {
            synthesis: Synthesis {
                audio: AudioConfig {
                    metadataoptions: MetadataOptions {
                        sentence_boundary_enabled: "true",
                        word_boundary_enabled: "false",
                    },
                    output_format: OUTPUT_FORMAT,
                },
            },
        },
    };
    format!(
        "X-Timestamp:{}\r\nContent-Type:application/json; charset=utf-8\r\nPath:speech.config\r\n\r\n{}\r\n",
        date_to_string(),
        serde_json::to_string(&body).expect("serializable")
    )
}

/// The `ssml` frame. The `Z` after the JavaScript-style date is Edge's own quirk.
pub fn ssml_message(request_id: &str, timestamp: &str, ssml: &str) -> String {
    format!(
        "X-RequestId:{request_id}\r\nContent-Type:application/ssml+xml\r\nX-Timestamp:{timestamp}Z\r\nPath:ssml\r\n\r\n{ssml}"
    )
}

/// edge-tts' `mkssml`; `escaped_text` is already XML-escaped.
pub fn mkssml(long_voice: &str, p: &Prosody, escaped_text: &str) -> String {
    format!(
        "<speak version='1.0' xmlns='http://www.w3.org/2001/10/synthesis' xml:lang='en-US'>\
         <voice name='{long_voice}'><prosody pitch='{}' rate='{}' volume='{}'>{escaped_text}\
         </prosody></voice></speak>",
        p.pitch, p.rate, p.volume
    )
}

/// `en-US-AriaNeural` → `Microsoft Server Speech Text to Speech Voice (en-US, AriaNeural)`
/// (edge-tts' `TTSConfig`), then validated as edge-tts does.
pub fn long_voice_name(voice: &str) -> Result<String, EdgeTtsError> {
    let short = regex::Regex::new(r"^([a-z]{2,})-([A-Z]{2,})-(.+Neural)$").expect("regex");
    let mut out = voice.to_string();
    if let Some(c) = short.captures(voice) {
        let (lang, mut region, mut name) = (&c[1], c[2].to_string(), c[3].to_string());
        if let Some(i) = name.find('-') {
            region = format!("{region}-{}", &name[..i]);
            name = name[i + 1..].to_string();
        }
        out = format!("Microsoft Server Speech Text to Speech Voice ({lang}-{region}, {name})");
    }
    validate(
        "voice",
        &out,
        r"^Microsoft Server Speech Text to Speech Voice \(.+,.+\)$",
    )?;
    Ok(out)
}

fn validate(name: &str, value: &str, pattern: &str) -> Result<(), EdgeTtsError> {
    // Python's re.match anchors at the start only; every pattern here also ends in `$`.
    if regex::Regex::new(pattern).expect("regex").is_match(value) {
        Ok(())
    } else {
        Err(EdgeTtsError::InvalidParam(format!(
            "Invalid {name} '{value}'."
        )))
    }
}

/// Control characters the service rejects become spaces (vertical tab from OCR'd PDFs…).
pub fn remove_incompatible_characters(s: &str) -> String {
    s.chars()
        .map(|c| match c as u32 {
            0..=8 | 11..=12 | 14..=31 => ' ',
            _ => c,
        })
        .collect()
}

/// `xml.sax.saxutils.escape`: `&`, `<`, `>` only.
pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// edge-tts' `split_text_by_byte_length`, byte for byte (including its choice of a
/// UTF-8-safe split point over the whole remaining text when no space is in range).
pub fn split_text_by_byte_length(mut text: &[u8], limit: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while text.len() > limit {
        let mut split_at = text[..limit]
            .iter()
            .rposition(|&b| b == b'\n')
            .or_else(|| text[..limit].iter().rposition(|&b| b == b' '))
            .map(|i| i as isize)
            .unwrap_or(-1);
        if split_at < 0 {
            split_at = safe_utf8_split_point(text) as isize;
        }
        let mut split = split_at.max(0) as usize;
        while split > 0 && text[..split].contains(&b'&') {
            let amp = text[..split]
                .iter()
                .rposition(|&b| b == b'&')
                .expect("contains &");
            if text[amp..split].contains(&b';') {
                break;
            }
            split = amp;
        }
        let chunk = py_strip(&text[..split]);
        if !chunk.is_empty() {
            out.push(chunk);
        }
        text = &text[if split > 0 { split } else { 1 }..];
    }
    let rest = py_strip(text);
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

fn safe_utf8_split_point(seg: &[u8]) -> usize {
    let mut at = seg.len();
    while at > 0 {
        if std::str::from_utf8(&seg[..at]).is_ok() {
            return at;
        }
        at -= 1;
    }
    0
}

/// `bytes.strip()`: ASCII whitespace.
fn py_strip(b: &[u8]) -> &[u8] {
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let start = b.iter().position(|c| !ws(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |i| i + 1);
    &b[start..end]
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

/// JavaScript-style UTC date: `Mon Jan 05 2026 10:00:00 GMT+0000 (Coordinated Universal Time)`.
pub fn date_to_string() -> String {
    crate::time::js_date_string(unix_now())
}

fn unix_now() -> i64 {
    crate::time::unix_now()
}

/// Seconds to add to the local clock (edge-tts' `DRM.clock_skew_seconds`).
static CLOCK_SKEW: AtomicI64 = AtomicI64::new(0);

/// An RFC 7231 IMF-fixdate (`Tue, 15 Nov 1994 08:12:31 GMT`) as Unix seconds.
pub fn parse_http_date(s: &str) -> Option<i64> {
    crate::time::parse_http_date(s)
}

/// Which `Sec-MS-GEC` scheme to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GecVersion {
    /// edge-tts ≤ 7.2 (`Sec-MS-GEC-Version: 1-…`).
    V1,
    /// edge-tts 7.3 (`Sec-MS-GEC-Version: 2-…`).
    V2,
}

/// The string both versions hash: Windows file time (100 ns ticks), rounded down to
/// 5 minutes, followed by the trusted client token.
fn ticks_string(unix_secs: i64) -> String {
    let secs = unix_secs + WIN_EPOCH;
    let secs = secs - secs.rem_euclid(300);
    format!("{}{TRUSTED_CLIENT_TOKEN}", secs as i128 * 10_000_000)
}

/// Version 1: upper-case hex `SHA256(ticks + token)`.
pub fn sec_ms_gec_v1(unix_secs: i64) -> String {
    hex_upper(&Sha256::digest(ticks_string(unix_secs).as_bytes()))
}

/// Version 2: `<16 hex CS64>-<64 hex SHA-256 with a secret 57-byte prefix>`.
pub fn sec_ms_gec_v2(unix_secs: i64) -> String {
    let data = ticks_string(unix_secs).into_bytes();
    let digest = gec2::sha256_digest(&data);
    let (a, b) = gec2::cs64_digest(&data, &digest);
    let mut cs = a.to_le_bytes().to_vec();
    cs.extend_from_slice(&b.to_le_bytes());
    format!("{}-{}", hex_upper(&cs), hex_upper(&digest))
}

fn hex_upper(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// A port of `edge_tts/drm.py` (7.3.1): a SHA-256 whose first 57 input bytes are fixed and
/// folded into a precomputed mid-state, and the CS64 checksum keyed by that digest.
mod gec2 {
    const INITIAL: [u32; 8] = [
        0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB,
        0x5BE0CD19,
    ];
    const STATE: [u32; 8] = [
        0xFD9FBEA2, 0x91243CE7, 0xBE499094, 0xCD2E1E0A, 0x6C006F49, 0x04BD35AB, 0xFEB0A7E4,
        0x03EFFBD2,
    ];
    const SCHEDULE: [u32; 14] = [
        0xEB24BF9E, 0x1558691F, 0xA0C09EE2, 0x0CFA32BA, 0xA622EE8C, 0xD1DD9491, 0xC0DD25A0,
        0xF9E70AB6, 0xF0C31573, 0x7058CE4E, 0x7188E606, 0x00E5AB33, 0xD258B060, 0x72766564,
    ];
    const K: [u32; 64] = [
        0x428A2F98, 0x71374491, 0xB5C0FBCF, 0xE9B5DBA5, 0x3956C25B, 0x59F111F1, 0x923F82A4,
        0xAB1C5ED5, 0xD807AA98, 0x12835B01, 0x243185BE, 0x550C7DC3, 0x72BE5D74, 0x80DEB1FE,
        0x9BDC06A7, 0xC19BF174, 0xE49B69C1, 0xEFBE4786, 0x0FC19DC6, 0x240CA1CC, 0x2DE92C6F,
        0x4A7484AA, 0x5CB0A9DC, 0x76F988DA, 0x983E5152, 0xA831C66D, 0xB00327C8, 0xBF597FC7,
        0xC6E00BF3, 0xD5A79147, 0x06CA6351, 0x14292967, 0x27B70A85, 0x2E1B2138, 0x4D2C6DFC,
        0x53380D13, 0x650A7354, 0x766A0ABB, 0x81C2C92E, 0x92722C85, 0xA2BFE8A1, 0xA81A664B,
        0xC24B8B70, 0xC76C51A3, 0xD192E819, 0xD6990624, 0xF40E3585, 0x106AA070, 0x19A4C116,
        0x1E376C08, 0x2748774C, 0x34B0BCB5, 0x391C0CB3, 0x4ED8AA4A, 0x5B9CCA4F, 0x682E6FF3,
        0x748F82EE, 0x78A5636F, 0x84C87814, 0x8CC70208, 0x90BEFFFA, 0xA4506CEB, 0xBEF9A3F7,
        0xC67178F2,
    ];
    const ADJUSTMENT: u32 = 0xC9DC06A7;
    const SIGMA0_ADJUSTMENT: u32 = 0x059C0B80;
    const SIGMA1_ADJUSTMENT: u32 = 0x000B92C0;
    const CS64_COEFFICIENTS: [(u32, u32); 14] = [
        (0xE82E91B1, 0xB32700D0),
        (0x44DE24C6, 0x88DFF51D),
        (0x3BEB65BC, 0x29514038),
        (0xC89C5933, 0xB328CBDF),
        (0x8D1EC211, 0xD405B4D5),
        (0x314EF5D5, 0x26E55F3C),
        (0xE92491B1, 0x607801C6),
        (0xF0A5B9D5, 0x82B2C1FB),
        (0x06064CF3, 0xFA51A3DA),
        (0xDA79FA60, 0x207CC464),
        (0xBED20560, 0x3C3C74F3),
        (0x89F9C9F8, 0xD2D14B61),
        (0x35FA38C6, 0xBB04A2C1),
        (0xCB49E3C6, 0xC5626167),
    ];
    const CS64_FACTOR: u32 = 0x82893933;
    const CS64_ADJUSTMENT0: u32 = 0xF2F90B1A;
    const CS64_ADJUSTMENT1: u32 = 0x0B1A0000;

    fn sigma0(x: u32) -> u32 {
        x.rotate_right(7) ^ x.rotate_right(18) ^ (x >> 3)
    }

    fn sigma1(x: u32) -> u32 {
        x.rotate_right(17) ^ x.rotate_right(19) ^ (x >> 10)
    }

    fn rol16(x: u32) -> u32 {
        x.rotate_left(16)
    }

    fn expand(w: &mut Vec<u32>, from: usize) {
        for i in from..64 {
            let v = sigma1(w[i - 2])
                .wrapping_add(w[i - 7])
                .wrapping_add(sigma0(w[i - 15]))
                .wrapping_add(w[i - 16]);
            w.push(v);
        }
    }

    fn rounds(state: [u32; 8], w: &[u32], first: usize, k: &[u32; 64]) -> [u32; 8] {
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = state;
        for i in first..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = g ^ (e & (f ^ g));
            let t1 = h
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(k[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) | (c & (a | b));
            let t2 = s0.wrapping_add(maj);
            h = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        [a, b, c, d, e, f, g, h]
    }

    fn add(x: [u32; 8], y: [u32; 8]) -> [u32; 8] {
        std::array::from_fn(|i| x[i].wrapping_add(y[i]))
    }

    fn init(data: &[u8]) -> [u32; 8] {
        let mut w = vec![0u32; 14];
        w.push(u32::from_be_bytes([0, data[0], data[1], data[2]]));
        w.push(u32::from_be_bytes([data[3], data[4], data[5], data[6]]));
        for i in 16..30 {
            let mut v = SCHEDULE[i - 16];
            if i - 2 >= 14 {
                let s = sigma1(w[i - 2]);
                v = v.wrapping_add(if i == 16 { s ^ SIGMA1_ADJUSTMENT } else { s });
            }
            if i - 7 >= 14 {
                v = v.wrapping_add(w[i - 7]);
            }
            if i - 15 >= 14 {
                let s = sigma0(w[i - 15]);
                v = v.wrapping_add(if i == 29 { s ^ SIGMA0_ADJUSTMENT } else { s });
            }
            w.push(v);
        }
        w.push(
            sigma1(w[28])
                .wrapping_add(w[23])
                .wrapping_add(sigma0(w[15]))
                .wrapping_add(w[14])
                .wrapping_add(ADJUSTMENT)
                .wrapping_sub(K[14]),
        );
        expand(&mut w, 31);
        let mut block_k = K;
        block_k[14] = ADJUSTMENT;
        add(INITIAL, rounds(STATE, &w, 14, &block_k))
    }

    /// `_sha256_digest`: needs at least 7 bytes (the ticks string always has 50).
    pub(super) fn sha256_digest(data: &[u8]) -> [u8; 32] {
        assert!(
            data.len() >= 7,
            "token salt must contain at least seven bytes"
        );
        let length = 57 + data.len();
        let mut padded = data[7..].to_vec();
        padded.push(0x80);
        let zeros = (55 - length as i64).rem_euclid(64) as usize;
        padded.extend(std::iter::repeat_n(0u8, zeros));
        padded.extend_from_slice(&((length as u64) * 8).to_be_bytes());
        let mut state = init(&data[..7]);
        for block in padded.chunks(64) {
            let mut w: Vec<u32> = block
                .chunks(4)
                .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            expand(&mut w, 16);
            state = add(state, rounds(state, &w, 0, &K));
        }
        let mut out = [0u8; 32];
        for (i, s) in state.iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(&s.to_be_bytes());
        }
        out
    }

    fn words_le4_even(data: &[u8]) -> Vec<u32> {
        let mut padded = data.to_vec();
        padded.resize(data.len().div_ceil(4) * 4, 0);
        let mut w: Vec<u32> = padded
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if w.len() % 2 == 1 {
            w.push(0);
        }
        w
    }

    /// `_cs64_digest`.
    pub(super) fn cs64_digest(data: &[u8], digest: &[u8; 32]) -> (u32, u32) {
        let key_a = u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]]) | 1;
        let key_b = u32::from_le_bytes([digest[4], digest[5], digest[6], digest[7]]) | 1;
        let factors = [
            key_a.wrapping_mul(CS64_FACTOR),
            key_b.wrapping_mul(CS64_FACTOR),
        ];
        let mut terms: Vec<u32> = CS64_COEFFICIENTS
            .iter()
            .enumerate()
            .map(|(i, (c, _))| c.wrapping_mul(factors[i % 2]))
            .collect();
        let mut offsets: Vec<u32> = CS64_COEFFICIENTS.iter().map(|(_, o)| *o).collect();
        let mut prefixed = vec![0u8];
        prefixed.extend_from_slice(data);
        for (i, word) in words_le4_even(&prefixed).into_iter().enumerate() {
            let even = i % 2 == 0;
            let mut term = word.wrapping_mul(if even { key_a } else { key_b });
            let mut offset = rol16(word).wrapping_mul(if even { 0xEF0569FB } else { 0xC31713DB });
            if i == 0 {
                term = term.wrapping_add(CS64_ADJUSTMENT0.wrapping_mul(factors[0]));
                offset = offset.wrapping_add(CS64_ADJUSTMENT1);
            }
            terms.push(term);
            offsets.push(offset);
        }
        let (mut swap_acc, mut swap_last, mut state, mut acc) = (0u32, 0u32, 0u32, 0u32);
        for i in (0..terms.len()).step_by(2) {
            let (x, y) = (terms[i], terms[i + 1]);
            let t = rol16(offsets[i].wrapping_add(x));
            let q = t.wrapping_mul(0x76F50F34);
            swap_acc = swap_acc.wrapping_add(rol16(q).wrapping_mul(0xC3EFEA97).wrapping_add(q));
            let t = rol16(offsets[i + 1].wrapping_add(y));
            let q = t.wrapping_mul(0x1881CE3C);
            swap_last = rol16(q).wrapping_mul(0x35BD1EC9).wrapping_add(q);
            swap_acc = swap_acc.wrapping_add(swap_last);

            state = state.wrapping_mul(key_a).wrapping_add(x);
            state = rol16(state).wrapping_mul(0xCF98B111);
            state = rol16(state).wrapping_mul(0x87085B9F);
            state = rol16(state).wrapping_mul(0x12CEB96D);
            state = rol16(state).wrapping_mul(0x257E1D83);
            acc = acc.wrapping_add(state);
            let mut t = state.wrapping_mul(key_b).wrapping_add(y);
            t = rol16(t).wrapping_mul(0xA27416F5);
            t = rol16(t).wrapping_mul(0xD38396FF);
            state = rol16(rol16(t).wrapping_mul(0x7C932B89)).wrapping_mul(0xBFA49F69);
            acc = acc.wrapping_add(state);
        }
        (swap_last ^ state, swap_acc ^ acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voices_expand_like_edge_tts() {
        assert_eq!(
            long_voice_name("en-US-AriaNeural").unwrap(),
            "Microsoft Server Speech Text to Speech Voice (en-US, AriaNeural)"
        );
        assert_eq!(
            long_voice_name("zh-CN-liaoning-XiaobeiNeural").unwrap(),
            "Microsoft Server Speech Text to Speech Voice (zh-CN-liaoning, XiaobeiNeural)"
        );
        assert_eq!(
            long_voice_name("nope").unwrap_err().to_string(),
            "Invalid voice 'nope'."
        );
    }

    #[test]
    fn speed_becomes_a_rate_like_hermes() {
        assert_eq!(rate_for_speed(1.0), "+0%");
        assert_eq!(rate_for_speed(1.5), "+50%");
        assert_eq!(rate_for_speed(0.8), "-20%");
        // round() halves to even: (1.125 - 1) * 100 == 12.5 → 12.
        assert_eq!(rate_for_speed(1.125), "+12%");
    }

    #[test]
    fn splitting_keeps_entities_and_strips() {
        let t = b"aaa &amp; bbb";
        assert_eq!(
            split_text_by_byte_length(t, 7),
            vec![&b"aaa"[..], b"&amp;", b"bbb"]
        );
        assert_eq!(split_text_by_byte_length(b"  x  ", 4096), vec![&b"x"[..]]);
    }

    /// Vectors from edge-tts 7.3.1's `generate_sec_ms_gec_v2` and 7.2.7's SHA-256 token.
    #[test]
    fn tokens_match_edge_tts() {
        for (ts, v2, v1) in [
            (
                1_700_000_000,
                "2CD23A2CA0B2595A-F3C846C370E05F9CC83ACC5F995C5F5D87A4D0F14CE8936A0F902E64099E38A2",
                "42301B335578FEFDAE2637DED1ABD614505D432559EC08032B82048483726AFF",
            ),
            (
                1_767_225_600,
                "723A6EBC411B23BB-214991EA6B1E401F3D777A699DDDEE75E29740EA7A5DCD1007366FA1090DD267",
                "42D1947403FD94975436C65DBFCA8003073F9CB5C3F1CE25AF8961A11D7C3DFE",
            ),
            (
                1_800_000_123,
                "99E54519B490BE5C-E162DB0977FBDCB9B86DD8148BF1BCDC3C0303176CE39852A42B415935C20654",
                "FF4C72425863FDF9E7916FF23CB0CDF80CB5C3B2162FC8B03C37EFEB82BB6C89",
            ),
        ] {
            assert_eq!(sec_ms_gec_v2(ts), v2, "v2 at {ts}");
            assert_eq!(sec_ms_gec_v1(ts), v1, "v1 at {ts}");
        }
    }

    #[test]
    fn http_dates_parse() {
        assert_eq!(
            parse_http_date("Tue, 15 Nov 1994 08:12:31 GMT"),
            Some(784_887_151)
        );
        assert_eq!(crate::time::civil_from_days(0), (1970, 1, 1));
    }
}
