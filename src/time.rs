//! Dates and times, in one place: the clock, seconds as Python prints them, the calendar
//! arithmetic (day counts ⇄ proleptic Gregorian dates, UTC or local) and every date format
//! the crate writes or reads — Python's `isoformat`/`fromisoformat` on Hermes' timestamps,
//! RFC 7231 HTTP dates (`Retry-After`, edge-tts' clock skew), JavaScript's
//! `Date.toString()` (edge-tts' `X-Timestamp`), and the stamps in file names. A leaf: it
//! imports nothing of the crate.

use std::time::{SystemTime, UNIX_EPOCH};

// ── The clock ────────────────────────────────────────────────────────────

/// Seconds since the epoch (`time.time()`; 0 before it).
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Whole seconds since the epoch (0 before it).
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Seconds since the epoch to whole microseconds, as Python's `time.time()` reports them
/// for `datetime.now()` (0 before the epoch).
pub fn now_micros() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as f64 + f64::from(d.subsec_micros()) / 1e6)
        .unwrap_or(0.0)
}

/// Seconds as Python's `f"{timeout:g}"` prints them (120.0 -> "120", 0.5 -> "0.5").
pub fn fmt_secs(secs: f64) -> String {
    let s = format!("{secs}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

// ── The calendar ─────────────────────────────────────────────────────────

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
/// Weekday names from Monday.
const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// Howard Hinnant's `civil_from_days`: (year, month, day) of a day count from 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Howard Hinnant's `days_from_civil`: days from 1970-01-01 to a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A calendar date and time of day, to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTime {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
}

impl DateTime {
    /// The UTC date and time of epoch seconds.
    pub fn utc(secs: i64) -> Self {
        let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
        let s = secs.rem_euclid(86_400);
        DateTime {
            year,
            month,
            day,
            hour: s / 3600,
            minute: s % 3600 / 60,
            second: s % 60,
        }
    }

    /// The local date and time of epoch seconds (the C library's `localtime_r`, which
    /// reads `TZ`), or `None` when it cannot tell.
    pub fn local(secs: i64) -> Option<Self> {
        let t = secs as libc::time_t;
        // SAFETY: localtime_r writes into the zeroed `tm` we own; both pointers are valid.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
            return None;
        }
        Some(DateTime {
            year: i64::from(tm.tm_year) + 1900,
            month: i64::from(tm.tm_mon) + 1,
            day: i64::from(tm.tm_mday),
            hour: i64::from(tm.tm_hour),
            minute: i64::from(tm.tm_min),
            second: i64::from(tm.tm_sec),
        })
    }

    /// `<Y><dsep><m><dsep><d><sep><H><tsep><M><tsep><S>`, zero-padded.
    fn format(&self, dsep: &str, sep: &str, tsep: &str) -> String {
        let DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
        } = self;
        format!(
            "{year:04}{dsep}{month:02}{dsep}{day:02}{sep}{hour:02}{tsep}{minute:02}{tsep}{second:02}"
        )
    }
}

// ── Formats written ──────────────────────────────────────────────────────

/// Python's `datetime.fromtimestamp(t, timezone.utc).isoformat()`:
/// `YYYY-mm-ddTHH:MM:SS[.ffffff]+00:00` (microseconds unless zero).
pub fn utc_isoformat(t: f64) -> String {
    let secs = t.floor() as i64;
    let micros = ((t - t.floor()) * 1e6).round().min(999_999.0) as i64;
    let frac = if micros > 0 {
        format!(".{micros:06}")
    } else {
        String::new()
    };
    format!("{}{frac}+00:00", DateTime::utc(secs).format("-", "T", ":"))
}

/// `datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")`, to the second:
/// `YYYY-mm-ddTHH:MM:SSZ`.
pub fn utc_iso_z(t: f64) -> String {
    format!("{}Z", DateTime::utc(t.floor() as i64).format("-", "T", ":"))
}

/// UTC `YYYYmmdd-HHMMSS` (`strftime("%Y%m%d-%H%M%S")`), for file names.
pub fn utc_stamp(secs: i64) -> String {
    DateTime::utc(secs).format("", "-", "")
}

/// Local time now as `YYYYmmdd_HHMMSS` (Hermes' `strftime("%Y%m%d_%H%M%S")`), for file
/// names; the epoch seconds when the local time cannot be told.
pub fn local_stamp() -> String {
    let now = unix_now();
    match DateTime::local(now) {
        Some(t) => t.format("", "_", ""),
        None => format!("{now}"),
    }
}

/// JavaScript's `Date.prototype.toString()` in UTC:
/// `Mon Jan 05 2026 10:00:00 GMT+0000 (Coordinated Universal Time)`.
pub fn js_date_string(secs: i64) -> String {
    let t = DateTime::utc(secs);
    // 1970-01-01 was a Thursday.
    let weekday = WEEKDAYS[(secs.div_euclid(86_400) + 3).rem_euclid(7) as usize];
    format!(
        "{weekday} {} {:02} {:04} {:02}:{:02}:{:02} GMT+0000 (Coordinated Universal Time)",
        MONTHS[(t.month - 1) as usize],
        t.day,
        t.year,
        t.hour,
        t.minute,
        t.second
    )
}

// ── Formats read ─────────────────────────────────────────────────────────

/// Python's `datetime.fromisoformat` on Hermes' timestamps
/// (`YYYY-MM-DD[T ]HH:MM:SS[.ffffff][Z|±HH:MM]`, naive = UTC) as epoch seconds.
pub fn fromisoformat(s: &str) -> Option<f64> {
    let s = s.trim();
    if !s.is_ascii() {
        return None;
    }
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    let days = days_from_civil(y, m, d);
    let t = (days * 86_400 + hh * 3600 + mm * 60 + ss) as f64;
    iso_fraction_and_zone(&s[19..], t)
}

/// The rest of an ISO timestamp after the seconds: `[.ffffff][Z|±HH:MM]`, applied to `t`.
fn iso_fraction_and_zone(mut rest: &str, mut t: f64) -> Option<f64> {
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        t += format!("0.{}", &frac[..n]).parse::<f64>().ok()?;
        rest = &frac[n..];
    }
    match rest {
        "" | "Z" => {}
        z if (z.starts_with('+') || z.starts_with('-'))
            && z.is_ascii()
            && z.len() == 6
            && &z[3..4] == ":" =>
        {
            let (oh, om) = (z[1..3].parse::<f64>().ok()?, z[4..6].parse::<f64>().ok()?);
            let sign = if z.starts_with('-') { -1.0 } else { 1.0 };
            t -= sign * (oh * 3600.0 + om * 60.0);
        }
        _ => return None,
    }
    Some(t)
}

/// An RFC 7231 IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) as epoch seconds: six
/// fields, the zone `GMT`; the weekday is not checked and the month name is read
/// without regard to case (as Python's `strptime("%a, %d %b %Y %H:%M:%S %Z")` does,
/// which edge-tts uses).
pub fn parse_http_date(s: &str) -> Option<i64> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let [_weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))? as i64 + 1;
    let (day, year) = (digits(day)?, digits(year)?);
    let hms: Vec<i64> = time.split(':').map(digits).collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

/// An unsigned decimal number (no sign, no blanks).
fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
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

    #[test]
    fn seconds_like_python_g() {
        assert_eq!(fmt_secs(120.0), "120");
        assert_eq!(fmt_secs(0.5), "0.5");
    }

    #[test]
    fn calendar_round_trips() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for z in [-719_468, -1, 0, 59, 11_016, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        let t = DateTime::utc(951_868_799);
        assert_eq!((t.year, t.month, t.day), (2000, 2, 29));
        assert_eq!((t.hour, t.minute, t.second), (23, 59, 59));
        assert!(DateTime::local(0).is_some());
    }

    #[test]
    fn iso_like_python() {
        assert_eq!(utc_isoformat(951_868_800.0), "2000-03-01T00:00:00+00:00");
        assert_eq!(
            utc_isoformat(951_868_800.25),
            "2000-03-01T00:00:00.250000+00:00"
        );
        assert_eq!(
            fromisoformat(&utc_isoformat(1_800_000_000.5)),
            Some(1_800_000_000.5)
        );
        assert_eq!(
            fromisoformat("2000-03-01 01:00:00+01:00"),
            Some(951_868_800.0)
        );
        assert_eq!(fromisoformat("2000-03-01T00:00:00Z"), Some(951_868_800.0));
        assert_eq!(fromisoformat("2000-13-01T00:00:00"), None);
        assert_eq!(fromisoformat("2000-03-01T00:00:00."), None);
        assert_eq!(utc_iso_z(951_868_800.9), "2000-03-01T00:00:00Z");
    }

    #[test]
    fn stamps_for_file_names() {
        assert_eq!(utc_stamp(784_887_151), "19941115-081231");
        assert_eq!(
            js_date_string(1_767_607_200),
            "Mon Jan 05 2026 10:00:00 GMT+0000 (Coordinated Universal Time)"
        );
        assert_eq!(
            js_date_string(0),
            "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)"
        );
    }

    #[test]
    fn http_dates_parse() {
        // The two cases the HTTP client and edge-tts tested with their own parsers.
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_http_date("Tue, 15 Nov 1994 08:12:31 GMT"),
            Some(784_887_151)
        );
        assert_eq!(
            parse_http_date("tue, 15 nov 1994 08:12:31 GMT"),
            Some(784_887_151)
        );
        assert_eq!(parse_http_date("Tue, 15 Nov 1994 08:12:31"), None);
        assert_eq!(parse_http_date("Tue, 15 Nov 1994 08:12 GMT"), None);
        assert_eq!(parse_http_date("Tue, 15 Foo 1994 08:12:31 GMT"), None);
        assert_eq!(parse_http_date("Tuesday, 15-Nov-94 08:12:31 GMT"), None);
        assert_eq!(parse_http_date("Tue, -1 Nov 1994 08:12:31 GMT"), None);
    }
}
