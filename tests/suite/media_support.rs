//! Helpers for the media tests: a loopback HTTP/1.1 server that records every
//! request and answers through a handler (the suite's one test server), fixtures (a real PNG), and checks for
//! audio files.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, OnceLock};

use super::web_support::{self, TestServer};

#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    /// Path with query.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "request body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

pub struct Resp {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(status: u16, v: serde_json::Value) -> Self {
        Resp {
            status,
            content_type: "application/json".into(),
            body: v.to_string().into_bytes(),
        }
    }
    pub fn bytes(content_type: &str, body: Vec<u8>) -> Self {
        Resp {
            status: 200,
            content_type: content_type.into(),
            body,
        }
    }
}

/// A loopback server (over the suite's `web_support::TestServer`). The handler
/// gets the request (path with its query) and the server's base URL.
pub struct Loopback {
    pub base: String,
    server: TestServer,
}

impl Loopback {
    pub fn start(handler: impl Fn(&Req, &str) -> Resp + Send + Sync + 'static) -> Self {
        let base: Arc<OnceLock<String>> = Arc::new(OnceLock::new());
        let b = base.clone();
        let server = TestServer::start(move |r, _| {
            let resp = handler(&media_req(r), b.get().expect("base set before any request"));
            web_support::Resp::new(resp.status, &resp.content_type, resp.body)
        });
        base.set(server.base()).unwrap();
        Loopback {
            base: server.base(),
            server,
        }
    }

    pub fn requests(&self) -> Vec<Req> {
        self.server.reqs().iter().map(media_req).collect()
    }
}

fn media_req(r: &web_support::Req) -> Req {
    let path = if r.query.is_empty() {
        r.path.clone()
    } else {
        format!("{}?{}", r.path, r.query)
    };
    Req {
        method: r.method.clone(),
        path,
        headers: r
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        body: r.body.clone(),
    }
}

/// Our result and Hermes' agree on each of `keys`.
pub fn assert_fields_match(ours: &serde_json::Value, hermes: &serde_json::Value, keys: &[&str]) {
    for k in keys {
        assert_eq!(ours[*k], hermes[*k], "{k}");
    }
}

/// A 24 kHz mono 16-bit PCM WAV around `pcm` (what Gemini-style TTS fakes answer).
pub fn wav_24k_mono(pcm: Vec<u8>) -> Vec<u8> {
    let mut v = b"RIFF".to_vec();
    v.extend((36 + pcm.len() as u32).to_le_bytes());
    v.extend(b"WAVEfmt ");
    v.extend(16u32.to_le_bytes());
    v.extend(1u16.to_le_bytes());
    v.extend(1u16.to_le_bytes());
    v.extend(24000u32.to_le_bytes());
    v.extend(48000u32.to_le_bytes());
    v.extend(2u16.to_le_bytes());
    v.extend(16u16.to_le_bytes());
    v.extend(b"data");
    v.extend((pcm.len() as u32).to_le_bytes());
    v.extend(pcm);
    v
}

/// A real 2x1 RGB PNG (valid signature, IHDR, IDAT, IEND with correct CRCs).
pub fn png_bytes() -> Vec<u8> {
    const PNG: &str = "89504e470d0a1a0a0000000d49484452000000020000000108020000007b40e8dd0000000d49444154789c63f8cf0004ff01070001ffe2239e590000000049454e44ae426082";
    (0..PNG.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&PNG[i..i + 2], 16).unwrap())
        .collect()
}

/// `soxi -D <file>`: the duration sox reads from the file (fails the test when sox is missing).
pub fn soxi_duration(path: &Path) -> f64 {
    let out = Command::new("soxi")
        .arg("-D")
        .arg(path)
        .output()
        .expect("soxi (package sox) must be installed: tools/test.sh installs it");
    assert!(
        out.status.success(),
        "soxi failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Fail clearly when a program the tests need is missing.
pub fn require(program: &str, package: &str) {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "{program} is not installed: `apt install {package}` (tools/test.sh installs it)"
    );
}
