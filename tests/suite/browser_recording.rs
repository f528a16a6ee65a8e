//! `browser.record_sessions: true` (hermes-agent: tools/browser_tool.py
//! `_maybe_start_recording`): the local Chromium session is recorded to
//! `$HERMES_HOME/browser_recordings/session_<time>_<task>.webm` through
//! Chromium's screencast and ffmpeg, saved when the session closes, and
//! recordings older than 72 h are deleted. Without ffmpeg it is said so.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::support::browser::page_server;
use super::support::common::{RawClient, TestEnv, is_error, poll_until, provider_for, result_json};
use super::support::prereq::{require_chromium, require_program};

fn call(c: &mut RawClient, tool: &str, args: Value) -> Value {
    let r = c.call_tool(tool, args.clone());
    let v = result_json(&r);
    assert!(!is_error(&r), "{tool} {args}: {v}");
    v
}

fn set_age(p: &Path, hours: u64) {
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(hours * 3600))
        .unwrap();
}

/// ffprobe's view of the video stream: codec, size, frames, duration.
fn probe(p: &Path) -> Value {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-count_frames"])
        .args([
            "-show_entries",
            "stream=codec_name,width,height,nb_read_frames",
        ])
        .args([
            "-show_entries",
            "format=format_name,duration",
            "-of",
            "json",
        ])
        .arg(p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ffprobe {}: {}",
        p.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn browser_recording_writes_a_webm_of_the_session_and_prunes_old_ones() {
    require_chromium();
    require_program("ffmpeg");
    require_program("ffprobe");
    let pages = page_server();
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "browser:\n  record_sessions: true\n");
    let dir = env.hermes_home().join("browser_recordings");
    let old = env.write_hermes(
        "browser_recordings/session_20200101_000000_default.webm",
        "old",
    );
    let recent = env.write_hermes(
        "browser_recordings/session_20260101_000000_default.webm",
        "recent",
    );
    set_age(&old, 73);
    set_age(&recent, 71);
    let p = provider_for(&env, &[], "browser");
    let why = p["why"].as_str().unwrap();
    assert!(
        why.contains("browser.record_sessions") && why.contains("browser_recordings"),
        "{p}"
    );

    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    let v = call(
        &mut c,
        "browser_navigate",
        json!({"url": pages.url("/form.html")}),
    );
    assert!(
        v.get("recording").is_none(),
        "recording works: no note ({v})"
    );
    call(&mut c, "browser_snapshot", json!({}));
    // One second of video (five frames) written, as the log says.
    let log = env.hermes_home().join("logs/hermes-mcp.log");
    poll_until(
        "the recording's first second in the log",
        60,
        || std::fs::read_to_string(&log).unwrap_or_default(),
        |l| l.contains(": first second recorded"),
    );
    call(&mut c, "browser_scroll", json!({"direction": "down"}));
    // Exit saves the recording.
    assert!(c.finish(Duration::from_secs(30)).success());

    assert!(!old.exists(), "a recording older than 72 h is deleted");
    assert!(recent.exists());
    let made: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| *p != recent)
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    let name = made[0].file_name().unwrap().to_string_lossy().to_string();
    // session_YYYYmmdd_HHMMSS_default.webm
    assert!(
        name.starts_with("session_")
            && name.ends_with("_default.webm")
            && name.len() == "session_20260101_000000_default.webm".len(),
        "{name}"
    );
    let bytes = std::fs::read(&made[0]).unwrap();
    assert_eq!(&bytes[..4], &[0x1a, 0x45, 0xdf, 0xa3], "not EBML/WebM");
    let info = probe(&made[0]);
    let st = &info["streams"][0];
    assert_eq!(st["codec_name"], "vp8", "{info}");
    assert_eq!(
        (st["width"].as_i64(), st["height"].as_i64()),
        (Some(1280), Some(800))
    );
    let frames: i64 = st["nb_read_frames"].as_str().unwrap().parse().unwrap();
    assert!(frames >= 5, "{info}");
    assert!(
        info["format"]["format_name"]
            .as_str()
            .unwrap()
            .contains("webm"),
        "{info}"
    );
    let secs: f64 = info["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(secs >= 1.0, "{info}");
}

#[test]
fn browser_recording_without_ffmpeg_is_reported_and_the_session_runs() {
    require_chromium();
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(|d| d.join(n))
                .find(|p| p.is_file())
        })
        .unwrap();
    let pages = page_server();
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "browser:\n  record_sessions: true\n");
    let empty = tempfile::tempdir().unwrap();
    let chrome = chromium.display().to_string();
    let vars = [
        ("PATH", empty.path().to_str().unwrap()),
        ("CHROME_PATH", chrome.as_str()),
    ];
    let p = provider_for(&env, &vars, "browser");
    assert!(
        p["why"].as_str().unwrap().contains("needs ffmpeg on PATH"),
        "{p}"
    );
    let mut cmd = env.cmd();
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let v = call(
        &mut c,
        "browser_navigate",
        json!({"url": pages.url("/form.html")}),
    );
    assert_eq!(v["title"], "Order form", "{v}");
    assert!(
        v["recording"].as_str().unwrap().contains("needs ffmpeg"),
        "{v}"
    );
    // Said once, with the first navigation.
    let v = call(
        &mut c,
        "browser_navigate",
        json!({"url": pages.url("/form.html")}),
    );
    assert!(v.get("recording").is_none(), "{v}");
    assert!(c.finish(Duration::from_secs(30)).success());
    assert!(!env.hermes_home().join("browser_recordings").exists());
}
