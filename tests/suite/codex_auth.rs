//! The ChatGPT (Codex) sign-in token, read as Hermes reads it for `openai-codex`.

use std::path::Path;

use base64::Engine as _;
use hermes_mcp::auth::codex::{
    self as codex_auth, CodexAuthError, TokenSource, read_token, request_headers, resolve_token,
};
use serde_json::{Value, json};

use super::support::fake::{Resp, TestServer};

const NOW: f64 = 1_800_000_000.0;

fn jwt(exp: f64, account: &str) -> String {
    let b = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.sig",
        b(json!({"alg": "RS256"})),
        b(json!({"exp": exp, "https://api.openai.com/auth": {"chatgpt_account_id": account}}))
    )
}

fn write(dir: &Path, v: Value) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("auth.json"), v.to_string()).unwrap();
}

fn codex_cli(dir: &Path, access: &str) {
    write(
        dir,
        json!({"OPENAI_API_KEY": null, "tokens": {"id_token": "x.y.z", "access_token": access,
               "refresh_token": "cli-rt", "account_id": "acct-cli"}, "last_refresh": "2027-01-01T00:00:00Z"}),
    );
}

#[test]
fn pool_first_by_priority_skipping_dead_and_cooling_entries() {
    let d = tempfile::tempdir().unwrap();
    let (hermes, codex) = (d.path().join("h"), d.path().join("c"));
    write(
        &hermes,
        json!({"providers": {"openai-codex": {"tokens": {"access_token": jwt(NOW + 3600.0, "single"), "refresh_token": "r"}}},
               "credential_pool": {"openai-codex": [
                   {"id": "d", "priority": 3, "access_token": jwt(NOW + 3600.0, "fourth")},
                   {"id": "a", "priority": 0, "access_token": jwt(NOW + 3600.0, "dead"), "last_status": "dead"},
                   {"id": "b", "priority": 1, "access_token": jwt(NOW + 3600.0, "cooling"), "last_status": "exhausted",
                    "last_error_reset_at": NOW + 60.0},
                   {"id": "c", "priority": 2, "access_token": jwt(NOW + 3600.0, "cooled"), "last_status": "exhausted",
                    "last_status_at": NOW - 400.0, "last_error_code": 401}]}}),
    );
    let t = read_token(&hermes, Some(&codex), NOW).unwrap();
    assert_eq!(t.source, TokenSource::CredentialPool { id: "c".into() });
    assert_eq!(t.account_id.as_deref(), Some("cooled"));
    let h = request_headers(&t);
    assert!(h.contains(&("ChatGPT-Account-ID", "cooled".to_string())));
    assert!(h.contains(&("originator", "codex_cli_rs".to_string())));
}

#[test]
fn hermes_singleton_then_codex_cli_file_then_missing() {
    let d = tempfile::tempdir().unwrap();
    let (hermes, codex) = (d.path().join("h"), d.path().join("c"));
    write(
        &hermes,
        json!({"providers": {"openai-codex": {"tokens": {"access_token": jwt(NOW + 60.0, "single"), "refresh_token": "r"}}}}),
    );
    let t = read_token(&hermes, Some(&codex), NOW).unwrap();
    assert_eq!(
        (t.source, t.account_id.as_deref()),
        (TokenSource::HermesAuthStore, Some("single"))
    );

    // Expired in Hermes: Codex's own sign-in is used, read-only.
    write(
        &hermes,
        json!({"providers": {"openai-codex": {"tokens": {"access_token": jwt(NOW - 1.0, "single"), "refresh_token": "r"}}}}),
    );
    codex_cli(&codex, &jwt(NOW + 600.0, "from-claim"));
    let before = std::fs::read(codex.join("auth.json")).unwrap();
    let t = read_token(&hermes, Some(&codex), NOW).unwrap();
    assert_eq!(
        (t.source, t.account_id.as_deref()),
        (TokenSource::CodexCli, Some("from-claim"))
    );
    assert_eq!(std::fs::read(codex.join("auth.json")).unwrap(), before);

    // A non-JWT Codex token falls back to tokens.account_id.
    codex_cli(&codex, "opaque-token");
    assert_eq!(
        read_token(&hermes, Some(&codex), NOW)
            .unwrap()
            .account_id
            .as_deref(),
        Some("acct-cli")
    );

    codex_cli(&codex, &jwt(NOW - 1.0, "x"));
    assert!(matches!(
        read_token(&hermes, Some(&codex), NOW),
        Err(CodexAuthError::Missing)
    ));
    let empty = d.path().join("none");
    let e = read_token(&empty, None, NOW).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("No Codex credentials stored. Run `hermes auth`"),
        "{e}"
    );
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn an_expiring_pool_entry_is_refreshed_and_the_rotated_pair_written_back() {
    let fresh = jwt(NOW + 3600.0, "acct-new");
    let f = fresh.clone();
    let server = TestServer::start(move |req| {
        let form: Vec<(String, String)> = url::form_urlencoded::parse(&req.body)
            .into_owned()
            .collect();
        let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        if get("refresh_token") == Some("old-rt")
            && get("grant_type") == Some("refresh_token")
            && get("client_id") == Some(codex_auth::OAUTH_CLIENT_ID)
        {
            Resp::json(
                200,
                json!({"access_token": f, "refresh_token": "new-rt", "id_token": "i"}),
            )
        } else {
            Resp::json(
                400,
                json!({"error": "invalid_grant", "error_description": "bad refresh token"}),
            )
        }
    });
    let d = tempfile::tempdir().unwrap();
    let hermes = d.path().join("h");
    let old = jwt(NOW + 30.0, "acct-old"); // inside the 120 s window
    write(
        &hermes,
        json!({"version": 1, "active_provider": "openai-codex",
               "providers": {"openai-codex": {"tokens": {"access_token": old, "refresh_token": "old-rt"}, "auth_mode": "chatgpt"}},
               "credential_pool": {"openai-codex": [{"id": "p1", "priority": 0, "auth_type": "oauth", "source": "device_code",
                   "access_token": old, "refresh_token": "old-rt", "label": "me"}]}}),
    );
    hermes_mcp::net::client::install_crypto();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = format!("{}/oauth/token", server.base());
    let t = rt()
        .block_on(resolve_token(&http, &url, &hermes, None, NOW))
        .unwrap();
    assert_eq!(t.access_token, fresh);
    assert_eq!(t.account_id.as_deref(), Some("acct-new"));
    let store: Value =
        serde_json::from_str(&std::fs::read_to_string(hermes.join("auth.json")).unwrap()).unwrap();
    assert_eq!(
        store["credential_pool"]["openai-codex"][0]["refresh_token"],
        "new-rt"
    );
    assert_eq!(store["credential_pool"]["openai-codex"][0]["label"], "me");
    assert_eq!(
        store["providers"]["openai-codex"]["tokens"]["access_token"],
        fresh.as_str()
    );
    assert_eq!(
        store["providers"]["openai-codex"]["tokens"]["refresh_token"],
        "new-rt"
    );
    assert_eq!(store["providers"]["openai-codex"]["auth_mode"], "chatgpt");
    assert_eq!(store["version"], 1);

    // The old refresh token is now rejected: Hermes' message and relogin classification.
    let e = rt()
        .block_on(codex_auth::refresh_oauth(&http, &url, "old-rt-2"))
        .unwrap_err();
    match e {
        CodexAuthError::Refresh {
            message,
            code,
            relogin_required,
        } => {
            assert_eq!(message, "Codex token refresh failed: bad refresh token");
            assert_eq!(code, "invalid_grant");
            assert!(relogin_required);
        }
        other => panic!("{other}"),
    }
}
