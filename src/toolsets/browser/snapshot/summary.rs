//! A snapshot too long to return whole: stored in a file the model can page
//! through, or summarised by the auxiliary model Hermes' task `web_extract`
//! resolves to (its own settings, else the main provider and model, else
//! Hermes' fallback chain; `crate::llm::route::resolve`).

use super::textsafety;
use crate::hermes::{Context, envvars};
use crate::llm::Mode;
use crate::llm::route::resolve::{self, Resolution, Task};
use crate::llm::task::textaux;
use crate::llm::task::vision::VisionClient;

/// Hermes' `MAX_STORED_SNAPSHOT_CHARS` (hermes-agent: tools/browser_tool.py).
const MAX_STORED_SNAPSHOT_CHARS: usize = 2_000_000;

/// Hermes' `_store_full_snapshot` (hermes-agent: tools/browser_tool.py):
/// `$HERMES_HOME/cache/web/browser-snapshot-<sha10>.txt`.
pub(crate) fn store_full_snapshot(ctx: &Context, text: &str) -> Option<String> {
    use sha2::Digest;
    let mut content = text.to_string();
    let n = content.chars().count();
    if n > MAX_STORED_SNAPSHOT_CHARS {
        content = content
            .chars()
            .take(MAX_STORED_SNAPSHOT_CHARS)
            .collect::<String>()
            + &format!(
                "\n\n[... stored copy truncated at {MAX_STORED_SNAPSHOT_CHARS} chars of {n} ...]"
            );
    }
    let dir = ctx.home.cache_dir("web");
    std::fs::create_dir_all(&dir).ok()?;
    let digest = sha2::Sha256::digest(content.as_bytes());
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    let path = dir.join(format!("browser-snapshot-{hex}.txt"));
    std::fs::write(&path, content).ok()?;
    Some(path.display().to_string())
}

/// `1234567` → `1,234,567` (Python's `{:,}`).
fn thousands(n: usize) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Hermes' extraction prompt (`_extract_relevant_content`, hermes-agent:
/// tools/browser_tool.py): task-aware when a task is known.
fn extraction_prompt(text: &str, task: &str) -> String {
    if task.trim().is_empty() {
        return format!(
            "Summarize this page snapshot, preserving:\n1. All interactive elements with their ref IDs (like [ref=e5])\n2. Key text content and headings\n3. Important information visible on the page\n\nPage Snapshot:\n{text}\n\nProvide a concise summary focused on interactive elements and key content."
        );
    }
    format!(
        "You are a content extractor for a browser automation agent.\n\nThe user's task is: {}\n\nGiven the following page snapshot (accessibility tree representation), extract and summarize the most relevant information for completing this task. Focus on:\n1. Interactive elements (buttons, links, inputs) that might be needed\n2. Text content relevant to the task (prices, descriptions, headings, important info)\n3. Navigation structure if relevant\n\nKeep ref IDs (like [ref=e5]) for interactive elements so the agent can use them.\n\nPage Snapshot:\n{text}\n\nProvide a concise summary that preserves actionable information and relevant content.",
        task.trim()
    )
}

/// Hermes' `_extract_relevant_content`: the auxiliary model (`auxiliary.web_extract`,
/// `AUXILIARY_WEB_EXTRACT_MODEL`) summarises the (redacted) snapshot; the full
/// text is stored and pointed to. `None` when no auxiliary model is
/// configured or the call fails or answers nothing (then it is truncated).
pub(crate) async fn summarize_snapshot(ctx: &Context, text: &str, task: &str) -> Option<String> {
    let Mode::Auxiliary(cfg) = summary_model(ctx).mode else {
        return None;
    };
    let http = VisionClient::new().http(ctx).ok()?;
    let prompt = textsafety::redact(&extraction_prompt(text, task));
    // Hermes: `call_llm(task="web_extract", max_tokens=4000, temperature=0.1)`.
    let answer = match textaux::complete(&http, &cfg, &[("user", &prompt)], Some(0.1), Some(4000))
        .await
    {
        Ok(a) if !a.trim().is_empty() => a,
        Ok(_) => return None,
        Err(e) => {
            tracing::info!("browser_snapshot: summarising with the auxiliary model failed: {e}");
            return None;
        }
    };
    let note = store_full_snapshot(ctx, text)
        .map(|p| {
            format!(
                "\n\n[Summarized from a {}-char snapshot. Full snapshot saved to: {p} — read it with read_file if anything is missing.]",
                thousands(text.chars().count())
            )
        })
        .unwrap_or_default();
    Some(textsafety::redact(answer.trim()) + &note)
}

/// The model that summarises long snapshots: Hermes' auxiliary task
/// `web_extract` (`auxiliary.web_extract.*`, `AUXILIARY_WEB_EXTRACT_MODEL`,
/// else the main provider and model, else Hermes' fallback chain).
pub(crate) fn summary_model(ctx: &Context) -> Resolution {
    resolve::resolve(ctx, WEB_EXTRACT)
}

/// Hermes' auxiliary task for page summaries.
const WEB_EXTRACT: Task = Task::new("web_extract", Some(envvars::AUXILIARY_WEB_EXTRACT_MODEL));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_and_counts_as_hermes_writes_them() {
        assert_eq!(thousands(15234), "15,234");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
        let p = extraction_prompt("- button \"Go\" [ref=e1]", "buy a ticket");
        assert!(p.contains("The user's task is: buy a ticket\n\n"), "{p}");
        assert!(p.contains("Page Snapshot:\n- button \"Go\" [ref=e1]\n\n"));
        assert!(extraction_prompt("x", " ").starts_with("Summarize this page snapshot"));
    }
}
