//! Helpers for the web and net tests: a scripted resolver, a server with only the web
//! toolset, extraction scoring and a PDF maker. Their loopback servers are [`super::fake`].

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use hermes_mcp::hermes::Context;
use hermes_mcp::hermes::{Env, HermesConfig, HermesHome};
use hermes_mcp::net::Lookup;
use hermes_mcp::server::{HermesServer, Progress, ToolOutput};
use hermes_mcp::toolsets::web::{WebOptions, WebToolset};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// A scripted resolver: each host has a list of answers, used in turn (the
/// last one repeats). Counts lookups per host.
#[derive(Default, Clone)]
pub struct ScriptedLookup {
    pub answers: Arc<Mutex<HashMap<String, Vec<Vec<IpAddr>>>>>,
    pub calls: Arc<Mutex<HashMap<String, usize>>>,
}

impl ScriptedLookup {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn with(self, host: &str, seq: &[&[&str]]) -> Self {
        self.answers.lock().unwrap().insert(
            host.to_string(),
            seq.iter()
                .map(|a| a.iter().map(|s| s.parse().unwrap()).collect())
                .collect(),
        );
        self
    }
    pub fn calls(&self, host: &str) -> usize {
        *self.calls.lock().unwrap().get(host).unwrap_or(&0)
    }
}

impl Lookup for ScriptedLookup {
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let n = {
            let mut c = self.calls.lock().unwrap();
            let e = c.entry(host.to_string()).or_insert(0);
            *e += 1;
            *e
        };
        let ans = self.answers.lock().unwrap().get(host).map(|seq| {
            let i = (n - 1).min(seq.len() - 1);
            seq[i].clone()
        });
        Box::pin(async move {
            ans.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such host"))
        })
    }
}

/// A server with only the web toolset, a temp Hermes home, a config and env.
pub struct WebHarness {
    pub dir: tempfile::TempDir,
    pub server: HermesServer,
}

pub fn harness(config_yaml: &str, env: &[(&str, &str)]) -> WebHarness {
    harness_with(config_yaml, env, WebOptions::default())
}

pub fn harness_with(config_yaml: &str, env: &[(&str, &str)], mut opts: WebOptions) -> WebHarness {
    let dir = tempfile::tempdir().unwrap();
    let home = HermesHome {
        path: dir.path().to_path_buf(),
        explicit: true,
    };
    let cfg = HermesConfig::from_yaml(config_yaml).expect("test config");
    let env = Env::from_map(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let ctx = Context::with_parts(home, env, cfg);
    if opts.helper_exe.is_none() {
        opts.helper_exe = Some(env!("CARGO_BIN_EXE_hermes-mcp").into());
    }
    let server = HermesServer::new(ctx, vec![Box::new(WebToolset::new(opts))]);
    WebHarness { dir, server }
}

impl WebHarness {
    pub async fn call(&self, name: &str, args: Value) -> ToolOutput {
        let args: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
        self.server
            .call(name, Some(args), CancellationToken::new(), Progress::none())
            .await
    }
}

pub fn out_json(o: &ToolOutput) -> Value {
    o.first_json().expect("JSON text content")
}

/// Token-level F1 between extracted Markdown and the expected text
/// (lower-cased word tokens, bag of words).
pub fn token_f1(got: &str, want: &str) -> f64 {
    fn toks(s: &str) -> HashMap<String, usize> {
        let mut m = HashMap::new();
        for t in s
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
        {
            *m.entry(t.to_lowercase()).or_insert(0) += 1;
        }
        m
    }
    // Markdown link and image targets are not page text (same rule as tools/bench_web.py).
    let got = regex::Regex::new(r"\]\([^)]*\)")
        .unwrap()
        .replace_all(got, "]");
    let (g, w) = (toks(&got), toks(want));
    let gn: usize = g.values().sum();
    let wn: usize = w.values().sum();
    if gn == 0 || wn == 0 {
        return if gn == wn { 1.0 } else { 0.0 };
    }
    let common: usize = g
        .iter()
        .map(|(k, c)| (*c).min(*w.get(k).unwrap_or(&0)))
        .sum();
    if common == 0 {
        return 0.0;
    }
    let p = common as f64 / gn as f64;
    let r = common as f64 / wn as f64;
    2.0 * p * r / (p + r)
}

/// The visible text of an HTML fragment (for scoring against expected.html).
pub fn html_text(html: &str) -> String {
    dom_query::Document::from(html)
        .select("body")
        .text()
        .to_string()
}

/// A small, valid one-page PDF whose page shows `text` (Helvetica).
pub fn make_pdf(text: &str) -> Vec<u8> {
    let stream = format!("BT /F1 18 Tf 72 720 Td ({text}) Tj ET");
    let objs = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_string(),
        format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_string(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objs.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objs.len() + 1).as_bytes());
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objs.len() + 1
        )
        .as_bytes(),
    );
    out
}
