//! Seeded fuzzing of the block splicer: random marker placements (duplicated,
//! orphaned, adjacent), CRLF/BOM, random TOML and junk around them.
//!
//! Invariants: nothing panics; a file that parses either is refused with a
//! message or gives a result that parses, keeps the user's bytes outside the
//! block, holds one block, and is stable when spliced again.
//!
//! `HERMES_MCP_FUZZ_ITERS` raises the iteration count (`tools/fuzz.sh` runs
//! it for minutes); `HERMES_MCP_FUZZ_SEED` picks the seed.

use hermes_mcp::migrate::block::{self, BlockContent, END, START};

use hermes_mcp::migrate::translate::{CodexServer, Timeout, TomlVal};

use super::support::fuzz::{Rng, env_u64};

const PIECES: &[&str] = &[
    "model = \"gpt-5\"",
    "approval_policy = \"never\"",
    "",
    "",
    "# a comment",
    "[features]",
    "x = true",
    "[mcp_servers.user]",
    "command = \"u\"",
    "[mcp_servers.user.env]",
    "A = \"1\"",
    "[plugins.\"p@m\"]",
    "enabled = false",
    "[[hooks]]",
    "cmd = [\"a\", [\"b\"]]",
    "notify = [",
    "  \"a\",",
    "]",
    "s = \"\"\"",
    "multi [not] a table",
    "\"\"\"",
    "t = { a = 1, b = \"[t]\" }",
    "[tui.\"x y\"]",
    "default_permissions = \":read-only\"",
    "[permissions.mine]",
    "extends = \":workspace\"",
    "# hermes-mcp entries = [[\"mcp_servers\", \"old\"]]",
    "# hermes-mcp entries = [[",
    "[mcp_servers.old]",
    "command = \"old\"",
    "broken = [",
    "= junk",
    "ü = 1",
    "\"quoted key\" = 'lit'",
    "deep = [[[[[[[[[[[[[[[[[[[[",
];

fn random_file(rng: &mut Rng) -> String {
    let mut lines: Vec<String> = Vec::new();
    for _ in 0..rng.below(24) {
        let line = match rng.below(10) {
            0 => START.to_string(),
            1 => END.to_string(),
            2 if rng.chance(10) => format!("  {START}  "),
            3 if rng.chance(5) => "x = [".repeat(rng.below(300)),
            _ => rng.pick(PIECES).to_string(),
        };
        lines.push(line);
    }
    let crlf = rng.chance(30);
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut s = lines.join(nl);
    if rng.chance(70) {
        s.push_str(nl);
    }
    if rng.chance(10) {
        // Mixed line endings.
        s = s.replacen('\n', "\r\n", 1);
    }
    if rng.chance(15) {
        s.insert(0, '\u{feff}');
    }
    s
}

fn random_content(rng: &mut Rng) -> BlockContent {
    let mut c = BlockContent::default();
    if rng.chance(60) {
        c.root.push((
            "default_permissions".into(),
            TomlVal::Str(":workspace".into()),
        ));
    }
    for name in ["a", "user", "z.z", "café"] {
        if rng.chance(40) {
            let mut s = CodexServer::default();
            s.command = Some("c \"q\"\n\u{1}".into());
            s.timeouts.push((Timeout::Tool, 1.5));
            c.servers.push((name.into(), s));
        }
    }
    if rng.chance(30) {
        c.plugins.push(("p@m".into(), true));
    }
    if rng.chance(30) {
        c.plugins.push(("q@m".into(), false));
    }
    c
}

/// One case; Err describes a broken invariant.
fn check(text: &str, c: &BlockContent) -> Result<(), String> {
    let whole = block::parse_toml(text);
    let parsed = block::take_apart(text);
    if whole.is_err() {
        // Refused by migrate; the hint path parses the rest too.
        let _ = block::parse_toml(&parsed.user);
        return Ok(());
    }
    if block::parse_toml(&parsed.user).is_err() {
        return Ok(()); // refused: "without its managed block is not valid TOML"
    }
    let rendered = block::render(c);
    let out = block::insert(&parsed.user, &rendered, parsed.framing);
    if block::validate(&out, &parsed.user, &rendered, c).is_err() {
        return Ok(()); // refused with a message, nothing written
    }
    // Parses, with exactly one block.
    block::parse_toml(&out).map_err(|e| format!("result does not parse: {e}"))?;
    // (Marker text inside a user's multi-line string is the user's, not a marker.)
    let again = block::take_apart(&out);
    if again.blocks != 1 || again.orphan_ends != 0 {
        return Err("result does not hold exactly one block".into());
    }
    // Bytes outside the block: the user's text, only the blank lines next to the block differ.
    let body = out.strip_prefix('\u{feff}').unwrap_or(&out);
    let ours = if parsed.framing.crlf {
        rendered.replace('\n', "\r\n")
    } else {
        rendered.clone()
    };
    let s = body
        .find(&ours)
        .ok_or_else(|| format!("the rendered block is not in the result: {out:?}"))?;
    let e = s + ours.len();
    const WS: &[char] = &[' ', '\t', '\r', '\n'];
    let (pre, post) = (
        body[..s].trim_end_matches(WS),
        body[e..].trim_start_matches(WS),
    );
    let user = parsed.user.as_str();
    if !(user.starts_with(pre)
        && user.ends_with(post)
        && pre.len() + post.len() <= user.len()
        && user[pre.len()..user.len() - post.len()]
            .trim_matches(WS)
            .is_empty())
    {
        return Err(format!(
            "bytes outside the block changed:\n{user:?}\n---\n{out:?}"
        ));
    }
    if text.starts_with('\u{feff}') != out.starts_with('\u{feff}') {
        return Err("BOM not kept".into());
    }
    // Idempotent.
    let twice = block::insert(&again.user, &rendered, again.framing);
    if twice != out {
        return Err(format!("not idempotent:\n{out:?}\n---\n{twice:?}"));
    }
    Ok(())
}

#[test]
fn migrate_fuzz_block_splicer() {
    let iters = env_u64("HERMES_MCP_FUZZ_ITERS").unwrap_or(1500);
    let seed = env_u64("HERMES_MCP_FUZZ_SEED").unwrap_or(0x4845_524d_4553);
    let mut rng = Rng(seed | 1);
    for i in 0..iters {
        let text = random_file(&mut rng);
        let c = random_content(&mut rng);
        let r = std::panic::catch_unwind(|| check(&text, &c));
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("iteration {i} (seed {seed}): {e}\ninput: {text:?}"),
            Err(_) => panic!("iteration {i} (seed {seed}) panicked on input: {text:?}"),
        }
    }
}
