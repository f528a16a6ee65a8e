//! Helpers for the media tests: a loopback HTTP/1.1 server that records every
//! request and answers through a handler, fixtures (a real PNG), and checks for
//! audio files.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

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

type Handler = Arc<dyn Fn(&Req, &str) -> Resp + Send + Sync>;

/// A loopback server. The handler gets the request and the server's base URL.
pub struct Loopback {
    pub base: String,
    pub requests: Arc<Mutex<Vec<Req>>>,
}

impl Loopback {
    pub fn start(handler: impl Fn(&Req, &str) -> Resp + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let (reqs, b) = (requests.clone(), base.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let (reqs, handler, b) = (reqs.clone(), handler.clone(), b.clone());
                std::thread::spawn(move || serve(stream, &reqs, &*handler, &b));
            }
        });
        Loopback { base, requests }
    }

    pub fn requests(&self) -> Vec<Req> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(
    stream: TcpStream,
    reqs: &Mutex<Vec<Req>>,
    handler: &(dyn Fn(&Req, &str) -> Resp + Send + Sync),
    base: &str,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let len = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let req = Req {
        method,
        path,
        headers,
        body,
    };
    reqs.lock().unwrap().push(req.clone());
    let resp = handler(&req, base);
    let mut out = stream;
    let head = format!(
        "HTTP/1.1 {} X\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        resp.status,
        resp.content_type,
        resp.body.len()
    );
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(&resp.body);
    let _ = out.flush();
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
