//! The one list of environment variables hermes-mcp reads.
//!
//! Codex starts a stdio MCP server with a minimal environment: only variables
//! named in the server entry's `env_vars` (or set in `env`) arrive. `migrate`
//! writes [`SERVE_VARS`] into `env_vars`, so every variable `serve` reads must be
//! listed here, and every read goes through [`get`] (debug builds assert that
//! the name is listed; a test greps `src/` for stray `std::env::var` calls).

/// Where a variable is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Read by `hermes-mcp serve` (so it must reach the server through Codex).
    Serve,
    /// Read by `serve`, but always passed by Codex to a stdio server (`PATH`,
    /// `HOME`): not listed in `env_vars`, where it would replace Codex's value.
    Base,
    /// Read only by the command-line side (`migrate`, `tools`).
    Cli,
}

#[derive(Debug, Clone, Copy)]
pub struct EnvVar {
    pub name: &'static str,
    pub scope: Scope,
    /// The Hermes toolset (or `core`) that reads it.
    pub area: &'static str,
    pub purpose: &'static str,
}

macro_rules! vars {
    ($( $ident:ident = $scope:ident, $area:literal, $purpose:literal; )*) => {
        $( pub const $ident: &str = stringify!($ident); )*
        /// Every variable hermes-mcp reads, in one table.
        pub(crate) const ALL: &[EnvVar] = &[
            $( EnvVar { name: stringify!($ident), scope: Scope::$scope, area: $area, purpose: $purpose }, )*
        ];
    };
}

vars! {
    // core
    HERMES_HOME = Serve, "core", "Hermes home (config.yaml, .env, skills/, cache/); default ~/.hermes";
    HERMES_PROFILE = Serve, "core", "active Hermes profile; author identity for kanban comments";
    HERMES_SESSION_ID = Serve, "core", "Hermes' current session: substituted into skills (${HERMES_SESSION_ID}); session_search leaves its conversation out";
    HERMES_MCP_LOG = Serve, "core", "log level/filter for hermes-mcp's logs, stderr and logs/hermes-mcp.log (e.g. debug)";
    HERMES_ALLOW_PRIVATE_URLS = Serve, "web", "allow private/loopback addresses in fetched URLs (never cloud metadata)";
    // kanban (the dispatcher sets these for a worker)
    HERMES_KANBAN_TASK = Serve, "kanban", "the task a dispatcher-spawned worker owns";
    HERMES_KANBAN_RUN_ID = Serve, "kanban", "the worker's run id (compare-and-swap on the run)";
    HERMES_KANBAN_CLAIM_LOCK = Serve, "kanban", "claim lock token; heartbeats extend the claim when it matches";
    HERMES_KANBAN_DB = Serve, "kanban", "explicit path of kanban.db";
    HERMES_KANBAN_BOARD = Serve, "kanban", "board slug to use";
    HERMES_KANBAN_HOME = Serve, "kanban", "kanban root directory (boards/, current)";
    HERMES_KANBAN_WORKSPACE = Serve, "kanban", "the worker's workspace directory";
    HERMES_KANBAN_WORKSPACES_ROOT = Serve, "kanban", "root of worker workspaces";
    HERMES_KANBAN_ATTACHMENTS_ROOT = Serve, "kanban", "root of task attachments";
    HERMES_KANBAN_BRANCH = Serve, "kanban", "git branch of the worker's workspace";
    HERMES_KANBAN_ROOT = Serve, "kanban", "legacy kanban root (older launchers)";
    HERMES_KANBAN_CLAIM_TTL_SECONDS = Serve, "kanban", "claim time-to-live";
    HERMES_KANBAN_BUSY_TIMEOUT_MS = Serve, "kanban", "SQLite busy timeout";
    HERMES_KANBAN_GOAL_MODE = Serve, "kanban", "goal mode of the worker";
    HERMES_KANBAN_STOP_NUDGE = Serve, "kanban", "stop-nudge switch of the worker";
    HERMES_TENANT = Serve, "kanban", "default tenant of tasks created with kanban_create";
    TERMINAL_TIMEOUT = Serve, "kanban", "terminal timeout shown in kanban_show's worker_context";
    HERMES_SESSION_PLATFORM = Serve, "kanban", "gateway platform auto-subscribed to tasks kanban_create makes";
    HERMES_SESSION_CHAT_ID = Serve, "kanban", "gateway chat auto-subscribed to tasks kanban_create makes";
    HERMES_SESSION_THREAD_ID = Serve, "kanban", "gateway thread of that subscription";
    HERMES_SESSION_USER_ID = Serve, "kanban", "gateway user of that subscription";
    HERMES_SESSION_KEY = Serve, "kanban", "TUI session auto-subscribed to tasks kanban_create makes";
    HERMES_SESSION_PROFILE = Serve, "kanban", "notifier profile of that subscription";
    // Nous tool gateway (web, image_gen, tts, browser through a Nous subscription)
    TOOL_GATEWAY_USER_TOKEN = Serve, "gateway", "Nous tool-gateway token (instead of auth.json's Nous login token)";
    TOOL_GATEWAY_DOMAIN = Serve, "gateway", "gateway domain: vendors are <vendor>-gateway.<domain> (default nousresearch.com)";
    TOOL_GATEWAY_SCHEME = Serve, "gateway", "gateway URL scheme, http or https (default https)";
    FIRECRAWL_GATEWAY_URL = Serve, "gateway", "Firecrawl gateway origin (web search/extract through Nous)";
    FAL_QUEUE_GATEWAY_URL = Serve, "gateway", "FAL queue gateway origin (image generation through Nous)";
    KREA_GATEWAY_URL = Serve, "gateway", "Krea gateway origin (Krea 2 images through Nous)";
    OPENAI_AUDIO_GATEWAY_URL = Serve, "gateway", "OpenAI audio gateway origin (OpenAI TTS through Nous)";
    BROWSER_USE_GATEWAY_URL = Serve, "gateway", "Browser Use gateway origin (cloud browser through Nous)";
    HERMES_PORTAL_BASE_URL = Serve, "gateway", "Nous Portal URL for token refresh (wins over auth.json's portal_base_url)";
    NOUS_PORTAL_BASE_URL = Serve, "gateway", "Nous Portal URL when HERMES_PORTAL_BASE_URL is unset";
    HERMES_SHARED_AUTH_DIR = Serve, "gateway", "directory of the Nous login shared across profiles (default <Hermes root>/shared)";
    // web
    FIRECRAWL_API_KEY = Serve, "web", "Firecrawl search/extract";
    FIRECRAWL_API_URL = Serve, "web", "self-hosted Firecrawl base URL";
    TAVILY_API_KEY = Serve, "web", "Tavily search/extract";
    TAVILY_BASE_URL = Serve, "web", "Tavily API base URL (default https://api.tavily.com)";
    EXA_API_KEY = Serve, "web", "Exa search/extract";
    PARALLEL_API_KEY = Serve, "web", "Parallel search/extract";
    PARALLEL_SEARCH_MODE = Serve, "web", "Parallel search mode: fast, one-shot or agentic (default)";
    SEARXNG_URL = Serve, "web", "SearXNG instance URL";
    BRAVE_SEARCH_API_KEY = Serve, "web", "Brave Search API";
    // skills
    HERMES_PLATFORM = Serve, "skills", "session platform (cli, telegram, ...) selecting skills.platform_disabled.<platform>";
    // browser
    CHROME_PATH = Serve, "browser", "Chromium/Chrome executable";
    BROWSER_CDP_URL = Serve, "browser", "attach to an existing browser over CDP";
    BROWSER_INACTIVITY_TIMEOUT = Serve, "browser", "idle seconds before the browser closes";
    BROWSERBASE_API_KEY = Serve, "browser", "Browserbase cloud browser (browser.cloud_provider: browserbase)";
    BROWSERBASE_PROJECT_ID = Serve, "browser", "Browserbase project the sessions are created in";
    BROWSERBASE_BASE_URL = Serve, "browser", "Browserbase API base URL (default https://api.browserbase.com)";
    BROWSERBASE_PROXIES = Serve, "browser", "Browserbase residential proxies (default true)";
    BROWSERBASE_ADVANCED_STEALTH = Serve, "browser", "Browserbase advanced stealth (default false)";
    BROWSERBASE_KEEP_ALIVE = Serve, "browser", "Browserbase keepAlive sessions (default true)";
    BROWSERBASE_SESSION_TIMEOUT = Serve, "browser", "Browserbase session timeout sent as-is";
    BROWSER_USE_API_KEY = Serve, "browser", "Browser Use cloud browser (browser.cloud_provider: browser-use)";
    FIRECRAWL_BROWSER_TTL = Serve, "browser", "Firecrawl cloud browser session TTL in seconds (default 300)";
    CAMOFOX_URL = Serve, "browser", "Camofox anti-detection browser server (REST API)";
    CAMOFOX_API_KEY = Serve, "browser", "bearer token for the Camofox server";
    CAMOFOX_USER_ID = Serve, "browser", "Camofox userId to share an externally owned browser profile (else browser.camofox.user_id)";
    CAMOFOX_SESSION_KEY = Serve, "browser", "Camofox listItemId for that shared profile's tabs (else browser.camofox.session_key)";
    CAMOFOX_ADOPT_EXISTING_TAB = Serve, "browser", "reuse a tab the Camofox server already has for a managed profile (true/false)";
    CAMOFOX_REWRITE_LOOPBACK_URLS = Serve, "browser", "open loopback page URLs on the Docker host alias (Camofox in Docker; true/false)";
    CAMOFOX_LOOPBACK_HOST_ALIAS = Serve, "browser", "host name loopback page URLs are rewritten to (default host.docker.internal)";
    AUXILIARY_WEB_EXTRACT_MODEL = Serve, "browser", "auxiliary model that summarises long browser snapshots";
    // vision
    AUXILIARY_VISION_MODEL = Serve, "vision", "auxiliary vision model override";
    HERMES_VISION_DOWNLOAD_TIMEOUT = Serve, "vision", "image download timeout (seconds)";
    OPENROUTER_API_KEY = Serve, "vision", "OpenRouter key (auxiliary provider openrouter)";
    NOUS_API_KEY = Serve, "vision", "Nous key (auxiliary provider nous)";
    NOUS_INFERENCE_BASE_URL = Serve, "vision", "Nous Portal inference base URL when auth.json names none";
    HERMES_VISION_MAX_CONCURRENCY = Serve, "vision", "how many image decode/resize jobs run at once (default: CPU cores)";
    // vision: Hermes' API-key providers (hermes_cli/auth.py PROVIDER_REGISTRY)
    ANTHROPIC_API_KEY = Serve, "vision", "Anthropic API key (or legacy OAuth token) for vision when the provider is anthropic";
    ANTHROPIC_TOKEN = Serve, "vision", "Anthropic OAuth/setup token (sk-ant-oat...) for vision, preferred over ANTHROPIC_API_KEY";
    CLAUDE_CODE_OAUTH_TOKEN = Serve, "vision", "Claude Code OAuth token for vision (provider anthropic)";
    GLM_API_KEY = Serve, "vision", "Z.AI / GLM key (vision provider zai)";
    ZAI_API_KEY = Serve, "vision", "Z.AI key, when GLM_API_KEY is unset";
    Z_AI_API_KEY = Serve, "vision", "Z.AI key, when GLM_API_KEY and ZAI_API_KEY are unset";
    GLM_BASE_URL = Serve, "vision", "Z.AI base URL (default https://api.z.ai/api/paas/v4)";
    KIMI_API_KEY = Serve, "vision", "Kimi / Moonshot key (vision provider kimi-coding)";
    KIMI_CODING_API_KEY = Serve, "vision", "Kimi Coding key, when KIMI_API_KEY is unset";
    KIMI_BASE_URL = Serve, "vision", "Kimi base URL (default https://api.moonshot.ai/v1; sk-kimi- keys: https://api.kimi.com/coding)";
    KIMI_CN_API_KEY = Serve, "vision", "Kimi China key (vision provider kimi-coding-cn)";
    STEPFUN_API_KEY = Serve, "vision", "StepFun key (vision provider stepfun)";
    STEPFUN_BASE_URL = Serve, "vision", "StepFun base URL";
    ARCEEAI_API_KEY = Serve, "vision", "Arcee key (vision provider arcee)";
    ARCEE_BASE_URL = Serve, "vision", "Arcee base URL";
    GMI_API_KEY = Serve, "vision", "GMI Cloud key (vision provider gmi)";
    GMI_BASE_URL = Serve, "vision", "GMI Cloud base URL";
    MINIMAX_BASE_URL = Serve, "vision", "MiniMax vision base URL (default https://api.minimax.io/anthropic: Anthropic Messages)";
    MINIMAX_CN_API_KEY = Serve, "vision", "MiniMax China key (vision provider minimax-cn)";
    MINIMAX_CN_BASE_URL = Serve, "vision", "MiniMax China base URL (default https://api.minimaxi.com/anthropic)";
    DASHSCOPE_API_KEY = Serve, "vision", "Alibaba DashScope key (vision providers alibaba, alibaba-coding-plan)";
    DASHSCOPE_BASE_URL = Serve, "vision", "Alibaba DashScope base URL";
    ALIBABA_CODING_PLAN_API_KEY = Serve, "vision", "Alibaba Coding Plan key (vision provider alibaba-coding-plan)";
    ALIBABA_CODING_PLAN_BASE_URL = Serve, "vision", "Alibaba Coding Plan base URL";
    DEEPSEEK_API_KEY = Serve, "vision", "DeepSeek key (vision provider deepseek)";
    DEEPSEEK_BASE_URL = Serve, "vision", "DeepSeek base URL";
    NVIDIA_API_KEY = Serve, "vision", "NVIDIA NIM key (vision provider nvidia)";
    NVIDIA_BASE_URL = Serve, "vision", "NVIDIA NIM base URL";
    OPENCODE_ZEN_API_KEY = Serve, "vision", "OpenCode Zen key (vision provider opencode-zen)";
    OPENCODE_ZEN_BASE_URL = Serve, "vision", "OpenCode Zen base URL";
    OPENCODE_GO_API_KEY = Serve, "vision", "OpenCode Go key (vision provider opencode-go)";
    OPENCODE_GO_BASE_URL = Serve, "vision", "OpenCode Go base URL";
    KILOCODE_API_KEY = Serve, "vision", "Kilo Code gateway key (vision provider kilocode)";
    KILOCODE_BASE_URL = Serve, "vision", "Kilo Code gateway base URL";
    HF_TOKEN = Serve, "vision", "Hugging Face token (vision provider huggingface)";
    HF_BASE_URL = Serve, "vision", "Hugging Face router base URL";
    XIAOMI_API_KEY = Serve, "vision", "Xiaomi MiMo key (vision provider xiaomi)";
    XIAOMI_BASE_URL = Serve, "vision", "Xiaomi MiMo base URL";
    TOKENHUB_API_KEY = Serve, "vision", "Tencent TokenHub key (vision provider tencent-tokenhub)";
    TOKENHUB_BASE_URL = Serve, "vision", "Tencent TokenHub base URL";
    OLLAMA_API_KEY = Serve, "vision", "Ollama Cloud key (vision provider ollama-cloud)";
    OLLAMA_BASE_URL = Serve, "vision", "Ollama Cloud base URL";
    FIREWORKS_API_KEY = Serve, "vision", "Fireworks key (vision provider fireworks)";
    NOVITA_API_KEY = Serve, "vision", "Novita key (vision provider novita)";
    NOVITA_BASE_URL = Serve, "vision", "Novita base URL";
    UPSTAGE_API_KEY = Serve, "vision", "Upstage key (vision provider upstage)";
    UPSTAGE_BASE_URL = Serve, "vision", "Upstage base URL";
    LM_API_KEY = Serve, "vision", "LM Studio key (vision provider lmstudio; default: none needed)";
    LM_BASE_URL = Serve, "vision", "LM Studio base URL (default http://127.0.0.1:1234/v1)";
    // image_gen and tts (and keys several toolsets share)
    FAL_KEY = Serve, "image_gen", "FAL image generation";
    FAL_IMAGE_MODEL = Serve, "image_gen", "FAL model id";
    CODEX_HOME = Serve, "core", "Codex home: config.toml for migrate; auth.json (ChatGPT sign-in) for image provider openai-codex; default ~/.codex";
    OPENAI_IMAGE_MODEL = Serve, "image_gen", "gpt-image-2 tier for providers openai and openai-codex (gpt-image-2-low/medium/high)";
    XAI_API_KEY = Serve, "media", "xAI key (image_gen.provider, tts.provider and web.search_backend: xai; vision provider xai)";
    XAI_BASE_URL = Serve, "media", "xAI API base URL (default https://api.x.ai/v1; web.xai.base_url wins for web_search)";
    HERMES_XAI_BASE_URL = Serve, "media", "xAI API base URL for Hermes' xAI Grok sign-in (https on *.x.ai only)";
    XAI_IMAGE_MODEL = Serve, "image_gen", "xAI image model (grok-imagine-image or grok-imagine-image-quality)";
    OPENROUTER_BASE_URL = Serve, "image_gen", "OpenRouter API base URL (default https://openrouter.ai/api/v1)";
    OPENROUTER_IMAGE_MODEL = Serve, "image_gen", "OpenRouter image model (default openai/gpt-5.4-image-2, then google/gemini-3-pro-image)";
    OPENAI_API_KEY = Serve, "media", "OpenAI images, speech and vision";
    OPENAI_BASE_URL = Serve, "media", "OpenAI-compatible base URL";
    VOICE_TOOLS_OPENAI_KEY = Serve, "tts", "OpenAI key for speech (preferred over OPENAI_API_KEY)";
    ELEVENLABS_API_KEY = Serve, "tts", "ElevenLabs speech";
    MINIMAX_API_KEY = Serve, "tts", "MiniMax speech (tts.provider: minimax) and vision (provider minimax)";
    MINIMAX_GROUP_ID = Serve, "tts", "MiniMax GroupId query parameter (or tts.minimax.group_id)";
    MISTRAL_API_KEY = Serve, "tts", "Mistral Voxtral speech (tts.provider: mistral)";
    GEMINI_API_KEY = Serve, "tts", "Google Gemini speech (tts.provider: gemini) and vision (provider gemini, after GOOGLE_API_KEY)";
    GOOGLE_API_KEY = Serve, "tts", "Google Gemini speech, when GEMINI_API_KEY is unset; vision (provider gemini) reads it first";
    GEMINI_BASE_URL = Serve, "tts", "Gemini API base URL (default https://generativelanguage.googleapis.com/v1beta)";
    DEEPINFRA_API_KEY = Serve, "tts", "DeepInfra speech (tts.provider: deepinfra)";
    DEEPINFRA_BASE_URL = Serve, "tts", "DeepInfra OpenAI-compatible base URL and model catalog";
    HERMES_PYTHON = Serve, "tts", "Hermes' Python, which runs the piper-tts, neutts and kittentts packages and finds plugin skills (default: the `hermes` command's interpreter, then python3)";
    DEEPINFRA_IMAGE_MODEL = Serve, "image_gen", "DeepInfra image model (image_gen.provider: deepinfra; default: first image-gen model of the live catalog)";
    KREA_API_KEY = Serve, "image_gen", "Krea image generation (image_gen.provider: krea)";
    KREA_IMAGE_MODEL = Serve, "image_gen", "Krea model (krea-2-medium, krea-2-large or krea-2-medium-turbo)";
    PATH = Base, "core", "where chromium, espeak-ng, piper, ffmpeg and sox are found (Codex passes it by default)";
    // CLI side only
    NO_COLOR = Cli, "migrate", "disable colour in diffs and reports";
    HERMES_MCP_TEST_PAUSE_BEFORE_RENAME_MS = Cli, "migrate", "crash tests only: pause (ms) between the fsynced temp file and the rename";
    HERMES_MCP_TEST_XAI_TOKEN_URL = Cli, "auth", "tests only: a loopback (http://127.0.0.1) xAI OAuth token endpoint, as xAI's cannot be faked";
    HERMES_MCP_TEST_TIME_SCALE = Cli, "core", "tests only: a factor (e.g. 0.01) every fixed deadline of hermes/deadlines.rs and configured wait is scaled by";
}

/// The variables `serve` reads: what `migrate` lists in `env_vars`.
pub fn serve_vars() -> impl Iterator<Item = &'static EnvVar> {
    ALL.iter().filter(|v| v.scope == Scope::Serve)
}

pub(crate) fn is_listed(name: &str) -> bool {
    ALL.iter().any(|v| v.name == name)
}

/// Read a listed variable from the process environment. Empty values count as unset.
#[allow(clippy::disallowed_methods)] // the one place variables are read
pub(crate) fn get(name: &str) -> Option<String> {
    debug_assert!(
        is_listed(name),
        "environment variable {name} is not listed in hermes/envvars.rs"
    );
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// What codex 0.169 always passes a stdio MCP server from its own environment
/// (codex-rs `rmcp-client/src/utils.rs`, `DEFAULT_ENV_VARS` on unix), before
/// the entry's `env_vars` and `env`. Observed also: the CA-bundle variables.
pub(crate) const CODEX_DEFAULT_VARS: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "USER",
    "__CF_USER_TEXT_ENCODING",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "TZ",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];

/// The environment codex would give a stdio MCP server whose entry lists
/// `env_vars` and sets `env`, built from this process's environment (`doctor`
/// runs in the shell codex would run in). Later entries win, as in codex.
#[allow(clippy::disallowed_methods)] // reproduces codex, which reads any named variable
pub(crate) fn codex_server_env(
    env_vars: &[String],
    env: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut set = |k: &str, v: String| {
        out.retain(|(n, _)| n != k);
        out.push((k.to_string(), v));
    };
    for name in CODEX_DEFAULT_VARS
        .iter()
        .copied()
        .chain(env_vars.iter().map(String::as_str))
    {
        if let Ok(v) = std::env::var(name) {
            set(name, v);
        }
    }
    for (k, v) in env {
        set(k, v.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_shell_safe() {
        let mut seen = std::collections::HashSet::new();
        for v in ALL {
            assert!(seen.insert(v.name), "duplicate {}", v.name);
            assert!(
                v.name
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            );
        }
        assert!(serve_vars().any(|v| v.name == HERMES_KANBAN_TASK));
        // serve reads Codex's sign-in ($CODEX_HOME/auth.json) for image provider openai-codex.
        assert!(serve_vars().any(|v| v.name == CODEX_HOME));
    }
}
