//! Errors a user can act on. Library modules use `thiserror` enums; at the edge
//! (`main`) everything is `anyhow`, and a [`UserError`] anywhere in the chain
//! is printed as `error: ...` plus `hint: ...` (exit status 2).

use std::fmt;

#[derive(Debug)]
pub struct UserError {
    pub message: String,
    pub hint: Option<String>,
}

impl UserError {
    pub fn new(message: impl Into<String>) -> Self {
        UserError {
            message: message.into(),
            hint: None,
        }
    }
    pub fn hint(message: impl Into<String>, hint: impl Into<String>) -> Self {
        UserError {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UserError {}

/// Render an error for stderr: the message chain, then the hint if there is one.
pub fn render(err: &anyhow::Error) -> String {
    let mut out = format!("error: {err:#}");
    if let Some(hint) = err
        .chain()
        .find_map(|e| e.downcast_ref::<UserError>())
        .and_then(|u| u.hint.as_ref())
    {
        out.push_str("\nhint: ");
        out.push_str(hint);
    }
    out
}
