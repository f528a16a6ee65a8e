//! Hermes' URL guards that run before anything is fetched: URL normalisation
//! (`normalize_url_for_request`), secrets in URLs (`agent.redact._PREFIX_RE`)
//! and credential-like query parameters (`sensitive_query_param_name`).

use std::sync::LazyLock;

use percent_encoding::percent_decode_str;
use regex::Regex;

use crate::redact::PREFIX_PATTERNS;

/// Python's `(?<![A-Za-z0-9_-])(...)(?![A-Za-z0-9_-])`, written with explicit
/// boundary characters (the `regex` crate has no look-around; for a yes/no
/// match the two are equivalent).
static PREFIX_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?:^|[^A-Za-z0-9_-])(?:{})(?:$|[^A-Za-z0-9_-])",
        PREFIX_PATTERNS.join("|")
    ))
    .expect("prefix regex")
});

/// Hermes' `_SENSITIVE_QUERY_PARAM_NAMES`.
const SENSITIVE_QUERY_PARAMS: &[&str] = &[
    "access_token",
    "api_key",
    "apikey",
    "auth_token",
    "authorization",
    "awsaccesskeyid",
    "client_secret",
    "credential",
    "credentials",
    "jwt",
    "password",
    "passwd",
    "secret",
    "session_id",
    "signature",
    "token",
    "x_amz_security_token",
    "x_amz_signature",
    "x-amz-security-token",
    "x-amz-signature",
];

/// Whether `text` contains something shaped like a vendor API key or token.
pub(crate) fn contains_secret(text: &str) -> bool {
    PREFIX_RE.is_match(text)
}

fn unquote(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// Hermes checks the raw URL, its decoded form, the normalised URL and its decoded form.
pub(crate) fn url_has_secret(raw: &str, normalized: &str) -> bool {
    contains_secret(raw)
        || contains_secret(&unquote(raw))
        || contains_secret(normalized)
        || contains_secret(&unquote(normalized))
}

/// The first credential-like query parameter with a non-empty value, as
/// written in the URL (Hermes' `sensitive_query_param_name`).
pub(crate) fn sensitive_query_param(url: &str) -> Option<String> {
    let url = url.trim();
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return None;
    }
    let q = url.split_once('?')?.1;
    let q = q.split('#').next().unwrap_or("");
    for pair in q.split(['&', ';']) {
        if pair.is_empty() {
            continue;
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        // parse_qsl: '+' is a space, then percent-decoding.
        let key = unquote(&k.replace('+', " "));
        let val = unquote(&v.replace('+', " "));
        if !val.is_empty() && SENSITIVE_QUERY_PARAMS.contains(&key.to_lowercase().as_str()) {
            return Some(key);
        }
    }
    None
}

/// Hermes' `normalize_url_for_request`: trim, drop whitespace right after
/// `scheme://`, and for http(s) IDNA-encode the host and percent-encode
/// non-ASCII path/query/fragment text (the WHATWG parser in `url` does both).
/// Anything that does not parse as an http(s) URL comes back trimmed.
pub(crate) fn normalize_url(raw: &str) -> String {
    static WS_AFTER_SCHEME: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^([A-Za-z][A-Za-z0-9+.-]*://)\s+").expect("static regex"));
    let s = raw.trim();
    let s = WS_AFTER_SCHEME.replace(s, "$1").into_owned();
    match url::Url::parse(&s) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => u.to_string(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_urls() {
        assert!(url_has_secret(
            "https://x.com/?k=sk-abcdefghijklmnop",
            "https://x.com/?k=sk-abcdefghijklmnop"
        ));
        // Percent-encoded "sk-".
        let enc = "https://x.com/%73k-abcdefghijklmnop";
        assert!(url_has_secret(enc, enc));
        assert!(contains_secret("/ghp_0123456789abcdef/"));
        assert!(contains_secret("AKIAABCDEFGHIJKLMNOP"));
        // Boundary: embedded in a longer word is not a key.
        assert!(!contains_secret("xsk-abcdefghijklmnop"));
        assert!(!contains_secret("ghp_0123456789abcdef_x"));
        assert!(!contains_secret(
            "https://example.com/blog/desk-lamps-review"
        ));
        assert!(!contains_secret("sk-short"));
    }

    #[test]
    fn credential_params() {
        assert_eq!(
            sensitive_query_param("https://x.com/a?q=1&Token=abc"),
            Some("Token".into())
        );
        assert_eq!(
            sensitive_query_param("https://x.com/a?X-Amz-Signature=ff"),
            Some("X-Amz-Signature".into())
        );
        assert_eq!(sensitive_query_param("https://x.com/a?token="), None);
        assert_eq!(sensitive_query_param("https://x.com/a?key=1&code=2"), None);
        assert_eq!(sensitive_query_param("ftp://x.com/a?token=1"), None);
        assert_eq!(
            sensitive_query_param("https://x.com/?api%5Fkey=1"),
            Some("api_key".into())
        );
    }

    #[test]
    fn normalizes_like_hermes() {
        assert_eq!(
            normalize_url("  https://  wttr.in/Köln "),
            "https://wttr.in/K%C3%B6ln"
        );
        assert_eq!(
            normalize_url("https://bücher.example/"),
            "https://xn--bcher-kva.example/"
        );
        assert_eq!(normalize_url("not a url"), "not a url");
    }
}
