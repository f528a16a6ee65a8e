//! The `config.yaml` sections the toolsets read, as typed structs built once
//! per [`crate::hermes::Context`] (one file per section). Each field is read
//! as tolerantly as Hermes' `dict.get` chains: a section or value of another
//! shape reads as absent (the caller's default), never as an error. Values
//! keep the readers' semantics from [`crate::hermes::config`]: strings as
//! Python's `str()` renders a scalar, `${VAR}` references expanded, numbers
//! from numeric text, `.inf`/`.nan` as floats.

pub mod agent;
pub mod auxiliary;
pub mod browser;
pub mod image_gen;
pub mod kanban;
pub mod memory;
pub mod model;
pub mod plugins;
pub mod providers;
pub mod security;
pub mod skills;
pub mod toolsets;
pub mod tts;
pub mod web;

use serde_json::{Map, Value};

use crate::hermes::config::{HermesConfig, expand_vars, float_value, yaml_scalar_str};

pub use agent::Agent;
pub use auxiliary::{AuxTask, Auxiliary};
pub use browser::Browser;
pub use image_gen::ImageGen;
pub use kanban::Kanban;
pub use memory::Memory;
pub use model::Model;
pub use plugins::Plugins;
pub use providers::Providers;
pub use security::Security;
pub use skills::Skills;
pub use toolsets::Toolsets;
pub use tts::Tts;
pub use web::Web;

/// Every section, read from one config.
#[derive(Debug, Clone, Default)]
pub struct Sections {
    /// `context_file_max_chars` ([`context_file_max_chars`]).
    pub context_file_max_chars: Option<i64>,
    pub agent: Agent,
    pub auxiliary: Auxiliary,
    pub browser: Browser,
    pub image_gen: ImageGen,
    pub kanban: Kanban,
    /// `mcp_servers:` as written: `migrate` translates each entry itself and
    /// reports a value of another shape.
    pub mcp_servers: Option<Value>,
    pub memory: Memory,
    pub model: Model,
    pub plugins: Plugins,
    pub providers: Providers,
    pub security: Security,
    pub skills: Skills,
    pub toolsets: Toolsets,
    pub tts: Tts,
    pub web: Web,
}

impl Sections {
    /// The sections of a home's `config` outside a served [`Context`](crate::hermes::Context)
    /// (migrate, doctor, the plugin): `${VAR}` resolved from the process, then
    /// the home's `.env` at `dotenv`, as a Context resolves them.
    pub(crate) fn read_in_home(config: &HermesConfig, dotenv: std::path::PathBuf) -> Self {
        let env = crate::hermes::Env::new(dotenv);
        Sections::read(config, &|n| env.get_unlisted(n))
    }

    /// Read the sections of `config`; `lookup` resolves `${VAR}` references.
    pub(crate) fn read(config: &HermesConfig, lookup: &dyn Fn(&str) -> Option<String>) -> Self {
        let r = Reader { lookup };
        let root = config.root.as_object();
        Sections {
            context_file_max_chars: context_file_max_chars(r.value(root, "context_file_max_chars")),
            agent: Agent::read(&r, r.section(root, "agent")),
            auxiliary: Auxiliary::read(&r, r.section(root, "auxiliary")),
            browser: Browser::read(&r, r.section(root, "browser")),
            image_gen: ImageGen::read(&r, r.section(root, "image_gen")),
            kanban: Kanban::read(r.section(root, "kanban")),
            mcp_servers: r.value(root, "mcp_servers").cloned(),
            memory: Memory::read(&r, r.value(root, "memory")),
            model: Model::read(&r, r.value(root, "model")),
            plugins: Plugins::read(r.section(root, "plugins")),
            providers: Providers::read(
                r.value(root, "providers"),
                r.value(root, "custom_providers"),
            ),
            security: Security::read(&r, r.section(root, "security")),
            skills: Skills::read(&r, r.section(root, "skills")),
            toolsets: Toolsets::read(r.value(root, "toolsets")),
            tts: Tts::read(&r, r.section(root, "tts")),
            web: Web::read(&r, r.section(root, "web")),
        }
    }
}

/// `context_file_max_chars` as hermes-agent: agent/prompt_builder.py
/// `_get_context_file_max_chars` takes it: a positive number, as Python's
/// `int()` of it (`true` is 1, `0.5` is 0); anything else (`.inf` too) `None`.
fn context_file_max_chars(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Bool(true) => Some(1),
        Value::Number(n) => match n.as_i64() {
            Some(i) => (i > 0).then_some(i),
            None => n
                .as_f64()
                .filter(|f| f.is_finite() && *f > 0.0)
                .map(|f| f.trunc() as i64),
        },
        _ => None,
    }
}

/// The value readers the sections share.
pub(crate) struct Reader<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
}

impl Reader<'_> {
    /// `parent[key]` when it is a mapping.
    pub(crate) fn section<'v>(
        &self,
        parent: Option<&'v Map<String, Value>>,
        key: &str,
    ) -> Option<&'v Map<String, Value>> {
        parent?.get(key)?.as_object()
    }

    /// `parent[key]`, `null` read as absent.
    pub(crate) fn value<'v>(
        &self,
        parent: Option<&'v Map<String, Value>>,
        key: &str,
    ) -> Option<&'v Value> {
        parent?.get(key).filter(|v| !v.is_null())
    }

    /// A non-blank string: a scalar as
    /// Python's `str()` renders it, `${VAR}` expanded.
    pub(crate) fn text(&self, parent: Option<&Map<String, Value>>, key: &str) -> Option<String> {
        yaml_scalar_str(self.value(parent, key)?)
            .filter(|s| !s.trim().is_empty())
            .map(|s| expand_vars(&s, |n| (self.lookup)(n)))
            .filter(|s| !s.trim().is_empty())
    }

    /// A non-blank scalar as Python's `str()` renders it, `${VAR}` kept as
    /// written (for the keys Hermes reads from `read_raw_config()`).
    pub(crate) fn scalar(&self, parent: Option<&Map<String, Value>>, key: &str) -> Option<String> {
        yaml_scalar_str(self.value(parent, key)?).filter(|s| !s.trim().is_empty())
    }

    /// `<section>.use_gateway` as Hermes' `prefers_gateway` reads it
    /// (`is_truthy_value`: `true`, or `1`/`true`/`yes`/`on`).
    pub(crate) fn use_gateway(&self, sec: Option<&Map<String, Value>>) -> bool {
        crate::pycompat::is_truthy_value(sec.and_then(|s| s.get("use_gateway")), false)
    }

    /// `v` with `${VAR}` references expanded when it is a string.
    pub(crate) fn expanded(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(expand_vars(s, |n| (self.lookup)(n))),
            other => other.clone(),
        }
    }

    /// A number, or text holding one; `.inf`/`.nan` included.
    pub(crate) fn float(&self, parent: Option<&Map<String, Value>>, key: &str) -> Option<f64> {
        float_value(self.value(parent, key)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str) -> Sections {
        let c = HermesConfig::from_yaml(yaml).expect("yaml");
        let lookup = |n: &str| (n == "KEY").then(|| "k1".to_string());
        Sections::read(&c, &lookup)
    }

    #[test]
    fn odd_shapes_read_as_absent() {
        let s = read("image_gen: [1]\nweb: 5\n");
        assert_eq!(s.image_gen.model, None);
        assert_eq!(s.web.backend, None);
        let s = read("image_gen:\n  model: 7\n  xai: {model: '${KEY}', base_url: ' '}\n  fal: x\n");
        assert_eq!(s.image_gen.model.as_deref(), Some("7"));
        assert_eq!(s.image_gen.provider("xai").model.as_deref(), Some("k1"));
        assert_eq!(s.image_gen.provider("xai").base_url, None);
        assert_eq!(s.image_gen.provider("fal").model, None);
        assert_eq!(s.image_gen.provider("nope").model, None);
    }

    #[test]
    fn model_reads_a_string_or_a_mapping() {
        let s = read("model: '  gpt-x  '\n");
        assert_eq!(s.model.default.as_deref(), Some("gpt-x"));
        assert_eq!(s.model.provider, None);
        // `default` is a string only; the other keys render scalars and expand `${VAR}`.
        let y = "model:\n  default: 5\n  provider: 7\n  base_url: '${KEY}/v1'\n  api_key: null\n";
        let s = read(y);
        assert_eq!(s.model.default, None);
        assert_eq!(s.model.provider.as_deref(), Some("7"));
        assert_eq!(s.model.base_url.as_deref(), Some("k1/v1"));
        assert_eq!(s.model.api_key, None);
        let s = read("model: {default: ' ', api_key: true, base_url: [x]}\n");
        assert_eq!(s.model.default, None);
        assert_eq!(s.model.api_key.as_deref(), Some("True"));
        assert_eq!(s.model.base_url, None);
        let y = "model:\n  default_headers: {A: 1, B: x, C: null}\n  extra_headers: {a: {k: 2}}\n";
        let h = read(y).model.headers;
        let h: Vec<_> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(h, [("A", "1"), ("B", "x"), ("a", r#"{"k":2}"#)]);
        assert!(
            read("model: {extra_headers: [1]}\n")
                .model
                .headers
                .is_empty()
        );
        assert_eq!(read("model: 3\n").model.default, None);
    }

    #[test]
    fn auxiliary_tasks_read_leniently() {
        let y = "auxiliary:\n  vision:\n    provider: 3\n    model: ' m '\n    timeout: '45'\n    \
                 temperature: .nan\n    max_tokens: x\n    extra_body: [1]\n    max_concurrency: 2.0\n    \
                 download_timeout: .inf\n    key_env: '${KEY}'\n  web_extract: 5\n  t: {max_concurrency: ' 4 ', extra_body: {a: 1}}\n";
        let s = read(y);
        let v = s.auxiliary.task("vision");
        assert_eq!(v.provider.as_deref(), Some("3"));
        assert_eq!(v.model.as_deref(), Some(" m "));
        assert_eq!(v.timeout, Some(45.0));
        assert!(v.temperature.is_some_and(f64::is_nan));
        assert_eq!(v.max_tokens, None);
        assert_eq!(v.extra_body, None);
        assert_eq!(v.max_concurrency, None, "a float is not an integer count");
        assert_eq!(v.download_timeout, Some(f64::INFINITY));
        assert_eq!(v.key_env.as_deref(), Some("k1"));
        assert_eq!(s.auxiliary.task("web_extract").model, None);
        assert_eq!(s.auxiliary.task("nope").timeout, None);
        let t = s.auxiliary.task("t");
        assert_eq!(t.max_concurrency, Some(4));
        assert_eq!(t.extra_body.as_ref().map(|m| m.len()), Some(1));
        assert_eq!(
            read("auxiliary: {t: {max_concurrency: 0}}\n")
                .auxiliary
                .task("t")
                .max_concurrency,
            None
        );
        assert_eq!(
            read("auxiliary: [1]\n").auxiliary.task("vision").model,
            None
        );
    }

    #[test]
    fn agent_and_browser_read_leniently() {
        assert_eq!(
            read("agent: {image_input_mode: native}\n")
                .agent
                .image_input_mode
                .as_deref(),
            Some("native")
        );
        assert_eq!(
            read("agent: {image_input_mode: {a: 1}}\n")
                .agent
                .image_input_mode,
            None
        );
        assert_eq!(read("agent: native\n").agent.image_input_mode, None);
        let y = "browser:\n  cdp_url: 9222\n  executable: '  '\n  browser_use: {base_url: '${KEY}'}\n  \
                 firecrawl: {base_url: null}\n  browserbase: x\n";
        let b = read(y).browser;
        assert_eq!(b.cdp_url.as_deref(), Some("9222"));
        assert_eq!(b.executable, None);
        assert_eq!(b.base_url("browser_use"), Some("k1"));
        assert_eq!(b.base_url("firecrawl"), None);
        assert_eq!(b.base_url("browserbase"), None);
        assert_eq!(read("browser: [1]\n").browser.cdp_url, None);
    }

    #[test]
    fn tts_reads_leniently() {
        let y = "tts:\n  speed: 2\n  edge: {voice: 5, base_url: null}\n  elevenlabs: {base_url: '${KEY}'}\n";
        let t = read(y).tts;
        assert_eq!(t.edge.voice.as_deref(), Some("5"));
        assert_eq!(t.edge.base_url, None);
        assert_eq!(
            t.edge.speed,
            Some(2.0),
            "tts.speed when tts.edge.speed is absent"
        );
        assert_eq!(t.elevenlabs_base_url.as_deref(), Some("k1"));
        assert_eq!(t.map().len(), 3);
        // A present tts.edge.speed that is not a number does not fall back.
        assert_eq!(
            read("tts: {speed: 2, edge: {speed: fast}}\n")
                .tts
                .edge
                .speed,
            None
        );
        assert_eq!(
            read("tts: {speed: 2, edge: {speed: null}}\n")
                .tts
                .edge
                .speed,
            Some(2.0)
        );
        assert_eq!(
            read("tts: {speed: ' 1.5 ', edge: 3}\n").tts.edge.speed,
            Some(1.5)
        );
        let t = read("tts: 5\n").tts;
        assert!(t.map().is_empty());
        assert_eq!(t.edge.speed, None);
    }

    #[test]
    fn security_and_image_gen_options_read_leniently() {
        let y = "security:\n  allow_private_urls: 'yes'\n  website_blocklist: [x]\nbrowser: {allow_private_urls: 0}\n";
        let s = read(y);
        assert_eq!(s.security.allow_private_urls, Some(true));
        assert_eq!(s.browser.allow_private_urls, Some(false));
        assert!(
            s.security
                .website_blocklist
                .as_ref()
                .is_some_and(Value::is_array)
        );
        let s = read(
            "security: {allow_private_urls: maybe, website_blocklist: null}\nbrowser: {allow_private_urls: [1]}\n",
        );
        assert_eq!(s.security.allow_private_urls, None);
        assert_eq!(s.security.website_blocklist, None);
        assert_eq!(s.browser.allow_private_urls, None);
        assert_eq!(read("security: true\n").security.allow_private_urls, None);
        let y = "image_gen:\n  fal: {timeout: '90'}\n  openai: {timeout: x}\n  xai: {storage: {enabled: false}}\n  openai-codex: {storage: 1}\n";
        let g = read(y).image_gen;
        assert_eq!(g.provider("fal").timeout, Some(90.0));
        assert_eq!(g.provider("openai").timeout, None);
        assert_eq!(g.provider("xai").storage.as_ref().map(|m| m.len()), Some(1));
        assert_eq!(g.provider("openai-codex").storage, None);
    }

    #[test]
    fn browser_timeouts_and_flags_read_leniently() {
        let y = "browser:\n  command_timeout: ' 45 '\n  navigation_timeout: .inf\n  inactivity_timeout: x\n  \
                 dialog_timeout_s: 2.5\n  dialog_policy: 7\n  restrict_evaluate: 'yes'\n  \
                 allow_unsafe_evaluate: 1\n  headed: [1]\n  record_sessions: null\n";
        let b = read(y).browser;
        assert_eq!(b.command_timeout, Some(45.0));
        assert_eq!(b.command_timeout_int, Some(45.0));
        assert_eq!(b.navigation_timeout, Some(f64::INFINITY));
        assert_eq!(b.inactivity_timeout, None);
        assert_eq!(b.dialog_timeout_s, Some(2.5));
        assert_eq!(b.dialog_policy.as_deref(), Some("7"));
        assert!(b.restrict_evaluate && b.allow_unsafe_evaluate);
        assert!(!b.headed && !b.record_sessions);
        // Python's int(): a float truncated, a boolean as 0/1, float text and `.inf` refused.
        let int = |v: &str| read(&format!("browser: {{command_timeout: {v}}}\n")).browser;
        assert_eq!(int("12.9").command_timeout_int, Some(12.0));
        assert_eq!(int("12.9").command_timeout, Some(12.9));
        assert_eq!(int("true").command_timeout_int, Some(1.0));
        assert_eq!(int("true").command_timeout, None);
        assert_eq!(int("'12.5'").command_timeout_int, None);
        assert_eq!(int(".inf").command_timeout_int, None);
        assert_eq!(int("{a: 1}").command_timeout, None);
        // Hermes reads these from the raw config: `${VAR}` stays as written.
        let b = read("browser: {dialog_policy: '${KEY}', headed: maybe}\n").browser;
        assert_eq!(b.dialog_policy.as_deref(), Some("${KEY}"));
        assert!(!b.headed);
        assert_eq!(
            read("browser: {dialog_policy: '  '}\n")
                .browser
                .dialog_policy,
            None
        );
        let b = read("browser: 5\n").browser;
        assert_eq!((b.command_timeout, b.headed), (None, false));
    }

    #[test]
    fn browser_provider_choice_reads_as_hermes() {
        let b = read("").browser;
        assert!(b.auto_local_for_private_urls, "absent is on");
        assert_eq!(b.cloud_provider, None);
        let on = |v: &str| {
            read(&format!("browser: {{auto_local_for_private_urls: {v}}}\n"))
                .browser
                .auto_local_for_private_urls
        };
        // Python's bool() of a present key: `null`, `0`, `''`, `[]` are off; any text is on.
        for (v, want) in [
            ("null", false),
            ("0", false),
            ("''", false),
            ("[]", false),
            ("'no'", true),
            ("0.5", true),
            ("{a: 1}", true),
        ] {
            assert_eq!(on(v), want, "{v}");
        }
        let p = |v: &str| {
            read(&format!("browser: {{cloud_provider: {v}}}\n"))
                .browser
                .cloud_provider
        };
        assert_eq!(p("' Browser-Use '").as_deref(), Some("browser-use"));
        assert_eq!(p("null").as_deref(), Some("local"));
        assert_eq!(p("false").as_deref(), Some("local"));
        assert_eq!(p("' '").as_deref(), Some("local"));
        assert_eq!(p("true").as_deref(), Some("true"));
        assert_eq!(p("3").as_deref(), Some("3"));
    }

    #[test]
    fn browser_camofox_block_reads_as_hermes() {
        let y = "browser:\n  camofox:\n    managed_persistence: 'no'\n    user_id: 42\n    session_key: '  '\n    \
                 adopt_existing_tab: [x]\n    rewrite_loopback_urls: 0\n    loopback_host_alias: true\n";
        let c = read(y).browser.camofox;
        assert!(
            c.managed_persistence,
            "Python's bool() of a non-empty string"
        );
        assert_eq!(c.user_id.as_deref(), Some("42"));
        assert_eq!(c.session_key, None);
        assert!(c.adopt_existing_tab);
        assert!(!c.rewrite_loopback_urls);
        assert_eq!(c.loopback_host_alias.as_deref(), Some("True"));
        let c = read("browser: {camofox: {user_id: false, loopback_host_alias: null}}\n")
            .browser
            .camofox;
        assert_eq!((c.user_id, c.loopback_host_alias), (None, None));
        let c = read("browser: {camofox: [1]}\n").browser.camofox;
        assert!(!c.managed_persistence && c.user_id.is_none());
    }

    #[test]
    fn use_gateway_is_truthy_like_hermes() {
        let s = read(
            "web: {use_gateway: true}\ntts: {use_gateway: 'Yes'}\nbrowser: {use_gateway: 1}\nimage_gen: {use_gateway: 'nope'}\n",
        );
        assert!(s.web.use_gateway && s.tts.use_gateway && s.browser.use_gateway);
        assert!(!s.image_gen.use_gateway);
        let s = read(
            "web: {use_gateway: null}\ntts: {use_gateway: 0}\nimage_gen: {use_gateway: [1]}\nbrowser: true\n",
        );
        assert!(!s.web.use_gateway && !s.tts.use_gateway && !s.browser.use_gateway);
        assert!(
            s.image_gen.use_gateway,
            "Python's bool() of a non-empty list"
        );
        assert!(!read("").web.use_gateway);
    }

    #[test]
    fn kanban_and_toolsets_read_as_hermes() {
        assert!(read("").kanban.auto_subscribe_on_create, "absent is on");
        let sub = |v: &str| {
            read(&format!("kanban: {{auto_subscribe_on_create: {v}}}\n"))
                .kanban
                .auto_subscribe_on_create
        };
        // cfg_get keeps a present value, `null` too; then Python's bool().
        for (v, want) in [
            ("null", false),
            ("false", false),
            ("0", false),
            ("''", false),
            ("'off'", true),
            ("1", true),
        ] {
            assert_eq!(sub(v), want, "{v}");
        }
        assert!(read("kanban: 5\n").kanban.auto_subscribe_on_create);
        let t = |y: &str| read(y).toolsets;
        assert!(t("toolsets: [hermes-cli, kanban]\n").contains("kanban"));
        assert!(!t("toolsets: [hermes-cli, [kanban], 5]\n").contains("kanban"));
        assert!(
            t("toolsets: 'web,kanbanx'\n").contains("kanban"),
            "`in` on a string is a substring test"
        );
        assert!(!t("toolsets: 'web,kanbanx'\n").lists("kanban"));
        assert!(t("toolsets: 'web, kanban '\n").lists("kanban"));
        assert!(t("toolsets: {kanban: 1}\n").contains("kanban"));
        assert!(!t("toolsets: {kanban: 1}\n").lists("kanban"));
        for y in ["", "toolsets: null\n", "toolsets: 5\n", "toolsets: true\n"] {
            let ts = t(y);
            assert!(!ts.contains("kanban") && !ts.lists("kanban"), "{y}");
        }
    }

    #[test]
    fn migrate_reads_runtime_codex_and_servers_as_written() {
        let s = read("model:\n  openai_runtime: '${KEY}'\n  codex_bin: 7\nmcp_servers: [1]\n");
        assert_eq!(s.model.openai_runtime.as_deref(), Some("${KEY}"));
        assert_eq!(s.model.codex_bin.as_deref(), Some("7"));
        assert!(s.mcp_servers.as_ref().is_some_and(Value::is_array));
        let s = read("model: {openai_runtime: ' ', codex_bin: [x]}\nmcp_servers: null\n");
        assert_eq!(
            (s.model.openai_runtime, s.model.codex_bin, s.mcp_servers),
            (None, None, None)
        );
        assert_eq!(read("model: gpt\n").model.openai_runtime, None);
    }

    #[test]
    fn vision_overrides_read_as_coerce_capability_bool() {
        let v = |x: &str| {
            read(&format!("model: {{supports_vision: {x}}}\n"))
                .model
                .supports_vision
        };
        for (x, want) in [
            ("true", Some(true)),
            ("0", Some(false)),
            ("2", None),
            ("' Off '", Some(false)),
            ("yes", Some(true)),
            ("1.0", None),
            ("maybe", None),
            ("[1]", None),
        ] {
            assert_eq!(v(x), want, "{x}");
        }
        let y = "providers:\n  my-vllm: {models: {m1: {supports_vision: 'yes'}, m2: {supports_vision: x}, m3: 5}}\n  \
                 bad: {models: [m1]}\n  odd: 3\ncustom_providers:\n  - {name: ' c1 ', models: {m1: {supports_vision: 0}}}\n  \
                 - {name: c1, models: {m1: {supports_vision: 1}}}\n  - {name: 5, models: {m1: {supports_vision: 1}}}\n  - x\n";
        let p = read(y).providers;
        assert_eq!(p.supports_vision("my-vllm", "m1"), Some(true));
        assert_eq!(p.supports_vision("my-vllm", "m2"), None);
        assert_eq!(p.supports_vision("my-vllm", "m3"), None);
        assert_eq!(p.supports_vision("bad", "m1"), None);
        assert_eq!(p.supports_vision("odd", "m1"), None);
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            p.custom_supports_vision(&names(&["c1"]), "m1"),
            Some(false),
            "the first entry named wins"
        );
        assert_eq!(
            p.custom_supports_vision(&names(&["5"]), "m1"),
            None,
            "a name that is not a string is ''"
        );
        assert_eq!(p.custom_supports_vision(&names(&["c1"]), "m9"), None);
        let p = read("providers: [1]\ncustom_providers: {a: 1}\n").providers;
        assert_eq!(p.supports_vision("a", "m"), None);
        assert_eq!(p.custom_supports_vision(&names(&["a"]), "m"), None);
    }

    #[test]
    fn context_file_max_chars_reads_as_python_int_of_a_positive_number() {
        let m = |x: &str| read(&format!("context_file_max_chars: {x}\n")).context_file_max_chars;
        for (x, want) in [
            ("60", Some(60)),
            ("0", None),
            ("-5", None),
            ("true", Some(1)),
            ("false", None),
            ("2.9", Some(2)),
            ("0.5", Some(0)),
            (".inf", None),
            ("'60'", None),
            ("null", None),
        ] {
            assert_eq!(m(x), want, "{x}");
        }
    }

    #[test]
    fn memory_reads_as_hermes() {
        let m = read("memory:\n  memory_char_limit: '${KEY}'\n  user_char_limit: ' 3_000 '\n  write_approval: ' Approve '\n  memory_enabled: ''\n  user_profile_enabled: '${KEY}'\n").memory;
        // `${KEY}` is `k1`: not an int, so both limits keep their defaults (one `try`).
        assert_eq!(
            (m.memory_char_limit, m.user_char_limit),
            (memory::MEMORY_CHAR_LIMIT, memory::USER_CHAR_LIMIT)
        );
        assert!(m.write_approval && !m.memory_enabled && m.user_profile_enabled);
        assert_eq!(m.not_a_mapping, None);
        let m = read("memory: {memory_char_limit: 80.9, user_char_limit: true, write_approval: 1, memory_enabled: [], user_profile_enabled: null}\n").memory;
        assert_eq!((m.memory_char_limit, m.user_char_limit), (80, 1));
        assert!(!m.write_approval && !m.memory_enabled && !m.user_profile_enabled);
        let m = read("memory: [1]\n").memory;
        assert_eq!(m.not_a_mapping, Some("a list"));
        assert!(!m.memory_enabled && !m.user_profile_enabled);
        assert_eq!(m.memory_char_limit, memory::MEMORY_CHAR_LIMIT);
        for y in ["", "memory:\n", "memory: null\n"] {
            let m = read(y).memory;
            assert!(
                m.memory_enabled && m.user_profile_enabled && m.not_a_mapping.is_none(),
                "{y}"
            );
        }
    }

    #[test]
    fn plugins_read_their_lists_strings() {
        let p = read("plugins:\n  enabled: [a, 1, null, b]\n  disabled: x\n").plugins;
        assert_eq!(p.enabled, ["a", "b"]);
        assert!(p.disabled.is_empty());
        assert!(read("plugins: [a]\n").plugins.enabled.is_empty());
        assert_eq!(
            read("plugins: {disabled: ['${KEY}']}\n").plugins.disabled,
            ["${KEY}"]
        );
    }
}
