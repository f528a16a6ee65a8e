//! The release link's code layout (build.rs): `tools/text-order.txt` becomes a linker script
//! that the linker accepts and that gathers the named functions before the rest of `.text`.

use std::path::{Path, PathBuf};

use super::support::common::succeeded;
use super::support::prereq::{hermes_python, require};
use std::process::Command;

// build.rs, compiled here as a module to test the script it writes (its `main` goes unused).
#[allow(dead_code)]
#[path = "../../build.rs"]
mod build_script;

fn order() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join("tools/text-order.txt")).unwrap()
}

#[test]
fn every_name_of_the_text_order_reaches_the_linker_script() {
    let order = order();
    let names: Vec<&str> = order
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(
        names.len() > 1000,
        "tools/text-order.txt names {} functions",
        names.len()
    );
    let script = build_script::script(&order);
    for n in &names {
        let line = format!("    *(.text.{n} .text.unlikely.{n} .text.startup.{n})\n");
        assert!(script.contains(&line), "{n} is not in the script");
    }
    assert_eq!(
        script.lines().filter(|l| l.starts_with("    *(")).count(),
        names.len()
    );
    assert!(script.ends_with("INSERT BEFORE .text;\n"));
    // A line that is not a symbol name would be linker-script syntax: left out, not passed on.
    let hostile = build_script::script("good_name\n} INSERT AFTER .data; {\n_ZN3foo17h*E\n");
    assert_eq!(
        hostile.lines().filter(|l| l.starts_with("    *(")).count(),
        2
    );
    assert!(!hostile.contains("AFTER"));
}

/// The linker script for the real order plus `names`, written into `dir`.
fn script_with(dir: &Path, names: &str) -> PathBuf {
    let script = dir.join("order.ld");
    std::fs::write(
        &script,
        build_script::script(&format!("{}{names}", order())),
    )
    .unwrap();
    script
}

/// Where the gathered section and `.text` start in `bin`, and where each of `symbols` is
/// (matched by a piece of its name, as `nm -n` prints it).
fn layout(bin: &Path, symbols: &[&str]) -> (u64, u64, Vec<u64>) {
    require("nm", "binutils");
    require("readelf", "binutils");
    let nm = Command::new("nm").arg("-n").arg(bin).output().unwrap();
    let nm = String::from_utf8_lossy(&nm.stdout);
    let at = |needle: &str| {
        let line = nm
            .lines()
            .find(|l| match needle.strip_prefix("_R") {
                // A v0 pattern, as the order file has it: a glob over the whole name.
                Some(_) => glob(needle, l.rsplit(' ').next().unwrap_or_default()),
                None => l.ends_with(needle) || l.contains(&format!("{needle}17h")),
            })
            .unwrap_or_else(|| panic!("{needle} not in nm:\n{nm}"));
        u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap()
    };
    let sections = Command::new("readelf")
        .arg("-SW")
        .arg(bin)
        .output()
        .unwrap();
    let sections = String::from_utf8_lossy(&sections.stdout);
    let start = |name: &str| {
        let words: Vec<&str> = sections
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|w| w.contains(&name))
            .unwrap_or_else(|| panic!("no section {name}:\n{sections}"));
        let i = words.iter().position(|w| *w == name).unwrap();
        u64::from_str_radix(words[i + 2], 16).unwrap()
    };
    let (hot, text) = (start(".text.hermes_hot"), start(".text"));
    assert!(hot < text, "{sections}");
    (hot, text, symbols.iter().map(|s| at(s)).collect())
}

/// Whether `name` matches `pattern`, whose `*` stands for any run of characters (the
/// linker script's globs).
fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return name == pattern;
    }
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The names tools/text_order.py's `pattern` makes of `symbols`.
fn patterns(symbols: &[&str]) -> Vec<String> {
    let tools = concat!(env!("CARGO_MANIFEST_DIR"), "/tools");
    let out = Command::new(hermes_python("re"))
        .arg("-c")
        .arg(format!(
            "import sys; sys.path.insert(0, {tools:?}); import text_order as t; \
             print('\\n'.join(t.pattern(s) for s in sys.argv[1:]))"
        ))
        .args(symbols)
        .output()
        .unwrap();
    succeeded(&out, "text_order.pattern")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `pattern` reads a v0 name by its grammar: what changes between builds becomes `*`
/// (crate disambiguators, back-references, the instantiating crate, LLVM's suffixes), and
/// letters that are tags elsewhere stay as they are where they are not (`s` the type i16,
/// `K` a namespace, an array's length, identifiers). Legacy and C names as before.
#[test]
fn text_order_patterns_follow_the_v0_grammar() {
    let cases = [
        // show::<&str>, instantiated in its own crate (a back-reference)
        (
            "_RINvCs8Hukx3Wr1iy_6mdtest4showReEB2_",
            "_RINvCs*_6mdtest4showReE*",
        ),
        // a std generic's copy in another crate
        (
            "_RNvMs4_NtCslNYArtu3iFV_5alloc7raw_vecNtB5_11RawVecInner11finish_growCs2XodARhzYBE_17fontconfig_parser",
            "_RNvMs4_NtCs*_5alloc7raw_vecNtB*_11RawVecInner11finish_grow*",
        ),
        // LLVM's suffixes on a copy
        (
            "_RNvNtCslNYArtu3iFV_5alloc5boxed14box_new_uninit.2386",
            "_RNvNtCs*_5alloc5boxed14box_new_uninit*",
        ),
        ("_RNvCs1234_1a3foo.specialized.3", "_RNvCs*_1a3foo*"),
        // g::<[u8; 2]>: an array's length has no tag
        ("_RINvCs1234_1a1gAhj2_EB2_", "_RINvCs*_1a1gAhj2_E*"),
        // foo::<extern "C" fn(i16)>, foo::<b::S, i16>: `s` is i16 here
        ("_RINvCs1234_1a3fooFKCsEuEB2_", "_RINvCs*_1a3fooFKCsEuE*"),
        (
            "_RINvCs1234_1a3fooNtCs5678_1b1SsEB2_",
            "_RINvCs*_1a3fooNtCs*_1b1SsE*",
        ),
        // two::<2, 2>: the second constant is a back-reference
        (
            "_RINvCs1234_1a3twoKj2_KB9_EB2_",
            "_RINvCs*_1a3twoKj2_KB*_E*",
        ),
        // a closure in thread_local!'s `K` namespace; identifiers of length 0
        ("_RNCNKNvCs1234_1a3KEY00", "_RNCNKNvCs*_1a3KEY00"),
        (
            "_ZN4core3fmt5write17h0123456789abcdefE",
            "_ZN4core3fmt5write17h*E",
        ),
        ("sqlite3Initialize", "sqlite3Initialize"),
        ("fts5StructureWrite.part.0", "fts5StructureWrite.part.0"),
    ];
    let symbols: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let got = patterns(&symbols);
    let want: Vec<&str> = cases.iter().map(|c| c.1).collect();
    assert_eq!(got, want);
    for (symbol, pattern) in cases {
        assert!(glob(pattern, symbol), "{pattern} does not match {symbol}");
    }
}

/// Rust's v0 names (.cargo/config.toml) spell out a generic function's arguments, so the
/// order names one instance apart from the others; and `pattern` leaves out what differs
/// between builds, so a name taken from the symbol-keeping build that was profiled gathers
/// the same instance in the shipped one, whose crate disambiguator differs (its profile,
/// version or path: here another `-C metadata`).
#[test]
fn a_v0_name_from_one_build_gathers_its_instance_alone_in_another() {
    require("nm", "binutils");
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("main.rs");
    std::fs::write(
        &src,
        "#[inline(never)] fn ordered<T: Into<u64>>(x: T) -> u64 { x.into() * 3 }\n\
         #[cold] #[inline(never)] fn chilly(x: u64) -> u64 { x * 9 }\n\
         fn main() { let n = std::env::args().count(); \
         println!(\"{}\", ordered(n as u8) + ordered(n as u16) + chilly(n as u64)); }\n",
    )
    .unwrap();
    let rustc = |metadata: &str, bin: &Path| {
        let mut rustc = Command::new("rustc");
        rustc
            .args([
                "-O",
                "-C",
                "codegen-units=1",
                "-C",
                "symbol-mangling-version=v0",
            ])
            .arg(format!("-Cmetadata={metadata}"))
            .arg("-o")
            .arg(bin)
            .arg(&src);
        rustc
    };
    let profiled = tmp.path().join("profiled");
    succeeded(&rustc("profiled", &profiled).output().unwrap(), "the link");
    let nm = Command::new("nm").arg(&profiled).output().unwrap();
    let nm = String::from_utf8_lossy(&nm.stdout);
    // `h` is u8 in a v0 name, `t` u16.
    let name = |needle: &str| {
        nm.lines()
            .filter_map(|l| l.rsplit(' ').next())
            .find(|s| s.starts_with("_R") && s.contains(needle))
            .unwrap_or_else(|| panic!("no {needle} in nm:\n{nm}"))
    };
    let names = [name("7orderedh"), name("6chilly"), name("7orderedt")];
    let p = patterns(&names);
    assert!(p.iter().all(|p| p.contains("Cs*_")), "{p:?}");
    let script = script_with(tmp.path(), &format!("{}\n{}\n", p[0], p[1]));
    let bin = tmp.path().join("main");
    let mut shipped = rustc("shipped, another version", &bin);
    shipped.arg(format!("-Clink-arg=-Wl,-T,{}", script.display()));
    links_and_gathers(shipped, &bin, [p[0].as_str(), &p[1], &p[2]]);
}

#[test]
fn rustc_links_with_the_script_and_places_the_named_functions_first() {
    let tmp = tempfile::tempdir().unwrap();
    // `chilly` is cold: rustc puts it in `.text.unlikely.<symbol>`.
    let names = "_ZN4main7ordered17h*E\n_ZN4main6chilly17h*E\nmain\n";
    let script = script_with(tmp.path(), names);
    let src = tmp.path().join("main.rs");
    std::fs::write(
        &src,
        "#[inline(never)] fn ordered(x: usize) -> usize { x * 3 }\n\
         #[inline(never)] fn other(x: usize) -> usize { x * 5 }\n\
         #[cold] #[inline(never)] fn chilly(x: usize) -> usize { x * 7 }\n\
         fn main() { let n = std::env::args().count(); println!(\"{}\", ordered(n) + other(n) + chilly(n)); }\n",
    )
    .unwrap();
    let bin = tmp.path().join("main");
    let mut rustc = Command::new("rustc");
    rustc
        .args(["-O", "-C", "codegen-units=1", "-o"])
        .arg(&bin)
        .arg(&src)
        .arg(format!("-Clink-arg=-Wl,-T,{}", script.display()));
    links_and_gathers(rustc, &bin, ["7ordered", "6chilly", "5other"]);
}

/// Links a small C program with `cc` (and the script) and checks where its functions land.
fn c_program_is_gathered(mut cc: Command) {
    let tmp = tempfile::tempdir().unwrap();
    let script = script_with(tmp.path(), "ordered\nchilly\n");
    let src = tmp.path().join("main.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n\
         __attribute__((noinline)) int ordered(int x) { return x * 3; }\n\
         __attribute__((noinline)) int other(int x) { return x * 5; }\n\
         __attribute__((noinline, cold)) int chilly(int x) { return x * 7; }\n\
         int main(int c, char **v) { (void)v; printf(\"%d\\n\", ordered(c) + other(c) + chilly(c)); return 0; }\n",
    )
    .unwrap();
    let bin = tmp.path().join("main");
    cc.args(["-O2", "-ffunction-sections", "-o"])
        .arg(&bin)
        .arg(&src)
        .arg(format!("-Wl,-T,{}", script.display()));
    links_and_gathers(cc, &bin, [" ordered", " chilly", " other"]);
}

/// Runs the link `link` of `bin`, runs the program (it prints 15), and checks that the first
/// two of `symbols` (named in the order) sit in the gathered section and the third (not
/// named) in `.text` after it.
fn links_and_gathers(mut link: Command, bin: &Path, symbols: [&str; 3]) {
    succeeded(&link.output().unwrap(), "the link");
    let run = Command::new(bin).output().unwrap();
    assert_eq!(succeeded(&run, "the linked program"), "15\n");
    let (hot, text, at) = layout(bin, &symbols);
    assert!(
        (hot..text).contains(&at[0]) && (hot..text).contains(&at[1]),
        "{symbols:?} at {at:?}"
    );
    assert!(at[2] >= text, "{symbols:?} at {at:?}");
}

/// zig's `cc` links the manylinux wheel (maturin --zig); it refuses LLD's ordering option,
/// but reads the script, for C code too (SQLite's functions are in the order).
#[test]
fn zig_cc_links_with_the_script_as_the_wheel_build_does() {
    let mut zig = Command::new(hermes_python("ziglang"));
    zig.args(["-m", "ziglang", "cc", "-target", "x86_64-linux-gnu.2.28"]);
    c_program_is_gathered(zig);
}

/// GNU ld, for a build whose RUSTFLAGS turn rustc's LLD off.
#[test]
fn gnu_ld_links_with_the_script_too() {
    let mut gcc = Command::new("cc");
    gcc.arg("-fuse-ld=bfd");
    c_program_is_gathered(gcc);
}
