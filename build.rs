//! Lay out the release binary's code so that what a session runs sits together.
//!
//! The release `hermes-mcp` has 17 MiB of code, and the few thousand functions a session
//! runs were spread over all of it. The kernel maps a binary's code in blocks around each
//! page touched (64 KiB, or the whole large folio the page cache holds), so a short session
//! of `serve`, which Codex spawns per session, kept about 11.5 MiB of code resident (6 MiB
//! with this layout: tools/bench_startup.py). `tools/text-order.txt` names those functions,
//! grouped by when they run (start-up and warm-up, then calls: `serve` gives its code back
//! after the warm-up, and calls fault back only theirs; tools/text_order.py records them
//! under callgrind); this script turns it into a linker
//! script that places their sections (`.text.<symbol>`, or `.text.unlikely.<symbol>` for a
//! cold one: rustc and the `cc` crate compile one section per function) in an output section
//! of their own, in that order, before the rest of `.text`. `INSERT BEFORE` keeps the
//! linker's default layout for everything else.
//!
//! A linker script, not LLD's `--symbol-ordering-file`: it takes wildcards, so the file
//! names Rust's functions without the parts of a name that change with every version bump
//! and build profile (their v0 names, .cargo/config.toml, less the crate disambiguators and
//! back-references: tools/text_order.py's `pattern`), yet one instance of a generic
//! function apart from the others; and zig's `cc` (the manylinux wheel), GNU ld and LLD all
//! read it (gold and mold do not: RUSTFLAGS that pick them link as before). A name that
//! matches nothing costs nothing. Only the release profile's binaries on Linux get it,
//! unless `HERMES_MCP_TEXT_ORDER=off`.

// A build script speaks to Cargo on stdout (the suite also compiles this file, as a module).
#![allow(clippy::print_stdout)]

use std::fmt::Write as _;
use std::path::Path;

fn var(name: &str) -> String {
    // Cargo describes the build to build scripts in environment variables.
    #[allow(clippy::disallowed_methods)]
    std::env::var(name).unwrap_or_default()
}

/// The linker script for the names in `order` (one per line, `#` comments).
pub(crate) fn script(order: &str) -> String {
    // Names are symbols (letters, digits, `_`, `.`, `$`) with `*` for what changes between
    // builds; anything else would be linker-script syntax, so such a line is left out.
    let ok = |c: char| c.is_ascii_alphanumeric() || "_.$*".contains(c);
    let mut s = String::from("SECTIONS\n{\n  .text.hermes_hot :\n  {\n");
    for name in order.lines().map(str::trim) {
        if !name.is_empty() && !name.starts_with('#') && name.chars().all(ok) {
            let _ = writeln!(
                s,
                "    *(.text.{name} .text.unlikely.{name} .text.startup.{name})"
            );
        }
    }
    s.push_str("  }\n}\nINSERT BEFORE .text;\n");
    s
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=tools/text-order.txt");
    println!("cargo:rerun-if-env-changed=HERMES_MCP_TEXT_ORDER");
    // `off`: link as the linker would alone. tools/text_order.py needs such a build: valgrind
    // reads no symbols outside `.text`, so it cannot name what runs in the gathered section.
    let off = var("HERMES_MCP_TEXT_ORDER") == "off";
    if off || var("PROFILE") != "release" || var("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    // LLD (rustc's default here, and zig's) and GNU ld read `INSERT`; gold and mold do not.
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if ["fuse-ld=gold", "fuse-ld=mold"]
        .iter()
        .any(|l| flags.contains(l))
    {
        return;
    }
    // The order names v0 symbols (.cargo/config.toml); RUSTFLAGS from the environment replace
    // the config's, and with legacy names only the C functions would be gathered.
    if !flags.contains("symbol-mangling-version=v0") {
        println!(
            "cargo:warning=RUSTFLAGS without -C symbol-mangling-version=v0 replace \
             .cargo/config.toml's: tools/text-order.txt names v0 symbols, so this release \
             binary's Rust code is not laid out for a session (more of it resident); add the flag"
        );
    }
    let dir = var("CARGO_MANIFEST_DIR");
    let Ok(order) = std::fs::read_to_string(Path::new(&dir).join("tools/text-order.txt")) else {
        return;
    };
    let out = Path::new(&var("OUT_DIR")).join("text-order.ld");
    if std::fs::write(&out, script(&order)).is_ok() {
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", out.display());
    }
}
