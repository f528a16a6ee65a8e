//! Rules about the source tree that keep the product honest.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The layers (README, "Layout"): imports point down, never up or sideways.
/// `cli` sits on top; the leaves (`error`, `redact`, `pycompat`, `fs`,
/// `lenient`, `process`, `image`, `time`) import nothing but each other.
const LEAVES: &[&str] = &[
    "error", "redact", "pycompat", "fs", "lenient", "process", "image", "time",
];
const LAYERS: &[(&str, &[&str])] = &[
    (
        "cli",
        &[
            "doctor", "server", "migrate", "toolsets", "gateway", "auth", "hermes", "net",
        ],
    ),
    ("doctor", &["server", "migrate", "hermes"]),
    ("server", &["hermes"]),
    (
        "toolsets",
        &["server", "llm", "gateway", "auth", "net", "hermes"],
    ),
    ("llm", &["gateway", "auth", "net", "hermes"]),
    ("gateway", &["auth", "net", "hermes"]),
    ("auth", &["net", "hermes"]),
    ("net", &["hermes"]),
    ("migrate", &["hermes"]),
    ("hermes", &[]),
    ("redact", &[]),
    ("error", &[]),
    ("pycompat", &[]),
    ("fs", &[]),
    ("lenient", &[]),
    ("process", &[]),
    ("image", &[]),
    ("time", &[]),
];

/// The top-level module a `src/` file belongs to (`src/net/client.rs` -> `net`).
fn layer_of(rel: &str) -> &str {
    rel.split('/').next().unwrap().trim_end_matches(".rs")
}

#[test]
fn imports_point_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut offenders = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let layer = layer_of(&rel);
        if matches!(layer, "lib" | "main") {
            continue;
        }
        let Some((_, allowed)) = LAYERS.iter().find(|(l, _)| *l == layer) else {
            offenders.push(format!(
                "src/{rel}: top-level module {layer} has no place in LAYERS"
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (pos, _) in line.match_indices("crate::") {
                let used: String = line[pos + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if used != layer
                    && !allowed.contains(&used.as_str())
                    && !LEAVES.contains(&used.as_str())
                {
                    offenders.push(format!("src/{rel}:{}: {layer} -> {used}", i + 1));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "imports that point the wrong way:\n{}",
        offenders.join("\n")
    );
}

/// The paths used after each `prefix` (`super::{a, b::c}` gives `a`, `b/c`).
fn used_paths(code: &str, prefix: &str) -> Vec<String> {
    fn expand(rest: &str, base: &str, out: &mut Vec<String>) {
        let rest = rest.trim_start();
        if let Some(inner) = rest.strip_prefix('{') {
            // Split the group's top-level items.
            let (mut depth, mut start) = (0, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        expand(&inner[start..i], base, out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&inner[start..i], base, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let path: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let after = &rest[path.len()..];
        let path = path.trim_end_matches(':').replace("::", "/");
        let full = if base.is_empty() {
            path.clone()
        } else {
            format!("{base}/{path}")
        };
        if after.trim_start().starts_with('{') && rest[..rest.len() - after.len()].ends_with("::") {
            expand(after, &full, out);
        } else if !full.is_empty() {
            out.push(full);
        }
    }
    let mut out = Vec::new();
    for (pos, _) in code.match_indices(prefix) {
        expand(&code[pos + prefix.len()..], "", &mut out);
    }
    out
}

/// A toolset folder is small modules whose imports form no cycle.
#[test]
fn toolset_folders_have_no_import_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/toolsets");
    let mut problems = Vec::new();
    for ts in std::fs::read_dir(&root).unwrap() {
        let dir = ts.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        // Module path (relative to the toolset, `mod.rs` as its folder) -> modules it uses.
        let module = |f: &Path| -> String {
            let rel = f.strip_prefix(&dir).unwrap().with_extension("");
            let s = rel.to_string_lossy().replace('\\', "/");
            s.strip_suffix("/mod")
                .or(s.strip_suffix("mod"))
                .unwrap_or(&s)
                .trim_end_matches('/')
                .to_string()
        };
        let names: Vec<String> = files.iter().map(|f| module(f)).collect();
        let ts_name = dir.file_name().unwrap().to_string_lossy().to_string();
        let mut edges: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for f in &files {
            let from = module(f);
            let text = std::fs::read_to_string(f).unwrap();
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join(" ");
            // `super::` is relative to the parent of `from`; `crate::toolsets::<ts>::` to the root.
            let parent = from
                .rsplit_once('/')
                .map(|(p, _)| p.to_string())
                .unwrap_or_default();
            let mut paths = Vec::new();
            for p in used_paths(&code, &format!("crate::toolsets::{ts_name}::")) {
                paths.push(p);
            }
            for p in used_paths(&code, "super::") {
                paths.push(if parent.is_empty() {
                    p
                } else {
                    format!("{parent}/{p}")
                });
            }
            for path in paths {
                // The longest known module the path starts with.
                let target = names
                    .iter()
                    .filter(|n| {
                        !n.is_empty() && (path == **n || path.starts_with(&format!("{n}/")))
                    })
                    .max_by_key(|n| n.len())
                    .cloned()
                    .unwrap_or_default();
                if target != from && !target.is_empty() && !from.starts_with(&format!("{target}/"))
                {
                    edges.entry(from.clone()).or_default().push(target);
                }
            }
        }
        // Depth-first search for a back edge.
        fn visit(
            n: &str,
            edges: &std::collections::BTreeMap<String, Vec<String>>,
            state: &mut std::collections::HashMap<String, u8>,
            stack: &mut Vec<String>,
        ) -> Option<Vec<String>> {
            state.insert(n.to_string(), 1);
            stack.push(n.to_string());
            for m in edges.get(n).into_iter().flatten() {
                match state.get(m.as_str()).copied().unwrap_or(0) {
                    1 => {
                        let i = stack.iter().position(|s| s == m).unwrap();
                        let mut cycle = stack[i..].to_vec();
                        cycle.push(m.clone());
                        return Some(cycle);
                    }
                    0 => {
                        if let Some(c) = visit(m, edges, state, stack) {
                            return Some(c);
                        }
                    }
                    _ => {}
                }
            }
            stack.pop();
            state.insert(n.to_string(), 2);
            None
        }
        let mut state = std::collections::HashMap::new();
        for n in edges.keys() {
            if state.get(n.as_str()).copied().unwrap_or(0) == 0
                && let Some(c) = visit(n, &edges, &mut state, &mut Vec::new())
            {
                problems.push(format!("{ts_name}: {}", c.join(" -> ")));
                break;
            }
        }
    }
    assert!(
        problems.is_empty(),
        "import cycles:\n{}",
        problems.join("\n")
    );
}

/// No toolset imports another: what two toolsets share lives a layer down
/// (`llm`, `gateway`, `auth`, `net`, a leaf), so each toolset folder can be read,
/// changed and tested on its own.
#[test]
fn no_toolset_imports_another() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/toolsets");
    let toolsets: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(toolsets.len() >= 7, "toolsets found: {toolsets:?}");
    let mut offenders = Vec::new();
    for ts in &toolsets {
        let mut files = Vec::new();
        rust_files(&root.join(ts), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (i, line) in text.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                for (pos, _) in line.match_indices("toolsets::") {
                    let used: String = line[pos + 10..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if used != *ts && toolsets.contains(&used) {
                        let rel = f.strip_prefix(&root).unwrap().display().to_string();
                        offenders.push(format!("src/toolsets/{rel}:{}: {ts} -> {used}", i + 1));
                    }
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "toolsets importing another toolset (move what they share down a layer):\n{}",
        offenders.join("\n")
    );
}

/// Functions stay short enough to read in one screen or two: none in `src/`
/// (tests aside) is longer than 120 lines. A longer one is split into named steps.
#[test]
fn no_function_over_120_lines() {
    const LIMIT: usize = 120;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut long = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let mut v = FnLengths::default();
        syn::visit::Visit::visit_file(&mut v, &ast);
        for (name, start, lines) in v.found {
            if lines > LIMIT {
                let rel = f.strip_prefix(&src).unwrap().display();
                long.push(format!("src/{rel}:{start} {name}: {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LIMIT} lines (split them into named steps):\n{}",
        long.join("\n")
    );
}

/// Every `fn` (free, in an `impl` or a trait) outside `#[cfg(test)]` modules,
/// with its first line and length in lines.
#[derive(Default)]
struct FnLengths {
    found: Vec<(String, usize, usize)>,
}

impl FnLengths {
    fn record(&mut self, name: &syn::Ident, span: proc_macro2::Span) {
        let (start, end) = (span.start().line, span.end().line);
        self.found.push((name.to_string(), start, end + 1 - start));
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

impl<'ast> syn::visit::Visit<'ast> for FnLengths {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        use syn::spanned::Spanned;
        self.record(&f.sig.ident, f.span());
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        use syn::spanned::Spanned;
        self.record(&f.sig.ident, f.span());
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        use syn::spanned::Spanned;
        self.record(&f.sig.ident, f.span());
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// A suite file imports only `support` (and the crate, std, external crates), never
/// another suite file: what two test files share lives in `tests/suite/support/`, so
/// each test file can be read, changed and run on its own. Files under `support/` may
/// import each other.
#[test]
fn suite_files_import_only_support() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite");
    let mut offenders = Vec::new();
    for e in std::fs::read_dir(&suite).unwrap() {
        let f = e.unwrap().path();
        if f.is_dir() || f.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name == "mod.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join(" ");
        for prefix in ["super::", "crate::suite::"] {
            for used in used_paths(&code, prefix) {
                let first = used.split('/').next().unwrap_or_default();
                if first != "support" {
                    offenders.push(format!("tests/suite/{name}: {prefix}{used}"));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "suite files importing another suite file (move what they share to support/):\n{}",
        offenders.join("\n")
    );
}

/// Every toolset folder has one skeleton (README, "Layout"): `mod.rs` holds the `Toolset`
/// impl, `schema.rs` the `ToolDef` table, `args.rs` the argument parser; vendors live under
/// `providers/` (no other name for that room).
#[test]
fn toolsets_keep_the_skeleton() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/toolsets");
    let mut offenders = Vec::new();
    for e in std::fs::read_dir(&root).unwrap() {
        let dir = e.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        for f in ["mod.rs", "schema.rs", "args.rs"] {
            if !dir.join(f).is_file() {
                offenders.push(format!("src/toolsets/{name}/{f} is missing"));
            }
        }
        for vendors in ["backends", "vendors"] {
            if dir.join(vendors).exists() {
                offenders.push(format!(
                    "src/toolsets/{name}/{vendors}/: vendors live under providers/"
                ));
            }
        }
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        for f in &files {
            let rel = f
                .strip_prefix(&dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(f).unwrap();
            if text.contains("impl Toolset for") && rel != "mod.rs" {
                offenders.push(format!(
                    "src/toolsets/{name}/{rel}: the Toolset impl belongs in mod.rs"
                ));
            }
            if text.contains("ToolDef {") && rel != "schema.rs" {
                offenders.push(format!(
                    "src/toolsets/{name}/{rel}: the ToolDef table belongs in schema.rs"
                ));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "toolset folders off the skeleton:\n{}",
        offenders.join("\n")
    );
}

/// The factors a suite file sets [`TIME_SCALE`](super::support::common::TIME_SCALE) to:
/// `(TIME_SCALE, "0.1")`, `.var(TIME_SCALE, "0.1")`, or a `const NAME: f64` of the file.
/// An entry is `Err` with the text when the value cannot be read.
fn scale_factors(code: &str) -> Vec<Result<f64, String>> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("TIME_SCALE") {
        let after = code[at + "TIME_SCALE".len()..].trim_start();
        let opens = code[..at].trim_end().ends_with('(');
        let Some(value) = after.strip_prefix(',').filter(|_| opens) else {
            continue; // an import or a mention, not a setting
        };
        let value = value.trim_start().trim_start_matches('&');
        let factor = if let Some(lit) = value.strip_prefix('"') {
            lit.split('"').next().and_then(|v| v.parse::<f64>().ok())
        } else {
            let name: String = value
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            code.split(&format!("const {name}: f64 = "))
                .nth(1)
                .and_then(|v| v.split(';').next())
                .and_then(|v| v.trim().parse::<f64>().ok())
        };
        out.push(factor.ok_or_else(|| value.chars().take(40).collect()));
    }
    out
}

/// Time under control (support::deadlines): every constant of `src/hermes/deadlines.rs`
/// belongs to one kind; each kind's real-time test exists, is the only test whose doc
/// calls itself "The real-time test of", and does not scale time; every other setting of
/// the test time scale is a factor below 1 (no test scales to real time), and the variable
/// is named only through `TIME_SCALE`.
#[test]
fn each_deadline_kind_has_one_real_time_test() {
    use super::support::deadlines::{KINDS, RealTime};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(root.join("src/hermes/deadlines.rs")).unwrap();
    let consts: Vec<&str> = src
        .lines()
        .filter_map(|l| l.strip_prefix("pub const "))
        .filter(|l| l.contains(": Deadline "))
        .filter_map(|l| l.split(':').next())
        .collect();
    assert!(consts.len() >= 20, "{consts:?}");
    let mut problems = Vec::new();
    for c in &consts {
        let n = KINDS.iter().filter(|k| k.deadlines.contains(c)).count();
        if n != 1 {
            problems.push(format!("{c} is in {n} kinds of support::deadlines (one)"));
        }
    }
    for k in KINDS {
        for d in k.deadlines {
            if !consts.contains(d) {
                problems.push(format!("{}: {d} is not a Deadline of deadlines.rs", k.name));
            }
        }
    }

    // The doc line that marks a real-time test, by `file::function`.
    let suite = root.join("tests/suite");
    let mut marked = Vec::new();
    let mut files = Vec::new();
    rust_files(&suite, &mut files);
    for f in &files {
        let rel = f
            .strip_prefix(&suite)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        if rel != "support/common.rs" && text.contains("\"HERMES_MCP_TEST_TIME_SCALE\"") {
            problems.push(format!("{rel} names the scale variable; use TIME_SCALE"));
        }
        if rel.starts_with("support/") || rel == "repo_rules.rs" {
            continue;
        }
        let file = rel.trim_end_matches(".rs");
        for factor in scale_factors(&text) {
            match factor {
                Ok(f) if f > 0.0 && f < 1.0 => {}
                Ok(f) => problems.push(format!("{rel} sets TIME_SCALE to {f}: below 1 only")),
                Err(v) => problems.push(format!("{rel}: TIME_SCALE set to {v}…, not a literal")),
            }
        }
        let mut in_doc_mark = false;
        for line in text.lines().map(str::trim_start) {
            if line.starts_with("/// The real-time test of") {
                in_doc_mark = true;
            } else if in_doc_mark && let Some(rest) = line.strip_prefix("fn ") {
                let name = rest.split('(').next().unwrap_or_default();
                marked.push((format!("{file}::{name}"), text.clone()));
                in_doc_mark = false;
            } else if !(line.starts_with("///") || line.starts_with("#[")) {
                in_doc_mark = false;
            }
        }
    }
    let named: Vec<&str> = KINDS
        .iter()
        .filter_map(|k| match k.real_time {
            RealTime::Test(t) => Some(t),
            RealTime::None(why) => {
                if why.is_empty() {
                    problems.push(format!("{}: no real-time test, and no why", k.name));
                }
                None
            }
        })
        .collect();
    for t in &named {
        let Some((_, text)) = marked.iter().find(|(m, _)| m == t) else {
            problems.push(format!(
                "{t}: no such test whose doc says \"The real-time test of\""
            ));
            continue;
        };
        let name = t.rsplit("::").next().unwrap();
        let body = text
            .split(&format!("fn {name}("))
            .nth(1)
            .and_then(|b| b.split("\n}\n").next())
            .unwrap_or_default();
        if body.contains("TIME_SCALE") {
            problems.push(format!("{t} is a real-time test but scales time"));
        }
    }
    for (m, _) in &marked {
        if !named.contains(&m.as_str()) {
            problems.push(format!(
                "{m} calls itself a real-time test but support::deadlines does not name it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
