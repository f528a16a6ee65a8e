//! A loopback stand-in for Microsoft's Read Aloud websocket (TTS provider `edge`).
//!
//! It checks what a client sends as strictly as the real `edge-tts` client lets it (the
//! suite drives the Python package against it, so nothing here is invented): the URL query
//! (`TrustedClientToken`, `ConnectionId`, a `Sec-MS-GEC` that is correct for the current
//! 5-minute window, `Sec-MS-GEC-Version`), Edge's headers, the `speech.config` frame and the
//! `ssml` frame. It answers like the service: `turn.start`, `response`, `audio.metadata`,
//! binary `Path:audio` frames, an empty end-of-audio frame, `turn.end`.
//!
//! The "MP3" it returns is `FAKE-MP3|<voice>|<rate>|<volume>|<pitch>|<escaped text>`, split
//! over two frames, so two clients that send the same SSML get the same bytes.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use async_tungstenite::tungstenite::Message;
use async_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use async_tungstenite::tungstenite::http::StatusCode;
use futures::StreamExt;
use hermes_mcp::time::DateTime;
use hermes_mcp::toolsets::tts::edge::{
    OUTPUT_FORMAT, TRUSTED_CLIENT_TOKEN, sec_ms_gec_v1, sec_ms_gec_v2,
};
use regex::Regex;

use super::fake::TestServer;

pub const PATH: &str = "/consumer/speech/synthesize/readaloud/edge/v1";

/// One websocket session as the fake saw it.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub uri: String,
    pub headers: Vec<(String, String)>,
    pub gec_version: String,
    pub frames: Vec<String>,
    /// voice, rate, volume, pitch, escaped text.
    pub ssml: Option<[String; 5]>,
    pub rejected: bool,
}

#[derive(Default)]
struct State {
    sessions: Vec<Session>,
    errors: Vec<String>,
    /// Handshakes still to refuse with 403.
    forbid: usize,
    /// Refuse handshakes whose token version is not this one ("1" or "2").
    only_version: Option<String>,
    /// Answer these bytes instead of [`fake_audio`] (a real MP3, to test conversion).
    audio: Option<Vec<u8>>,
}

pub struct FakeEdge {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl FakeEdge {
    /// Serve on 127.0.0.1 through the suite's [`TestServer::websocket`] (a thread with its own
    /// runtime, usable from sync and async tests).
    pub fn start() -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        let srv = TestServer::websocket(move |tcp| Box::pin(serve(tcp, st.clone())));
        FakeEdge {
            addr: srv.addr,
            state,
        }
    }

    /// `tts.edge.base_url` for hermes-mcp.
    pub fn base_url(&self) -> String {
        format!("ws://{}{PATH}", self.addr)
    }

    /// edge-tts' `WSS_URL`, pointed here.
    pub fn python_wss_url(&self) -> String {
        format!(
            "{}?TrustedClientToken={TRUSTED_CLIENT_TOKEN}",
            self.base_url()
        )
    }

    /// Refuse the next `n` handshakes with 403 and a `Date` header.
    pub fn forbid_next(&self, n: usize) {
        self.state.lock().unwrap().forbid = n;
    }

    /// Refuse (403) every handshake whose `Sec-MS-GEC-Version` is not `v-…`.
    pub fn only_version(&self, v: &str) {
        self.state.lock().unwrap().only_version = Some(v.to_string());
    }

    /// Answer `bytes` as the audio of every later request.
    pub fn answer_audio(&self, bytes: Vec<u8>) {
        self.state.lock().unwrap().audio = Some(bytes);
    }

    pub fn sessions(&self) -> Vec<Session> {
        self.state.lock().unwrap().sessions.clone()
    }

    /// Everything the fake found wrong in what clients sent.
    pub fn errors(&self) -> Vec<String> {
        self.state.lock().unwrap().errors.clone()
    }
}

/// The bytes the fake answers for this SSML.
pub fn fake_audio(voice: &str, rate: &str, volume: &str, pitch: &str, text: &str) -> Vec<u8> {
    format!("FAKE-MP3|{voice}|{rate}|{volume}|{pitch}|{text}").into_bytes()
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn check_request(req: &Request, errors: &mut Vec<String>) -> (Vec<(String, String)>, String) {
    let uri = req.uri();
    if uri.path() != PATH {
        errors.push(format!("path {}", uri.path()));
    }
    let q: Vec<(String, String)> =
        url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
            .into_owned()
            .collect();
    let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    if get("TrustedClientToken").as_deref() != Some(TRUSTED_CLIENT_TOKEN) {
        errors.push(format!(
            "TrustedClientToken {:?}",
            get("TrustedClientToken")
        ));
    }
    let hex32 = Regex::new(r"^[0-9a-f]{32}$").unwrap();
    if !get("ConnectionId").is_some_and(|c| hex32.is_match(&c)) {
        errors.push(format!("ConnectionId {:?}", get("ConnectionId")));
    }
    let version = get("Sec-MS-GEC-Version").unwrap_or_default();
    let ver = Regex::new(r"^([12])-\d+\.\d+\.\d+\.\d+$").unwrap();
    let v = ver
        .captures(&version)
        .map(|c| c[1].to_string())
        .unwrap_or_default();
    if v.is_empty() {
        errors.push(format!("Sec-MS-GEC-Version {version:?}"));
    }
    let gec = get("Sec-MS-GEC").unwrap_or_default();
    // The client may have computed it in the previous 5-minute window.
    let ok = [now(), now() - 300].iter().any(|&t| {
        gec == if v == "1" {
            sec_ms_gec_v1(t)
        } else {
            sec_ms_gec_v2(t)
        }
    });
    if !ok {
        errors.push(format!("Sec-MS-GEC {gec:?} is wrong for version {v:?}"));
    }
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let h = |k: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.as_str())
    };
    if h("origin") != Some("chrome-extension://jdiccldimpdaibmpdkjnbmckianbfold") {
        errors.push(format!("Origin {:?}", h("origin")));
    }
    if !h("user-agent").is_some_and(|u| u.contains(" Edg/")) {
        errors.push(format!("User-Agent {:?}", h("user-agent")));
    }
    if !h("cookie").is_some_and(|c| Regex::new(r"^muid=[0-9A-F]{32};$").unwrap().is_match(c)) {
        errors.push(format!("Cookie {:?}", h("cookie")));
    }
    if h("pragma") != Some("no-cache") || h("cache-control") != Some("no-cache") {
        errors.push("Pragma/Cache-Control".into());
    }
    (headers, v)
}

fn http_date() -> String {
    // Any valid IMF-fixdate near now; the client only uses it to correct its clock.
    let t = now();
    let days = t.div_euclid(86_400);
    let DateTime {
        year: y,
        month: m,
        day: d,
        ..
    } = DateTime::utc(t);
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let wd = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let s = t.rem_euclid(86_400);
    format!(
        "{wd}, {d:02} {} {y} {:02}:{:02}:{:02} GMT",
        months[(m - 1) as usize],
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

// tungstenite's handshake callback type fixes the large `Err` variant.
#[allow(clippy::result_large_err)]
async fn serve(tcp: tokio::net::TcpStream, state: Arc<Mutex<State>>) {
    let session = Arc::new(Mutex::new(Session::default()));
    let sess = session.clone();
    let st = state.clone();
    let callback = move |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        let mut s = st.lock().unwrap();
        let mut errors = Vec::new();
        let (headers, v) = check_request(req, &mut errors);
        s.errors.extend(errors);
        let mut session = sess.lock().unwrap();
        session.uri = req.uri().to_string();
        session.headers = headers;
        session.gec_version = v.clone();
        let wrong_version = s.only_version.as_ref().is_some_and(|o| *o != v);
        if s.forbid > 0 || wrong_version {
            s.forbid = s.forbid.saturating_sub(1);
            session.rejected = true;
            s.sessions.push(session.clone());
            let mut r = ErrorResponse::new(Some("forbidden".into()));
            *r.status_mut() = StatusCode::FORBIDDEN;
            r.headers_mut().insert("date", http_date().parse().unwrap());
            return Err(r);
        }
        Ok(resp)
    };
    let Ok(mut ws) = async_tungstenite::tokio::accept_hdr_async(tcp, callback).await else {
        return;
    };
    let push_err = |e: String| state.lock().unwrap().errors.push(e);

    // Frame 1: speech.config.
    let Some(Ok(Message::Text(config))) = ws.next().await else {
        push_err("no speech.config frame".into());
        return;
    };
    session.lock().unwrap().frames.push(config.to_string());
    let cfg_re = Regex::new(
        r"^X-Timestamp:[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT\+0000 \(Coordinated Universal Time\)\r\nContent-Type:application/json; charset=utf-8\r\nPath:speech.config\r\n\r\n(.*)\r\n$",
    )
    .unwrap();
    match cfg_re.captures(&config) {
        Some(c) => {
            let v: serde_json::Value = serde_json::from_str(&c[1]).unwrap_or_default();
            let audio = &v["context"]["synthesis"]["audio"];
            if audio["outputFormat"] != OUTPUT_FORMAT
                || audio["metadataoptions"]["sentenceBoundaryEnabled"] != "true"
                || audio["metadataoptions"]["wordBoundaryEnabled"] != "false"
            {
                push_err(format!("speech.config body {}", &c[1]));
            }
        }
        None => push_err(format!("speech.config frame {config:?}")),
    }

    // Frame 2: ssml.
    let Some(Ok(Message::Text(ssml))) = ws.next().await else {
        push_err("no ssml frame".into());
        return;
    };
    session.lock().unwrap().frames.push(ssml.to_string());
    let ssml_re = Regex::new(
        r"(?s)^X-RequestId:([0-9a-f]{32})\r\nContent-Type:application/ssml\+xml\r\nX-Timestamp:[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT\+0000 \(Coordinated Universal Time\)Z\r\nPath:ssml\r\n\r\n<speak version='1.0' xmlns='http://www.w3.org/2001/10/synthesis' xml:lang='en-US'><voice name='(Microsoft Server Speech Text to Speech Voice \([^)]+\))'><prosody pitch='([^']+)' rate='([^']+)' volume='([^']+)'>(.*)</prosody></voice></speak>$",
    )
    .unwrap();
    let Some(c) = ssml_re.captures(&ssml) else {
        push_err(format!("ssml frame {ssml:?}"));
        return;
    };
    let rid = c[1].to_string();
    let (voice, pitch, rate, volume, text) = (&c[2], &c[3], &c[4], &c[5], &c[6]);
    session.lock().unwrap().ssml = Some([
        voice.to_string(),
        rate.to_string(),
        volume.to_string(),
        pitch.to_string(),
        text.to_string(),
    ]);
    let fixed = state.lock().unwrap().audio.clone();
    let audio = fixed.unwrap_or_else(|| fake_audio(voice, rate, volume, pitch, text));
    let text_frame = |path: &str, body: &str| {
        Message::Text(
            format!(
                "X-RequestId:{rid}\r\nContent-Type:application/json; charset=utf-8\r\nPath:{path}\r\n\r\n{body}"
            )
            .into(),
        )
    };
    let binary = |content_type: Option<&str>, data: &[u8]| {
        // The service's header block ends with CRLF; edge-tts' parser relies on that.
        let ct = content_type
            .map(|c| format!("Content-Type:{c}\r\n"))
            .unwrap_or_default();
        let head = format!("X-RequestId:{rid}\r\n{ct}X-StreamId:FAKE\r\nPath:audio\r\n");
        let mut f = (head.len() as u16).to_be_bytes().to_vec();
        f.extend_from_slice(head.as_bytes());
        f.extend_from_slice(data);
        Message::Binary(f.into())
    };
    let (a, b) = audio.split_at(audio.len() / 2);
    let metadata = serde_json::json!({"Metadata": [{"Type": "SentenceBoundary", "Data": {
        "Offset": 1_000_000, "Duration": 8_750_000,
        "text": {"Text": text, "Length": text.len(), "BoundaryType": "SentenceBoundary"}}}]});
    for m in [
        text_frame("turn.start", r#"{"context":{"serviceTag":"fake"}}"#),
        text_frame(
            "response",
            r#"{"context":{"serviceTag":"fake"},"audio":{"type":"inline","streamId":"FAKE"}}"#,
        ),
        text_frame("audio.metadata", &metadata.to_string()),
        binary(Some("audio/mpeg"), a),
        binary(Some("audio/mpeg"), b),
        binary(None, b""),
        text_frame("turn.end", "{}"),
    ] {
        if ws.send(m).await.is_err() {
            push_err("client went away mid-turn".into());
            return;
        }
    }
    state
        .lock()
        .unwrap()
        .sessions
        .push(session.lock().unwrap().clone());
    // Let the client close.
    while let Some(Ok(_)) = ws.next().await {}
}
