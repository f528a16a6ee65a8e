//! Hermes' provider tables as data, for the auxiliary model: the wire an
//! endpoint speaks ([`Wire`]); the API-key providers, with what it takes to
//! call each one (key variables, base URL, default auxiliary model, headers);
//! provider aliases; dedicated vision models and providers without vision;
//! providers hermes-mcp cannot call; models.dev ids; Anthropic's betas and
//! Claude Code identity
//! (hermes-agent: hermes_cli/auth.py `PROVIDER_REGISTRY`, plugins'
//! `ProviderProfile.default_aux_model` / `default_headers`,
//! agent/auxiliary_client.py `_API_KEY_PROVIDER_AUX_MODELS_FALLBACK`,
//! `_PROVIDER_ALIASES`, `_PROVIDER_VISION_MODELS`, `_PROVIDERS_WITHOUT_VISION`,
//! agent/models_dev.py `PROVIDER_TO_MODELS_DEV`, agent/anthropic_adapter.py
//! betas).
//!
//! Copied, not invented: tests/suite/vision_provider_wires.rs runs Hermes'
//! own Python and asserts these tables agree with it, entry by entry.

use crate::hermes::envvars;

/// One API-key provider of Hermes' registry.
#[derive(Debug)]
pub struct ApiKeyProvider {
    pub name: &'static str,
    /// Key variables, first usable wins (`api_key_env_vars`).
    pub key_vars: &'static [&'static str],
    /// The base-URL override variable (`base_url_env_var`).
    pub base_url_var: Option<&'static str>,
    /// `inference_base_url`.
    pub base_url: &'static str,
    /// `_get_aux_model_for_provider` (empty: none).
    pub aux_model: &'static str,
    /// The profile's `default_headers`.
    pub headers: &'static [(&'static str, &'static str)],
}

const fn p(
    name: &'static str,
    key_vars: &'static [&'static str],
    base_url_var: Option<&'static str>,
    base_url: &'static str,
    aux_model: &'static str,
    headers: &'static [(&'static str, &'static str)],
) -> ApiKeyProvider {
    ApiKeyProvider {
        name,
        key_vars,
        base_url_var,
        base_url,
        aux_model,
        headers,
    }
}

use envvars as e;

/// Every `auth_type: api_key` provider the auxiliary model can call. `anthropic` is
/// resolved by `_try_anthropic` (its token order, not this key list, and
/// no `ANTHROPIC_BASE_URL`: Hermes' auxiliary path ignores it); `deepinfra`
/// by its catalog-backed path in clients.rs.
#[rustfmt::skip]
pub static API_KEY_PROVIDERS: &[ApiKeyProvider] = &[
    p("openai-api", &[e::OPENAI_API_KEY], Some(e::OPENAI_BASE_URL), "https://api.openai.com/v1", "", &[]),
    p("lmstudio", &[e::LM_API_KEY], Some(e::LM_BASE_URL), "http://127.0.0.1:1234/v1", "", &[]),
    p("gemini", &[e::GOOGLE_API_KEY, e::GEMINI_API_KEY], Some(e::GEMINI_BASE_URL), "https://generativelanguage.googleapis.com/v1beta", "gemini-3.5-flash", &[]),
    p("zai", &[e::GLM_API_KEY, e::ZAI_API_KEY, e::Z_AI_API_KEY], Some(e::GLM_BASE_URL), "https://api.z.ai/api/paas/v4", "glm-4.5-flash", &[]),
    p("kimi-coding", &[e::KIMI_API_KEY, e::KIMI_CODING_API_KEY], Some(e::KIMI_BASE_URL), "https://api.moonshot.ai/v1", "kimi-k2-turbo-preview", &[("User-Agent", "hermes-agent/1.0")]),
    p("kimi-coding-cn", &[e::KIMI_CN_API_KEY], None, "https://api.moonshot.cn/v1", "kimi-k2-turbo-preview", &[("User-Agent", "hermes-agent/1.0")]),
    p("stepfun", &[e::STEPFUN_API_KEY], Some(e::STEPFUN_BASE_URL), "https://api.stepfun.ai/step_plan/v1", "step-3.5-flash", &[]),
    p("arcee", &[e::ARCEEAI_API_KEY], Some(e::ARCEE_BASE_URL), "https://api.arcee.ai/api/v1", "", &[]),
    p("gmi", &[e::GMI_API_KEY], Some(e::GMI_BASE_URL), "https://api.gmi-serving.com/v1", "google/gemini-3.1-flash-lite-preview", &[("User-Agent", "HermesAgent/0.19.0")]),
    p("minimax", &[e::MINIMAX_API_KEY], Some(e::MINIMAX_BASE_URL), "https://api.minimax.io/anthropic", "MiniMax-M3", &[]),
    p("anthropic", &[e::ANTHROPIC_API_KEY, e::ANTHROPIC_TOKEN, e::CLAUDE_CODE_OAUTH_TOKEN], None, "https://api.anthropic.com", "claude-haiku-4-5-20251001", &[]),
    p("alibaba", &[e::DASHSCOPE_API_KEY], Some(e::DASHSCOPE_BASE_URL), "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "", &[]),
    p("alibaba-coding-plan", &[e::ALIBABA_CODING_PLAN_API_KEY, e::DASHSCOPE_API_KEY], Some(e::ALIBABA_CODING_PLAN_BASE_URL), "https://coding-intl.dashscope.aliyuncs.com/v1", "", &[]),
    p("minimax-cn", &[e::MINIMAX_CN_API_KEY], Some(e::MINIMAX_CN_BASE_URL), "https://api.minimaxi.com/anthropic", "MiniMax-M3", &[]),
    p("deepseek", &[e::DEEPSEEK_API_KEY], Some(e::DEEPSEEK_BASE_URL), "https://api.deepseek.com/v1", "deepseek-chat", &[]),
    p("xai", &[e::XAI_API_KEY], Some(e::XAI_BASE_URL), "https://api.x.ai/v1", "", &[]),
    p("nvidia", &[e::NVIDIA_API_KEY], Some(e::NVIDIA_BASE_URL), "https://integrate.api.nvidia.com/v1", "", &[]),
    p("opencode-zen", &[e::OPENCODE_ZEN_API_KEY], Some(e::OPENCODE_ZEN_BASE_URL), "https://opencode.ai/zen/v1", "gemini-3-flash", &[]),
    p("opencode-go", &[e::OPENCODE_GO_API_KEY], Some(e::OPENCODE_GO_BASE_URL), "https://opencode.ai/zen/go/v1", "glm-5", &[]),
    p("kilocode", &[e::KILOCODE_API_KEY], Some(e::KILOCODE_BASE_URL), "https://api.kilo.ai/api/gateway", "google/gemini-3-flash-preview", &[]),
    p("huggingface", &[e::HF_TOKEN], Some(e::HF_BASE_URL), "https://router.huggingface.co/v1", "", &[]),
    p("xiaomi", &[e::XIAOMI_API_KEY], Some(e::XIAOMI_BASE_URL), "https://api.xiaomimimo.com/v1", "", &[]),
    p("tencent-tokenhub", &[e::TOKENHUB_API_KEY], Some(e::TOKENHUB_BASE_URL), "https://tokenhub.tencentmaas.com/v1", "hy3-preview", &[]),
    p("ollama-cloud", &[e::OLLAMA_API_KEY], Some(e::OLLAMA_BASE_URL), "https://ollama.com/v1", "nemotron-3-nano:30b", &[]),
    p("deepinfra", &[e::DEEPINFRA_API_KEY], Some(e::DEEPINFRA_BASE_URL), "https://api.deepinfra.com/v1/openai", "deepseek-ai/DeepSeek-V4-Flash", &[]),
    p("fireworks", &[e::FIREWORKS_API_KEY], None, "https://api.fireworks.ai/inference/v1", "accounts/fireworks/models/glm-5p2", &[]),
    p("novita", &[e::NOVITA_API_KEY], Some(e::NOVITA_BASE_URL), "https://api.novita.ai/openai/v1", "deepseek/deepseek-v3-0324", &[]),
    p("upstage", &[e::UPSTAGE_API_KEY], Some(e::UPSTAGE_BASE_URL), "https://api.upstage.ai/v1", "", &[]),
];

/// Registry keys that are second names of a provider above (same entry).
pub static REGISTRY_ALIASES: &[(&str, &str)] = &[
    ("deep-infra", "deepinfra"),
    ("deepinfra-ai", "deepinfra"),
    ("fireworks-ai", "fireworks"),
    ("fw", "fireworks"),
    ("novita-ai", "novita"),
    ("novitaai", "novita"),
    ("solar", "upstage"),
];

/// `_PROVIDER_ALIASES`: what `_normalize_aux_provider` rewrites.
pub static AUX_ALIASES: &[(&str, &str)] = &[
    ("google", "gemini"),
    ("google-gemini", "gemini"),
    ("google-ai-studio", "gemini"),
    ("x-ai", "xai"),
    ("x.ai", "xai"),
    ("grok", "xai"),
    ("glm", "zai"),
    ("z-ai", "zai"),
    ("z.ai", "zai"),
    ("zhipu", "zai"),
    ("kimi", "kimi-coding"),
    ("moonshot", "kimi-coding"),
    ("kimi-cn", "kimi-coding-cn"),
    ("moonshot-cn", "kimi-coding-cn"),
    ("gmi-cloud", "gmi"),
    ("gmicloud", "gmi"),
    ("minimax-china", "minimax-cn"),
    ("minimax_cn", "minimax-cn"),
    ("claude", "anthropic"),
    ("claude-code", "anthropic"),
    ("github", "copilot"),
    ("github-copilot", "copilot"),
    ("github-model", "copilot"),
    ("github-models", "copilot"),
    ("github-copilot-acp", "copilot-acp"),
    ("copilot-acp-agent", "copilot-acp"),
    ("tencent", "tencent-tokenhub"),
    ("tokenhub", "tencent-tokenhub"),
    ("tencent-cloud", "tencent-tokenhub"),
    ("tencentmaas", "tencent-tokenhub"),
];

/// `_PROVIDER_VISION_MODELS`: a dedicated vision model beats the chat model.
pub static VISION_MODELS: &[(&str, &str)] = &[("xiaomi", "mimo-v2.5"), ("zai", "glm-5v-turbo")];

/// `_PROVIDERS_WITHOUT_VISION`: auto mode skips these main providers.
pub static WITHOUT_VISION: &[&str] = &["kimi-coding", "kimi-coding-cn"];

/// Providers Hermes can reach that hermes-mcp cannot, and why: vision goes
/// native (Codex's own model looks) when one of them is the main provider;
/// a text task skips it.
#[rustfmt::skip]
pub static UNCALLABLE: &[(&str, &str)] = &[
    ("copilot", "GitHub Copilot needs Hermes' GitHub token exchange (hermes_cli/copilot_auth.py)"),
    ("copilot-acp", "Copilot ACP runs the Copilot CLI as a subprocess"),
    ("azure-foundry", "Azure Foundry needs Hermes' runtime resolver (auth_mode, Entra ID, model.base_url)"),
    ("bedrock", "AWS Bedrock needs the AWS SDK credential chain"),
    ("vertex", "Vertex AI needs Google Cloud credentials (google-auth)"),
    ("qwen-oauth", "Qwen Portal signs in through the Qwen CLI's OAuth"),
    ("minimax-oauth", "MiniMax OAuth signs in through Hermes' browser login"),
    ("xai-oauth", "xAI OAuth signs in through Hermes' browser login"),
];

/// `PROVIDER_TO_MODELS_DEV`: Hermes provider → models.dev provider id.
pub static MODELS_DEV: &[(&str, &str)] = &[
    ("openrouter", "openrouter"),
    ("novita", "novita-ai"),
    ("anthropic", "anthropic"),
    ("openai", "openai"),
    ("openai-codex", "openai"),
    ("zai", "zai"),
    ("kimi", "kimi-for-coding"),
    ("kimi-coding", "kimi-for-coding"),
    ("moonshot", "kimi-for-coding"),
    ("stepfun", "stepfun"),
    ("kimi-coding-cn", "kimi-for-coding"),
    ("minimax", "minimax"),
    ("minimax-oauth", "minimax"),
    ("minimax-cn", "minimax-cn"),
    ("deepseek", "deepseek"),
    ("alibaba", "alibaba"),
    ("qwen-oauth", "alibaba"),
    ("copilot", "github-copilot"),
    ("opencode-zen", "opencode"),
    ("opencode-go", "opencode-go"),
    ("kilocode", "kilo"),
    ("fireworks", "fireworks-ai"),
    ("huggingface", "huggingface"),
    ("gemini", "google"),
    ("google", "google"),
    ("xai", "xai"),
    ("xai-oauth", "xai"),
    ("xiaomi", "xiaomi"),
    ("nvidia", "nvidia"),
    ("groq", "groq"),
    ("mistral", "mistral"),
    ("togetherai", "togetherai"),
    ("perplexity", "perplexity"),
    ("cohere", "cohere"),
    ("ollama-cloud", "ollama-cloud"),
];

/// agent/anthropic_adapter.py `_COMMON_BETAS`.
pub static COMMON_BETAS: &[&str] = &[
    "interleaved-thinking-2025-05-14",
    "fine-grained-tool-streaming-2025-05-14",
];
/// `_TOOL_STREAMING_BETA`, which MiniMax rejects.
pub const TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
/// `_OAUTH_ONLY_BETAS`.
pub static OAUTH_ONLY_BETAS: &[&str] = &["claude-code-20250219", "oauth-2025-04-20"];
/// `_CLAUDE_CODE_VERSION_FALLBACK` (Hermes asks an installed `claude
/// --version` first; hermes-mcp runs no such command).
pub const CLAUDE_CODE_VERSION: &str = "2.1.74";
/// `_CLAUDE_CODE_SYSTEM_PREFIX`.
pub const CLAUDE_CODE_SYSTEM_PREFIX: &str =
    "You are Claude Code, Anthropic's official CLI for Claude.";
/// hermes_cli/auth.py `KIMI_CODE_BASE_URL` (where `sk-kimi-` keys go).
pub const KIMI_CODE_BASE_URL: &str = "https://api.kimi.com/coding";
/// hermes_cli/auth.py `LMSTUDIO_NOAUTH_PLACEHOLDER`.
pub const LMSTUDIO_NOAUTH_PLACEHOLDER: &str = "dummy-lm-api-key";
/// The OpenAI-wire Z.AI endpoints an explicit `provider: zai` uses
/// (resolve_vision_provider_client: the Anthropic wire rejects max_tokens on
/// multimodal calls); the first one wins whenever a key is set.
pub static ZAI_OPENAI_URLS: &[&str] = &[
    "https://open.bigmodel.cn/api/paas/v4",
    "https://api.z.ai/api/paas/v4",
];

/// The table entry for `name` (a registry alias counts).
pub fn api_key_provider(name: &str) -> Option<&'static ApiKeyProvider> {
    let name = REGISTRY_ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map_or(name, |(_, c)| c);
    API_KEY_PROVIDERS.iter().find(|p| p.name == name)
}

/// `_normalize_aux_provider`'s alias step.
pub fn aux_alias(name: &str) -> &str {
    AUX_ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map_or(name, |(_, c)| c)
}

pub fn vision_model(provider: &str) -> Option<&'static str> {
    VISION_MODELS
        .iter()
        .find(|(p, _)| *p == provider)
        .map(|(_, m)| *m)
}

pub fn uncallable(provider: &str) -> Option<&'static str> {
    UNCALLABLE
        .iter()
        .find(|(p, _)| *p == provider)
        .map(|(_, w)| *w)
}

pub fn models_dev_id(provider: &str) -> Option<&'static str> {
    MODELS_DEV
        .iter()
        .find(|(p, _)| *p == provider)
        .map(|(_, m)| *m)
}
