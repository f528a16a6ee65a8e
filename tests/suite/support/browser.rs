//! Browser helpers shared by the `browser*` suites and the suites that browse on the side
//! (aux text, the Nous gateway): the loopback page server with its fixtures and dynamic
//! routes, [`Browsing`] (a served `hermes-mcp serve` whose Chromium is recognisable),
//! snapshot refs, `/proc` lookups of the processes a test started, an externally started
//! Chromium, and the multi-server pages of the iframe/pop-up tests.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::fake::{Req, Resp, TestServer};
use super::prereq::{require_chromium, require_program};
use super::serve::{Serve, Served};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/browser")
}

fn pct_decode(s: &str) -> String {
    let b = s.replace('+', " ").into_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && i + 2 < b.len()
            && let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The pages Chromium browses, on the suite's loopback [`TestServer`]: the fixtures and a
/// few dynamic routes (form result, redirects, a page that never answers, a page whose body
/// never ends, a large page).
pub fn page_server() -> TestServer {
    TestServer::start(page)
}

pub fn big_page(n: usize) -> String {
    let mut s = String::from(
        "<!doctype html><html><head><title>Big page</title></head><body><h1>Big page</h1><ul>",
    );
    for i in 0..n / 2 {
        s.push_str(&format!("<li><a href=\"/item/{i}\">Item number {i}</a> <span>detail text for row {i}</span></li>"));
    }
    s.push_str("</ul></body></html>");
    s
}

/// The page server's answer to `req`.
fn page(req: &Req) -> Resp {
    let html = |status: u16, body: String| Resp::new(status, "text/html; charset=utf-8", body);
    match req.path.as_str() {
        "/hang" => Resp::hang(Duration::from_secs(120)),
        "/slow" => {
            let mut partial = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html><head><title>Slow</title></head><body><h1>Partial content</h1>".to_vec();
            // A first chunk large enough for Chromium to commit and render.
            partial.extend(format!("<!-- {} -->", "x".repeat(8192)).into_bytes());
            Resp::raw(partial).held(Duration::from_secs(120))
        }
        "/to-metadata" => Resp::new(302, "text/html", "")
            .header("Location", "http://169.254.169.254/latest/meta-data/"),
        "/to-form" => {
            Resp::new(302, "text/html", "").header("Location", &format!("{}/form.html", req.base))
        }
        "/big" => {
            let n = req
                .query
                .strip_prefix("n=")
                .and_then(|v| v.parse().ok())
                .unwrap_or(2000);
            html(200, big_page(n))
        }
        "/result" => {
            let mut body = String::from(
                "<!doctype html><html><head><title>Order received</title></head><body><h1>Order received</h1>",
            );
            for pair in req.query.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                body.push_str(&format!(
                    "<p>{}: {}</p>",
                    html_escape(&pct_decode(k)),
                    html_escape(&pct_decode(v))
                ));
            }
            body.push_str("<a href=\"/form.html\">Back to the form</a></body></html>");
            html(200, body)
        }
        p => {
            let name = p.trim_start_matches('/').trim_start_matches("img/");
            let file = fixtures().join(name);
            if name.is_empty() || name.contains("..") || !file.is_file() {
                return Resp::new(404, "text/html", "<h1>Not found</h1>");
            }
            let ct = if name.ends_with(".svg") {
                "image/svg+xml"
            } else {
                "text/html; charset=utf-8"
            };
            Resp::new(200, ct, std::fs::read(&file).unwrap())
        }
    }
}

/// Processes whose command line mentions `needle`: (pid, pgid, cmdline).
pub fn procs_with(needle: &str) -> Vec<(i32, i32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if !cmd.contains(needle) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // Skip zombies; they are gone once reaped.
        let after = stat.rsplit_once(')').map(|x| x.1).unwrap_or("");
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        let pgid = fields.get(2).and_then(|v| v.parse().ok()).unwrap_or(0);
        out.push((pid, pgid, cmd));
    }
    out
}

/// Processes of process group `pgid` whose command line mentions `needle`
/// (zombies excluded): (pid, command line).
pub fn group_procs(pgid: i32, needle: &str) -> Vec<(i32, String)> {
    procs_with(needle)
        .into_iter()
        .filter(|(_, g, _)| *g == pgid)
        .map(|(p, _, c)| (p, c))
        .collect()
}

/// The Chromium a served `hermes-mcp` started (its profile is under the
/// server's private TMPDIR, `marker`): (pid, process group).
pub fn chromium_main(marker: &str) -> (i32, i32) {
    let p = procs_with(marker);
    let main = p
        .iter()
        .find(|(_, _, c)| c.contains("--user-data-dir") && !c.contains("--type="))
        .unwrap_or_else(|| panic!("no Chromium with profile under {marker}: {p:?}"));
    (main.0, main.1)
}

/// The ref on the first snapshot line containing `needle`.
pub fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in snapshot:\n{snapshot}"));
    let i = line
        .find("[ref=")
        .unwrap_or_else(|| panic!("no ref on {line:?}"));
    let rest = &line[i + 5..];
    rest[..rest.find(']').unwrap()].to_string()
}

/// An externally started Chromium with a DevTools port on loopback (as a user
/// would run for `browser.cdp_url`, or a cloud provider hands out), with
/// hermes-mcp's no-phone-home flags (src/toolsets/browser/chromium/launch.rs); killed
/// with its process group on drop.
pub struct ExternalChrome {
    pub child: std::process::Child,
    pub port: u16,
    _profile: tempfile::TempDir,
}

impl ExternalChrome {
    pub fn start() -> Self {
        use std::os::unix::process::CommandExt;
        require_chromium();
        let profile = tempfile::tempdir().unwrap();
        // The same flags hermes-mcp launches its own Chromium with (read from the code, so a
        // flag added there is tested here too), plus what makes this one an external browser.
        let child = Command::new("chromium")
            .args(hermes_mcp::toolsets::browser::chromium::launch::CHROMIUM_FLAGS)
            .args([
                "--headless=new",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start chromium");
        let port_file = profile.path().join("DevToolsActivePort");
        let port = super::common::poll_until(
            "chromium's DevTools port",
            20,
            || {
                std::fs::read_to_string(&port_file)
                    .ok()
                    .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u16>().ok()))
            },
            Option::is_some,
        )
        .expect("a port");
        ExternalChrome {
            child,
            port,
            _profile: profile,
        }
    }
}

impl ExternalChrome {
    /// The body of its DevTools `/json/list` (the open targets), fetched with
    /// curl; panics when the browser does not answer.
    pub fn targets(&self) -> String {
        require_program("curl");
        let mut c = Command::new("curl");
        c.args(["-sSf", &format!("http://127.0.0.1:{}/json/list", self.port)]);
        super::common::run_ok(c)
    }
}

impl Drop for ExternalChrome {
    fn drop(&mut self) {
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// A served `hermes-mcp serve` whose Chromium is recognisable: its profile
/// lives under this env's own TMPDIR ([`Served::marker`]).
pub type Browsing = Served;

impl Served {
    /// `hermes-mcp serve` for the browser tests: Chromium required, `config` (none when
    /// empty), a private TMPDIR. Reached as `Browsing::start`.
    pub fn start(config: &str) -> Self {
        require_chromium();
        let serve = Serve::new().private_tmp();
        if config.is_empty() {
            serve.start()
        } else {
            serve.config(config).start()
        }
    }

    /// Our own Chromium processes (their profiles live under our TMPDIR).
    pub fn local_chromium(&self) -> usize {
        procs_with(&self.marker()).len()
    }
}

/// The ports of the second server (127.0.0.1) and the third (127.0.0.2).
pub type Others = Arc<Mutex<(u16, u16)>>;

/// Pages served on one address; `{B}` and `{C}` in a page are the other
/// servers' ports and `{who}` the request's `who=` query value.
pub fn serve(addr: &str, pages: Vec<(&'static str, String)>, other: Others) -> u16 {
    let srv = TestServer::start_on(addr, move |req| {
        let (b, c) = *other.lock().unwrap();
        let who = req.query.strip_prefix("who=").unwrap_or("");
        match pages.iter().find(|(p, _)| *p == req.path) {
            Some((_, page)) => Resp::html(
                &page
                    .replace("{B}", &b.to_string())
                    .replace("{C}", &c.to_string())
                    .replace("{who}", who),
            ),
            None => Resp::new(404, "text/html; charset=utf-8", "<h1>Not found</h1>"),
        }
    });
    srv.port()
}
