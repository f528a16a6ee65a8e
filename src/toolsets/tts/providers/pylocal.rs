//! Hermes' local models through their Python packages, run by Hermes' Python
//! ([`crate::toolsets::tts::python`]): Piper (`piper-tts`, hermes-agent:
//! `tools/tts_tool.py` `_generate_piper_tts`, voice lookup and download in
//! `_resolve_piper_voice_path`), NeuTTS (`neutts`, `_generate_neutts` +
//! `tools/neutts_synth.py`) and KittenTTS (`kittentts`, `_generate_kittentts`).
//!
//! Each engine is a small script (`py/*.py`, the calls Hermes makes, with
//! `tts.<provider>` read in Python as Hermes reads it) started per call, like
//! Hermes' NeuTTS subprocess; Hermes keeps Piper and KittenTTS models loaded
//! in its process instead, so a call here pays the model load each time. The
//! WAV they write is delivered by [`super::deliver_wav`] (converted for
//! `.mp3`/`.ogg`/`.flac`).
//!
//! A hermes-mcp extension: `tts.piper.voices_base_url` moves piper's voice
//! download (default `https://huggingface.co/rhasspy/piper-voices/resolve/main`)
//! to a mirror. A configured URL is fetched here, through [`crate::net`]
//! (every hop resolved and checked, connections pinned to the checked
//! addresses; a mirror on a private address is fine, cloud metadata never),
//! with the URLs and file names of piper's `download_voices.download_voice`;
//! piper's Python then only loads the local files. Piper's own downloader
//! (`urlopen`, which follows redirects anywhere) runs only for the default URL.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use super::{Produced, deliver_wav};
use crate::hermes::Context;
use crate::toolsets::tts::audio;
use crate::toolsets::tts::config::section;
use crate::toolsets::tts::error::{Cause, TtsError};
use crate::toolsets::tts::plan::{DEFAULT_PIPER_VOICE, LocalModel, piper_voices_dir};

const COMMON: &str = include_str!("py/common.py");
const PIPER: &str = include_str!("py/piper_synth.py");
const PIPER_DOWNLOAD: &str = include_str!("py/piper_download.py");
const NEUTTS: &str = include_str!("py/neutts_synth.py");
const KITTENTTS: &str = include_str!("py/kittentts_synth.py");

pub(crate) const DEFAULT_KITTENTTS_MODEL: &str = "KittenML/kitten-tts-nano-0.8-int8";
pub(crate) const DEFAULT_KITTENTTS_VOICE: &str = "Jasper";
/// Hermes' timeouts: NeuTTS' subprocess (120 s), the voice download (300 s).
const SYNTH_TIMEOUT: Duration = Duration::from_secs(120);
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// The largest voice file fetched from a mirror (piper's `high` voices are ~115 MB).
const VOICE_MAX_BYTES: usize = 256 * 1024 * 1024;
const VOICES_LIST: &str = "https://github.com/OHF-Voice/piper1-gpl/blob/main/docs/VOICES.md";

/// What a Python child did.
struct Ran {
    ok: bool,
    stderr: String,
}

async fn run_python(
    python: &Path,
    script: &str,
    args: &[&str],
    stdin: Option<&Value>,
    timeout: Duration,
    what: &str,
    timed_out: Option<String>,
) -> Result<Ran, TtsError> {
    let mut cmd = Command::new(python);
    // From `/`: `python -c` puts the working directory (Codex's, usually the
    // user's project) first on `sys.path`; nothing of the project may run.
    cmd.current_dir("/")
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(if stdin.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| TtsError::Dependency(format!("cannot run {}: {e}", python.display())))?;
    if let (Some(v), Some(mut w)) = (stdin, child.stdin.take()) {
        // A child that exits early closes the pipe; its stderr says why.
        let _ = w.write_all(v.to_string().as_bytes()).await;
        drop(w);
    }
    let out = tokio::time::timeout(timeout, child.wait_with_output())
        .await
        .map_err(|_| {
            TtsError::failed(
                timed_out
                    .unwrap_or_else(|| format!("{what} timed out after {}s", timeout.as_secs())),
            )
        })?
        .map_err(|e| TtsError::failed_by(format!("{what}: {e}"), e))?;
    Ok(Ran {
        ok: out.status.success(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The exception a runner reported (`HERMES_MCP_ERROR {...}`), worded as Hermes'
/// handlers word it; else the tail of stderr.
fn python_error(model: LocalModel, stderr: &str) -> TtsError {
    let reported = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("HERMES_MCP_ERROR "))
        .and_then(|j| serde_json::from_str::<Value>(j).ok());
    let Some(v) = reported else {
        let tail: String = stderr.trim().chars().rev().take(1000).collect();
        let tail: String = tail.chars().rev().collect();
        return TtsError::failed(if tail.is_empty() {
            "the Python runner exited without a message".into()
        } else {
            tail
        });
    };
    let kind = v["type"].as_str().unwrap_or("");
    let msg = v["message"].as_str().unwrap_or("").to_string();
    match kind {
        "ImportError" | "ModuleNotFoundError" => TtsError::Plain(model.not_installed().into()),
        "ValueError" | "UnicodeDecodeError" | "JSONDecodeError" => TtsError::Config(msg),
        "FileNotFoundError" => TtsError::Dependency(msg),
        _ => TtsError::failed(msg),
    }
}

fn script(body: &str) -> String {
    format!("{COMMON}\n{body}")
}

fn temp_wav(requested: &Path) -> Result<tempfile::NamedTempFile, TtsError> {
    let dir = requested.parent().unwrap_or(Path::new("."));
    tempfile::Builder::new()
        .prefix(".tts-")
        .suffix(".wav")
        .tempfile_in(dir)
        .map_err(|e| TtsError::failed_by(format!("cannot write in {}: {e}", dir.display()), e))
}

/// Speak `text` with `model` through `python` into `requested`.
pub(crate) async fn run_python_model(
    ctx: &Context,
    cfg: &Map<String, Value>,
    model: LocalModel,
    python: &Path,
    text: &str,
    requested: &Path,
) -> Result<Produced, TtsError> {
    let section = section(cfg, model.module()).cloned().unwrap_or_default();
    let tmp = temp_wav(requested)?;
    let out = tmp.path().to_string_lossy().into_owned();
    let ran = match model {
        LocalModel::Piper => {
            let voice = piper_voice(ctx, &section, python).await?;
            let req = json!({"text": text, "out": out, "model": voice, "config": section});
            run_python(
                python,
                &script(PIPER),
                &[],
                Some(&req),
                SYNTH_TIMEOUT,
                "Piper",
                None,
            )
            .await?
        }
        LocalModel::KittenTts => {
            let req = json!({
                "text": text, "out": out, "config": section,
                "default_model": DEFAULT_KITTENTTS_MODEL, "default_voice": DEFAULT_KITTENTTS_VOICE,
            });
            run_python(
                python,
                &script(KITTENTTS),
                &[],
                Some(&req),
                SYNTH_TIMEOUT,
                "KittenTTS",
                None,
            )
            .await?
        }
        LocalModel::NeuTts => {
            let req = json!({"text": text, "out": out, "config": section});
            let ran = run_python(
                python,
                &script(NEUTTS),
                &[],
                Some(&req),
                SYNTH_TIMEOUT,
                "NeuTTS synthesis",
                None,
            )
            .await?;
            if !ran.ok {
                // Hermes: stderr without the "OK:" line.
                let lines: Vec<&str> = ran
                    .stderr
                    .trim()
                    .lines()
                    .filter(|l| !l.starts_with("OK:"))
                    .collect();
                let msg = if lines.is_empty() {
                    "unknown error".to_string()
                } else {
                    lines.join("\n")
                };
                return Err(TtsError::failed(format!("NeuTTS synthesis failed: {msg}")));
            }
            ran
        }
    };
    if !ran.ok {
        return Err(python_error(model, &ran.stderr));
    }
    let info = audio::wav_file_info(tmp.path())
        .ok_or_else(|| TtsError::failed(format!("{} did not write a WAV file", model.module())))?;
    deliver_wav(ctx, tmp, requested, Some(info.duration_secs())).await
}

/// A setting as Python's `x or default` reads it: empty and absent are the default.
fn truthy_str(m: &Map<String, Value>, key: &str) -> Option<String> {
    match m.get(key)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Hermes' `_resolve_piper_voice_path`: a `.onnx` path, a voice already in the
/// voices directory, or a download with piper's own `download_voices`.
async fn piper_voice(
    ctx: &Context,
    piper: &Map<String, Value>,
    python: &Path,
) -> Result<PathBuf, TtsError> {
    let voice = truthy_str(piper, "voice").unwrap_or_else(|| DEFAULT_PIPER_VOICE.into());
    let dir = piper_voices_dir(ctx, piper);
    std::fs::create_dir_all(&dir)
        .map_err(|e| TtsError::failed_by(format!("cannot create {}: {e}", dir.display()), e))?;
    let candidate = crate::hermes::home::expand_tilde(Path::new(&voice));
    if candidate
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
        && candidate.exists()
    {
        return Ok(candidate);
    }
    let cached = dir.join(format!("{voice}.onnx"));
    if cached.exists() && dir.join(format!("{voice}.onnx.json")).exists() {
        return Ok(cached);
    }
    tracing::info!(
        "[Piper] Downloading voice '{voice}' to {} (first use)",
        dir.display()
    );
    let base = truthy_str(piper, "voices_base_url").unwrap_or_default();
    if !base.is_empty() {
        let url = url::Url::parse(&base).map_err(|e| {
            TtsError::failed_by(
                format!("tts.piper.voices_base_url {base:?} is not a URL: {e}"),
                e,
            )
        })?;
        let http = voice_client(ctx)?;
        download_voice(&http, &url, &voice, &dir).await?;
        return Ok(cached);
    }
    let dir_s = dir.to_string_lossy().into_owned();
    let ran = run_python(
        python,
        PIPER_DOWNLOAD,
        &[voice.as_str(), "--download-dir", &dir_s],
        None,
        DOWNLOAD_TIMEOUT,
        &format!("Piper voice download for '{voice}'"),
        Some(format!(
            "Piper voice download timed out after {}s for '{voice}'",
            DOWNLOAD_TIMEOUT.as_secs()
        )),
    )
    .await?;
    if !ran.ok {
        // Hermes quotes the first 400 characters of stderr, which for a Python
        // traceback is its uninformative head; the exception line is quoted instead.
        let err = ran.stderr.trim();
        let err = if err.starts_with("Traceback") {
            err.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or(err)
        } else {
            err
        };
        let err: String = if err.is_empty() {
            "no stderr output".into()
        } else {
            err.chars().take(400).collect()
        };
        return Err(TtsError::failed(format!(
            "Piper voice download failed for '{voice}': {err}"
        )));
    }
    if !cached.exists() {
        return Err(TtsError::failed(format!(
            "Piper voice download completed but {} is missing — check voice name (see: {VOICES_LIST})",
            cached.display()
        )));
    }
    Ok(cached)
}

/// The client for a configured voices mirror: the user's URL policy with
/// private addresses allowed (a configured endpoint, as `send_api` treats
/// one), Hermes' 300 s for the whole download.
fn voice_client(ctx: &Context) -> Result<crate::net::HttpClient, TtsError> {
    let policy = crate::net::Policy {
        allow_private: true,
        ..crate::net::Policy::from_context(ctx)
    };
    let limits = crate::net::Limits {
        total: DOWNLOAD_TIMEOUT,
        max_bytes: VOICE_MAX_BYTES,
        ..crate::net::Limits::default()
    };
    crate::net::HttpClient::new(
        policy,
        std::sync::Arc::new(crate::net::SystemLookup),
        limits,
    )
    .map_err(|e| TtsError::failed_by(e.to_string(), e))
}

/// piper's `download_voice` (piper-tts: `piper/download_voices.py`) against
/// the mirror at `base`, through `http`: `<voice>.onnx` and `.onnx.json` into
/// `dir`, each fetched only when missing or empty, written whole or not at all.
async fn download_voice(
    http: &crate::net::HttpClient,
    base: &url::Url,
    voice: &str,
    dir: &Path,
) -> Result<(), TtsError> {
    static VOICE_PATTERN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^(?P<family>[^-]+)_(?P<region>[^-]+)-(?P<name>[^-]+)-(?P<quality>(?s:.)+)$",
        )
        .expect("voice pattern")
    });
    let said = |why: String| format!("Piper voice download failed for '{voice}': {why}");
    let failed = |why: String| TtsError::failed(said(why));
    let failed_by = |why: String, cause: Cause| TtsError::failed_by(said(why), cause);
    let code = voice.trim();
    let Some(m) = VOICE_PATTERN.captures(code) else {
        return Err(failed(format!(
            "ValueError: Voice '{code}' did not match pattern: <language>-<name>-<quality> like 'en_US-lessac-medium'"
        )));
    };
    let (family, name, quality) = (&m["family"], &m["name"], &m["quality"]);
    let lang = format!("{family}_{}", &m["region"]);
    let stem = format!("{lang}-{name}-{quality}");
    for ext in [".onnx", ".onnx.json"] {
        let dest = dir.join(format!("{stem}{ext}"));
        if std::fs::metadata(&dest).is_ok_and(|md| md.len() > 0) {
            continue;
        }
        let raw = format!(
            "{}/{family}/{lang}/{name}/{quality}/{stem}{ext}?download=true",
            base.as_str().trim_end_matches('/')
        );
        let url = url::Url::parse(&raw)
            .map_err(|e| failed_by(format!("bad URL {raw}: {e}"), e.into()))?;
        let got = http
            .fetch(&url, &crate::net::FetchOptions {
                max_bytes: Some(VOICE_MAX_BYTES),
                accept: Some("*/*".into()),
            })
            .await
            .map_err(|e| match e {
                crate::net::FetchError::Blocked(b) => TtsError::failed_by(format!(
                    "tts.piper.voices_base_url is refused: fetching {url} reached a refused address: {b}"
                ), b),
                crate::net::FetchError::Timeout(_) => TtsError::failed(format!(
                    "Piper voice download timed out after {}s for '{voice}'",
                    DOWNLOAD_TIMEOUT.as_secs()
                )),
                other => failed_by(other.to_string(), other.into()),
            })?;
        if got.status >= 400 {
            // urllib's HTTPError, as piper's downloader reports it.
            let reason = reqwest::StatusCode::from_u16(got.status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("");
            return Err(failed(format!(
                "HTTP Error {}: {reason} ({url})",
                got.status
            )));
        }
        super::write_audio(&dest, &got.body)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runner_errors_are_worded_as_hermes() {
        let e = |s: &str| python_error(LocalModel::KittenTts, s);
        assert!(matches!(
            e("x\nHERMES_MCP_ERROR {\"type\": \"ValueError\", \"message\": \"bad\"}\n"),
            TtsError::Config(m) if m == "bad"
        ));
        assert!(matches!(
            e("HERMES_MCP_ERROR {\"type\": \"ModuleNotFoundError\", \"message\": \"No module\"}"),
            TtsError::Plain(m) if m.contains("pip install https://github.com/KittenML")
        ));
        assert!(matches!(
            e("HERMES_MCP_ERROR {\"type\": \"FileNotFoundError\", \"message\": \"f\"}"),
            TtsError::Dependency(_)
        ));
        assert!(matches!(
            e("HERMES_MCP_ERROR {\"type\": \"RuntimeError\", \"message\": \"r\"}"),
            TtsError::Failed { message: m, .. } if m == "r"
        ));
        assert!(
            matches!(e("Traceback ...\nSegfault"), TtsError::Failed { message: m, .. } if m.ends_with("Segfault"))
        );
    }

    /// A resolver that answers every name with the cloud metadata address.
    struct ToMetadata;

    impl crate::net::Lookup for ToMetadata {
        fn lookup(
            &self,
            _host: &str,
        ) -> futures::future::BoxFuture<'static, std::io::Result<Vec<std::net::IpAddr>>> {
            Box::pin(async { Ok(vec!["169.254.169.254".parse().expect("ip")]) })
        }
    }

    #[tokio::test]
    async fn a_mirror_whose_name_resolves_to_metadata_is_refused_before_connecting() {
        let policy = crate::net::Policy {
            allow_private: true,
            ..crate::net::Policy::default()
        };
        let limits = crate::net::Limits {
            connect: Duration::from_millis(300),
            ..crate::net::Limits::default()
        };
        let http =
            crate::net::HttpClient::new(policy, std::sync::Arc::new(ToMetadata), limits).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for base in [
            "http://voices.mirror.example/piper",
            "http://metadata.google.internal/",
        ] {
            let url = url::Url::parse(base).unwrap();
            let e = download_voice(&http, &url, "en_US-tiny-medium", dir.path())
                .await
                .unwrap_err();
            assert!(
                matches!(&e, TtsError::Failed { message: m, .. }
                    if m.starts_with("tts.piper.voices_base_url is refused: fetching ")
                        && m.ends_with("Blocked: URL targets a cloud metadata endpoint")),
                "{base}: {e:?}"
            );
        }
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
        // A name that is no voice is piper's ValueError, before any request.
        let url = url::Url::parse("http://voices.mirror.example/").unwrap();
        let e = download_voice(&http, &url, "lessac", dir.path())
            .await
            .unwrap_err();
        assert!(
            matches!(&e, TtsError::Failed { message: m, .. } if m == "Piper voice download failed for 'lessac': ValueError: Voice 'lessac' did not match pattern: <language>-<name>-<quality> like 'en_US-lessac-medium'"),
            "{e:?}"
        );
    }

    #[test]
    fn voices_dir_follows_hermes() {
        let ctx = crate::hermes::context::test_ctx("", &[]);
        let m = |y: &str| serde_json::from_str::<Map<String, Value>>(y).unwrap();
        assert_eq!(
            piper_voices_dir(&ctx, &m("{}")),
            Path::new("/nonexistent-hermes/cache/piper-voices")
        );
        assert_eq!(
            piper_voices_dir(&ctx, &m(r#"{"voices_dir": "/v"}"#)),
            Path::new("/v")
        );
        assert_eq!(
            piper_voices_dir(&ctx, &m(r#"{"voices_dir": ""}"#)),
            Path::new("/nonexistent-hermes/cache/piper-voices")
        );
    }
}
