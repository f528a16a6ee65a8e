//! URL policy: which hosts and addresses a user-supplied URL may reach.
//!
//! Mirrors Hermes' `tools/url_safety.py` (address classes, the always-blocked
//! cloud-metadata floor, the `allow_private_urls` toggle) and
//! `tools/website_policy.py` (the user's website blocklist), with two fixes
//! Hermes documents as limitations: the check runs on every redirect hop, and
//! the addresses checked are the addresses connected to (see `client.rs`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

use url::{Host, Url};

use crate::hermes::Context;
use crate::hermes::envvars;

/// Hostnames that are cloud-metadata endpoints: blocked whatever the config says.
pub(crate) const METADATA_HOSTS: &[&str] = &["metadata.google.internal", "metadata.goog"];

/// Why a URL may not be fetched. The messages are Hermes' where Hermes has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Blocked {
    #[error("Blocked: only http and https URLs can be fetched (got '{0}')")]
    Scheme(String),
    #[error("Blocked: URL has no host")]
    NoHost,
    #[error("Blocked: URL targets a cloud metadata endpoint")]
    Metadata { host: String },
    #[error("Blocked: URL targets a private or internal network address")]
    Private { host: String, ip: Option<IpAddr> },
    #[error("Blocked: cannot resolve host {host}: {reason}")]
    Dns { host: String, reason: String },
    #[error("{}", .0.message)]
    Website(PolicyBlock),
}

impl Blocked {
    /// The Hermes `blocked_by_policy` object, for website-blocklist blocks.
    pub(crate) fn policy_block(&self) -> Option<&PolicyBlock> {
        match self {
            Blocked::Website(b) => Some(b),
            _ => None,
        }
    }
}

/// A website-blocklist match (Hermes' `check_website_access` result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyBlock {
    pub host: String,
    pub rule: String,
    pub(crate) source: String,
    pub(crate) message: String,
}

/// Address classes, most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpClass {
    /// Cloud metadata and all of link-local 169.254/16: never allowed.
    Metadata,
    /// Loopback, private, link-local, CGNAT, multicast, unspecified, reserved,
    /// documentation ranges: allowed only with `allow_private_urls`.
    Private,
    Public,
}

/// The IPv4 address an IPv6 one stands for, if any: v4-mapped ::ffff:0:0/96,
/// SIIT v4-translated ::ffff:0:0:0/96, IPv4-compatible ::/96 (not :: and ::1),
/// NAT64 64:ff9b::/96 and 6to4 2002::/16. Such an address is classified as
/// the IPv4 address it wraps.
pub(crate) fn embedded_ipv4(v6: &Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = v6.segments();
    let tail = v4_at(v6, 12);
    // NAT64 well-known prefix
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6].iter().all(|x| *x == 0) {
        return Some(tail);
    }
    // SIIT IPv4-translated ::ffff:0:a.b.c.d
    if s[0..4].iter().all(|x| *x == 0) && s[4] == 0xffff && s[5] == 0 {
        return Some(tail);
    }
    // Deprecated IPv4-compatible ::a.b.c.d (not :: and ::1)
    if s[0..6].iter().all(|x| *x == 0) && (s[6] != 0 || s[7] > 1) {
        return Some(tail);
    }
    // 6to4: 2002:AABB:CCDD::/48
    if s[0] == 0x2002 {
        return Some(v4_at(v6, 2));
    }
    None
}

/// The four bytes of `v6` from `at`.
fn v4_at(v6: &Ipv6Addr, at: usize) -> Ipv4Addr {
    let o = v6.octets();
    Ipv4Addr::new(o[at], o[at + 1], o[at + 2], o[at + 3])
}

/// Every IPv4 address an IPv6 address may carry, wherever a translation or
/// tunnelling scheme puts one: [`embedded_ipv4`], plus the local-use NAT64
/// prefix 64:ff9b:1::/48 (RFC 8215, at any RFC 6052 prefix length), Teredo
/// 2001::/32 (server address, and client address XOR-ed with 0xffffffff), and
/// link-local fe80::/10 interface ids ending in an IPv4 address (ISATAP
/// fe80::5efe:a.b.c.d and the like). Used to keep cloud metadata blocked in
/// every disguise.
pub(crate) fn embedded_ipv4_candidates(v6: &Ipv6Addr) -> Vec<Ipv4Addr> {
    let mut out: Vec<Ipv4Addr> = embedded_ipv4(v6).into_iter().collect();
    let s = v6.segments();
    let o = v6.octets();
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        // RFC 6052 layouts for /48, /56, /64 and /96 prefixes (byte 8 is the "u" octet).
        out.push(Ipv4Addr::new(o[6], o[7], o[9], o[10]));
        out.push(Ipv4Addr::new(o[7], o[9], o[10], o[11]));
        out.push(Ipv4Addr::new(o[9], o[10], o[11], o[12]));
        out.push(v4_at(v6, 12));
    }
    if s[0] == 0x2001 && s[1] == 0 {
        out.push(v4_at(v6, 4));
        out.push(Ipv4Addr::from(!u32::from(v4_at(v6, 12))));
    }
    if s[0] & 0xffc0 == 0xfe80 {
        out.push(v4_at(v6, 12));
    }
    out
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn classify_v4(ip: Ipv4Addr) -> IpClass {
    if in_v4(ip, [169, 254, 0, 0], 16) || ip == Ipv4Addr::new(100, 100, 100, 200) {
        return IpClass::Metadata;
    }
    const PRIVATE: &[([u8; 4], u32)] = &[
        ([0, 0, 0, 0], 8),
        ([10, 0, 0, 0], 8),
        ([100, 64, 0, 0], 10),
        ([127, 0, 0, 0], 8),
        ([172, 16, 0, 0], 12),
        ([192, 0, 0, 0], 24),
        ([192, 0, 2, 0], 24),
        ([192, 88, 99, 0], 24),
        ([192, 168, 0, 0], 16),
        ([198, 18, 0, 0], 15),
        ([198, 51, 100, 0], 24),
        ([203, 0, 113, 0], 24),
        ([224, 0, 0, 0], 4),
        ([240, 0, 0, 0], 4),
    ];
    if PRIVATE.iter().any(|(n, p)| in_v4(ip, *n, *p)) {
        IpClass::Private
    } else {
        IpClass::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> IpClass {
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
        || embedded_ipv4_candidates(&ip)
            .into_iter()
            .any(|v4| classify_v4(v4) == IpClass::Metadata)
    {
        return IpClass::Metadata;
    }
    if let Some(v4) = embedded_ipv4(&ip) {
        // The embedded address decides, but a mapped form is never "more public"
        // than the address it wraps.
        return classify_v4(v4);
    }
    let s = ip.segments();
    // Only global unicast 2000::/3 can be public (Python's is_reserved covers the rest).
    if s[0] & 0xe000 != 0x2000 {
        return IpClass::Private;
    }
    // 2001::/23 (IETF protocol assignments, Teredo), 2001:db8::/32 (docs), 3fff::/20 (docs).
    if s[0] == 0x2001 && (s[1] < 0x0200 || s[1] == 0x0db8) {
        return IpClass::Private;
    }
    if s[0] == 0x3fff && s[1] < 0x1000 {
        return IpClass::Private;
    }
    IpClass::Public
}

/// Classify one address.
pub fn classify(ip: IpAddr) -> IpClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// Lower-case, no trailing dot.
pub(crate) fn normalize_host(host: &str) -> String {
    host.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// A host allowed to resolve to private addresses (Hermes: HTTPS to
/// `multimedia.nt.qq.com.cn`). Explicit, never a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedHost {
    pub host: String,
    pub https_only: bool,
}

/// Everything a URL is checked against.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `security.allow_private_urls` / `HERMES_ALLOW_PRIVATE_URLS`: private and
    /// loopback addresses become reachable. Cloud metadata never does.
    pub allow_private: bool,
    /// Exact hosts that may resolve to private addresses even when
    /// `allow_private` is off.
    pub trusted_private_hosts: Vec<TrustedHost>,
    /// `security.website_blocklist`.
    pub blocklist: WebsiteBlocklist,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allow_private: false,
            trusted_private_hosts: vec![TrustedHost {
                host: "multimedia.nt.qq.com.cn".into(),
                https_only: true,
            }],
            blocklist: WebsiteBlocklist::default(),
        }
    }
}

impl Policy {
    /// The policy a server context configures, read as Hermes reads it:
    /// `HERMES_ALLOW_PRIVATE_URLS` (true/1/yes; an explicit false/0/no stops the
    /// lookup), then `security.allow_private_urls`, then the legacy
    /// `browser.allow_private_urls`; plus `security.website_blocklist`.
    pub(crate) fn from_context(ctx: &Context) -> Self {
        let env = ctx
            .env
            .get(envvars::HERMES_ALLOW_PRIVATE_URLS)
            .map(|v| v.trim().to_ascii_lowercase());
        let allow_private = match env.as_deref() {
            Some("true" | "1" | "yes") => true,
            Some("false" | "0" | "no") => false,
            _ => {
                let cfg = ctx.sections();
                cfg.security.allow_private_urls.unwrap_or(false)
                    || cfg.browser.allow_private_urls.unwrap_or(false)
            }
        };
        Policy {
            allow_private,
            blocklist: WebsiteBlocklist::from_context(ctx),
            ..Policy::default()
        }
    }

    /// Whether `host` (reached over `scheme`) may resolve to private addresses.
    pub(crate) fn private_ok(&self, host: &str, scheme: &str) -> bool {
        self.allow_private
            || self
                .trusted_private_hosts
                .iter()
                .any(|t| t.host == host && (!t.https_only || scheme == "https"))
    }

    /// Check one resolved address for `host`.
    pub(crate) fn check_ip(&self, host: &str, scheme: &str, ip: IpAddr) -> Result<(), Blocked> {
        match classify(ip) {
            IpClass::Metadata => Err(Blocked::Metadata {
                host: host.to_string(),
            }),
            IpClass::Private if !self.private_ok(host, scheme) => Err(Blocked::Private {
                host: host.to_string(),
                ip: Some(ip),
            }),
            _ => Ok(()),
        }
    }
}

/// Check a URL without any network I/O: scheme, host, cloud-metadata names,
/// IP-literal hosts (every IPv4 spelling: `url` turns decimal, octal and hex
/// forms into a plain address), and the website blocklist. Hostnames are
/// checked again, against their resolved addresses, at connect time.
pub fn check_url(url: &Url, policy: &Policy) -> Result<(), Blocked> {
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(Blocked::Scheme(scheme.to_string()));
    }
    let host = match url.host() {
        None => return Err(Blocked::NoHost),
        Some(Host::Domain(d)) => {
            let h = normalize_host(d);
            if h.is_empty() {
                return Err(Blocked::NoHost);
            }
            if METADATA_HOSTS.contains(&h.as_str()) {
                return Err(Blocked::Metadata { host: h });
            }
            // A bare number or dotted form the URL parser did not turn into an
            // address is not a name DNS should see either.
            if let Ok(ip) = h.parse::<IpAddr>() {
                policy.check_ip(&h, scheme, ip)?;
            }
            h
        }
        Some(Host::Ipv4(v4)) => {
            let h = v4.to_string();
            policy.check_ip(&h, scheme, IpAddr::V4(v4))?;
            h
        }
        Some(Host::Ipv6(v6)) => {
            let h = v6.to_string();
            policy.check_ip(&h, scheme, IpAddr::V6(v6))?;
            h
        }
    };
    if let Some(b) = policy.blocklist.check_host(&host) {
        return Err(Blocked::Website(b));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Website blocklist (tools/website_policy.py)
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebsiteBlocklist {
    pub(crate) enabled: bool,
    /// (pattern, source) — source is `config` or the shared file's path.
    pub rules: Vec<(String, String)>,
}

/// Hermes' `_normalize_rule`.
pub(crate) fn normalize_rule(rule: &str) -> Option<String> {
    let mut v = rule.trim().to_lowercase();
    if v.is_empty() || v.starts_with('#') {
        return None;
    }
    if let Some(pos) = v.find("://") {
        v = v[pos + 3..].to_string();
        // netloc without userinfo
        if let Some(at) = v.split('/').next().and_then(|n| n.rfind('@')) {
            v = v[at + 1..].to_string();
        }
    }
    let mut v = v.split('/').next().unwrap_or("").trim().to_string();
    while v.ends_with('.') {
        v.pop();
    }
    if let Some(rest) = v.strip_prefix("www.") {
        v = rest.to_string();
    }
    (!v.is_empty()).then_some(v)
}

/// fnmatch with `*`, `?` (no character classes needed for host rules).
fn fnmatch(text: &str, pat: &str) -> bool {
    let t: Vec<char> = text.chars().collect();
    let p: Vec<char> = pat.chars().collect();
    let (mut ti, mut pi) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            ti += 1;
            pi += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

impl WebsiteBlocklist {
    /// Read `security.website_blocklist` from the context's config. A malformed
    /// section fails open with a warning, as Hermes does.
    pub(crate) fn from_context(ctx: &Context) -> Self {
        let Some(section) = &ctx.sections().security.website_blocklist else {
            return Self::default();
        };
        let Some(obj) = section.as_object() else {
            tracing::warn!("security.website_blocklist must be a mapping; blocklist ignored");
            return Self::default();
        };
        let enabled = match obj.get("enabled") {
            None | Some(serde_json::Value::Null) => true,
            Some(serde_json::Value::Bool(b)) => *b,
            Some(_) => {
                tracing::warn!(
                    "security.website_blocklist.enabled must be a boolean; blocklist ignored"
                );
                return Self::default();
            }
        };
        let list = |k: &str| -> Vec<String> {
            obj.get(k)
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        Self::build(
            enabled,
            &list("domains"),
            &list("shared_files"),
            &ctx.home.path,
        )
    }

    pub fn build(enabled: bool, domains: &[String], files: &[String], home: &Path) -> Self {
        let mut rules: Vec<(String, String)> = Vec::new();
        let mut push = |r: String, src: String| {
            if !rules.iter().any(|(p, s)| *p == r && *s == src) {
                rules.push((r, src));
            }
        };
        for d in domains {
            if let Some(r) = normalize_rule(d) {
                push(r, "config".into());
            }
        }
        for f in files {
            if f.trim().is_empty() {
                continue;
            }
            let p = crate::hermes::home::expand_tilde(Path::new(f.trim()));
            let p: PathBuf = if p.is_absolute() { p } else { home.join(p) };
            // A FIFO, device or directory is refused at once, never waited on.
            match crate::fs::read_to_string_capped(&p, crate::fs::CONFIG_CAP) {
                Ok(text) => {
                    for line in text.lines() {
                        let l = line.trim();
                        if l.is_empty() || l.starts_with('#') {
                            continue;
                        }
                        if let Some(r) = normalize_rule(l) {
                            push(r, p.display().to_string());
                        }
                    }
                }
                Err(e) => tracing::warn!("shared blocklist file skipped: {e}"),
            }
        }
        WebsiteBlocklist { enabled, rules }
    }

    /// Hermes' `check_website_access` for an already-extracted host.
    pub fn check_host(&self, host: &str) -> Option<PolicyBlock> {
        if !self.enabled {
            return None;
        }
        let host = normalize_host(host);
        if host.is_empty() {
            return None;
        }
        for (pattern, source) in &self.rules {
            let hit = if pattern.starts_with("*.") {
                fnmatch(&host, pattern)
            } else {
                host == *pattern || host.ends_with(&format!(".{pattern}"))
            };
            if hit {
                return Some(PolicyBlock {
                    host: host.clone(),
                    rule: pattern.clone(),
                    source: source.clone(),
                    message: format!(
                        "Blocked by website policy: '{host}' matched rule '{pattern}' from {source}"
                    ),
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn classifies_addresses() {
        for m in [
            "169.254.169.254",
            "169.254.170.2",
            "169.254.0.1",
            "100.100.100.200",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
        ] {
            assert_eq!(classify(ip(m)), IpClass::Metadata, "{m}");
        }
        // Cloud metadata inside every IPv6 translation and tunnel form is
        // metadata (never allowed), not merely private.
        for m in [
            // NAT64 well-known /96 and local-use 64:ff9b:1::/48 (RFC 6052 layouts).
            "64:ff9b::169.254.169.254",
            "64:ff9b::100.100.100.200",
            "64:ff9b:1::a9fe:a9fe",
            "64:ff9b:1:a9fe:a9:fe00::",
            "64:ff9b:1:0:a9:fea9:fe00:0",
            "64:ff9b:1:a9:fe:a9fe::",
            // SIIT IPv4-translated ::ffff:0:0:0/96.
            "::ffff:0:169.254.169.254",
            "::ffff:0:a9fe:a9fe",
            // IPv4-compatible ::/96.
            "::169.254.169.254",
            "::a9fe:1",
            // Link-local with an embedded 169.254.x.x (plain and ISATAP).
            "fe80::a9fe:a9fe",
            "fe80::5efe:169.254.169.254",
            "febf::a9fe:a9fe",
            // 6to4.
            "2002:a9fe:a9fe::",
            "2002:a9fe:1::abcd",
            // Teredo: client address XOR 0xffffffff, and the server address.
            "2001:0:4136:e378:8000:63bf:5601:5601",
            "2001::ffff:5601:5601",
            "2001:0:a9fe:a9fe::1",
        ] {
            assert_eq!(classify(ip(m)), IpClass::Metadata, "{m}");
        }
        for p in [
            "127.0.0.1",
            "127.1.2.3",
            "10.0.0.1",
            "172.16.5.4",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "198.18.0.1",
            "::",
            "::1",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "2001::1",
            "::ffff:0:10.0.0.1",
            "64:ff9b:1::a00:1",
            "fe80::a00:1",
            "2001:0:4136:e378:8000:63bf:f5ff:fffe",
        ] {
            assert_eq!(classify(ip(p)), IpClass::Private, "{p}");
        }
        for g in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(classify(ip(g)), IpClass::Public, "{g}");
        }
    }

    #[test]
    fn url_literal_forms_are_blocked() {
        let p = Policy::default();
        for u in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://0x7f.1/",
            "http://127.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://10.0.0.1:8080/x",
            "http://0/",
            "https://[fe80::1]/",
        ] {
            let url = Url::parse(u).unwrap();
            assert!(
                matches!(check_url(&url, &p), Err(Blocked::Private { .. })),
                "{u}: {:?}",
                check_url(&url, &p)
            );
        }
        for u in [
            "http://169.254.169.254/latest/meta-data/",
            "http://2852039166/",
            "http://0xa9.0xfe.0xa9.0xfe/",
            "http://[::ffff:169.254.169.254]/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://METADATA.GOOGLE.INTERNAL./",
            "http://metadata.goog/",
            "http://[fd00:ec2::254]/",
            "http://100.100.100.200/",
        ] {
            let url = Url::parse(u).unwrap();
            let allow = Policy {
                allow_private: true,
                ..Policy::default()
            };
            assert!(
                matches!(check_url(&url, &allow), Err(Blocked::Metadata { .. })),
                "{u}"
            );
        }
        for u in ["ftp://example.com/", "file:///etc/passwd", "gopher://x/"] {
            assert!(matches!(
                check_url(&Url::parse(u).unwrap(), &p),
                Err(Blocked::Scheme(_))
            ));
        }
        assert!(check_url(&Url::parse("https://example.com/").unwrap(), &p).is_ok());
        let allow = Policy {
            allow_private: true,
            ..Policy::default()
        };
        assert!(check_url(&Url::parse("http://127.0.0.1:9/").unwrap(), &allow).is_ok());
    }

    #[test]
    fn blocklist_rules_match_like_hermes() {
        assert_eq!(
            normalize_rule("https://www.Example.com/path"),
            Some("example.com".into())
        );
        assert_eq!(normalize_rule("# comment"), None);
        let bl = WebsiteBlocklist::build(
            true,
            &["example.com".into(), "*.tracker.net".into()],
            &[],
            Path::new("/"),
        );
        assert!(bl.check_host("example.com").is_some());
        assert!(bl.check_host("a.b.example.com").is_some());
        assert!(bl.check_host("notexample.com").is_none());
        assert!(bl.check_host("x.tracker.net").is_some());
        assert!(bl.check_host("tracker.net").is_none());
        let b = bl.check_host("EXAMPLE.com.").unwrap();
        assert_eq!(
            b.message,
            "Blocked by website policy: 'example.com' matched rule 'example.com' from config"
        );
        let off = WebsiteBlocklist {
            enabled: false,
            ..bl
        };
        assert!(off.check_host("example.com").is_none());
    }
}
