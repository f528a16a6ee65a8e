//! Dates and times, in one place: local and UTC stamps for file names and
//! HTTP dates. A leaf: it imports nothing of the crate.

/// Local time as `YYYYmmdd_HHMMSS` (Hermes' `strftime("%Y%m%d_%H%M%S")`).
pub fn local_stamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as libc::time_t)
        .unwrap_or(0);
    // SAFETY: localtime_r writes into the zeroed `tm` we own; both pointers are valid.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&now, &mut tm).is_null() };
    if !ok {
        return format!("{now}");
    }
    format!(
        "{:04}{:02}{:02}_{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_stamp_has_hermes_shape() {
        let t = local_stamp();
        assert_eq!(t.len(), 15, "{t}");
        assert_eq!(&t[8..9], "_");
        assert!(t.chars().filter(|c| *c != '_').all(|c| c.is_ascii_digit()));
    }
}
