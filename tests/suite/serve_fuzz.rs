//! Seeded fuzzing of the stdio line guard (src/server/framing.rs) through the
//! real server: random and broken JSON-RPC lines, invalid UTF-8, control
//! bytes, BOMs, truncated messages, lines past the 16 MiB limit, all
//! interleaved with valid requests.
//!
//! Invariants: the server never dies or writes anything but JSON lines on
//! stdout; every line that is a JSON object with a `method` and a readable
//! `id` gets exactly one reply carrying that id; nothing else is answered
//! with an id; it still serves and exits cleanly on EOF afterwards.
//!
//! `HERMES_MCP_FUZZ_LINES` raises the line count (`tools/fuzz.sh` runs it
//! for minutes); `HERMES_MCP_FUZZ_SEED` picks the seed.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use hermes_mcp::server::framing::MAX_LINE;
use serde_json::{Value, json};

use super::support::common::*;
use super::support::fuzz::{Rng, env_u64};

/// Method names: answered ones, unknown ones, and ones whose params rmcp checks.
const METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "prompts/list",
    "resources/list",
    "no/such/method",
    "",
    "tools/call",
    "logging/setLevel",
    "completion/complete",
];

/// `params` values, good and bad (`None`: absent).
const PARAMS: &[Option<&str>] = &[
    None,
    Some("{}"),
    Some("[]"),
    Some("\"x\""),
    Some("null"),
    Some("7"),
    Some(r#"{"_meta":"x"}"#),
    Some(r#"{"_meta":{"progressToken":"p"}}"#),
    Some(r#"{"name":5}"#),
    Some(r#"{"name":"no_such_tool","arguments":{}}"#),
    Some(r#"{"name":"skills_list","arguments":"x"}"#),
    Some(r#"{"level":"nope"}"#),
    Some(r#"{"cursor":{"a":[1,2,{"b":null}]}}"#),
];

const JSONRPC: &[Option<&str>] = &[
    Some("\"2.0\""),
    Some("\"2.0\""),
    Some("\"2.0\""),
    Some("\"1.0\""),
    Some("2"),
    Some("null"),
    None,
];

/// Lines with nothing to answer by id (or nothing to answer at all).
const NOISE: &[&str] = &[
    "",
    "   ",
    "\t",
    "null",
    "[]",
    "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
    "42",
    "\"str\"",
    "{}",
    "{\"id\":null}",
    "{\"jsonrpc\":\"2.0\"}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"zz\"}}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":7}",
    "{\"jsonrpc\":\"2.0\",\"method\":7}",
    "{\"jsonrpc\":\"2.0\",\"id\":\"resp\",\"result\":{}}",
    "{\"id\":\"resp\",\"error\":{\"code\":1}}",
    "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"",
    "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}}",
    "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
    "\u{feff}",
    "\r",
    "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\",\"method\":\"ping\"",
];

/// The id (as JSON text) a reply is owed to: the line is a JSON object (BOM
/// and blanks around it allowed) with a non-null `id` that is not a response
/// (it has a `method`, or neither `result` nor `error`). JSON-RPC: an error
/// to a request whose id can be read carries that id.
fn owed_id(line: &[u8]) -> Option<String> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.len() > MAX_LINE {
        return None;
    }
    let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(line.trim_ascii()) else {
        return refused_with_id(line);
    };
    let id = o.get("id").filter(|i| !i.is_null())?;
    let response = o.contains_key("result") || o.contains_key("error");
    (o.contains_key("method") || !response).then(|| id.to_string())
}

/// A line with bytes that are not UTF-8 is refused (`-32700`), with its id
/// when the line, each bad sequence read as U+FFFD, is an object whose id is
/// a string or an integer (the id was readable, so JSON-RPC wants it back).
fn refused_with_id(line: &[u8]) -> Option<String> {
    let std::borrow::Cow::Owned(text) = String::from_utf8_lossy(line) else {
        return None;
    };
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(text.trim_ascii()) else {
        return None;
    };
    let id = o.get("id")?;
    (id.is_string() || id.is_i64() || id.is_u64()).then(|| id.to_string())
}

fn next_id(rng: &mut Rng, n: usize) -> Value {
    match rng.below(4) {
        0 => json!(format!("s{n}")),
        1 => json!(1_000_000 + n as i64),
        2 => json!(-(n as i64) - 1),
        _ => json!(format!("ü-\"{n}\"\u{1}")),
    }
}

/// A request-shaped object with a readable id: built as text so the members
/// can be missing, mistyped or duplicated like a broken client would.
fn request_line(rng: &mut Rng, id: &Value) -> String {
    let mut members = Vec::new();
    if let Some(v) = JSONRPC[rng.below(JSONRPC.len())] {
        members.push(format!("\"jsonrpc\":{v}"));
    }
    members.push(format!("\"id\":{id}"));
    let method = if rng.chance(5) {
        "7".to_string()
    } else {
        json!(rng.pick(METHODS)).to_string()
    };
    members.push(format!("\"method\":{method}"));
    if let Some(p) = PARAMS[rng.below(PARAMS.len())] {
        members.push(format!("\"params\":{p}"));
    }
    if rng.chance(10) {
        members.push("\"extra\":[1,{\"x\":\"y\"}]".into());
    }
    // Member order does not matter in JSON.
    for i in (1..members.len()).rev() {
        members.swap(i, rng.below(i + 1));
    }
    let sep = if rng.chance(20) { " , " } else { "," };
    let mut s = format!("{{{}}}", members.join(sep));
    if rng.chance(10) {
        s = format!("  {s}\t");
    }
    if rng.chance(5) {
        s.insert(0, '\u{feff}');
    }
    if rng.chance(5) {
        s.push('\r');
    }
    s
}

/// Random bytes without a newline, often invalid UTF-8.
fn junk(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| match (rng.next() % 256) as u8 {
            b'\n' => b'\xff',
            b => b,
        })
        .collect()
}

/// Damage a valid line: cut it, flip a byte, or splice junk into it.
fn mangle(rng: &mut Rng, line: &str) -> Vec<u8> {
    let mut b = line.as_bytes().to_vec();
    match rng.below(4) {
        0 => b.truncate(rng.below(b.len().max(1))),
        1 => {
            let i = rng.below(b.len().max(1));
            if let Some(x) = b.get_mut(i) {
                *x = [b'\xc3', b'\x80', b'"', b'{', b'}', b'\\', 0][rng.below(7)];
            }
        }
        2 => {
            let at = rng.below(b.len() + 1);
            let n = 1 + rng.below(8);
            let j = junk(rng, n);
            b.splice(at..at, j);
        }
        _ => b.extend_from_slice(b"\xed\xa0\x80"),
    }
    b
}

/// Line `n` of a run (generated as it is written: a long run would not fit in memory).
fn one_line(rng: &mut Rng, n: usize) -> Vec<u8> {
    match rng.below(10) {
        // Valid requests and request-shaped ones with a readable id.
        0..=4 => {
            let id = next_id(rng, n);
            if rng.chance(40) {
                json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
                    .to_string()
                    .into_bytes()
            } else {
                request_line(rng, &id).into_bytes()
            }
        }
        5 | 6 => rng.pick(NOISE).as_bytes().to_vec(),
        7 => {
            let id = next_id(rng, n);
            let line = request_line(rng, &id);
            mangle(rng, &line)
        }
        8 => {
            let len = rng.below(200);
            junk(rng, len)
        }
        _ => {
            // A long line: a padded ping under the limit, or junk.
            let len = 1 + rng.below(256 * 1024);
            if rng.chance(50) {
                let mut s = format!(r#"{{"jsonrpc":"2.0","id":"long{n}","method":"ping""#);
                s.push_str(&" ".repeat(len));
                s.push('}');
                s.into_bytes()
            } else {
                junk(rng, len)
            }
        }
    }
}

/// Feed `count` generated lines to a fresh server; Err says which invariant broke.
fn run(seed: u64, count: usize) -> Result<(), String> {
    let mut rng = Rng(seed | 1);
    // Past the limit, once, somewhere in the middle: refused, the server goes on.
    let huge_at = rng.below(count.max(1));
    let mut owed: HashMap<String, usize> = HashMap::new();
    let env = TestEnv::new();
    let mut cmd = env.cmd();
    cmd.arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<Result<Value, String>>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            let v = serde_json::from_slice(&line).map_err(|e| {
                format!(
                    "non-JSON on stdout ({e}): {}",
                    String::from_utf8_lossy(&line)
                )
            });
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},
        "clientInfo":{"name":"fuzz","version":"0"}}});
    let mut write = |bytes: &[u8]| -> Result<(), String> {
        stdin
            .write_all(bytes)
            .and_then(|_| stdin.write_all(b"\n"))
            .map_err(|e| format!("the server stopped reading: {e}"))
    };
    write(init.to_string().as_bytes())?;
    write(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
    for n in 0..count {
        if n == huge_at {
            let mut huge = br#"{"jsonrpc":"2.0","id":"huge","method":"ping","x":""#.to_vec();
            huge.resize(MAX_LINE + 64, b'a');
            write(&huge)?;
        }
        let line = one_line(&mut rng, n);
        if let Some(id) = owed_id(&line) {
            *owed.entry(id).or_insert(0) += 1;
        }
        write(&line)?;
    }
    write(br#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#)?;
    for id in ["\"init\"", "\"last\""] {
        *owed.entry(id.to_string()).or_insert(0) += 1;
    }
    let mut left = owed.values().sum::<usize>();
    while left > 0 {
        let msg = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(m) => m?,
            Err(_) => {
                let mut still: Vec<_> = owed.into_iter().filter(|(_, n)| *n > 0).collect();
                still.truncate(5);
                return Err(format!(
                    "no reply within 30 s; still owed (first 5): {still:?}; server exited: {:?}",
                    child.try_wait()
                ));
            }
        };
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        if id.is_null() {
            continue;
        }
        let key = id.to_string();
        if key == "\"huge\"" {
            continue;
        }
        match owed.get_mut(&key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                left -= 1;
            }
            Some(_) => return Err(format!("one reply too many to {key}: {msg}")),
            None => return Err(format!("a reply with an id no request carried: {msg}")),
        }
    }
    if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
        return Err(format!("the server exited: {st:?}"));
    }
    drop(stdin);
    match exited_within(&mut child, 10) {
        Some(st) if st.success() => Ok(()),
        Some(st) => Err(format!("exit status after EOF: {st:?}")),
        None => {
            let _ = child.kill();
            Err("no exit within 10 s of EOF".into())
        }
    }
}

#[test]
fn serve_fuzz_line_guard() {
    let count = env_u64("HERMES_MCP_FUZZ_LINES").unwrap_or(3000) as usize;
    let seed = env_u64("HERMES_MCP_FUZZ_SEED").unwrap_or(0x4c49_4e45_4755);
    if let Err(e) = run(seed, count) {
        panic!("line guard fuzz (seed {seed}, {count} lines): {e}");
    }
}
