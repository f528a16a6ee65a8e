//! Hermes' session context in the server's `instructions`.
//!
//! Codex sends an MCP server's `instructions` to the model in every request
//! (the description of the server's tool namespace). Under Hermes' Codex
//! runtime that is the only way the pieces of Hermes' own system prompt that
//! Codex lacks reach the model: the memory snapshot and user profile, the
//! tool guidance, the skills index and, when asked for, SOUL.md. Each toolset
//! renders its own pieces exactly as hermes-agent 0.19.0 renders them
//! ([`Toolset::context`](super::Toolset::context)); this module orders and
//! joins them as `agent/system_prompt.py::build_system_prompt_parts` does
//! (the stable tier, SOUL.md, the guidance joined by spaces and the skills
//! index, then the volatile tier, memory and user profile; each part
//! stripped, parts joined by a blank line), after our own text, and keeps the
//! whole under [`MAX_CHARS`]: only the skills index may shrink (it names every
//! skill still). The text is composed once, when `serve` starts: Hermes'
//! frozen snapshot, so writes during a session show up in the next one.

use std::collections::BTreeSet;

use crate::pycompat::{py_len, py_strip};

/// The most characters of `instructions` sent (Codex has been seen to pass
/// 10.5k whole; this leaves room for 300 skills with descriptions).
pub const MAX_CHARS: usize = 48_000;

/// Said between our own text and Hermes' pieces.
const INTRO: &str = "What follows is Hermes Agent's own context for this user, as Hermes puts it in its \
system prompt, taken when this session started (changes made during the session show up in the \
next one):";

/// Where a piece goes, in Hermes' order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Slot {
    /// `SOUL.md`, Hermes' persona (only when asked for).
    Soul,
    /// `MEMORY_GUIDANCE`.
    MemoryGuidance,
    /// `SESSION_SEARCH_GUIDANCE`.
    SessionSearchGuidance,
    /// `KANBAN_GUIDANCE`.
    KanbanGuidance,
    /// `build_skills_system_prompt`.
    SkillsIndex,
    /// The `MEMORY.md` snapshot.
    Memory,
    /// The `USER.md` snapshot.
    UserProfile,
}

impl Slot {
    fn is_guidance(self) -> bool {
        matches!(
            self,
            Slot::MemoryGuidance | Slot::SessionSearchGuidance | Slot::KanbanGuidance
        )
    }

    /// The name `doctor` and `tools` show.
    pub fn label(self) -> &'static str {
        match self {
            Slot::Soul => "SOUL.md",
            Slot::MemoryGuidance => "memory guidance",
            Slot::SessionSearchGuidance => "session_search guidance",
            Slot::KanbanGuidance => "kanban guidance",
            Slot::SkillsIndex => "skills index",
            Slot::Memory => "memory (MEMORY.md)",
            Slot::UserProfile => "user profile (USER.md)",
        }
    }
}

/// Re-renders a piece within a number of characters.
pub type Shrink = Box<dyn Fn(usize) -> String + Send + Sync>;

/// One piece of Hermes' system prompt, rendered by its toolset.
pub struct ContextBlock {
    pub slot: Slot,
    pub text: String,
    shrink: Option<Shrink>,
}

impl ContextBlock {
    pub fn new(slot: Slot, text: String) -> Self {
        ContextBlock {
            slot,
            text,
            shrink: None,
        }
    }

    /// A piece that can be rendered shorter (`shrink(room)` fits `room`
    /// characters when it can) if the whole would pass [`MAX_CHARS`].
    pub fn shrinkable(slot: Slot, text: String, shrink: Shrink) -> Self {
        ContextBlock {
            slot,
            text,
            shrink: Some(shrink),
        }
    }
}

/// What `serve` offers, as Hermes' `valid_tool_names` and the toolsets of
/// those tools, plus the user's choices.
#[derive(Debug, Clone, Default)]
pub struct Offer {
    pub tools: BTreeSet<&'static str>,
    pub toolsets: BTreeSet<&'static str>,
    /// SOUL.md was asked for (`serve --hermes-soul`).
    pub soul: bool,
}

/// The user's switches (`serve` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextOptions {
    /// Send Hermes' context at all (`serve --no-hermes-context` turns it off).
    pub enabled: bool,
    /// Add SOUL.md (`serve --hermes-soul`).
    pub soul: bool,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            enabled: true,
            soul: false,
        }
    }
}

/// One part as sent: what it is and its size in characters.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PartSize {
    pub part: &'static str,
    pub chars: usize,
}

/// The composed `instructions`.
#[derive(Debug, Clone, Default)]
pub struct Composed {
    pub text: String,
    /// Hermes' pieces in order, with their sizes (empty when none was sent).
    pub parts: Vec<PartSize>,
    /// The skills index was shortened to fit [`MAX_CHARS`].
    pub shrunk: bool,
}

impl Composed {
    pub fn chars(&self) -> usize {
        py_len(&self.text)
    }
}

/// A part of Hermes' prompt: the guidance pieces joined by a space (as one
/// `stable_parts` entry), every other piece alone.
struct Part {
    slots: Vec<Slot>,
    text: String,
    shrink: Option<Shrink>,
}

fn parts(mut blocks: Vec<ContextBlock>) -> Vec<Part> {
    blocks.sort_by_key(|b| b.slot);
    let mut out: Vec<Part> = Vec::new();
    for b in blocks {
        if b.slot.is_guidance()
            && let Some(last) = out.last_mut()
            && last.slots.last().is_some_and(|s| s.is_guidance())
        {
            last.slots.push(b.slot);
            last.text.push(' ');
            last.text.push_str(&b.text);
            continue;
        }
        out.push(Part {
            slots: vec![b.slot],
            text: b.text,
            shrink: b.shrink,
        });
    }
    out
}

/// `base` then Hermes' pieces, each stripped, the empty ones dropped, joined
/// by a blank line; at most [`MAX_CHARS`] when the shrinkable piece can make
/// it so.
pub fn compose(base: &str, blocks: Vec<ContextBlock>) -> Composed {
    let mut parts: Vec<Part> = parts(blocks)
        .into_iter()
        .map(|mut p| {
            p.text = py_strip(&p.text).to_string();
            p
        })
        .filter(|p| !p.text.is_empty())
        .collect();
    if parts.is_empty() {
        return Composed {
            text: base.to_string(),
            ..Default::default()
        };
    }
    let fixed = py_len(base) + 2 + py_len(INTRO);
    let total = |parts: &[Part]| fixed + parts.iter().map(|p| 2 + py_len(&p.text)).sum::<usize>();
    let mut shrunk = false;
    let over = total(&parts).saturating_sub(MAX_CHARS);
    if over > 0
        && let Some(p) = parts.iter_mut().find(|p| p.shrink.is_some())
        && let Some(shrink) = &p.shrink
    {
        let room = py_len(&p.text).saturating_sub(over);
        p.text = py_strip(&shrink(room)).to_string();
        shrunk = true;
    }
    let mut text = format!("{base}\n\n{INTRO}");
    let mut sizes = Vec::new();
    for p in &parts {
        text.push_str("\n\n");
        text.push_str(&p.text);
        for s in &p.slots {
            sizes.push(PartSize {
                part: s.label(),
                chars: 0,
            });
        }
        // A joined guidance part is counted once, under its first piece.
        let first = sizes.len() - p.slots.len();
        sizes[first].chars = py_len(&p.text);
    }
    Composed {
        text,
        parts: sizes,
        shrunk,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hermes_order_guidance_joined_by_spaces_parts_stripped() {
        let c = compose(
            "BASE",
            vec![
                ContextBlock::new(Slot::UserProfile, "user\n".into()),
                ContextBlock::new(Slot::KanbanGuidance, "K".into()),
                ContextBlock::new(Slot::Memory, "  ".into()),
                ContextBlock::new(Slot::MemoryGuidance, "M".into()),
                ContextBlock::new(Slot::SkillsIndex, "skills".into()),
            ],
        );
        assert_eq!(c.text, format!("BASE\n\n{INTRO}\n\nM K\n\nskills\n\nuser"));
        let labels: Vec<_> = c.parts.iter().map(|p| (p.part, p.chars)).collect();
        assert_eq!(
            labels,
            [
                ("memory guidance", 3),
                ("kanban guidance", 0),
                ("skills index", 6),
                ("user profile (USER.md)", 4)
            ]
        );
        assert_eq!(compose("BASE", vec![]).text, "BASE");
    }

    #[test]
    fn only_the_shrinkable_part_shrinks_to_fit() {
        let big = "x".repeat(MAX_CHARS);
        let c = compose(
            "BASE",
            vec![
                ContextBlock::new(Slot::Memory, "m".repeat(100)),
                ContextBlock::shrinkable(Slot::SkillsIndex, big, Box::new(|room| "y".repeat(room))),
            ],
        );
        assert!(c.shrunk);
        assert_eq!(c.chars(), MAX_CHARS);
        assert!(c.text.ends_with(&"m".repeat(100)));
    }
}
