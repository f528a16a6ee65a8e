//! Starting and stopping a local Chromium, and the flags it runs with
//! ([`CHROMIUM_FLAGS`], public so that tests start theirs the same way).
//!
//! Chromium runs in its own process group, which shutdown kills as a whole
//! (browser, zygote, renderers, GPU/utility processes), and with
//! `PR_SET_PDEATHSIG` so a server killed with SIGKILL does not leave it
//! behind either. The profile is a fresh temporary `--user-data-dir`,
//! removed on close. Each launch adds the flags of its request gate
//! (`proxy.rs`: `--proxy-server`, `--proxy-bypass-list=<-loopback>`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

/// How long Chromium may take to print its DevTools endpoint.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct ChromeProcess {
    pub(crate) child: Child,
    pub(crate) pid: i32,
    pub(crate) ws_url: String,
    pub(crate) profile: tempfile::TempDir,
}

/// Why Chromium could not be started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LaunchError {
    #[error("cannot create a temporary Chromium profile: {0}")]
    Profile(std::io::Error),
    #[error("launcher poisoned")]
    LauncherPoisoned,
    #[error("launcher thread gone")]
    LauncherGone,
    #[error("cannot start {}: {source}", exe.display())]
    Spawn {
        exe: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Thread(std::io::Error),
    #[error("Chromium ({}) failed to start: {detail}", exe.display())]
    Failed { exe: PathBuf, detail: String },
}

/// Features turned off (Chromium reads one `--disable-features` flag: the
/// last). The first ones keep the page under one CDP session and
/// browser_back's load event (no back/forward cache, no out-of-process
/// frames). `RenderDocument` off lets a navigation within a site keep its
/// renderer frame, widget and compositor, rather than build new ones and
/// tear the old ones down while the page loads: 0.79–0.83 of a warm
/// navigation's time on `tools/bench_browser.py`'s simple page and
/// 0.88–0.97 on its 2,000-element page (Chromium 156, raw CDP, two
/// Chromiums driven in turn). Chromium ignores a feature name it does not
/// know without a word: measure again when it drops the old way. Then the
/// omnibox's WebUI popups, which a headless Chromium (156) still loads, in
/// a renderer of their own, at start-up (a second renderer loading
/// `chrome://omnibox-popup.top-chrome/` beside the page's: 160 MB and a
/// core's worth of CPU while the first page loads); the rest are
/// background services that talk to Google.
const DISABLE_FEATURES: &str = concat!(
    "--disable-features=",
    "BackForwardCache,site-per-process,IsolateOrigins,",
    "RenderDocument,",
    "WebUIOmniboxPopup,WebUIOmniboxAimPopup,",
    "Translate,MediaRouter,DialMediaRouteProvider,",
    "OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading,",
    "OptimizationTargetPrediction,DnsOverHttps,UseDnsHttpsSvcb,",
    "AutofillServerCommunication,CertificateTransparencyComponentUpdater,",
    "NetworkTimeServiceQuerying,SafeBrowsingEnhancedProtection,",
    "InterestFeedContentSuggestions,PrivacySandboxSettings4,LensOverlay",
);

/// Every flag a Chromium of ours runs with but the per-launch ones
/// ([`chrome_args`] adds `--remote-debugging-port=0`, `--user-data-dir`,
/// `--headless=new` unless headed, and the first URL): root sandbox off,
/// deterministic input and rendering, one CDP session per page, and no
/// connections of its own.
pub const CHROMIUM_FLAGS: &[&str] = &[
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    "--disable-hang-monitor",
    "--disable-popup-blocking",
    "--block-new-web-contents",
    "--disable-smooth-scrolling",
    "--password-store=basic",
    "--use-mock-keychain",
    "--mute-audio",
    "--hide-scrollbars",
    "--window-size=1280,800",
    // Back/forward cache would skip the load event on browser_back;
    // in-process frames keep the whole page under one CDP session (URL
    // policy interception, accessibility tree); a navigation keeps its
    // renderer frame (RenderDocument off: it costs less).
    DISABLE_FEATURES,
    "--disable-site-isolation-trials",
    // Chromium's own traffic stops here: with these it connects only where
    // the page asks (no component updater, variations seed, Safe Browsing
    // lists, domain reliability or metrics uploads, sync, GCM, translate,
    // optimization guide, media router discovery, hyperlink-auditing pings,
    // DNS prefetch or DNS-over-HTTPS probes). A test records every
    // connect() to prove it.
    //
    // One thing no flag stops: before each host resolution (at most once a
    // second) Chromium's net stack `connect()`s a UDP socket to
    // `[2001:4860:4860::8888]:443` to learn whether IPv6 is routable
    // (`HostResolverManager::StartIPv6ReachabilityCheck`; skipped only on
    // Wi-Fi). A UDP connect sends no packet; tests/suite/browser_offline.rs
    // checks that nothing is ever sent on that socket.
    "--disable-background-networking",
    "--disable-component-update",
    // Chromium 15x still registers some components and checks
    // update.googleapis.com for them despite --disable-component-update;
    // a URL it cannot fetch over the network stops that without a connection.
    "--component-updater=url-source=about:blank",
    "--disable-sync",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--safebrowsing-disable-auto-update",
    "--disable-field-trial-config",
    "--disable-variations-seed-fetch",
    "--metrics-recording-only",
    "--no-pings",
    "--dns-prefetch-disable",
    "--no-service-autorun",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-breakpad",
    "--disable-crash-reporter",
];

/// The command line of a Chromium of ours: a DevTools port of its own
/// choosing, profile `profile`, the per-launch `extra` flags (the request
/// gate of `proxy.rs`), [`CHROMIUM_FLAGS`], headless unless `headed`,
/// and no first window (the session opens its own tab: a startup tab would
/// cost a renderer process at launch and then sit unused).
pub(crate) fn chrome_args(profile: &Path, headed: bool, extra: &[String]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "--remote-debugging-port=0".into(),
        format!("--user-data-dir={}", profile.display()),
    ];
    a.extend(extra.iter().cloned());
    a.extend(CHROMIUM_FLAGS.iter().map(|f| f.to_string()));
    if !headed {
        a.push("--headless=new".into());
    }
    a.push("--no-startup-window".into());
    a
}

type SpawnJob = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Children are spawned from one long-lived thread: `PR_SET_PDEATHSIG` fires
/// when the *thread* that forked exits, so it must not be a pool thread.
fn launcher() -> &'static std::sync::Mutex<mpsc::Sender<SpawnJob>> {
    static L: OnceLock<std::sync::Mutex<mpsc::Sender<SpawnJob>>> = OnceLock::new();
    L.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("chromium-launcher".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("spawn launcher thread");
        std::sync::Mutex::new(tx)
    })
}

/// Start Chromium and wait for its DevTools WebSocket URL. Blocking: call
/// from `spawn_blocking`.
pub(crate) fn spawn_chrome(
    exe: &Path,
    headed: bool,
    extra: &[String],
) -> Result<ChromeProcess, LaunchError> {
    use std::os::unix::process::CommandExt;
    let profile = tempfile::Builder::new()
        .prefix("hermes-mcp-chromium-")
        .tempdir()
        .map_err(LaunchError::Profile)?;
    let mut cmd = Command::new(exe);
    cmd.args(chrome_args(profile.path(), headed, extra))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let (tx, rx) = mpsc::channel();
    launcher()
        .lock()
        .map_err(|_| LaunchError::LauncherPoisoned)?
        .send((cmd, tx))
        .map_err(|_| LaunchError::LauncherGone)?;
    let mut child = rx
        .recv()
        .map_err(|_| LaunchError::LauncherGone)?
        .map_err(|source| LaunchError::Spawn {
            exe: exe.to_path_buf(),
            source,
        })?;
    let pid = child.id() as i32;
    let stderr = child.stderr.take().expect("piped stderr");
    let (wtx, wrx) = mpsc::channel::<String>();
    // Read the endpoint line, then keep draining stderr (to our debug log) so
    // Chromium never blocks on a full pipe.
    std::thread::Builder::new()
        .name("chromium-stderr".into())
        .spawn(move || {
            let mut tail: Vec<String> = Vec::new();
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent {
                    if let Some(pos) = line.find("DevTools listening on ") {
                        let url = line[pos + "DevTools listening on ".len()..]
                            .trim()
                            .to_string();
                        let _ = wtx.send(url);
                        sent = true;
                        continue;
                    }
                    tail.push(line.clone());
                    if tail.len() > 20 {
                        tail.remove(0);
                    }
                }
                tracing::trace!(target: "chromium", "{line}");
            }
            if !sent {
                let _ = wtx.send(format!("!{}", tail.join("\n")));
            }
        })
        .map_err(LaunchError::Thread)?;
    let got = wrx.recv_timeout(STARTUP_TIMEOUT);
    match got {
        Ok(url) if !url.starts_with('!') => Ok(ChromeProcess {
            child,
            pid,
            ws_url: url,
            profile,
        }),
        other => {
            kill_group(pid);
            let _ = child.wait();
            let detail = match other {
                Ok(t) => t[1..].trim().to_string(),
                Err(_) => format!("no DevTools endpoint after {}s", STARTUP_TIMEOUT.as_secs()),
            };
            Err(LaunchError::Failed {
                exe: exe.to_path_buf(),
                detail: if detail.is_empty() {
                    "exited without output".into()
                } else {
                    detail
                },
            })
        }
    }
}

/// SIGKILL the whole process group led by `pid`.
pub(crate) fn kill_group(pid: i32) {
    if pid > 1 {
        // SAFETY: plain syscall.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

impl ChromeProcess {
    /// Kill every process of the group, reap the leader, remove the profile.
    pub(crate) fn terminate(mut self) {
        kill_group(self.pid);
        let _ = self.child.wait();
        let dir: PathBuf = self.profile.path().to_path_buf();
        // Renderers may still be writing for a moment after SIGKILL of the group.
        if self.profile.close().is_err() {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_the_flags_between_the_per_launch_ones() {
        let a = chrome_args(Path::new("/tmp/p"), false, &[]);
        assert_eq!(
            a[..2],
            ["--remote-debugging-port=0", "--user-data-dir=/tmp/p"]
        );
        assert_eq!(a[2..a.len() - 2], *CHROMIUM_FLAGS);
        assert_eq!(a[a.len() - 2..], ["--headless=new", "--no-startup-window"]);
        assert_eq!(
            chrome_args(Path::new("/tmp/p"), true, &[]).len(),
            a.len() - 1
        );
        let proxied = chrome_args(Path::new("/tmp/p"), false, &["--proxy-server=x".into()]);
        assert_eq!(proxied[2], "--proxy-server=x");
        assert_eq!(proxied[3..], a[2..]);
        // Chromium reads only the last --disable-features.
        let features: Vec<&&str> = CHROMIUM_FLAGS
            .iter()
            .filter(|f| f.starts_with("--disable-features="))
            .collect();
        assert_eq!(features.len(), 1);
        let list = features[0].trim_start_matches("--disable-features=");
        assert_eq!(list.split(',').count(), 22);
        assert!(list.split(',').all(|f| !f.is_empty()));
        assert!(
            list.starts_with("BackForwardCache,site-per-process,IsolateOrigins,RenderDocument,")
        );
    }
}
