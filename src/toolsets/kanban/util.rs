//! Leaf helpers for the kanban port: the clock, random ids, and the handful of
//! Python built-ins (`str.strip`, `len`, `repr`, `json.dumps(sort_keys=True)`,
//! truthiness, `time.strftime`) whose exact behaviour shows up in Hermes'
//! stored rows and error texts. Kept free of any other kanban module so every
//! layer (db, store, ops, handlers) can use it without an import cycle.

use std::io::Read;

// The Python-behaviour helpers kanban's texts need live in crate::pycompat.
pub(crate) use crate::pycompat::{
    py_bool as truthy, py_json_sorted, py_len, py_repr, py_sorted_list as py_list, py_strip,
};

/// `int(time.time())`, as Hermes stamps every row.
pub(crate) fn now() -> i64 {
    crate::time::unix_now()
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_err()
    {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
            ^ (std::process::id() as u128) << 64;
        for (i, x) in b.iter_mut().enumerate() {
            *x = (t >> ((i % 16) * 8)) as u8;
        }
    }
    b
}

pub(crate) fn random_u32() -> u32 {
    u32::from_le_bytes(random_bytes::<4>())
}

/// `"t_" + secrets.token_hex(4)`.
pub(crate) fn new_task_id() -> String {
    let b = random_bytes::<4>();
    format!("t_{:02x}{:02x}{:02x}{:02x}", b[0], b[1], b[2], b[3])
}

/// `"<hostname>:<pid>"`, Hermes' `_claimer_id()` for this process.
pub(crate) fn claimer_id() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buffer and length are valid; gethostname NUL-terminates or truncates.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    let host = if rc == 0 {
        let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).to_string()
    } else {
        String::new()
    };
    let host = if host.is_empty() {
        "unknown".into()
    } else {
        host
    };
    format!("{host}:{}", std::process::id())
}

/// Python's `str.splitlines()[0]` (empty when there are no lines).
pub(crate) fn first_line(s: &str) -> &str {
    let end = s
        .find(|c: char| {
            matches!(
                c,
                '\n' | '\r'
                    | '\x0b'
                    | '\x0c'
                    | '\x1c'
                    | '\x1d'
                    | '\x1e'
                    | '\u{85}'
                    | '\u{2028}'
                    | '\u{2029}'
            )
        })
        .unwrap_or(s.len());
    &s[..end]
}

/// Python's `s[:n]` (code points, not bytes).
pub(crate) fn take_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// `time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))`.
pub(crate) fn local_ts(ts: i64) -> String {
    crate::time::DateTime::local(ts).map_or_else(String::new, |t| {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}",
            t.year, t.month, t.day, t.hour, t.minute
        )
    })
}
