//! PDF text in a child process: `pdf-extract` panics (on purpose) and can
//! abort on malformed files, so it runs in `hermes-mcp __pdf-text` with a
//! timeout, a memory limit and a size cap; a crash costs one URL, not the server.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// PDFs larger than this are refused before parsing.
pub(crate) const MAX_PDF_BYTES: usize = 20 * 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(30);
const MEMORY_LIMIT: u64 = 1024 * 1024 * 1024;

/// Entry point of the hidden `__pdf-text` command: PDF bytes on stdin, text on stdout.
pub fn child_main() -> std::process::ExitCode {
    let mut buf = Vec::new();
    if std::io::stdin()
        .take(MAX_PDF_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .is_err()
    {
        return std::process::ExitCode::from(3);
    }
    // Panics inside pdf-extract print to stderr; keep them short.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        let _ = writeln!(std::io::stderr(), "{msg}");
    }));
    match pdf_extract::extract_text_from_mem(&buf) {
        Ok(text) => {
            // This runs in the `__pdf-text` child; stdout is its pipe to the server.
            #[allow(clippy::disallowed_methods)]
            let mut out = std::io::stdout().lock();
            if out.write_all(text.as_bytes()).is_err() {
                return std::process::ExitCode::from(3);
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{e}");
            std::process::ExitCode::from(4)
        }
    }
}

/// Why a PDF gave no text; the Display text is the per-URL `error` of `web_extract`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PdfError {
    #[error("PDF is larger than {} MB; download it and read it locally instead", MAX_PDF_BYTES / (1024 * 1024))]
    TooLarge,
    #[error("cannot find hermes-mcp: {0}")]
    NoExe(std::io::Error),
    #[error("cannot start the PDF reader ({}): {source}", .exe.display())]
    Spawn {
        exe: PathBuf,
        source: std::io::Error,
    },
    /// Talking to the child failed (its pipe or its exit status).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("PDF text extraction timed out after {} s", TIMEOUT.as_secs())]
    Timeout,
    #[error("cannot read this PDF (the PDF reader exited with {0})")]
    Crashed(std::process::ExitStatus),
    #[error("cannot read this PDF: {0}")]
    Unreadable(String),
    #[error(
        "the PDF has no extractable text (it may be scanned images); try vision_analyze on its pages"
    )]
    NoText,
}

/// Extract the text of a PDF through the child process.
pub(crate) async fn pdf_text(helper: Option<&Path>, bytes: Vec<u8>) -> Result<String, PdfError> {
    if bytes.len() > MAX_PDF_BYTES {
        return Err(PdfError::TooLarge);
    }
    let exe = match helper {
        Some(p) => p.to_path_buf(),
        None => std::env::current_exe().map_err(PdfError::NoExe)?,
    };
    let mut cmd = tokio::process::Command::new(&exe);
    cmd.arg("__pdf-text")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: MEMORY_LIMIT,
                rlim_max: MEMORY_LIMIT,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|source| PdfError::Spawn {
        exe: exe.clone(),
        source,
    })?;
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let run = async {
        let writer = async move {
            let _ = stdin.write_all(&bytes).await;
            drop(stdin);
        };
        let mut out = Vec::new();
        let mut err = Vec::new();
        let (_, r1, r2) = tokio::join!(
            writer,
            stdout.read_to_end(&mut out),
            stderr.read_to_end(&mut err)
        );
        r1?;
        let _ = r2;
        let status = child.wait().await?;
        Ok::<_, PdfError>((status, out, err))
    };
    let (status, out, err) = tokio::time::timeout(TIMEOUT, run)
        .await
        .map_err(|_| PdfError::Timeout)??;
    if !status.success() {
        let why = String::from_utf8_lossy(&err);
        let why: String = why
            .trim()
            .lines()
            .last()
            .unwrap_or("")
            .chars()
            .take(200)
            .collect();
        return Err(if why.is_empty() {
            PdfError::Crashed(status)
        } else {
            PdfError::Unreadable(why)
        });
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    if text.trim().is_empty() {
        return Err(PdfError::NoText);
    }
    Ok(text)
}
