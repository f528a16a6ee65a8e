//! Secret redaction, ported from Hermes' `agent/redact.py`
//! (`redact_sensitive_text`, hermes-agent 0.19.0).
//!
//! The same patterns, in the same order, with the same masks: vendor-prefixed
//! keys keep their first 6 and last 4 characters when 18 characters or longer
//! (`sk-pro...7890`), shorter ones become `***`; `KEY=value` assignments,
//! JSON/YAML secret fields, `Authorization:` and API-key headers, Telegram bot
//! tokens, private key blocks, DB connection-string passwords, bare-token URL
//! userinfo, JWTs, form bodies and E.164 phone numbers are masked. Web-URL
//! query strings and `user:pass@` userinfo pass through, as in Hermes.
//!
//! Python's `re` has look-around and back-references, which the `regex` crate
//! lacks, so the patterns are compiled with `fancy-regex` (a backtracking
//! layer over `regex`) to keep Python's matching semantics. A pattern with
//! look-around or a back-reference runs in fancy-regex's own matcher, which
//! tries every position of the text (hundreds of milliseconds on a long page
//! snapshot); each such pass is first asked of a [`Guard`], a plain `regex`
//! pattern that matches wherever the fancy one could (the same pattern with
//! the look-around dropped, the back-reference relaxed), so a text that
//! cannot match skips the pass and the output stays the same.

use crate::pycompat::{py_json_ascii, py_strip};
use std::sync::LazyLock;

use fancy_regex::{Captures, Regex};

/// Options of `redact_sensitive_text` that change the output.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedactOptions {
    /// Skip the ENV-assignment / JSON / YAML passes (source code).
    pub code_file: bool,
    /// Replace prefix-matched keys with a non-reusable sentinel (implies `code_file`).
    pub file_read: bool,
}

/// Hermes' `_PREFIX_PATTERNS` (agent/redact.py), in order: vendor key and token
/// shapes. Also used by the URL guard in `net::guards`.
pub(crate) const PREFIX_PATTERNS: &[&str] = &[
    r"sk-[A-Za-z0-9_-]{10,}",
    r"ghp_[A-Za-z0-9]{10,}",
    r"github_pat_[A-Za-z0-9_]{10,}",
    r"gho_[A-Za-z0-9]{10,}",
    r"ghu_[A-Za-z0-9]{10,}",
    r"ghs_[A-Za-z0-9]{10,}",
    r"ghr_[A-Za-z0-9]{10,}",
    r"xapp-\d+-[A-Za-z0-9-]{10,}",
    r"xox[baprs]-[A-Za-z0-9-]{10,}",
    r"AIza[A-Za-z0-9_-]{30,}",
    r"pplx-[A-Za-z0-9]{10,}",
    r"fal_[A-Za-z0-9_-]{10,}",
    r"fc-[A-Za-z0-9]{10,}",
    r"bb_live_[A-Za-z0-9_-]{10,}",
    r"gAAAA[A-Za-z0-9_=-]{20,}",
    r"AKIA[A-Z0-9]{16}",
    r"sk_live_[A-Za-z0-9]{10,}",
    r"sk_test_[A-Za-z0-9]{10,}",
    r"rk_live_[A-Za-z0-9]{10,}",
    r"SG\.[A-Za-z0-9_-]{10,}",
    r"hf_[A-Za-z0-9]{10,}",
    r"r8_[A-Za-z0-9]{10,}",
    r"npm_[A-Za-z0-9]{10,}",
    r"pypi-[A-Za-z0-9_-]{10,}",
    r"dop_v1_[A-Za-z0-9]{10,}",
    r"doo_v1_[A-Za-z0-9]{10,}",
    r"am_[A-Za-z0-9_-]{10,}",
    r"sk_[A-Za-z0-9_]{10,}",
    r"tvly-[A-Za-z0-9]{10,}",
    r"exa_[A-Za-z0-9]{10,}",
    r"gsk_[A-Za-z0-9]{10,}",
    r"syt_[A-Za-z0-9]{10,}",
    r"retaindb_[A-Za-z0-9]{10,}",
    r"hsk-[A-Za-z0-9]{10,}",
    r"mem0_[A-Za-z0-9]{10,}",
    r"brv_[A-Za-z0-9]{10,}",
    r"xai-[A-Za-z0-9]{30,}",
    r"ntn_[A-Za-z0-9]{10,}",
    r"fw-[A-Za-z0-9]{30,}",
    r"fw_[A-Za-z0-9]{30,}",
    r"fpk_[A-Za-z0-9]{30,}",
];

const SENSITIVE_QUERY_PARAMS: &[&str] = &[
    "access_token",
    "refresh_token",
    "id_token",
    "token",
    "api_key",
    "apikey",
    "client_secret",
    "password",
    "auth",
    "jwt",
    "session",
    "secret",
    "key",
    "code",
    "signature",
    "x-amz-signature",
];

fn re(p: &str) -> Regex {
    Regex::new(p).unwrap_or_else(|e| panic!("bad redaction pattern {p}: {e}"))
}

/// A plain-`regex` pattern that matches somewhere in every text its fancy
/// pattern matches in (a necessary condition, checked in linear time).
type Guard = regex::Regex;

fn guard(p: &str) -> Guard {
    regex::Regex::new(p).unwrap_or_else(|e| panic!("bad redaction guard {p}: {e}"))
}

/// [`PREFIX_RE`] without its look-around.
static PREFIX_GUARD: LazyLock<Guard> = LazyLock::new(|| guard(&PREFIX_PATTERNS.join("|")));
/// [`ENV_ASSIGN_RE`] from the name's secret word to the first value character.
static ENV_ASSIGN_GUARD: LazyLock<Guard> =
    LazyLock::new(|| guard(&format!(r"{SECRET_ENV_NAMES}[A-Z0-9_]{{0,50}}\s*=\s*\S")));
/// [`CFG_DOTTED_RE`] and [`CFG_ANCHORED_RE`] from the secret word to the `=`.
static CFG_GUARD: LazyLock<Guard> =
    LazyLock::new(|| guard(&format!(r"(?i){SECRET_CFG_NAMES}[A-Za-z0-9_.\-]*=")));
/// [`YAML_ASSIGN_RE`] without its look-ahead.
static YAML_ASSIGN_GUARD: LazyLock<Guard> = LazyLock::new(|| {
    guard(&format!(
        r"(?im)(^[ \t]*[A-Za-z0-9_.\-]*{YAML_CFG_NAMES}[A-Za-z0-9_.\-]*)(:[ \t]*)([^\s&]+)"
    ))
});
/// [`SIGNAL_PHONE_RE`] without its look-ahead.
static SIGNAL_PHONE_GUARD: LazyLock<Guard> = LazyLock::new(|| guard(r"\+[1-9]\d{6,14}"));

/// The literal lead of each prefix pattern (Hermes' `_PREFIX_SUBSTRINGS`).
static PREFIX_SUBSTRINGS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    PREFIX_PATTERNS
        .iter()
        .map(|p| {
            let end = p.find(|c| "[(\\.?*+|{^$".contains(c)).unwrap_or(p.len());
            &p[..end]
        })
        .collect()
});

static PREFIX_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?<![A-Za-z0-9_-])({})(?![A-Za-z0-9_-])",
        PREFIX_PATTERNS.join("|")
    ))
});

const SECRET_ENV_NAMES: &str = r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)";
static ENV_ASSIGN_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r#"([A-Z0-9_]{{0,50}}{SECRET_ENV_NAMES}[A-Z0-9_]{{0,50}})\s*=\s*(['"]?)(\S+)\2"#
    ))
});
const SECRET_CFG_NAMES: &str = r"(?:api[ _.\-]?key|token|secret|passwd|password|credential|auth)";
const CFG_VALUE: &str = r#"(['"]?)([^\s&]+?)\2(?=[\s&]|$)"#;
static ENV_LOOKUP_VALUE_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:os\.(?:getenv|environ)|process\.env|\$ENV\{)"));
/// A value that is only a shell reference to an environment variable
/// (`$GITHUB_TOKEN`, `${GITHUB_TOKEN}`, upper-case as variable names are):
/// it names where the secret is, and is not one.
static SHELL_VAR_REF_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\$(?:[A-Z_][A-Z0-9_]*|\{[A-Z_][A-Z0-9_]*\})$"));
static CFG_DOTTED_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)((?:[A-Za-z0-9_\-]+\.)+[A-Za-z0-9_.\-]*{n}[A-Za-z0-9_.\-]*|[A-Za-z0-9_.\-]*{n}[A-Za-z0-9_.\-]*\.[A-Za-z0-9_.\-]+)={v}",
        n = SECRET_CFG_NAMES,
        v = CFG_VALUE
    ))
});
static CFG_ANCHORED_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?im)(^[ \t]*(?:export[ \t]+)?[A-Za-z0-9_\-]*{n}[A-Za-z0-9_\-]*)={v}",
        n = SECRET_CFG_NAMES,
        v = CFG_VALUE
    ))
});
const YAML_CFG_NAMES: &str = r"(?:api[ _.\-]?key|token|secret|passwd|password|credential)";
static YAML_ASSIGN_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r#"(?im)(^[ \t]*[A-Za-z0-9_.\-]*{YAML_CFG_NAMES}[A-Za-z0-9_.\-]*)(:[ \t]*)(?!['"])([^\s&]+)"#
    ))
});
const JSON_KEY_NAMES: &str = r"(?:api_?[Kk]ey|token|secret|password|access_token|refresh_token|auth_token|bearer|secret_value|raw_secret|secret_input|key_material)";
static JSON_FIELD_RE: LazyLock<Regex> =
    LazyLock::new(|| re(&format!(r#"(?i)("{JSON_KEY_NAMES}")\s*:\s*"([^"]+)""#)));
static AUTH_HEADER_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)((?:Proxy-)?Authorization:\s*)([A-Za-z][\w.+-]*\s+)?([^\s"']+)"#));
static SECRET_HEADER_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)((?:x-api-key|x-goog-api-key|api-key|apikey|x-api-token|x-auth-token|x-access-token)\s*:\s*)(\S+)",
    )
});
static TELEGRAM_RE: LazyLock<Regex> = LazyLock::new(|| re(r"(bot)?(\d{8,}):([-A-Za-z0-9_]{30,})"));
static PRIVATE_KEY_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----")
});
static DB_CONNSTR_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)((?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqp)://[^:\s]+:)([^@\s]+)(@)")
});
static URL_BARE_TOKEN_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)((?:https?|wss?|git|ssh|ftp|ftps|sftp)://)([^\s:@/]{8,})(@[^\s]+)"));
static JWT_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}"));
static SIGNAL_PHONE_RE: LazyLock<Regex> = LazyLock::new(|| re(r"(\+[1-9]\d{6,14})(?![A-Za-z0-9])"));
static FORM_BODY_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^[A-Za-z_][A-Za-z0-9_.-]*=[^&\s]*(?:&[A-Za-z_][A-Za-z0-9_.-]*=[^&\s]*)+$")
});

/// `re.sub(pattern, fn, text)`. A pattern that hits fancy-regex's backtrack
/// limit leaves the rest of the text as it is (never panics).
fn sub(re: &Regex, text: &str, f: impl Fn(&Captures) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for caps in re.captures_iter(text) {
        let Ok(caps) = caps else { break };
        let m = caps.get(0).expect("group 0");
        out.push_str(&text[last..m.start()]);
        out.push_str(&f(&caps));
        last = m.end();
    }
    out.push_str(&text[last..]);
    out
}

fn g<'t>(c: &Captures<'t>, i: usize) -> &'t str {
    c.get(i).map(|m| m.as_str()).unwrap_or("")
}

/// Compile now what the redaction of a call's log line (JSON: it has `:`
/// and `"`, and often a URL) runs: the guards and the passes no guard stands
/// before. The first
/// redaction otherwise pays for them on a request path; `serve` calls this off
/// that path, once the tool list is out. The guarded passes (about 25 ms of
/// the 40 ms all patterns take to build, and most of their memory) are built
/// the first time their guard lets a text through: only text that holds a
/// secret's shape pays for them, once.
pub fn warm() {
    LazyLock::force(&PREFIX_SUBSTRINGS);
    LazyLock::force(&PREFIX_GUARD);
    LazyLock::force(&ENV_ASSIGN_GUARD);
    LazyLock::force(&CFG_GUARD);
    LazyLock::force(&YAML_ASSIGN_GUARD);
    LazyLock::force(&SIGNAL_PHONE_GUARD);
    LazyLock::force(&ENV_LOOKUP_VALUE_RE);
    LazyLock::force(&SHELL_VAR_REF_RE);
    LazyLock::force(&JSON_FIELD_RE);
    LazyLock::force(&SECRET_HEADER_RE);
    LazyLock::force(&TELEGRAM_RE);
    LazyLock::force(&DB_CONNSTR_RE);
    LazyLock::force(&URL_BARE_TOKEN_RE);
}

/// Hermes' `mask_secret(value, head, tail, floor)` (lengths in characters).
pub fn mask_secret(value: &str, head: usize, tail: usize, floor: usize) -> String {
    if value.is_empty() {
        return String::new();
    }
    let chars: Vec<char> = value.chars().collect();
    if chars.len() < floor {
        return "***".into();
    }
    let h: String = chars[..head.min(chars.len())].iter().collect();
    let t: String = chars[chars.len().saturating_sub(tail)..].iter().collect();
    format!("{h}...{t}")
}

/// `_mask_token`: tokens under 18 characters become `***`, longer ones keep 6 + 4.
pub fn mask_token(token: &str) -> String {
    if token.is_empty() {
        return "***".into();
    }
    mask_secret(token, 6, 4, 18)
}

fn mask_token_nonreusable(token: &str) -> String {
    if token.is_empty() {
        return "«redacted-secret»".into();
    }
    match PREFIX_SUBSTRINGS.iter().find(|s| token.starts_with(**s)) {
        Some(label) => format!("«redacted:{label}…»"),
        None => "«redacted-secret»".into(),
    }
}

fn redact_query_string(query: &str) -> String {
    if query.is_empty() {
        return String::new();
    }
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) if SENSITIVE_QUERY_PARAMS.contains(&k.to_lowercase().as_str()) => {
                format!("{k}=***")
            }
            _ => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn redact_form_body(text: &str) -> String {
    if text.is_empty() || text.contains('\n') || !text.contains('&') {
        return text.to_string();
    }
    let stripped = py_strip(text);
    if !FORM_BODY_RE.is_match(stripped).unwrap_or(false) {
        return text.to_string();
    }
    redact_query_string(stripped)
}

/// Hermes' env-lookup values (`os.getenv(...)`, `process.env.X`), and a
/// shell variable reference (`$NAME`, `${NAME}`): names, not secrets, so an
/// assignment of one is shown as it is (`export GH_TOKEN="$GITHUB_TOKEN"`).
fn is_env_lookup(value: &str) -> bool {
    ENV_LOOKUP_VALUE_RE.is_match(value).unwrap_or(false)
        || SHELL_VAR_REF_RE.is_match(value).unwrap_or(false)
}

/// `redact_sensitive_text(text, force=True)`: the form every Hermes safety
/// boundary uses (kanban summaries, results, reasons, comments; browser output).
pub fn redact_sensitive_text(text: &str) -> String {
    redact_with(text, RedactOptions::default())
}

/// `redact_sensitive_text(text, force=True, code_file=..., file_read=...)`.
pub fn redact_with(text: &str, opts: RedactOptions) -> String {
    if text.is_empty() {
        return String::new();
    }
    let code_file = opts.code_file || opts.file_read;
    let mut text = text.to_string();

    if PREFIX_SUBSTRINGS.iter().any(|p| text.contains(p)) && PREFIX_GUARD.is_match(&text) {
        text = sub(&PREFIX_RE, &text, |c| {
            if opts.file_read {
                mask_token_nonreusable(g(c, 1))
            } else {
                mask_token(g(c, 1))
            }
        });
    }

    if !code_file {
        if text.contains('=') {
            let redact_env = |c: &Captures| {
                let (name, quote, value) = (g(c, 1), g(c, 2), g(c, 3));
                if is_env_lookup(value) {
                    return g(c, 0).to_string();
                }
                format!("{name}={quote}{}{quote}", mask_token(value))
            };
            if ENV_ASSIGN_GUARD.is_match(&text) {
                text = sub(&ENV_ASSIGN_RE, &text, redact_env);
            }
            if !text.contains("://") && CFG_GUARD.is_match(&text) {
                // The dotted pass keeps each name and its `=`: the guard still holds.
                text = sub(&CFG_DOTTED_RE, &text, redact_env);
                text = sub(&CFG_ANCHORED_RE, &text, redact_env);
            }
        }
        if text.contains(':') && text.contains('"') {
            text = sub(&JSON_FIELD_RE, &text, |c| {
                let (key, value) = (g(c, 1), g(c, 2));
                if is_env_lookup(value) {
                    return g(c, 0).to_string();
                }
                format!("{key}: \"{}\"", mask_token(value))
            });
        }
        if text.contains(':') && !text.contains("://") && YAML_ASSIGN_GUARD.is_match(&text) {
            text = sub(&YAML_ASSIGN_RE, &text, |c| {
                let (key, sep, value) = (g(c, 1), g(c, 2), g(c, 3));
                if is_env_lookup(value) {
                    return g(c, 0).to_string();
                }
                format!("{key}{sep}{}", mask_token(value))
            });
        }
    }

    if text.contains("uthorization") || text.contains("UTHORIZATION") {
        text = sub(&AUTH_HEADER_RE, &text, |c| {
            format!("{}{}{}", g(c, 1), g(c, 2), mask_token(g(c, 3)))
        });
    }
    if text.contains(':') {
        text = sub(&SECRET_HEADER_RE, &text, |c| {
            format!("{}{}", g(c, 1), mask_token(g(c, 2)))
        });
        text = sub(&TELEGRAM_RE, &text, |c| {
            format!("{}{}:***", g(c, 1), g(c, 2))
        });
    }
    if text.contains("BEGIN") && text.contains("-----") {
        text = sub(&PRIVATE_KEY_RE, &text, |_| "[REDACTED PRIVATE KEY]".into());
    }
    if text.contains("://") {
        text = sub(&DB_CONNSTR_RE, &text, |c| {
            let pw = g(c, 2);
            if code_file && pw.starts_with('{') && pw.ends_with('}') {
                return g(c, 0).to_string();
            }
            format!("{}***{}", g(c, 1), g(c, 3))
        });
        text = sub(&URL_BARE_TOKEN_RE, &text, |c| {
            format!("{}{}{}", g(c, 1), mask_token(g(c, 2)), g(c, 3))
        });
    }
    if text.contains("eyJ") {
        text = sub(&JWT_RE, &text, |c| mask_token(g(c, 0)));
    }
    if text.contains('&') && text.contains('=') {
        text = redact_form_body(&text);
    }
    if text.contains('+') && SIGNAL_PHONE_GUARD.is_match(&text) {
        text = sub(&SIGNAL_PHONE_RE, &text, |c| {
            let phone: Vec<char> = g(c, 1).chars().collect();
            let s = |a: usize, b: usize| phone[a..b].iter().collect::<String>();
            let n = phone.len();
            if n <= 8 {
                format!("{}****{}", s(0, 2), s(n - 2, n))
            } else {
                format!("{}****{}", s(0, 4), s(n - 4, n))
            }
        });
    }
    text
}

/// Redact every string inside a JSON value the way Hermes' kanban_complete
/// redacts metadata: serialize (ASCII-escaped, as `json.dumps`), redact the
/// text, parse back; when the redacted text no longer parses, keep the value.
pub fn redact_json_value(value: &serde_json::Value) -> serde_json::Value {
    let text = py_json_ascii(value);
    let red = redact_sensitive_text(&text);
    serde_json::from_str(&red).unwrap_or_else(|_| value.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_prefixes_are_masked_like_hermes() {
        assert_eq!(
            redact_sensitive_text("key sk-proj-abcdef1234567890XYZ here"),
            "key sk-pro...0XYZ here"
        );
        // Shorter than 18 characters: fully masked.
        assert_eq!(redact_sensitive_text("ghp_abcdefghij1"), "***");
        // Glued to other token characters: not a key.
        assert_eq!(
            redact_sensitive_text("xsk-abcdefghijklmnop"),
            "xsk-abcdefghijklmnop"
        );
    }

    #[test]
    fn assignments_json_yaml_and_headers() {
        assert_eq!(
            redact_sensitive_text("OPENAI_API_KEY=abc123def456ghi789jkl"),
            // Masked by the ENV pass, then again by the anchored config pass (as Hermes).
            "OPENAI_API_KEY=***"
        );
        assert_eq!(
            redact_sensitive_text("MY_TOKEN=\"short\""),
            "MY_TOKEN=\"***\""
        );
        assert_eq!(
            redact_sensitive_text("KEY=os.getenv('X')"),
            "KEY=os.getenv('X')"
        );
        assert_eq!(
            redact_sensitive_text("spring.datasource.password=hunter2"),
            "spring.datasource.password=***"
        );
        assert_eq!(
            redact_sensitive_text(r#"{"apiKey": "abcdefghijklmnopqrstuv"}"#),
            r#"{"apiKey": "abcdef...stuv"}"#
        );
        assert_eq!(redact_sensitive_text("password: hunter2"), "password: ***");
        assert_eq!(
            redact_sensitive_text("note: secret meeting"),
            "note: secret meeting"
        );
        assert_eq!(
            redact_sensitive_text("Authorization: Bearer abcdefghijklmnopqrstuvwxyz"),
            "Authorization: Bearer abcdef...wxyz"
        );
        assert_eq!(redact_sensitive_text("x-api-key: abc"), "x-api-key: ***");
    }

    /// A variable's *name* is never eaten: assigning a reference to another
    /// variable shows the reference; a value that only starts like one, or a
    /// lower-case `$word` (a password may look so), is still masked.
    #[test]
    fn a_reference_to_a_variable_is_not_a_secret() {
        for kept in [
            r#"export GH_TOKEN="$GITHUB_TOKEN""#,
            "export GH_TOKEN=$GITHUB_TOKEN",
            "GH_TOKEN=${GITHUB_TOKEN} codex",
            "  - export ALIAS_API_KEY=\"$OPENAI_API_KEY\" in the shell that starts codex",
            "api_key: $OPENAI_API_KEY",
            "password=${DB_PASSWORD}",
            r#"{"token": "$GITHUB_TOKEN"}"#,
            r#"export X="$GITHUB_TOKEN""#,
        ] {
            assert_eq!(redact_sensitive_text(kept), kept);
        }
        assert_eq!(
            redact_sensitive_text("GH_TOKEN=$GITHUB_TOKEN-and-more-text"),
            "GH_TOKEN=***"
        );
        assert_eq!(redact_sensitive_text("PASSWORD=$ecretword"), "PASSWORD=***");
        assert_eq!(
            redact_sensitive_text("GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123"),
            "GH_TOKEN=***"
        );
    }

    #[test]
    fn urls_keys_jwt_phones_forms() {
        assert_eq!(
            redact_sensitive_text("postgres://u:pw@h/db"),
            "postgres://u:***@h/db"
        );
        assert_eq!(
            redact_sensitive_text("https://example.com/cb?code=ABC&state=x"),
            "https://example.com/cb?code=ABC&state=x"
        );
        assert_eq!(
            redact_sensitive_text("git clone https://abcdefgh12345@github.com/x"),
            "git clone https://***@github.com/x"
        );
        assert_eq!(
            redact_sensitive_text("bot123456789:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef"),
            "bot123456789:***"
        );
        assert_eq!(
            redact_sensitive_text(
                "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----"
            ),
            "[REDACTED PRIVATE KEY]"
        );
        assert_eq!(
            redact_sensitive_text("t eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx.sig12345"),
            "t eyJhbG...2345"
        );
        assert_eq!(
            redact_sensitive_text("call +14155552671"),
            "call +141****2671"
        );
        assert_eq!(
            redact_sensitive_text("user=bob&password=hunter2"),
            "user=bob&password=***"
        );
        assert_eq!(redact_sensitive_text("nothing here"), "nothing here");
    }

    #[test]
    fn json_values_are_redacted_and_kept_valid() {
        let v = serde_json::json!({"notes": "used sk-proj-abcdef1234567890XYZ", "n": 3, "é": "ü"});
        let r = redact_json_value(&v);
        assert_eq!(r["notes"], "used sk-pro...0XYZ");
        assert_eq!(r["n"], 3);
        assert_eq!(py_json_ascii(&serde_json::json!("é")), r#""\u00e9""#);
    }

    /// Every text a fancy pass could change passes its guard first: the
    /// guard matches wherever the fancy pattern does.
    #[test]
    fn each_guard_matches_wherever_its_fancy_pattern_does() {
        let texts = [
            "key sk-proj-abcdef1234567890XYZ here",
            "AKIAABCDEFGHIJKLMNOP",
            "OPENAI_API_KEY=abc123def456ghi789jkl",
            "MY_TOKEN = 'quoted-value'",
            "export GITHUB_TOKEN=\"ghp_x\"",
            "db.password=hunter2",
            "app.Api-Key='v' rest",
            "  api_key: abc123",
            "secret_token:\tvalue&x",
            "PASSWORD:plain",
            "call +14155552671 now",
            "+4915112345678x",
            "- textbox \"Password\": \"x\"\n- link \"Item 1\"",
        ];
        let pairs: [(&Guard, &Regex); 6] = [
            (&PREFIX_GUARD, &PREFIX_RE),
            (&ENV_ASSIGN_GUARD, &ENV_ASSIGN_RE),
            (&CFG_GUARD, &CFG_DOTTED_RE),
            (&CFG_GUARD, &CFG_ANCHORED_RE),
            (&YAML_ASSIGN_GUARD, &YAML_ASSIGN_RE),
            (&SIGNAL_PHONE_GUARD, &SIGNAL_PHONE_RE),
        ];
        let mut fancy_hits = 0;
        for t in texts {
            for (g, re) in pairs {
                if re.is_match(t).unwrap() {
                    fancy_hits += 1;
                    assert!(g.is_match(t), "{} misses {t:?}", g.as_str());
                }
            }
        }
        assert!(fancy_hits >= 10, "{fancy_hits}");
        // A long snapshot without any secret shape skips every fancy pass.
        let snap: String = (0..2000)
            .map(|i| {
                format!("- listitem:\n  - link \"Item number {i}\" [ref=e{i}]: /item/{i}?a={i}\n")
            })
            .collect();
        assert!(pairs.iter().all(|(g, _)| !g.is_match(&snap)));
        assert_eq!(redact_sensitive_text(&snap), snap);
    }
}
