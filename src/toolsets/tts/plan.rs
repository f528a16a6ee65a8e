//! Which engine speaks: `tts.provider` resolved against the installed programs,
//! the keys in the environment and `tts.providers.<name>` (hermes-agent:
//! `tools/tts_tool.py`, `_get_provider`, `_get_named_provider_config`), and how
//! much text it accepts (`PROVIDER_MAX_TEXT_LENGTH`, `_resolve_max_text_length`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::config::{positive_int, section, section_str, tts_config};
use super::providers::cloud::{Api, api_key};
use super::python::{self, Interpreter};
use crate::gateway;
use crate::hermes::Context;
use crate::hermes::envvars;

pub(crate) const DEFAULT_PROVIDER: &str = "edge";
/// Also the model whose text cap applies when `tts.elevenlabs.model_id` is unset.
pub(crate) const DEFAULT_ELEVENLABS_MODEL_ID: &str = "eleven_multilingual_v2";
pub(crate) const DEFAULT_PIPER_VOICE: &str = "en_US-lessac-medium";
const DEFAULT_COMMAND_MAX_TEXT_LENGTH: usize = 5000;
const FALLBACK_MAX_TEXT_LENGTH: usize = 4000;

/// Hermes' `BUILTIN_TTS_PROVIDERS`.
pub(crate) const BUILTIN_PROVIDERS: &[&str] = &[
    "edge",
    "elevenlabs",
    "openai",
    "minimax",
    "xai",
    "mistral",
    "gemini",
    "neutts",
    "kittentts",
    "piper",
    "deepinfra",
];

/// Hermes' `PROVIDER_MAX_TEXT_LENGTH` (+ espeak-ng, capped like the other local engines).
fn provider_max_text_length(key: &str) -> Option<usize> {
    Some(match key {
        "edge" => 5000,
        "openai" => 4096,
        "xai" => 15000,
        "minimax" => 10000,
        "mistral" => 4000,
        "gemini" => 32000,
        "elevenlabs" => 10000,
        "neutts" => 2000,
        "kittentts" => 2000,
        "piper" => 5000,
        "espeak" => 5000,
        _ => return None,
    })
}

fn elevenlabs_model_max(model: &str) -> Option<usize> {
    Some(match model {
        "eleven_v3" | "eleven_ttv_v3" => 5000,
        "eleven_multilingual_v2"
        | "eleven_multilingual_v1"
        | "eleven_english_sts_v2"
        | "eleven_english_sts_v1" => 10000,
        "eleven_flash_v2" => 30000,
        "eleven_flash_v2_5" => 40000,
        _ => return None,
    })
}

/// Hermes' `_get_named_provider_config`: `tts.providers.<name>`, else a
/// non-built-in `tts.<name>`.
fn named_provider_config<'a>(
    cfg: &'a Map<String, Value>,
    name: &str,
) -> Option<&'a Map<String, Value>> {
    if let Some(s) = section(cfg, "providers")
        .and_then(|p| p.get(name))
        .and_then(Value::as_object)
    {
        return Some(s);
    }
    if !BUILTIN_PROVIDERS.contains(&name.to_ascii_lowercase().as_str()) {
        return section(cfg, name).filter(|s| !s.is_empty());
    }
    None
}

/// Hermes' `_is_command_provider_config`.
fn is_command_config(c: &Map<String, Value>) -> bool {
    let ptype = c
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if !ptype.is_empty() && ptype != "command" {
        return false;
    }
    c.get("command")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

fn command_config(cfg: &Map<String, Value>, provider: &str) -> Option<Map<String, Value>> {
    if provider.is_empty() || BUILTIN_PROVIDERS.contains(&provider) {
        return None;
    }
    named_provider_config(cfg, provider)
        .filter(|c| is_command_config(c))
        .cloned()
}

/// The engine that will run.
#[derive(Debug, Clone)]
pub(crate) enum Engine {
    /// Microsoft's Read Aloud service (Hermes' default), [`crate::toolsets::tts::edge`].
    Edge,
    Espeak {
        bin: PathBuf,
    },
    /// The `piper` command with a local voice (a hermes-mcp fallback when the
    /// `piper-tts` package is not importable).
    Piper {
        bin: PathBuf,
        model: PathBuf,
    },
    /// A Hermes local model run by its Python package ([`super::providers::pylocal`]).
    Python {
        model: LocalModel,
        python: PathBuf,
    },
    Command {
        name: String,
        config: Map<String, Value>,
    },
    /// OpenAI speech: a direct key, or `None` for the Nous tool gateway
    /// (`openai-audio`), resolved when the call runs.
    OpenAi {
        key: Option<String>,
    },
    ElevenLabs {
        key: String,
    },
    /// MiniMax, xAI, Mistral, Gemini, DeepInfra ([`super::providers::cloud`]).
    Cloud {
        api: Api,
        key: String,
    },
}

/// The Python TTS packages Hermes runs in-process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LocalModel {
    /// `piper-tts` (`from piper import PiperVoice`).
    Piper,
    /// `neutts` (`from neutts import NeuTTS`), run as Hermes' `neutts_synth.py` does.
    NeuTts,
    /// `kittentts` (`from kittentts import KittenTTS`).
    KittenTts,
}

impl LocalModel {
    pub(crate) fn module(self) -> &'static str {
        match self {
            LocalModel::Piper => "piper",
            LocalModel::NeuTts => "neutts",
            LocalModel::KittenTts => "kittentts",
        }
    }
    /// Hermes' error when the package is not installed (`text_to_speech_tool`).
    pub(crate) fn not_installed(self) -> &'static str {
        match self {
            LocalModel::Piper => {
                "Piper provider selected but 'piper-tts' package not installed. Run 'hermes tools' and select Piper under TTS, or install manually: pip install piper-tts"
            }
            LocalModel::NeuTts => {
                "NeuTTS provider selected but neutts is not installed. Run hermes setup and choose NeuTTS, or install espeak-ng and run python -m pip install -U neutts[all]."
            }
            LocalModel::KittenTts => {
                "KittenTTS provider selected but 'kittentts' package not installed. Run 'hermes setup tts' and choose KittenTTS, or install manually: pip install https://github.com/KittenML/KittenTTS/releases/download/0.8.1/kittentts-0.8.1-py3-none-any.whl"
            }
        }
    }
}

/// The provider resolved from config: what runs, and the name results report.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// `tts.provider` as configured (lower-cased), `edge` when unset.
    pub configured: String,
    /// The provider the result names: Hermes reports the configured name, even an
    /// unknown one that falls through to Edge.
    pub provider: String,
    pub engine: Engine,
    /// Why this engine runs (for `hermes-mcp tools`), e.g. `tts.provider: edge`.
    pub why: String,
}

impl Plan {
    /// Runs without the network. Not the Python models: Piper downloads voices,
    /// NeuTTS and KittenTTS their weights from huggingface on first use.
    pub(crate) fn is_local(&self) -> bool {
        matches!(self.engine, Engine::Espeak { .. } | Engine::Piper { .. })
    }
    /// The key of Hermes' text-length table and of `tts.<key>.max_text_length`.
    pub(crate) fn cap_key(&self) -> &str {
        match self.engine {
            Engine::Espeak { .. } => "espeak",
            _ => &self.configured,
        }
    }
}

const SUPPORTED: &str = "supported: edge, openai, elevenlabs, minimax, xai, mistral, gemini, deepinfra, piper, neutts, kittentts, espeak-ng (a hermes-mcp extension), or a command provider under tts.providers.<name>";

fn espeak_bin(ctx: &Context) -> Option<PathBuf> {
    ctx.which("espeak-ng").or_else(|| ctx.which("espeak"))
}

/// Why no engine can run; `Display` is the text `tools/list` and results show.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PlanError {
    #[error("tts.provider is espeak-ng but espeak-ng is not on PATH: `apt install espeak-ng`")]
    NoEspeak,
    #[error("tts.provider is openai but neither VOICE_TOOLS_OPENAI_KEY nor OPENAI_API_KEY is set")]
    NoOpenAiKey,
    #[error(
        "tts.provider is elevenlabs but ELEVENLABS_API_KEY is not set (get one at https://elevenlabs.io/)"
    )]
    NoElevenLabsKey,
    #[error("Piper voice '{voice}' not found: put {voice}.onnx and {voice}.onnx.json in {} (the `piper` command does not download voices; with the piper-tts package importable by Hermes' Python, voices are downloaded as Hermes does)", dir.display())]
    NoPiperVoice { voice: String, dir: PathBuf },
    /// Hermes' missing-key `ValueError` text.
    #[error("tts.provider is {provider} but {msg}")]
    NoKey { provider: String, msg: &'static str },
    /// A Hermes local model whose Python package Hermes' interpreter cannot import.
    #[error("{} ({})", model.not_installed(), python_note(python.as_ref(), *model))]
    NotInstalled {
        model: LocalModel,
        python: Option<Interpreter>,
    },
    /// A Hermes built-in provider hermes-mcp does not implement.
    #[error("tts.provider '{0}' is not supported by hermes-mcp ({SUPPORTED})")]
    Unsupported(String),
}

fn python_note(py: Option<&Interpreter>, model: LocalModel) -> String {
    let alt = if model == LocalModel::Piper {
        " or put the `piper` command on PATH"
    } else {
        ""
    };
    match py {
        Some(p) => format!(
            "`{}` cannot be imported by {p}; install it there, set HERMES_PYTHON to the Python that has it{alt}",
            model.module()
        ),
        None => format!("no Python found: set HERMES_PYTHON to Hermes' Python{alt}"),
    }
}

/// A local model when Hermes' Python can import its package.
fn python_model(ctx: &Context, model: LocalModel) -> Result<(PathBuf, String), PlanError> {
    let py = python::interpreter(ctx);
    match &py {
        Some(p) if python::can_import(&p.path, model.module()) => Ok((
            p.path.clone(),
            format!("`{}` importable by {p}", model.module()),
        )),
        _ => Err(PlanError::NotInstalled { model, python: py }),
    }
}

/// `tts.provider` as configured, and the reason every plan built from it starts with.
struct Configured {
    /// Lower-cased, `edge` when unset.
    name: String,
    /// `tts.provider: <name>`, or that it is unset.
    why: String,
}

impl Configured {
    fn read(cfg: &Map<String, Value>) -> Configured {
        let raw = cfg
            .get("provider")
            .and_then(Value::as_str)
            .map(|s| s.trim().to_ascii_lowercase())
            .filter(|s| !s.is_empty());
        let why = match &raw {
            Some(p) => format!("tts.provider: {p}"),
            None => "tts.provider unset: Hermes' default (edge)".to_string(),
        };
        Configured {
            name: raw.unwrap_or_else(|| DEFAULT_PROVIDER.to_string()),
            why,
        }
    }

    /// The plan that runs `engine`, reported as `provider`.
    fn plan(&self, provider: &str, engine: Engine, why: String) -> Plan {
        Plan {
            configured: self.name.clone(),
            provider: provider.to_string(),
            engine,
            why,
        }
    }
}

/// Resolve `tts.provider` to an engine, or say what is missing. Cheap (a few stats).
///
/// Hermes' order (`text_to_speech_tool`, `check_tts_requirements`): a command provider
/// under a non-built-in name first; then the built-in named; any other name (no command,
/// no plugin) falls through to Edge, reported under the configured name. An unset
/// `tts.provider` is `edge`: API keys in the environment never select a paid provider.
pub(crate) fn plan(ctx: &Context) -> Result<Plan, PlanError> {
    let cfg = tts_config(ctx);
    let c = Configured::read(cfg);
    let why = c.why.clone();
    if let Some(config) = command_config(cfg, &c.name) {
        let engine = Engine::Command {
            name: c.name.clone(),
            config,
        };
        return Ok(c.plan(&c.name, engine, format!("{why} (a command provider)")));
    }
    match c.name.as_str() {
        "edge" => Ok(c.plan("edge", Engine::Edge, why)),
        // A hermes-mcp extension: Hermes itself would send these names to Edge.
        "espeak-ng" | "espeak" => match espeak_bin(ctx) {
            Some(bin) => Ok(c.plan(
                "espeak-ng",
                Engine::Espeak { bin },
                format!("{why} (offline, a hermes-mcp extension)"),
            )),
            None => Err(PlanError::NoEspeak),
        },
        "openai" => plan_openai(ctx, &c),
        "elevenlabs" => match ctx.env.get(envvars::ELEVENLABS_API_KEY) {
            Some(key) => Ok(c.plan("elevenlabs", Engine::ElevenLabs { key }, why)),
            None => Err(PlanError::NoElevenLabsKey),
        },
        "piper" => plan_piper(ctx, cfg, &c),
        p @ ("minimax" | "xai" | "mistral" | "gemini" | "deepinfra") => {
            let api = match p {
                "minimax" => Api::Minimax,
                "xai" => Api::Xai,
                "mistral" => Api::Mistral,
                "gemini" => Api::Gemini,
                _ => Api::DeepInfra,
            };
            match api_key(ctx, api) {
                Ok(key) => Ok(c.plan(p, Engine::Cloud { api, key }, why)),
                Err(msg) => Err(PlanError::NoKey {
                    provider: p.to_string(),
                    msg,
                }),
            }
        }
        p @ ("neutts" | "kittentts") => {
            let model = if p == "neutts" {
                LocalModel::NeuTts
            } else {
                LocalModel::KittenTts
            };
            let (python, how) = python_model(ctx, model)?;
            Ok(c.plan(
                p,
                Engine::Python { model, python },
                format!("{why}: {how}"),
            ))
        }
        p if BUILTIN_PROVIDERS.contains(&p) => Err(PlanError::Unsupported(p.to_string())),
        // Hermes: no command provider and no plugin of that name → the Edge default,
        // still reported (and its errors worded) under the configured name.
        p => Ok(c.plan(
            p,
            Engine::Edge,
            format!(
                "{why} is neither a built-in nor a tts.providers.{p} command (Hermes plugins are not loaded), so Hermes falls through to edge"
            ),
        )),
    }
}

/// OpenAI speech (`_resolve_openai_audio_client_config` / `_has_openai_audio_backend`):
/// a direct key wins unless `tts.use_gateway`; else the Nous tool gateway.
fn plan_openai(ctx: &Context, c: &Configured) -> Result<Plan, PlanError> {
    let why = &c.why;
    let key = ctx
        .env
        .get(envvars::VOICE_TOOLS_OPENAI_KEY)
        .or_else(|| ctx.env.get(envvars::OPENAI_API_KEY))
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty());
    let prefers = ctx.sections().tts.use_gateway;
    let ready = gateway::peek(ctx, "openai-audio");
    match key {
        Some(key) if !prefers => {
            Ok(c.plan("openai", Engine::OpenAi { key: Some(key) }, why.clone()))
        }
        key if key.is_some() || ready.is_ok() => {
            let route = if key.is_some() {
                "tts.use_gateway is set, so the Nous tool gateway (openai-audio) wins over the OpenAI key"
            } else {
                "no VOICE_TOOLS_OPENAI_KEY/OPENAI_API_KEY: Nous tool gateway (openai-audio)"
            };
            let state = match &ready {
                Ok(g) => format!(" at {}, Nous login entitled", g.origin),
                Err(u) => format!(", not usable: {}", u.reason()),
            };
            Ok(c.plan(
                "openai",
                Engine::OpenAi { key: None },
                format!("{why}; {route}{state}"),
            ))
        }
        _ => Err(PlanError::NoOpenAiKey),
    }
}

/// Piper: Hermes imports piper-tts; the `piper` command (with a voice already on
/// disk) is our fallback when the package is not importable.
fn plan_piper(ctx: &Context, cfg: &Map<String, Value>, c: &Configured) -> Result<Plan, PlanError> {
    let why = &c.why;
    match python_model(ctx, LocalModel::Piper) {
        Ok((python, how)) => Ok(c.plan(
            "piper",
            Engine::Python {
                model: LocalModel::Piper,
                python,
            },
            format!("{why}: {how}"),
        )),
        Err(not_installed) => {
            let Some(bin) = ctx.which("piper") else {
                return Err(not_installed);
            };
            let model = piper_model(ctx, cfg)?;
            let why = format!(
                "{why}: the `piper` command at {} (the piper-tts package is not importable: {not_installed})",
                bin.display()
            );
            Ok(c.plan("piper", Engine::Piper { bin, model }, why))
        }
    }
}

/// Hermes' `_resolve_piper_voice_path` for the `piper` command, without the
/// download step (which needs the piper-tts package).
fn piper_model(ctx: &Context, cfg: &Map<String, Value>) -> Result<PathBuf, PlanError> {
    let voice = section_str(cfg, "piper", "voice").unwrap_or_else(|| DEFAULT_PIPER_VOICE.into());
    let direct = crate::hermes::home::expand_tilde(Path::new(&voice));
    if direct
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
        && direct.is_file()
    {
        return Ok(direct);
    }
    let dir = piper_voices_dir(ctx, &section(cfg, "piper").cloned().unwrap_or_default());
    let cached = dir.join(format!("{voice}.onnx"));
    if cached.is_file() && dir.join(format!("{voice}.onnx.json")).is_file() {
        return Ok(cached);
    }
    Err(PlanError::NoPiperVoice { voice, dir })
}

/// Hermes' `_get_piper_voices_dir` / `tts.piper.voices_dir`.
pub(crate) fn piper_voices_dir(ctx: &Context, piper: &Map<String, Value>) -> PathBuf {
    match piper.get("voices_dir").and_then(|v| match v {
        // Python's `x or default`: empty and absent are the default.
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }) {
        Some(d) => crate::hermes::home::expand_tilde(Path::new(&d)),
        None => {
            // get_hermes_dir("cache/piper-voices", "piper_voices_cache"): the legacy
            // directory while it has content.
            let legacy = ctx.home.path.join("piper_voices_cache");
            let legacy_used = std::fs::read_dir(&legacy)
                .map(|mut d| d.next().is_some())
                .unwrap_or(false);
            if legacy_used {
                legacy
            } else {
                ctx.home.cache_dir("piper-voices")
            }
        }
    }
}

/// Hermes' `_resolve_max_text_length`.
pub(crate) fn max_text_length(plan: &Plan, cfg: &Map<String, Value>) -> usize {
    let key = plan.cap_key().to_string();
    if let Some(n) = positive_int(section(cfg, &key).and_then(|s| s.get("max_text_length"))) {
        return n;
    }
    if key == "elevenlabs" {
        let model = section_str(cfg, "elevenlabs", "model_id")
            .unwrap_or_else(|| DEFAULT_ELEVENLABS_MODEL_ID.into());
        if let Some(n) = elevenlabs_model_max(&model) {
            return n;
        }
    }
    if let Some(n) = provider_max_text_length(&key) {
        return n;
    }
    if let Engine::Command { config, .. } = &plan.engine {
        return positive_int(config.get("max_text_length"))
            .unwrap_or(DEFAULT_COMMAND_MAX_TEXT_LENGTH);
    }
    FALLBACK_MAX_TEXT_LENGTH
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::context::test_ctx as ctx;

    fn cfg(yaml: &str) -> Map<String, Value> {
        tts_config(&ctx(yaml, &[])).clone()
    }

    #[test]
    fn default_and_unknown_names_are_edge_like_hermes() {
        // No programs, no keys: still Edge (it needs neither).
        let empty = tempfile::tempdir().unwrap();
        let c = ctx("", &[("PATH", empty.path().to_str().unwrap())]);
        let p = plan(&c).unwrap();
        assert!(matches!(p.engine, Engine::Edge));
        assert_eq!(
            (p.provider.as_str(), p.configured.as_str()),
            ("edge", "edge")
        );
        assert!(p.why.contains("unset"), "{}", p.why);
        // Keys in the environment never select a paid provider.
        let p = plan(&ctx(
            "",
            &[("OPENAI_API_KEY", "k"), ("ELEVENLABS_API_KEY", "k")],
        ))
        .unwrap();
        assert!(matches!(p.engine, Engine::Edge));
        let p = plan(&ctx("tts: {provider: ' Edge '}", &[])).unwrap();
        assert_eq!(p.why, "tts.provider: edge");
        // An unknown name without a command falls through to Edge under its own name.
        let p = plan(&ctx("tts: {provider: mine}", &[])).unwrap();
        assert!(matches!(p.engine, Engine::Edge));
        assert_eq!(p.provider, "mine");
        assert!(p.why.contains("falls through to edge"), "{}", p.why);
        // espeak-ng is ours, and needs the program.
        let e = plan(&ctx(
            "tts: {provider: espeak-ng}",
            &[("PATH", empty.path().to_str().unwrap())],
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("apt install espeak-ng"), "{e}");
    }

    #[test]
    fn providers_need_their_keys() {
        let e = plan(&ctx("tts: {provider: openai}", &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("VOICE_TOOLS_OPENAI_KEY"), "{e}");
        let p = plan(&ctx("tts: {provider: OpenAI}", &[("OPENAI_API_KEY", "k")])).unwrap();
        assert!(matches!(p.engine, Engine::OpenAi { key: Some(ref key) } if key == "k"));
        let p = plan(&ctx(
            "tts: {provider: openai}",
            &[("OPENAI_API_KEY", "k"), ("VOICE_TOOLS_OPENAI_KEY", "v")],
        ))
        .unwrap();
        assert!(matches!(p.engine, Engine::OpenAi { key: Some(ref key) } if key == "v"));
        assert!(
            plan(&ctx("tts: {provider: elevenlabs}", &[]))
                .unwrap_err()
                .to_string()
                .contains("ELEVENLABS_API_KEY")
        );
        let e = plan(&ctx("tts: {provider: gemini}", &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("GEMINI_API_KEY not set"), "{e}");
        let p = plan(&ctx("tts: {provider: gemini}", &[("GOOGLE_API_KEY", "g")])).unwrap();
        assert!(matches!(p.engine, Engine::Cloud { api: Api::Gemini, ref key } if key == "g"));
        for (name, var) in [
            ("minimax", "MINIMAX_API_KEY"),
            ("xai", "XAI_API_KEY"),
            ("mistral", "MISTRAL_API_KEY"),
            ("deepinfra", "DEEPINFRA_API_KEY"),
        ] {
            let y = format!("tts: {{provider: {name}}}");
            let e = plan(&ctx(&y, &[])).unwrap_err().to_string();
            assert!(e.contains(var), "{e}");
            assert!(plan(&ctx(&y, &[(var, "k")])).is_ok());
        }
        let e = plan(&ctx("tts: {provider: kittentts}", &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("pip install https://github.com/KittenML"), "{e}");
    }

    #[test]
    fn command_providers_resolve_and_builtins_win() {
        let p = plan(&ctx(
            "tts: {provider: mine, providers: {mine: {type: command, command: 'x {output_path}'}}}",
            &[],
        ))
        .unwrap();
        assert!(matches!(p.engine, Engine::Command { ref name, .. } if name == "mine"));
        // A command under a built-in name never shadows the built-in.
        assert!(
            plan(&ctx(
                "tts: {provider: openai, providers: {openai: {command: 'x'}}}",
                &[]
            ))
            .is_err()
        );
        // Legacy layout tts.<name>.
        assert!(plan(&ctx("tts: {provider: legacy, legacy: {command: 'x'}}", &[])).is_ok());
        // type other than command is not a command provider (Hermes: Edge then).
        assert!(matches!(
            plan(&ctx(
                "tts: {provider: p, providers: {p: {type: plugin, command: 'x'}}}",
                &[]
            ))
            .unwrap()
            .engine,
            Engine::Edge
        ));
    }

    #[test]
    fn text_caps_follow_hermes() {
        let p = |yaml: &str, env: &[(&str, &str)]| plan(&ctx(yaml, env)).unwrap();
        let k = [("OPENAI_API_KEY", "k"), ("ELEVENLABS_API_KEY", "k")];
        assert_eq!(
            max_text_length(&p("tts: {provider: openai}", &k), &cfg("")),
            4096
        );
        let c = cfg("tts: {openai: {max_text_length: 100}}");
        assert_eq!(max_text_length(&p("tts: {provider: openai}", &k), &c), 100);
        let c = cfg("tts: {elevenlabs: {model_id: eleven_flash_v2_5}}");
        assert_eq!(
            max_text_length(&p("tts: {provider: elevenlabs}", &k), &c),
            40000
        );
        assert_eq!(
            max_text_length(&p("tts: {provider: elevenlabs}", &k), &cfg("")),
            10000
        );
        let y = "tts: {provider: m, providers: {m: {command: x, max_text_length: 7}}}";
        assert_eq!(max_text_length(&p(y, &[]), &cfg(y)), 7);
        let y = "tts: {provider: m, providers: {m: {command: x}}}";
        assert_eq!(max_text_length(&p(y, &[]), &cfg(y)), 5000);
    }
}
