//! The `config.yaml` sections the toolsets read, as typed structs built once
//! per [`crate::hermes::Context`] (one file per section). Each field is read
//! as tolerantly as Hermes' `dict.get` chains: a section or value of another
//! shape reads as absent (the caller's default), never as an error. Values
//! keep the readers' semantics from [`crate::hermes::config`]: strings as
//! Python's `str()` renders a scalar, `${VAR}` references expanded, numbers
//! from numeric text, `.inf`/`.nan` as floats.

pub mod image_gen;
pub mod skills;
pub mod web;

use serde_json::{Map, Value};

use crate::hermes::config::{HermesConfig, expand_vars, float_value, yaml_scalar_str};

pub use image_gen::ImageGen;
pub use skills::Skills;
pub use web::Web;

/// Every section, read from one config.
#[derive(Debug, Clone, Default)]
pub struct Sections {
    pub image_gen: ImageGen,
    pub skills: Skills,
    pub web: Web,
}

impl Sections {
    /// Read the sections of `config`; `lookup` resolves `${VAR}` references.
    pub(crate) fn read(config: &HermesConfig, lookup: &dyn Fn(&str) -> Option<String>) -> Self {
        let r = Reader { lookup };
        let root = config.root.as_object();
        Sections {
            image_gen: ImageGen::read(&r, r.section(root, "image_gen")),
            skills: Skills::read(&r, r.section(root, "skills")),
            web: Web::read(&r, r.section(root, "web")),
        }
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

    /// A non-blank string as `Context::config_str` reads one: a scalar as
    /// Python's `str()` renders it, `${VAR}` expanded.
    pub(crate) fn text(&self, parent: Option<&Map<String, Value>>, key: &str) -> Option<String> {
        yaml_scalar_str(self.value(parent, key)?)
            .filter(|s| !s.trim().is_empty())
            .map(|s| expand_vars(&s, |n| (self.lookup)(n)))
            .filter(|s| !s.trim().is_empty())
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
}
