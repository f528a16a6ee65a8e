//! What the memory toolset takes from `config.yaml`'s `memory:` section
//! ([`crate::hermes::sections::Memory`], read once per context as Hermes
//! 0.19.0 reads it): the limits and approval setting a call needs, and
//! whether Hermes starts a memory store at all.

use crate::hermes::Context;

/// What a memory call needs from the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemoryConfig {
    pub(crate) memory_char_limit: i64,
    pub(crate) user_char_limit: i64,
    pub(crate) write_approval: bool,
}

impl MemoryConfig {
    pub(crate) fn load(ctx: &Context) -> Self {
        let m = &ctx.sections().memory;
        MemoryConfig {
            memory_char_limit: m.memory_char_limit,
            user_char_limit: m.user_char_limit,
            write_approval: m.write_approval,
        }
    }
}

/// `None` when Hermes gives the agent a memory store; otherwise why not.
pub(crate) fn unavailable_reason(ctx: &Context) -> Option<String> {
    let config = ctx.home.config_path();
    let m = &ctx.sections().memory;
    if let Some(found) = m.not_a_mapping {
        return Some(format!(
            "`memory:` in {} is {found}, not a mapping, so Hermes starts no memory store; make it a mapping (or remove it)",
            config.display(),
        ));
    }
    (!m.memory_enabled && !m.user_profile_enabled).then(|| {
        format!(
            "memory.memory_enabled and memory.user_profile_enabled are both off in {}, so Hermes starts no memory store; set either to true",
            config.display()
        )
    })
}

/// `(memory_enabled, user_profile_enabled)` as the agent reads them
/// (`agent/agent_init.py`): Python truthiness over Hermes' defaults (both
/// on); a `memory:` that is not a mapping gives no store, so neither.
pub(crate) fn targets_enabled(ctx: &Context) -> (bool, bool) {
    let m = &ctx.sections().memory;
    (m.memory_enabled, m.user_profile_enabled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermes::context::test_ctx;
    use crate::hermes::sections::memory::{MEMORY_CHAR_LIMIT, USER_CHAR_LIMIT};

    fn cfg(yaml: &str) -> MemoryConfig {
        MemoryConfig::load(&test_ctx(yaml, &[("LIMIT", "300")]))
    }

    #[test]
    fn limits_fall_back_together_as_in_one_try() {
        let d = (MEMORY_CHAR_LIMIT, USER_CHAR_LIMIT);
        let lim = |c: MemoryConfig| (c.memory_char_limit, c.user_char_limit);
        assert_eq!(lim(cfg("")), d);
        assert_eq!(lim(cfg("memory:\n")), d);
        assert_eq!(lim(cfg("memory: 5\n")), d);
        assert_eq!(
            lim(cfg(
                "memory: {memory_char_limit: 120, user_char_limit: '80'}"
            )),
            (120, 80)
        );
        assert_eq!(
            lim(cfg("memory: {memory_char_limit: x, user_char_limit: 80}")),
            d
        );
        assert_eq!(
            lim(cfg("memory: {memory_char_limit: 120, user_char_limit: x}")),
            (120, d.1)
        );
        assert_eq!(lim(cfg("memory: {memory_char_limit: null}")), d);
        assert_eq!(
            lim(cfg("memory: {memory_char_limit: '${LIMIT}'}")),
            (300, d.1)
        );
    }

    #[test]
    fn write_approval_takes_bools_and_words_only() {
        for (yaml, on) in [
            ("memory: {write_approval: true}", true),
            ("memory: {write_approval: ' Approve '}", true),
            ("memory: {write_approval: 'enabled'}", true),
            ("memory: {write_approval: '1'}", true),
            ("memory: {write_approval: 1}", false),
            ("memory: {write_approval: 'nope'}", false),
            ("memory: {write_approval: null}", false),
            ("memory: true", false),
            ("", false),
        ] {
            assert_eq!(cfg(yaml).write_approval, on, "{yaml}");
        }
    }

    #[test]
    fn available_unless_both_flags_are_falsy() {
        let why = |yaml: &str| unavailable_reason(&test_ctx(yaml, &[]));
        assert!(why("").is_none());
        assert!(why("memory:\n").is_none());
        assert!(why("memory: {memory_enabled: false}").is_none());
        assert!(why("memory: {memory_enabled: false, user_profile_enabled: 'false'}").is_none());
        let off = why("memory: {memory_enabled: false, user_profile_enabled: null}").unwrap();
        assert!(off.contains("both off"), "{off}");
        let bad = why("memory: [1]").unwrap();
        assert!(bad.contains("not a mapping"), "{bad}");
    }
}
