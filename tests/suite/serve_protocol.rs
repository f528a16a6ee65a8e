//! `hermes-mcp serve` over raw stdio: handshake, listing, protocol edge cases.

use std::time::Duration;

use serde_json::json;

use super::common::*;

#[test]
fn initialize_answers_with_server_identity() {
    let env = TestEnv::new();
    let mut c = RawClient::spawn(env.cmd());
    let r = c.initialize();
    assert_eq!(r["result"]["serverInfo"]["name"], "hermes-tools", "{r}");
    assert!(r["result"]["capabilities"]["tools"].is_object(), "{r}");
    let st = c.finish(Duration::from_secs(5));
    assert!(st.success(), "{st:?}");
}
