//! The built-in extractor (fetch through `net`, readability, HTML → Markdown,
//! PDF text, plain text passthrough) and Hermes' output post-processing
//! (inline-image placeholders, head+tail truncation with the footer, the full
//! text saved under `$HERMES_HOME/cache/web/`).

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use sha2::{Digest, Sha256};

use super::pdf;
use super::providers::Doc;
use crate::net::{FetchError, FetchOptions, HttpClient};

pub(crate) const DEFAULT_CHAR_LIMIT: i64 = 15_000;
pub(crate) const MAX_STORED_TEXT_CHARS: usize = 2_000_000;

/// `char_limit` clamped to Hermes' 2000..500000.
pub(crate) fn clamp_char_limit(v: i64) -> usize {
    v.clamp(2000, 500_000) as usize
}

/// Hermes' `convert_base64_images_to_links`.
pub(crate) fn convert_base64_images(text: &str) -> String {
    static MD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"!\[(?P<alt>[^\]]*)\]\(\s*data:image/[^;]+;base64,[A-Za-z0-9+/=\s]+\)")
            .expect("static regex")
    });
    static PAREN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\(\s*data:image/[^;]+;base64,[A-Za-z0-9+/=\s]+\)").expect("static regex")
    });
    static BARE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"data:image/[^;]+;base64,[A-Za-z0-9+/=]+").expect("static regex")
    });
    if !text.contains("data:image/") {
        return text.to_string();
    }
    let out = MD.replace_all(text, |c: &regex::Captures| {
        let alt = c.name("alt").map(|m| m.as_str().trim()).unwrap_or("");
        if alt.is_empty() {
            "[IMAGE]".to_string()
        } else {
            format!("[IMAGE: {alt}]")
        }
    });
    let out = PAREN.replace_all(&out, "[IMAGE]");
    BARE.replace_all(&out, "[IMAGE]").into_owned()
}

/// `$HERMES_HOME/cache/web/<host-slug≤60>-<sha256(url)[:10]>.md`.
pub(crate) fn cache_path(cache_dir: &Path, url: &str) -> PathBuf {
    static SLUG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[^A-Za-z0-9._-]").expect("static regex"));
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(|h| h.trim_matches(['[', ']']).to_lowercase())
        })
        .unwrap_or_else(|| "page".into())
        .replace(':', "_");
    let slug = SLUG.replace_all(&host, "-");
    let slug: String = slug.chars().take(60).collect();
    let slug = slug.trim_matches('-');
    let slug = if slug.is_empty() { "page" } else { slug };
    let digest = Sha256::digest(url.as_bytes());
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    cache_dir.join(format!("{slug}-{hex}.md"))
}

fn store_full_text(cache_dir: &Path, url: &str, content: &str) -> Option<PathBuf> {
    let path = cache_path(cache_dir, url);
    let total = content.chars().count();
    let body = if total > MAX_STORED_TEXT_CHARS {
        let cut: String = content.chars().take(MAX_STORED_TEXT_CHARS).collect();
        format!(
            "{cut}\n\n[... stored copy truncated at {} chars of {}; re-extract a more specific URL for the rest ...]",
            group(MAX_STORED_TEXT_CHARS),
            group(total)
        )
    } else {
        content.to_string()
    };
    let write = || -> Result<(), Box<dyn std::error::Error>> {
        std::fs::create_dir_all(cache_dir)?;
        crate::fs::write_atomic(&path, body.as_bytes(), &crate::fs::WriteOptions::OUTPUT)?;
        Ok(())
    };
    match write() {
        Ok(()) => Some(std::path::absolute(&path).unwrap_or(path)),
        Err(e) => {
            tracing::debug!("cannot store full web_extract text for {url}: {e}");
            None
        }
    }
}

/// Python's `f"{n:,}"`.
fn group(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Hermes' `_truncate_with_footer` (lengths in characters, as Python counts them).
pub(crate) fn truncate_with_footer(
    content: &str,
    url: &str,
    char_limit: usize,
    cache_dir: &Path,
) -> (String, bool) {
    let chars: Vec<char> = content.chars().collect();
    let total = chars.len();
    if total <= char_limit {
        return (content.to_string(), false);
    }
    let head_budget = (char_limit as f64 * 0.75) as usize;
    let tail_budget = char_limit - head_budget;
    let mut head: &[char] = &chars[..head_budget];
    let mut tail: &[char] = &chars[total - tail_budget..];
    if let Some(nl) = head.iter().rposition(|c| *c == '\n')
        && nl as f64 > head_budget as f64 * 0.5
    {
        head = &head[..nl];
    }
    if let Some(nl) = tail.iter().position(|c| *c == '\n')
        && (nl as f64) < tail_budget as f64 * 0.5
    {
        tail = &tail[nl + 1..];
    }
    let head: String = head.iter().collect();
    let tail: String = tail.iter().collect();
    let (hl, tl) = (head.chars().count(), tail.chars().count());
    let stored = store_full_text(cache_dir, url, content);
    let mut footer = vec![
        String::new(),
        format!("{} [TRUNCATED] {}", "─".repeat(8), "─".repeat(8)),
        format!(
            "Showing {} chars (head) + {} chars (tail) of {} total clean characters.",
            group(hl),
            group(tl),
            group(total)
        ),
    ];
    match stored {
        Some(p) => {
            let p = p.display();
            let middle = head.matches('\n').count() + 2;
            footer.push(format!("Full text saved to: {p}"));
            footer.push(format!(
                "To read the omitted middle: read_file path=\"{p}\" offset={middle} limit=200  (the file is the complete page; raise/lower offset to page through it)."
            ));
        }
        None => footer.push(
            "Full text could not be stored; re-run web_extract on a more specific URL or use browser_navigate for the complete page."
                .into(),
        ),
    }
    footer.push("─".repeat(29));
    let text = format!(
        "{head}\n\n[... middle omitted — see footer ...]\n\n{tail}\n{}",
        footer.join("\n")
    );
    (text, true)
}

// ---------------------------------------------------------------------------
// Built-in extractor
// ---------------------------------------------------------------------------

/// What kind of body a response carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Html,
    Pdf,
    Text,
    Unsupported,
}

pub(crate) fn sniff(content_type: Option<&str>, body: &[u8]) -> Kind {
    let ct = content_type
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim();
    if body.starts_with(b"%PDF-") || ct == "application/pdf" {
        return Kind::Pdf;
    }
    match ct {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "" => {
            let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_lowercase();
            if head.contains("<html") || head.contains("<!doctype html") {
                Kind::Html
            } else if std::str::from_utf8(&body[..body.len().min(4096)]).is_ok()
                || body.len() > 4096
            {
                Kind::Text
            } else {
                Kind::Unsupported
            }
        }
        t if t.starts_with("text/")
            || t.ends_with("+json")
            || t.ends_with("+xml")
            || matches!(
                t,
                "application/json"
                    | "application/xml"
                    | "application/javascript"
                    | "application/x-yaml"
                    | "application/yaml"
                    | "application/toml"
                    | "application/x-ndjson"
            ) =>
        {
            Kind::Text
        }
        _ => Kind::Unsupported,
    }
}

/// Decode a body with the charset from the Content-Type, else a `<meta charset>`
/// (HTML), else UTF-8 (with a BOM check).
pub(crate) fn decode(body: &[u8], content_type: Option<&str>, html: bool) -> String {
    let from_header = content_type.and_then(|ct| {
        ct.split(';').find_map(|p| {
            let p = p.trim();
            p.strip_prefix("charset=")
                .map(|c| c.trim_matches(['"', '\'']).to_string())
        })
    });
    let from_meta = || -> Option<String> {
        static META: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r#"(?i)<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)"#)
                .expect("static regex")
        });
        let head = String::from_utf8_lossy(&body[..body.len().min(4096)]);
        META.captures(&head).map(|c| c[1].to_string())
    };
    let label = from_header.or_else(|| if html { from_meta() } else { None });
    let enc = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = enc.decode(body);
    text.into_owned()
}

/// Title and Markdown for an HTML page: readability's main content converted
/// with htmd; the whole page (minus chrome) when readability finds nothing.
pub(crate) fn html_to_markdown(html: &str, url: &str) -> (String, String) {
    let cfg = dom_smoothie::Config {
        max_elements_to_parse: 0,
        ..Default::default()
    };
    let article = dom_smoothie::Readability::new(html, Some(url), Some(cfg))
        .ok()
        .and_then(|mut r| r.parse().ok());
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "svg", "iframe", "head", "template", "form", "nav",
            "button",
        ])
        .build();
    if let Some(a) = article {
        let md = converter.convert(&a.content).unwrap_or_default();
        let md = tidy(&md);
        if md.chars().filter(|c| !c.is_whitespace()).count() >= 100 {
            return (a.title.trim().to_string(), md);
        }
        let full = tidy(&converter.convert(html).unwrap_or_default());
        let title = if a.title.trim().is_empty() {
            page_title(html)
        } else {
            a.title.trim().to_string()
        };
        return (title, if full.len() > md.len() { full } else { md });
    }
    (
        page_title(html),
        tidy(&converter.convert(html).unwrap_or_default()),
    )
}

fn page_title(html: &str) -> String {
    let doc = dom_query::Document::from(html);
    doc.select("title").text().trim().to_string()
}

/// Collapse runs of blank lines and trailing spaces.
fn tidy(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut blank = 0;
    for line in md.lines() {
        let l = line.trim_end();
        if l.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(l);
        out.push('\n');
    }
    out.trim().to_string()
}

/// How the built-in extractor runs its PDF child.
#[derive(Debug, Clone)]
pub(crate) struct BuiltinOptions {
    /// The `hermes-mcp` executable that has the hidden `__pdf-text` command.
    pub helper_exe: Option<PathBuf>,
}

/// Fetch and extract one URL with the built-in extractor.
pub(crate) async fn builtin_extract(http: &HttpClient, url_s: &str, opts: &BuiltinOptions) -> Doc {
    let url = match url::Url::parse(url_s) {
        Ok(u) => u,
        Err(e) => return Doc::err(url_s, format!("Invalid URL: {e}")),
    };
    let fetched = match http.fetch(&url, &FetchOptions::default()).await {
        Ok(f) => f,
        Err(FetchError::Blocked(b)) => {
            let mut d = Doc::err(url_s, b.to_string());
            if let Some(pb) = b.policy_block() {
                d.error = Some(pb.message.clone());
            }
            return d;
        }
        Err(e) => return Doc::err(url_s, e.to_string()),
    };
    let final_url = fetched.final_url.to_string();
    if fetched.status >= 400 {
        let reason = reqwest::StatusCode::from_u16(fetched.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        return Doc::err(
            url_s,
            format!(
                "HTTP {} {reason} fetching {final_url}. If the page needs JavaScript or a login, use the browser tool instead.",
                fetched.status
            )
            .replace("  ", " "),
        );
    }
    let ct = fetched.content_type();
    let (title, content) = match sniff(ct.as_deref(), &fetched.body) {
        Kind::Html => {
            let html = decode(&fetched.body, ct.as_deref(), true);
            let fu = final_url.clone();
            match tokio::task::spawn_blocking(move || html_to_markdown(&html, &fu)).await {
                Ok(r) => r,
                Err(e) => return Doc::err(url_s, format!("HTML extraction failed: {e}")),
            }
        }
        Kind::Pdf => match pdf::pdf_text(opts.helper_exe.as_deref(), fetched.body).await {
            Ok(text) => (String::new(), text),
            Err(e) => return Doc::err(url_s, e.to_string()),
        },
        Kind::Text => (String::new(), decode(&fetched.body, ct.as_deref(), false)),
        Kind::Unsupported => {
            return Doc::err(
                url_s,
                format!(
                    "Unsupported content type {}: web_extract reads HTML, PDF and text. Use vision_analyze for images or the browser tool for anything else.",
                    ct.as_deref().unwrap_or("(none)")
                ),
            );
        }
    };
    Doc {
        url: url_s.to_string(),
        title,
        content,
        error: None,
        final_url: (final_url != url_s).then_some(final_url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Character references decode through both html5ever versions in the
    /// tree (htmd's 0.38, dom_query's 0.40), whose entity table is patched
    /// (tools/patched/web_atoms): whole names, names without their `;`, the
    /// longest legacy prefix of a longer name, two code points, unknown names.
    #[test]
    fn character_references_decode_through_both_html5ever_versions() {
        let refs = "AT&amp;T &notin; &notit; &AMP &acE; &Aacutex &bogus; &zwj;|";
        let want = "AT&T \u{2209} \u{ac}it; & \u{223e}\u{333} \u{c1}x &bogus; \u{200d}|";
        assert_eq!(page_title(&format!("<title>{refs}</title>")), want);
        let md = htmd::HtmlToMarkdown::new()
            .convert(&format!("<p>{refs}</p>"))
            .unwrap();
        assert_eq!(md.replace('\\', ""), want);
    }

    #[test]
    fn readability_titles_decode_references_through_html_escape() {
        // dom_smoothie decodes a title's text once more, with html-escape's
        // table: names, numbers, unknown names.
        let para = "<p>Plenty of words in one paragraph of the article body. </p>".repeat(12);
        let html = format!(
            "<html><head><title>Caf&amp;eacute; &amp;amp; &amp;NotEqualTilde; &amp;#x41;&amp;zwnj; &amp;nope;</title></head><body><article>{para}</article></body></html>"
        );
        let (title, md) = html_to_markdown(&html, "http://127.0.0.1/a");
        assert!(md.contains("Plenty of words"), "{md}");
        assert_eq!(title, "Caf\u{e9} & \u{2242} A\u{200c} &nope;");
    }

    #[test]
    fn base64_images_become_placeholders() {
        let t = "a ![Logo](data:image/png;base64,iVBORw0KGgo=) b ![](data:image/gif;base64,R0lG) c (data:image/png;base64,AAAA) d data:image/jpeg;base64,/9j/4AAQ e ![real](https://x/y.png)";
        assert_eq!(
            convert_base64_images(t),
            "a [IMAGE: Logo] b [IMAGE] c [IMAGE] d [IMAGE] e ![real](https://x/y.png)"
        );
    }

    #[test]
    fn truncation_matches_hermes() {
        let dir = tempfile::tempdir().unwrap();
        let content: String = (0..2000).map(|i| format!("line {i:05}\n")).collect();
        let (out, cut) = truncate_with_footer(&content, "https://ex.com/a", 2000, dir.path());
        assert!(cut);
        let p = cache_path(dir.path(), "https://ex.com/a");
        assert!(
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("ex.com-")
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), content);
        assert!(out.contains("[... middle omitted — see footer ...]"));
        assert!(out.contains("──────── [TRUNCATED] ────────"));
        assert!(out.contains(&format!("Full text saved to: {}", p.display())));
        assert!(out.contains(&format!(
            "of {} total clean characters.",
            group(content.chars().count())
        )));
        // head ends on a line boundary; the omitted middle starts after it
        let head = out.split("\n\n[... middle").next().unwrap();
        assert!(head.ends_with("line 00135"), "{}", &head[head.len() - 20..]);
        assert!(out.contains("offset=137 limit=200"));
        let (same, cut) = truncate_with_footer("short", "u", 2000, dir.path());
        assert!(!cut);
        assert_eq!(same, "short");
        assert_eq!(group(1234567), "1,234,567");
    }

    #[test]
    fn sniffing_and_decoding() {
        assert_eq!(sniff(Some("text/html; charset=utf-8"), b"<p>"), Kind::Html);
        assert_eq!(
            sniff(Some("application/octet-stream"), b"%PDF-1.4"),
            Kind::Pdf
        );
        assert_eq!(sniff(Some("application/json"), b"{}"), Kind::Text);
        assert_eq!(sniff(Some("image/png"), b"\x89PNG"), Kind::Unsupported);
        assert_eq!(sniff(None, b"<!DOCTYPE html><html>"), Kind::Html);
        let latin1 = b"<meta charset=\"iso-8859-1\"><p>caf\xe9</p>";
        assert!(decode(latin1, None, true).contains("café"));
        assert!(decode(b"caf\xe9", Some("text/plain; charset=windows-1252"), false) == "café");
    }
}
