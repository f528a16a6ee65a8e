//! Raw CDP calls through chromiumoxide: any method, JSON in and out. Typed
//! bindings break when Chromium adds an enum value (e.g. a new AX property);
//! raw JSON does not.

use std::borrow::Cow;

use chromiumoxide::Page;
use chromiumoxide::error::CdpError;
use chromiumoxide::types::{Command, Method, MethodId};
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone)]
pub(crate) struct Raw {
    pub(crate) method: &'static str,
    pub(crate) params: Value,
}

impl Serialize for Raw {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

impl Method for Raw {
    fn identifier(&self) -> MethodId {
        Cow::Borrowed(self.method)
    }
}

impl Command for Raw {
    type Response = Value;
}

/// Send one command on the page's session.
pub(crate) async fn call(
    page: &Page,
    method: &'static str,
    params: Value,
) -> Result<Value, CdpError> {
    page.execute(Raw { method, params }).await.map(|r| r.result)
}
