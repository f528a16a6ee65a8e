//! Hostile files under the skills roots, through the real server: symlink
//! chains around the kernel's 40-link limit (inside the root and escaping
//! it), and FIFOs, devices, directories and oversized files where a skill
//! file should be. Each gets a clear error at once; nothing blocks, nothing
//! outside the roots is returned. (The path guard itself: `tests/suite/skills.rs`.)

use std::path::Path;

use serde_json::{Value, json};

use super::support::common::*;
use super::support::fs::mkfifo;
use super::support::skills::install_skill_fixtures;

fn call(c: &mut RawClient, name: &str, args: Value) -> (bool, Value) {
    let r = c.call_tool(name, args);
    (is_error(&r), result_json(&r))
}

fn view(c: &mut RawClient, file_path: &str) -> (bool, Value) {
    call(
        c,
        "skill_view",
        json!({"name": "axolotl", "file_path": file_path}),
    )
}

/// `dir/<prefix>1.md -> <prefix>2.md -> … -> <prefix>n.md -> target`: a chain of `n` links.
fn chain(dir: &Path, prefix: &str, n: usize, target: &Path) -> String {
    for i in 1..=n {
        let link = dir.join(format!("{prefix}{i}.md"));
        let to = if i == n {
            target.to_path_buf()
        } else {
            format!("{prefix}{}.md", i + 1).into()
        };
        std::os::unix::fs::symlink(to, link).unwrap();
    }
    format!("references/{prefix}1.md")
}

#[test]
fn symlink_chains_of_every_length_around_the_limit() {
    let env = TestEnv::new();
    let fx = install_skill_fixtures(&env);
    let refs = fx.skills_dir.join("mlops/axolotl/references");
    write(&refs.join("real.md"), "INSIDE THE SKILL");
    let secret = env.dir.path().join("outside/secret.txt");
    write(&secret, "TOP SECRET");
    // The same file by a relative path from the references directory.
    let depth = refs
        .strip_prefix(env.dir.path())
        .unwrap()
        .components()
        .count();
    let up_to_secret = Path::new(&"../".repeat(depth)).join("outside/secret.txt");
    assert_eq!(
        std::fs::canonicalize(refs.join(&up_to_secret)).unwrap(),
        std::fs::canonicalize(&secret).unwrap()
    );
    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    for n in [1, 2, 39, 40, 41, 42, 80] {
        // Ending inside the skill: readable while the kernel could open it.
        let fp = chain(&refs, &format!("in{n}_"), n, Path::new("real.md"));
        let (err, r) = view(&mut c, &fp);
        if n <= 40 {
            assert!(!err, "{n} links inside: {r}");
            assert_eq!(r["content"], "INSIDE THE SKILL", "{n}");
        } else {
            assert!(err, "{n} links inside must be refused: {r}");
            let e = r["error"].as_str().unwrap();
            assert!(
                e.contains("cannot be resolved") && e.contains("more than 40 symbolic links"),
                "{n}: {e}"
            );
        }
        // Ending outside: never readable, whatever the length.
        for (kind, target) in [("abs", secret.clone()), ("rel", up_to_secret.clone())] {
            let fp = chain(&refs, &format!("out{kind}{n}_"), n, &target);
            let (err, r) = view(&mut c, &fp);
            assert!(err, "{n} links escaping ({kind}) must be refused: {r}");
            assert!(!r.to_string().contains("TOP SECRET"), "{n} {kind}: {r}");
            let e = r["error"].as_str().unwrap();
            if n <= 40 {
                assert!(e.starts_with("Path escapes allowed directory"), "{n}: {e}");
            } else {
                assert!(e.contains("cannot be resolved"), "{n}: {e}");
            }
        }
    }
    // A loop is refused the same way.
    std::os::unix::fs::symlink("loop-b.md", refs.join("loop-a.md")).unwrap();
    std::os::unix::fs::symlink("loop-a.md", refs.join("loop-b.md")).unwrap();
    let (err, r) = view(&mut c, "references/loop-a.md");
    assert!(err, "{r}");
    assert!(
        r["error"].as_str().unwrap().contains("cannot be resolved"),
        "{r}"
    );
    // A skill directory reached through a chain that escapes is not served either.
    let outside_skill = env.dir.path().join("outside/evil");
    write(
        &outside_skill.join("SKILL.md"),
        "---\nname: evil\ndescription: x\n---\nEVIL SKILL BODY\n",
    );
    chain(&fx.skills_dir, "evil", 45, &outside_skill);
    std::fs::rename(fx.skills_dir.join("evil1.md"), fx.skills_dir.join("evil")).unwrap();
    let (err, r) = call(&mut c, "skill_view", json!({"name": "evil"}));
    assert!(err, "{r}");
    assert!(!r.to_string().contains("EVIL SKILL BODY"), "{r}");
    let (err, list) = call(&mut c, "skills_list", json!({}));
    assert!(!err, "{list}");
    assert!(!list.to_string().contains("\"evil\""), "{list}");
}

#[test]
fn fifos_devices_directories_and_huge_files_are_refused_without_blocking() {
    let env = TestEnv::new();
    let fx = install_skill_fixtures(&env);
    let skill = fx.skills_dir.join("mlops/axolotl");
    let refs = skill.join("references");
    mkfifo(&refs.join("pipe.md"));
    std::os::unix::fs::symlink("/dev/zero", refs.join("zero.md")).unwrap();
    std::fs::create_dir_all(refs.join("folder.md")).unwrap();
    let huge = std::fs::File::create(refs.join("huge.md")).unwrap();
    huge.set_len((16 << 20) + 1).unwrap();
    // A skill whose SKILL.md is a FIFO, and one whose SKILL.md links to /dev/zero.
    std::fs::create_dir_all(fx.skills_dir.join("tools/fifo-skill")).unwrap();
    mkfifo(&fx.skills_dir.join("tools/fifo-skill/SKILL.md"));
    std::fs::create_dir_all(fx.skills_dir.join("tools/zero-skill")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", fx.skills_dir.join("tools/zero-skill/SKILL.md"))
        .unwrap();

    let mut c = RawClient::spawn(env.cmd());
    c.initialize();
    for (fp, want) in [
        (
            "references/pipe.md",
            "is a FIFO (named pipe), not a regular file",
        ),
        ("references/huge.md", "is larger than 16777216 bytes"),
    ] {
        let (err, r) = view(&mut c, fp);
        assert!(err, "{fp}: {r}");
        let e = r["error"].as_str().unwrap();
        assert!(
            e.starts_with(&format!("Failed to read '{fp}'")),
            "{fp}: {e}"
        );
        assert!(e.contains(want), "{fp}: {e}");
    }
    // A link to a device outside the root is refused by the containment check
    // before anything is opened (a device inside a root is refused as above:
    // `fs::open_regular`; unit-tested in src/fs/read.rs with /dev/zero).
    let (err, r) = view(&mut c, "references/zero.md");
    assert!(err, "{r}");
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .starts_with("Path escapes allowed directory: '/dev/zero'"),
        "{r}"
    );
    let (err, r) = view(&mut c, "references/folder.md");
    assert!(err, "{r}");
    assert!(
        r["error"].as_str().unwrap().contains("is a directory"),
        "{r}"
    );
    // The listing skips what it cannot read; the skill itself stays readable.
    let (err, list) = call(&mut c, "skills_list", json!({}));
    assert!(!err, "{list}");
    let s = list.to_string();
    assert!(
        s.contains("\"axolotl\"") && !s.contains("fifo-skill"),
        "{s}"
    );
    let (err, r) = call(&mut c, "skill_view", json!({"name": "axolotl"}));
    assert!(!err, "{r}");
    let (err, r) = call(&mut c, "skill_view", json!({"name": "fifo-skill"}));
    assert!(err, "{r}");
    let e = r["error"].as_str().unwrap();
    assert!(
        e.starts_with("Failed to read skill 'fifo-skill'") && e.contains("is a FIFO (named pipe)"),
        "{e}"
    );
    let (err, r) = call(&mut c, "skill_view", json!({"name": "tools/zero-skill"}));
    assert!(err, "{r}");
    let e = r["error"].as_str().unwrap();
    assert!(e.contains("resolves outside the skills directories"), "{e}");
    let st = c.finish(std::time::Duration::from_secs(10));
    assert!(st.success(), "{st:?}");
}
