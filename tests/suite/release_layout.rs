//! The release link's code layout (build.rs): `tools/text-order.txt` becomes a linker script
//! that the linker accepts and that gathers the named functions before the rest of `.text`.

use std::path::Path;
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

#[test]
fn rustc_links_with_the_script_and_places_the_named_functions_first() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("order.ld");
    // `chilly` is cold: rustc puts it in `.text.unlikely.<symbol>`.
    let names = "_ZN4main7ordered17h*E\n_ZN4main6chilly17h*E\nmain\n";
    std::fs::write(
        &script,
        build_script::script(&format!("{}{names}", order())),
    )
    .unwrap();
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
    let out = Command::new("rustc")
        .args(["-O", "-C", "codegen-units=1", "-o"])
        .arg(&bin)
        .arg(&src)
        .arg(format!("-Clink-arg=-Wl,-T,{}", script.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&bin).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "15\n");
    let nm = Command::new("nm").arg("-n").arg(&bin).output().unwrap();
    let nm = String::from_utf8_lossy(&nm.stdout);
    let at = |needle: &str| {
        let line = nm
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} not in nm"));
        u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap()
    };
    let sections = Command::new("readelf")
        .args(["-SW"])
        .arg(&bin)
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
    // The named functions sit in the gathered section, the other one in `.text` after it.
    assert!((hot..text).contains(&at("7ordered17h")), "{nm}");
    assert!((hot..text).contains(&at("6chilly17h")), "{nm}");
    assert!(at("5other17h") >= text, "{nm}");
}
