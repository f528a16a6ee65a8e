//! Claude Code's own sign-in, `~/.claude/.credentials.json` (`claudeAiOauth`;
//! hermes-agent: agent/anthropic_adapter.py
//! `_read_claude_code_credentials_from_file`), for the `anthropic` provider.
//!
//! Used while its access token is still valid (`expiresAt` in ms, less 60 s;
//! none = valid). An expired one is not refreshed here: its refresh token is
//! single-use and belongs to Claude Code (Hermes refreshes it; we leave that
//! to Claude Code or Hermes). The macOS keychain copy is not read.

use serde::Deserialize;

use crate::hermes::Context;
use crate::lenient;

/// A valid Claude Code sign-in.
pub(crate) struct SignIn {
    pub token: String,
    /// It has a refresh token (Hermes' `resolve_anthropic_token` prefers such
    /// a sign-in over a static OAuth token from the environment).
    pub refreshable: bool,
}

/// `.credentials.json`; fields of another type read as absent.
#[derive(Default, Deserialize)]
#[serde(default)]
struct CredentialsFile {
    #[serde(rename = "claudeAiOauth", deserialize_with = "lenient::obj")]
    oauth: Option<OAuth>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct OAuth {
    #[serde(deserialize_with = "lenient::string")]
    access_token: Option<String>,
    #[serde(deserialize_with = "lenient::opt")]
    expires_at: Option<f64>,
    #[serde(deserialize_with = "lenient::string")]
    refresh_token: Option<String>,
}

/// The sign-in in `$HOME/.claude/.credentials.json`, when its token is valid.
pub(crate) fn sign_in(ctx: &Context) -> Option<SignIn> {
    // `Path.home()`: `HOME` as this server sees it.
    let home = ctx
        .env
        .get_unlisted("HOME")
        .filter(|h| !h.trim().is_empty())?;
    let path = std::path::Path::new(home.trim()).join(".claude/.credentials.json");
    let text = crate::fs::read_to_string_capped(&path, crate::fs::CONFIG_CAP).ok()?;
    let o = lenient::from_slice::<CredentialsFile>(text.as_bytes())?.oauth?;
    let token = o.access_token?.trim().to_string();
    if token.is_empty() {
        return None;
    }
    let expires_ms = o.expires_at.unwrap_or(0.0);
    let now_ms = crate::auth::store::now() * 1000.0;
    if expires_ms != 0.0 && now_ms >= expires_ms - 60_000.0 {
        return None;
    }
    let refreshable = o.refresh_token.is_some_and(|r| !r.is_empty());
    Some(SignIn { token, refreshable })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(file: &str) -> Option<SignIn> {
        let d = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(d.path().join(".claude")).expect("mkdir");
        std::fs::write(d.path().join(".claude/.credentials.json"), file).expect("write");
        let home = d.path().to_string_lossy().to_string();
        let ctx = crate::hermes::Context::with_parts(
            crate::hermes::HermesHome {
                path: "/nonexistent".into(),
                explicit: true,
            },
            crate::hermes::Env::from_map([("HOME".to_string(), home)]),
            crate::hermes::HermesConfig::default(),
        );
        sign_in(&ctx)
    }

    #[test]
    fn valid_tokens_only() {
        let later = (crate::auth::store::now() + 3600.0) * 1000.0;
        let s = read(&format!(
            r#"{{"claudeAiOauth":{{"accessToken":" t ","expiresAt":{later},"refreshToken":"r"}}}}"#
        ))
        .expect("valid");
        assert_eq!((s.token.as_str(), s.refreshable), ("t", true));
        // No expiry: valid; an empty refresh token: not refreshable.
        let s = read(r#"{"claudeAiOauth":{"accessToken":"t","refreshToken":""}}"#).expect("valid");
        assert!(!s.refreshable);
        // Expiring within a minute, expired, odd shapes: none.
        let soon = (crate::auth::store::now() + 30.0) * 1000.0;
        assert!(
            read(&format!(
                r#"{{"claudeAiOauth":{{"accessToken":"t","expiresAt":{soon}}}}}"#
            ))
            .is_none()
        );
        assert!(read(r#"{"claudeAiOauth":{"accessToken":"t","expiresAt":1}}"#).is_none());
        assert!(read(r#"{"claudeAiOauth":{"accessToken":5}}"#).is_none());
        assert!(read(r#"{"claudeAiOauth":["t"]}"#).is_none());
        assert!(read("not json").is_none());
        // A non-numeric expiry reads as none (valid).
        assert!(read(r#"{"claudeAiOauth":{"accessToken":"t","expiresAt":"x"}}"#).is_some());
    }
}
