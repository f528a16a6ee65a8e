// Copyright 2014-2017 The html5ever Project Developers. See the
// COPYRIGHT file at the top-level directory of this distribution.
//
// Licensed under the Apache License, Version 2.0 <LICENSE-APACHE or
// http://www.apache.org/licenses/LICENSE-2.0> or the MIT license
// <LICENSE-MIT or http://opensource.org/licenses/MIT>, at your
// option. This file may not be copied, modified, or distributed
// except according to those terms.

#![allow(unexpected_cfgs)]
// For the generated code (build.rs and string_cache_codegen write it)
#![allow(clippy::empty_line_after_doc_comments)]

/// [`NAMED_ENTITIES`]: every entity name and every prefix of one (with the
/// value `(0, 0)`), sorted, with its codepoints. hermes-mcp's patch of this
/// crate: phf's map held a `&'static str` per key, 9,854 pointers the
/// dynamic loader had to relocate at every start of a position-independent
/// executable (231 KiB of pages written, per version of this crate in the
/// binary); this holds three.
pub struct Entities {
    keys: &'static str,
    ends: &'static [u32],
    values: &'static [(u32, u32)],
}

impl Entities {
    /// The codepoints of `key`, an entity name (or a prefix of one) without
    /// its `&`, as phf's `Map::get` gave them.
    pub fn get(&self, key: &str) -> Option<&(u32, u32)> {
        let key_at = |i: usize| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
            &self.keys.as_bytes()[start..self.ends[i] as usize]
        };
        let (mut lo, mut hi) = (0, self.ends.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match key_at(mid).cmp(key.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(&self.values[mid]),
            }
        }
        None
    }
}

/// The spec replaces most characters in the ISO-2022 C1 control code range
/// (U+0080 through U+009F) with these characters, based on Windows 8-bit
/// codepages.
pub static C1_REPLACEMENTS: [Option<char>; 32] = [
    Some('\u{20ac}'),
    None,
    Some('\u{201a}'),
    Some('\u{0192}'),
    Some('\u{201e}'),
    Some('\u{2026}'),
    Some('\u{2020}'),
    Some('\u{2021}'),
    Some('\u{02c6}'),
    Some('\u{2030}'),
    Some('\u{0160}'),
    Some('\u{2039}'),
    Some('\u{0152}'),
    None,
    Some('\u{017d}'),
    None,
    None,
    Some('\u{2018}'),
    Some('\u{2019}'),
    Some('\u{201c}'),
    Some('\u{201d}'),
    Some('\u{2022}'),
    Some('\u{2013}'),
    Some('\u{2014}'),
    Some('\u{02dc}'),
    Some('\u{2122}'),
    Some('\u{0161}'),
    Some('\u{203a}'),
    Some('\u{0153}'),
    None,
    Some('\u{017e}'),
    Some('\u{0178}'),
];

include!(concat!(env!("OUT_DIR"), "/named_entities.rs"));
include!(concat!(env!("OUT_DIR"), "/generated.rs"));

#[cfg(test)]
mod tests {
    mod entities {
        include!("entities.rs");
    }

    /// Every entity and every prefix of one is found, as phf's map had them,
    /// and nothing else is.
    #[test]
    fn every_entity_and_prefix_and_nothing_else() {
        let mut prefixes = 0;
        for (name, cp1, cp2) in entities::NAMED_ENTITIES {
            let key = &name[1..];
            assert_eq!(super::NAMED_ENTITIES.get(key), Some(&(cp1, cp2)), "{key}");
            for n in 0..key.len() {
                let prefix = &key[..n];
                let whole = entities::NAMED_ENTITIES
                    .iter()
                    .find(|e| &e.0[1..] == prefix);
                let want = whole.map_or((0, 0), |e| (e.1, e.2));
                assert_eq!(super::NAMED_ENTITIES.get(prefix), Some(&want), "{prefix}");
                prefixes += 1;
            }
        }
        assert!(prefixes > 0);
        for absent in ["ampx", "zzz", "&amp;", "AMPx", "\u{e9}", "gt;;"] {
            assert_eq!(super::NAMED_ENTITIES.get(absent), None, "{absent}");
        }
    }
}
