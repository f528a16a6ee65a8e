//! `browser.record_sessions: true`: a WebM of each browser session, as Hermes
//! records one (hermes-agent: tools/browser_tool.py `_maybe_start_recording`,
//! `_maybe_stop_recording`, `_cleanup_old_recordings`): started with the
//! session's first navigation, saved when the session closes (idle, exit),
//! at `$HERMES_HOME/browser_recordings/session_<YYYYmmdd_HHMMSS>_<task>.webm`;
//! recordings older than 72 h are deleted when a new one starts.
//!
//! Hermes has agent-browser record; here Chromium's own screencast
//! (`Page.startScreencast`, JPEG frames, each acknowledged) feeds `ffmpeg`,
//! which encodes VP8 into WebM. Chromium sends a frame only when the page
//! changes, so the latest frame is written at a fixed rate and the video
//! keeps real time; every frame is scaled into one fixed size (the page may
//! resize). Without `ffmpeg` on PATH nothing is recorded, and the first
//! navigation's result and `hermes-mcp tools` say so. The recording follows
//! the tab the session started with.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use crate::hermes::Context;
use crate::toolsets::browser::cdp::protocol::{ScreencastFrame, decode};
use crate::toolsets::browser::cdp::{CdpError, Page};

/// Hermes' `_cleanup_old_recordings(max_age_hours=72)`.
const MAX_AGE: Duration = Duration::from_secs(72 * 3600);
/// Frames written per second (the latest screencast frame, repeated).
const FPS: u32 = 5;
/// The video's size; frames are scaled into it, keeping their aspect.
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 800;
/// How long ffmpeg may take to finish the file after its input ends.
const FINISH_TIMEOUT: Duration = Duration::from_secs(20);

/// `ffmpeg` on the server's PATH.
pub(crate) fn ffmpeg(ctx: &Context) -> Option<PathBuf> {
    crate::hermes::env::which(
        "ffmpeg",
        ctx.env.get(crate::hermes::envvars::PATH).as_deref(),
    )
}

/// What `hermes-mcp tools` and the first navigation say when recording is
/// configured but cannot run.
pub(crate) const NEEDS_FFMPEG: &str = "browser.record_sessions is set, but recording a browser session needs ffmpeg on PATH (not found); no recording is made";

/// `$HERMES_HOME/browser_recordings`.
pub(crate) fn dir(ctx: &Context) -> PathBuf {
    ctx.home.path.join("browser_recordings")
}

/// Delete `session_*.webm` older than 72 h.
pub(crate) fn prune(dir: &Path) {
    crate::fs::prune_older_than(dir, MAX_AGE, |n| {
        n.starts_with("session_") && n.ends_with(".webm")
    });
}

/// Why no recording was started; the text becomes the first navigation's
/// `recording` note.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    #[error("{}", NEEDS_FFMPEG)]
    NoFfmpeg,
    #[error("cannot create {dir}: {source}")]
    CreateDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start {exe}: {source}")]
    Spawn {
        exe: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("ffmpeg has no stdin")]
    NoStdin,
    #[error("Page.startScreencast failed: {0}")]
    Screencast(#[source] CdpError),
}

/// A recording in progress.
pub(crate) struct Recording {
    pub(crate) path: PathBuf,
    page: Page,
    child: Child,
    frames: JoinHandle<()>,
    writer: JoinHandle<()>,
    stop: tokio_util::sync::CancellationToken,
}

/// The task id part of the file name (`task_id[:16]`).
fn task_part(task: &str) -> String {
    task.chars().take(16).collect()
}

/// Start recording `page`. `task` is Hermes' session key (`default`, or
/// `default::local` for the private-URL sidecar).
pub(crate) async fn start(ctx: &Context, page: &Page, task: &str) -> Result<Recording, StartError> {
    let exe = ffmpeg(ctx).ok_or(StartError::NoFfmpeg)?;
    let dir = dir(ctx);
    if let Err(source) = std::fs::create_dir_all(&dir) {
        return Err(StartError::CreateDir { dir, source });
    }
    prune(&dir);
    let path = dir.join(format!(
        "session_{}_{}.webm",
        crate::time::local_stamp(),
        task_part(task)
    ));
    let filter = format!(
        "scale={WIDTH}:{HEIGHT}:force_original_aspect_ratio=decrease,pad={WIDTH}:{HEIGHT}:(ow-iw)/2:(oh-ih)/2,format=yuv420p"
    );
    let mut child = Command::new(&exe)
        .args(["-hide_banner", "-loglevel", "error", "-y"])
        .args(["-f", "image2pipe", "-c:v", "mjpeg"])
        .args(["-framerate", &FPS.to_string(), "-i", "pipe:0"])
        .args(["-vf", &filter])
        .args(["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8"])
        .args(["-b:v", "1M", "-f", "webm"])
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| StartError::Spawn {
            exe: exe.clone(),
            source,
        })?;
    let mut stdin = child.stdin.take().ok_or(StartError::NoStdin)?;

    let latest: Arc<Mutex<Option<Vec<u8>>>> = Arc::default();
    let mut stream = page.events("Page.screencastFrame");
    let (l2, pg) = (latest.clone(), page.clone());
    let frames = tokio::spawn(async move {
        while let Some(v) = stream.recv().await {
            let ev: ScreencastFrame = decode(v);
            let _ = pg
                .call(
                    "Page.screencastFrameAck",
                    json!({"sessionId": ev.session_id}),
                )
                .await;
            if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&ev.data) {
                *l2.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(bytes);
            }
        }
    });
    let stop = tokio_util::sync::CancellationToken::new();
    let stopped = stop.clone();
    let shown = path.display().to_string();
    // Whole frames only: the stop is seen between writes, and dropping
    // stdin then ends ffmpeg's input cleanly.
    let writer = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(1000 / u64::from(FPS)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut written = 0u32;
        loop {
            tokio::select! {
                _ = stopped.cancelled() => return,
                _ = tick.tick() => {}
            }
            let frame = latest
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            if let Some(f) = frame {
                if stdin.write_all(&f).await.is_err() {
                    return;
                }
                written += 1;
                // The first second of video is in: the recording works.
                if written == FPS {
                    tracing::info!("Browser recording {shown}: first second recorded");
                }
            }
        }
    });
    let started = page.call(
        "Page.startScreencast",
        json!({"format": "jpeg", "quality": 80, "maxWidth": WIDTH, "maxHeight": HEIGHT, "everyNthFrame": 1}),
    )
    .await;
    let rec = Recording {
        path,
        page: page.clone(),
        child,
        frames,
        writer,
        stop,
    };
    if let Err(e) = started {
        rec.abandon().await;
        return Err(StartError::Screencast(e));
    }
    tracing::info!(
        "Auto-recording browser session {task} to {}",
        rec.path.display()
    );
    Ok(rec)
}

impl Recording {
    /// Stop the screencast, end ffmpeg's input and wait for the file.
    /// Never fails; a problem is logged.
    pub(crate) async fn stop(mut self) {
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            self.page.call("Page.stopScreencast", json!({})),
        )
        .await;
        self.frames.abort();
        // The writer's end closes ffmpeg's stdin: it finishes the file.
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), &mut self.writer).await;
        self.writer.abort();
        match tokio::time::timeout(FINISH_TIMEOUT, self.child.wait()).await {
            Ok(Ok(st)) if st.success() => {
                tracing::info!("Saved browser recording: {}", self.path.display())
            }
            Ok(Ok(st)) => tracing::warn!(
                "ffmpeg ended with {st} while saving {}",
                self.path.display()
            ),
            Ok(Err(e)) => tracing::warn!("waiting for ffmpeg failed: {e}"),
            Err(_) => {
                tracing::warn!(
                    "ffmpeg did not finish {} within {}s; stopped",
                    self.path.display(),
                    FINISH_TIMEOUT.as_secs()
                );
                let _ = self.child.kill().await;
            }
        }
    }

    /// Give up without a file.
    async fn abandon(mut self) {
        self.frames.abort();
        self.writer.abort();
        let _ = self.child.kill().await;
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolsets::browser::testutil::write_aged;

    #[test]
    fn old_recordings_are_pruned_after_72_hours() {
        let d = tempfile::tempdir().unwrap();
        let past = Duration::from_secs(73 * 3600);
        let [old, other] = write_aged(
            d.path(),
            ["session_20200101_000000_default.webm", "notes.webm"],
            past,
        );
        let [new] = write_aged(
            d.path(),
            ["session_20260101_000000_default.webm"],
            Duration::ZERO,
        );
        prune(d.path());
        assert!(!old.exists());
        assert!(new.exists() && other.exists());
        assert_eq!(task_part("default::local"), "default::local");
        assert_eq!(task_part("a-very-long-task-identifier"), "a-very-long-task");
    }
}
