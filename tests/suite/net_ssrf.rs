//! SSRF corpus for `src/net`: every blocked address form, redirects from a
//! public-looking host to private and metadata targets, DNS answers that
//! change between calls, caps, timeouts, redirect limits, 429 handling.

use std::sync::Arc;
use std::time::Duration;

use hermes_mcp::net::{
    ApiError, Blocked, FetchError, FetchOptions, HttpClient, Limits, Policy, TrustedHost,
    WebsiteBlocklist,
};
use url::Url;

use super::support::fake::*;
use super::support::web::*;

fn client(policy: Policy, lookup: &ScriptedLookup) -> HttpClient {
    HttpClient::new(policy, Arc::new(lookup.clone()), Limits::default()).unwrap()
}

fn strict() -> Policy {
    Policy::default()
}

fn allow_private() -> Policy {
    Policy {
        allow_private: true,
        ..Policy::default()
    }
}

/// `public.test` stands for a public site: it resolves to the loopback test
/// server and is explicitly trusted to do so; nothing else is.
fn public_test_policy() -> Policy {
    let mut p = Policy::default();
    p.trusted_private_hosts.push(TrustedHost {
        host: "public.test".into(),
        https_only: false,
    });
    p
}

async fn fetch(c: &HttpClient, u: &str) -> Result<hermes_mcp::net::Fetched, FetchError> {
    c.fetch(&Url::parse(u).unwrap(), &FetchOptions::default())
        .await
}

#[tokio::test]
async fn every_private_literal_form_is_refused_without_connecting() {
    let srv = TestServer::start(|_| Resp::html("<p>secret</p>"));
    let p = srv.port();
    let lookup = ScriptedLookup::new().with("localhost", &[&["127.0.0.1", "::1"]]);
    let c = client(strict(), &lookup);
    for u in [
        format!("http://127.0.0.1:{p}/"),
        format!("http://2130706433:{p}/"),
        format!("http://0x7f000001:{p}/"),
        format!("http://0177.0.0.1:{p}/"),
        format!("http://0x7f.0.0.1:{p}/"),
        format!("http://127.1:{p}/"),
        format!("http://[::1]:{p}/"),
        format!("http://[::ffff:127.0.0.1]:{p}/"),
        format!("http://[::ffff:7f00:1]:{p}/"),
        format!("http://[64:ff9b::7f00:1]:{p}/"),
        format!("http://localhost:{p}/"),
        format!("http://LOCALHOST.:{p}/"),
        format!("http://0.0.0.0:{p}/"),
        format!("http://10.0.0.1:{p}/"),
        format!("http://192.168.0.1:{p}/"),
        format!("http://172.16.0.1:{p}/"),
        format!("http://100.64.0.1:{p}/"),
        format!("http://224.0.0.1:{p}/"),
        format!("http://240.0.0.1:{p}/"),
        format!("http://[fe80::1]:{p}/"),
        format!("http://[fc00::1]:{p}/"),
    ] {
        match fetch(&c, &u).await {
            Err(FetchError::Blocked(Blocked::Private { .. })) => {}
            other => panic!("{u}: expected a private-address block, got {other:?}"),
        }
    }
    assert_eq!(srv.count(), 0, "no request may reach the loopback server");
}

#[tokio::test]
async fn metadata_is_refused_even_when_private_urls_are_allowed() {
    let lookup = ScriptedLookup::new()
        .with("metadata.internal.test", &[&["169.254.169.254"]])
        .with("mapped.test", &[&["::ffff:169.254.169.254"]])
        .with("alibaba.test", &[&["100.100.100.200"]])
        .with("ecs.test", &[&["169.254.170.2"]]);
    let c = client(allow_private(), &lookup);
    for u in [
        "http://169.254.169.254/latest/meta-data/",
        "http://2852039166/latest/",
        "http://0xa9fea9fe/",
        "http://0251.0376.0251.0376/",
        "http://[::ffff:169.254.169.254]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://169.254.170.2/v2/credentials",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://metadata.goog/",
        "http://Metadata.Google.Internal./",
        "http://metadata.internal.test/",
        "http://mapped.test/",
        "http://alibaba.test/",
        "http://ecs.test/",
    ] {
        match fetch(&c, u).await {
            Err(FetchError::Blocked(Blocked::Metadata { .. })) => {}
            other => panic!("{u}: expected a metadata block, got {other:?}"),
        }
    }
    // The provider-API client keeps the same floor.
    let r = c
        .send_api(
            "test",
            Duration::ZERO,
            c.api().get("http://169.254.169.254/latest/"),
        )
        .await;
    assert!(
        matches!(r, Err(ApiError::Blocked(Blocked::Metadata { .. }))),
        "{r:?}"
    );
    let r = c
        .send_api(
            "test",
            Duration::ZERO,
            c.api().get("http://metadata.internal.test/"),
        )
        .await;
    assert!(
        matches!(r, Err(ApiError::Blocked(Blocked::Metadata { .. }))),
        "{r:?}"
    );
}

#[tokio::test]
async fn non_http_schemes_and_dns_failures_are_refused() {
    let c = client(allow_private(), &ScriptedLookup::new());
    for u in [
        "file:///etc/passwd",
        "ftp://example.com/",
        "gopher://x/",
        "data:text/plain,hi",
    ] {
        assert!(
            matches!(
                fetch(&c, u).await,
                Err(FetchError::Blocked(Blocked::Scheme(_)))
            ),
            "{u}"
        );
    }
    // Fail closed when the name does not resolve.
    assert!(matches!(
        fetch(&c, "http://nowhere.test/").await,
        Err(FetchError::Blocked(Blocked::Dns { .. }))
    ));
}

#[tokio::test]
async fn redirects_to_private_and_metadata_targets_are_refused_on_every_hop() {
    let srv = TestServer::start(move |req| {
        let port = req
            .header("host")
            .unwrap()
            .rsplit(':')
            .next()
            .unwrap()
            .to_string();
        match req.path.as_str() {
            "/ok" => Resp::html("<p>public page</p>"),
            "/secret" => Resp::html("<p>internal secret</p>"),
            "/to-literal" => Resp::redirect(&format!("http://127.0.0.1:{port}/secret")),
            "/to-decimal" => Resp::redirect(&format!("http://2130706433:{port}/secret")),
            "/to-localhost" => Resp::redirect(&format!("http://localhost:{port}/secret")),
            "/to-v6" => Resp::redirect(&format!("http://[::ffff:127.0.0.1]:{port}/secret")),
            "/to-metadata" => Resp::redirect("http://169.254.169.254/latest/meta-data/"),
            "/to-metadata-host" => Resp::redirect("http://metadata.google.internal/"),
            "/to-mapped-metadata" => Resp::redirect("http://[::ffff:169.254.169.254]/"),
            "/to-ftp" => Resp::redirect("ftp://public.test/file"),
            "/to-blocked" => Resp::redirect(&format!("http://ads.blocked.test:{port}/")),
            "/chain" => Resp::redirect("/chain2"),
            "/chain2" => Resp::redirect(&format!("http://public.test:{port}/to-metadata")),
            "/loop" => Resp::redirect("/loop"),
            _ => Resp::new(404, "text/plain", "nope"),
        }
    });
    let p = srv.port();
    let lookup = ScriptedLookup::new()
        .with("public.test", &[&["127.0.0.1"]])
        .with("localhost", &[&["127.0.0.1"]])
        .with("ads.blocked.test", &[&["127.0.0.1"]]);
    let mut policy = public_test_policy();
    policy.blocklist = WebsiteBlocklist::build(
        true,
        &["blocked.test".into()],
        &[],
        std::path::Path::new("/"),
    );
    let c = client(policy, &lookup);
    // The public-looking host itself is reachable.
    let ok = fetch(&c, &format!("http://public.test:{p}/ok"))
        .await
        .unwrap();
    assert_eq!(ok.status, 200);
    assert!(String::from_utf8_lossy(&ok.body).contains("public page"));

    for (path, want) in [
        ("/to-literal", "private"),
        ("/to-decimal", "private"),
        ("/to-localhost", "private"),
        ("/to-v6", "private"),
        ("/to-metadata", "metadata"),
        ("/to-metadata-host", "metadata"),
        ("/to-mapped-metadata", "metadata"),
        ("/chain", "metadata"),
        ("/to-ftp", "scheme"),
        ("/to-blocked", "website"),
    ] {
        let r = fetch(&c, &format!("http://public.test:{p}{path}")).await;
        let ok = match (&r, want) {
            (Err(FetchError::Blocked(Blocked::Private { .. })), "private") => true,
            (Err(FetchError::Blocked(Blocked::Metadata { .. })), "metadata") => true,
            (Err(FetchError::Blocked(Blocked::Scheme(_))), "scheme") => true,
            (Err(FetchError::Blocked(Blocked::Website(b))), "website") => {
                b.rule == "blocked.test" && b.host == "ads.blocked.test"
            }
            _ => false,
        };
        assert!(ok, "{path}: expected {want}, got {r:?}");
    }
    assert!(
        !srv.paths().iter().any(|p| p == "/secret"),
        "a redirect reached the internal target: {:?}",
        srv.paths()
    );
    assert!(matches!(
        fetch(&c, &format!("http://public.test:{p}/loop")).await,
        Err(FetchError::TooManyRedirects(10))
    ));

    // With private URLs allowed the loopback target is fine, metadata still is not.
    let c2 = client(allow_private(), &lookup);
    let r = fetch(&c2, &format!("http://127.0.0.1:{p}/to-literal"))
        .await
        .unwrap();
    assert!(String::from_utf8_lossy(&r.body).contains("internal secret"));
    assert_eq!(r.final_url.path(), "/secret");
    assert!(matches!(
        fetch(&c2, &format!("http://127.0.0.1:{p}/to-metadata")).await,
        Err(FetchError::Blocked(Blocked::Metadata { .. }))
    ));
}

#[tokio::test]
async fn dns_answers_that_change_between_calls_cannot_slip_through() {
    let srv = TestServer::start(|_| Resp::html("<p>served</p>"));
    let p = srv.port();
    // First answer loopback (allowed here), every later answer cloud metadata.
    let lookup = ScriptedLookup::new().with("rebind.test", &[&["127.0.0.1"], &["169.254.169.254"]]);
    let c = client(allow_private(), &lookup);
    let r = fetch(&c, &format!("http://rebind.test:{p}/a"))
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    // Check and connect used one lookup: there is no second lookup to rebind.
    assert_eq!(lookup.calls("rebind.test"), 1);
    assert_eq!(srv.count(), 1);
    // A fresh connection resolves again and gets the metadata answer: refused.
    let c_fresh = client(allow_private(), &lookup);
    let r = fetch(&c_fresh, &format!("http://rebind.test:{p}/b")).await;
    assert!(
        matches!(r, Err(FetchError::Blocked(Blocked::Metadata { .. }))),
        "{r:?}"
    );
    assert_eq!(srv.count(), 1, "the rebound answer was connected to");

    // Strict policy: an answer set with any private address is refused as a
    // whole (a public-looking first answer does not let the private one in).
    let mixed = ScriptedLookup::new().with("mixed.test", &[&["93.184.215.14", "127.0.0.1"]]);
    let c = client(strict(), &mixed);
    assert!(matches!(
        fetch(&c, &format!("http://mixed.test:{p}/")).await,
        Err(FetchError::Blocked(Blocked::Private { .. }))
    ));
    // Public first, private second: the second lookup (a new connection) is checked too.
    let flip = ScriptedLookup::new().with("flip.test", &[&["127.0.0.1"], &["10.0.0.5"]]);
    let mut pol = strict();
    pol.trusted_private_hosts.clear();
    let c = client(pol, &flip);
    assert!(matches!(
        fetch(&c, &format!("http://flip.test:{p}/")).await,
        Err(FetchError::Blocked(Blocked::Private { .. }))
    ));
    assert_eq!(srv.count(), 1);
}

#[tokio::test]
async fn size_cap_and_timeouts_are_enforced() {
    let srv = TestServer::start(|req| match req.path.as_str() {
        "/big" => Resp::new(200, "text/plain", vec![b'x'; 3 * 1024 * 1024]),
        "/slow" => Resp::html("late").delayed(Duration::from_secs(5)),
        _ => Resp::html("ok"),
    });
    let lookup = ScriptedLookup::new();
    let limits = Limits {
        total: Duration::from_millis(800),
        ..Limits::default()
    };
    let c = HttpClient::new(allow_private(), Arc::new(lookup), limits).unwrap();
    let r = c
        .fetch(
            &Url::parse(&srv.url("/big")).unwrap(),
            &FetchOptions {
                max_bytes: Some(1024 * 1024),
                ..Default::default()
            },
        )
        .await;
    assert!(matches!(r, Err(FetchError::TooLarge(_))), "{r:?}");
    let r = fetch(&c, &srv.url("/slow")).await;
    assert!(matches!(r, Err(FetchError::Timeout(_))), "{r:?}");
}

#[tokio::test]
async fn api_429_honours_retry_after_then_gives_up_with_a_clear_error() {
    let srv = TestServer::start(|req| match req.path.as_str() {
        "/flaky" if req.n == 1 => {
            Resp::json(429, serde_json::json!({"error":"slow down"})).header("Retry-After", "1")
        }
        "/flaky" => Resp::json(200, serde_json::json!({"ok": true})),
        "/never" => Resp::json(429, serde_json::json!({})).header("Retry-After", "3600"),
        _ => Resp::json(404, serde_json::json!({})),
    });
    let c = client(strict(), &ScriptedLookup::new());
    // Configured endpoints may be loopback (self-hosted SearXNG, Firecrawl).
    let r = c
        .send_api(
            "flaky-provider",
            Duration::ZERO,
            c.api().get(srv.url("/flaky")),
        )
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    let reqs = srv.reqs();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].at.duration_since(reqs[0].at) >= Duration::from_millis(900));
    let r = c
        .send_api(
            "never-provider",
            Duration::ZERO,
            c.api().get(srv.url("/never")),
        )
        .await;
    match r {
        Err(e @ ApiError::RateLimited { .. }) => {
            assert!(e.to_string().contains("retry after 3600 s"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(srv.count(), 3, "a long Retry-After is not waited out");
}

/// `security.website_blocklist.shared_files` are read through `crate::fs`:
/// a FIFO, a link to `/dev/zero`, a directory and an oversized file are
/// skipped at once (a warning each), and the regular file after them still
/// counts. Before, the FIFO blocked the first web call forever.
#[test]
fn blocklist_files_that_are_not_regular_files_are_skipped_without_blocking() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo.txt");
    super::support::fs::mkfifo(&fifo);
    std::os::unix::fs::symlink("/dev/zero", d.path().join("zero.txt")).unwrap();
    std::fs::create_dir(d.path().join("dir.txt")).unwrap();
    let huge = std::fs::File::create(d.path().join("huge.txt")).unwrap();
    huge.set_len((16 << 20) + 1).unwrap();
    std::fs::write(d.path().join("good.txt"), "# shared\nads.example\n").unwrap();
    let files: Vec<String> = ["fifo.txt", "zero.txt", "dir.txt", "huge.txt", "good.txt"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let home = d.path().to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(WebsiteBlocklist::build(true, &[], &files, &home));
    });
    let list = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("reading the blocklist files blocked (a FIFO or device was read)");
    let good = d.path().join("good.txt").display().to_string();
    assert_eq!(list.rules, vec![("ads.example".to_string(), good)]);
    assert!(list.check_host("x.ads.example").is_some());
}
