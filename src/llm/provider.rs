//! Hermes' provider names as one type: parsed once where config or a table
//! names a provider ([`Provider::from_str`]), compared as values
//! everywhere else, spelled back the way Hermes spells them
//! ([`Provider::as_str`]) for messages, table look-ups and rate-limit keys.
//! Only the providers the auxiliary model's rules single out have a
//! variant; every other name (an API-key provider the tables describe, a
//! custom provider) is [`Provider::Other`], carrying its spelling, since
//! Hermes accepts custom providers.

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

/// A provider name as `auxiliary.<task>.provider` / `model.provider` give it
/// (after Hermes' alias normalization where the resolver applies it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Provider {
    /// `auto`: Hermes' auto-detection chain.
    Auto,
    /// `main`: the main provider (`model.provider`).
    Main,
    /// `native`: Codex's own model looks at the image (vision only).
    Native,
    /// `custom`: an OpenAI-compatible endpoint by URL.
    Custom,
    /// `openai`: custom at api.openai.com/v1.
    OpenAi,
    /// `openai-codex`: the ChatGPT sign-in on the Codex Responses endpoint.
    OpenAiCodex,
    /// `codex`: Hermes' alias of `openai-codex`.
    Codex,
    OpenRouter,
    Nous,
    DeepInfra,
    Anthropic,
    Gemini,
    Zai,
    KimiCoding,
    KimiCodingCn,
    MiniMax,
    MiniMaxCn,
    Nvidia,
    LmStudio,
    /// Any other name, as given.
    Other(String),
}

/// Every named variant with Hermes' spelling.
const NAMED: [(Provider, &str); 19] = [
    (Provider::Auto, "auto"),
    (Provider::Main, "main"),
    (Provider::Native, "native"),
    (Provider::Custom, "custom"),
    (Provider::OpenAi, "openai"),
    (Provider::OpenAiCodex, "openai-codex"),
    (Provider::Codex, "codex"),
    (Provider::OpenRouter, "openrouter"),
    (Provider::Nous, "nous"),
    (Provider::DeepInfra, "deepinfra"),
    (Provider::Anthropic, "anthropic"),
    (Provider::Gemini, "gemini"),
    (Provider::Zai, "zai"),
    (Provider::KimiCoding, "kimi-coding"),
    (Provider::KimiCodingCn, "kimi-coding-cn"),
    (Provider::MiniMax, "minimax"),
    (Provider::MiniMaxCn, "minimax-cn"),
    (Provider::Nvidia, "nvidia"),
    (Provider::LmStudio, "lmstudio"),
];

impl Provider {
    /// The name as Hermes spells it.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Provider::Other(s) => s,
            named => NAMED
                .iter()
                .find(|(p, _)| p == named)
                .map_or("", |(_, s)| s),
        }
    }

    /// The name `s` (exactly as spelled; normalization is the resolver's).
    pub(crate) fn parse(s: &str) -> Provider {
        NAMED
            .iter()
            .find(|(_, n)| *n == s)
            .map_or_else(|| Provider::Other(s.to_string()), |(p, _)| p.clone())
    }
}

impl FromStr for Provider {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Provider::parse(s))
    }
}

impl From<&str> for Provider {
    fn from(s: &str) -> Self {
        Provider::parse(s)
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (p, s) in &NAMED {
            assert_eq!(Provider::parse(s), *p);
            assert_eq!(p.as_str(), *s);
        }
        let x = Provider::parse("my-proxy");
        assert_eq!(x, Provider::Other("my-proxy".into()));
        assert_eq!(x.to_string(), "my-proxy");
    }
}
