//! web_search / web_extract against loopback servers speaking each provider's
//! wire format, the built-in extractor, and the MCP-level behaviour.

use std::time::Duration;

use hermes_mcp::hermes::Context;
use hermes_mcp::hermes::{Env, HermesConfig, HermesHome};
use hermes_mcp::toolsets::web::providers::{Backend, extract_backend, search_backend};
use serde_json::{Value, json};

use super::support::common::{RawClient, TestEnv, is_error, poll_until, result_json};
use super::support::fake::*;
use super::support::serve::Serve;
use super::support::web::*;

fn web(v: &Value) -> Vec<Value> {
    v["data"]["web"].as_array().cloned().unwrap_or_default()
}

// ---------------------------------------------------------------- search --

#[tokio::test]
async fn firecrawl_search_speaks_v2_and_reports_errors() {
    let srv = TestServer::start(|req| {
        let n = req.n;
        assert_eq!(req.path, "/v2/search");
        match n {
            1 => Resp::json(
                200,
                json!({"success": true, "data": {"web": [
                    {"url": "https://a.example/", "title": "A", "description": "first", "position": 1, "category": "x"},
                    {"url": "https://b.example/", "title": "B", "description": "second", "position": 2}
                ]}}),
            ),
            2 => Resp::json(
                401,
                json!({"success": false, "error": "Unauthorized: Invalid token"}),
            ),
            3 => {
                Resp::json(429, json!({"error": "Rate limit exceeded"})).header("Retry-After", "0")
            }
            _ => Resp::json(200, json!({"success": true, "data": {"web": []}})),
        }
    });
    let h = harness(
        "web: {backend: firecrawl}",
        &[
            ("FIRECRAWL_API_URL", &srv.base()),
            ("FIRECRAWL_API_KEY", "fc-testkey123456"),
        ],
    );
    let out = h
        .call("web_search", json!({"query": "rust lang", "limit": 2}))
        .await;
    assert!(!out.is_error);
    let v = out_json(&out);
    assert_eq!(v["success"], true);
    assert_eq!(
        web(&v),
        vec![
            json!({"title": "A", "url": "https://a.example/", "description": "first", "position": 1}),
            json!({"title": "B", "url": "https://b.example/", "description": "second", "position": 2}),
        ]
    );
    let r = &srv.reqs()[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.header("authorization"), Some("Bearer fc-testkey123456"));
    assert_eq!(r.json_or_null(), json!({"query": "rust lang", "limit": 2}));
    let out = h.call("web_search", json!({"query": "x"})).await;
    assert!(out.is_error);
    let v = out_json(&out);
    assert_eq!(v["success"], false);
    assert_eq!(
        v["error"],
        "Firecrawl search failed: HTTP 401: Unauthorized: Invalid token"
    );
    // 429 with Retry-After: 0 is retried once and succeeds.
    let out = h.call("web_search", json!({"query": "y"})).await;
    assert!(!out.is_error, "{:?}", out_json(&out));
    assert_eq!(srv.count(), 4);
}

#[tokio::test]
async fn self_hosted_firecrawl_needs_no_key() {
    let srv = TestServer::start(|_| Resp::json(200, json!({"success": true, "data": {"web": []}})));
    let h = harness("", &[("FIRECRAWL_API_URL", &format!("{}/", srv.base()))]);
    let out = h.call("web_search", json!({"query": "q"})).await;
    assert!(!out.is_error);
    let r = &srv.reqs()[0];
    assert_eq!(r.path, "/v2/search");
    assert_eq!(r.header("authorization"), None);
}

#[tokio::test]
async fn tavily_search_wire_format() {
    let srv = TestServer::start(|req| {
        let n = req.n;
        assert_eq!(req.path, "/search");
        if n == 1 {
            Resp::json(
                200,
                json!({"query": "q", "results": [
                {"title": "T1", "url": "https://t1/", "content": "c1", "score": 0.9},
                {"title": "T2", "url": "https://t2/", "content": "c2", "score": 0.8}]}),
            )
        } else {
            Resp::json(400, json!({"detail": {"error": "Invalid API key"}}))
        }
    });
    let h = harness(
        "",
        &[
            ("TAVILY_API_KEY", "tvly-testkey0000"),
            ("TAVILY_BASE_URL", &srv.base()),
        ],
    );
    let v = out_json(
        &h.call("web_search", json!({"query": "q", "limit": 50}))
            .await,
    );
    assert_eq!(
        web(&v)[1],
        json!({"title": "T2", "url": "https://t2/", "description": "c2", "position": 2})
    );
    let r = &srv.reqs()[0];
    assert_eq!(r.header("authorization"), Some("Bearer tvly-testkey0000"));
    let body = r.json_or_null();
    assert_eq!(body["query"], "q");
    assert_eq!(body["max_results"], 20, "Tavily caps max_results at 20");
    assert_eq!(body["include_raw_content"], false);
    let out = h.call("web_search", json!({"query": "q"})).await;
    assert!(out.is_error);
    assert_eq!(
        out_json(&out)["error"],
        "Tavily search failed: HTTP 400: Invalid API key"
    );
}

#[tokio::test]
async fn exa_search_wire_format() {
    let srv = TestServer::start(|req| {
        assert_eq!(req.path, "/search");
        Resp::json(
            200,
            json!({"requestId": "r", "results": [
            {"id": "1", "title": "E1", "url": "https://e1/", "highlights": ["h one", "h two"]},
            {"id": "2", "title": null, "url": "https://e2/"}]}),
        )
    });
    let h = harness(
        &format!("web: {{exa: {{base_url: '{}'}}}}", srv.base()),
        &[("EXA_API_KEY", "exa-key")],
    );
    let v = out_json(
        &h.call("web_search", json!({"query": "neural", "limit": 3}))
            .await,
    );
    assert_eq!(web(&v)[0]["description"], "h one h two");
    assert_eq!(
        web(&v)[1],
        json!({"title": "", "url": "https://e2/", "description": "", "position": 2})
    );
    let r = &srv.reqs()[0];
    assert_eq!(r.header("x-api-key"), Some("exa-key"));
    assert_eq!(
        r.json_or_null(),
        json!({"query": "neural", "numResults": 3, "contents": {"highlights": true}})
    );
}

#[tokio::test]
async fn parallel_search_wire_format() {
    let srv = TestServer::start(|req| {
        assert_eq!(req.path, "/v1beta/search");
        Resp::json(
            200,
            json!({"search_id": "s", "results": [
            {"url": "https://p1/", "title": "P1", "excerpts": ["x", "y"]}]}),
        )
    });
    let h = harness(
        &format!("web: {{parallel: {{base_url: '{}'}}}}", srv.base()),
        &[
            ("PARALLEL_API_KEY", "par-key"),
            ("PARALLEL_SEARCH_MODE", "fast"),
        ],
    );
    let v = out_json(
        &h.call("web_search", json!({"query": "q", "limit": 30}))
            .await,
    );
    assert_eq!(
        web(&v),
        vec![json!({"title": "P1", "url": "https://p1/", "description": "x y", "position": 1})]
    );
    let r = &srv.reqs()[0];
    assert_eq!(r.header("x-api-key"), Some("par-key"));
    assert_eq!(r.header("parallel-beta"), Some("search-extract-2025-10-10"));
    assert_eq!(
        r.json_or_null(),
        json!({"objective": "q", "search_queries": ["q"], "mode": "fast", "max_results": 20})
    );
}

#[tokio::test]
async fn searxng_search_sorts_by_score_and_limits() {
    let srv = TestServer::start(|req| {
        let n = req.n;
        assert_eq!(req.path, "/search");
        if n > 1 {
            return Resp::new(503, "text/plain", "down");
        }
        Resp::json(
            200,
            json!({"results": [
            {"title": "low", "url": "https://low/", "content": "l", "score": 0.1},
            {"title": "high", "url": "https://high/", "content": "h", "score": 3.5},
            {"title": "mid", "url": "https://mid/", "content": "m", "score": 1}]}),
        )
    });
    let h = harness("", &[("SEARXNG_URL", &srv.base())]);
    let v = out_json(
        &h.call("web_search", json!({"query": "a b", "limit": 2}))
            .await,
    );
    let titles: Vec<_> = web(&v).iter().map(|r| r["title"].clone()).collect();
    assert_eq!(titles, vec![json!("high"), json!("mid")]);
    let q = srv.reqs()[0].query_pairs();
    assert_eq!(q["q"], "a b");
    assert_eq!(q["format"], "json");
    assert_eq!(q["pageno"], "1");
    let out = h.call("web_search", json!({"query": "x"})).await;
    assert_eq!(out_json(&out)["error"], "SearXNG returned HTTP 503");
}

#[tokio::test]
async fn brave_search_is_paced_and_reports_rate_limits() {
    let srv = TestServer::start(|req| {
        let n = req.n;
        assert_eq!(req.path, "/res/v1/web/search");
        if n <= 2 {
            Resp::json(
                200,
                json!({"type": "search", "web": {"results": [
                {"title": "B1", "url": "https://b1/", "description": "d1"}]}}),
            )
        } else {
            Resp::json(429, json!({"type": "ErrorResponse"})).header("Retry-After", "120")
        }
    });
    let h = harness(
        &format!(
            "web: {{search_backend: brave-free, brave: {{base_url: '{}'}}}}",
            srv.base()
        ),
        &[
            ("BRAVE_SEARCH_API_KEY", "brave-key"),
            ("TAVILY_API_KEY", "tvly-x"),
        ],
    );
    for q in ["one", "two"] {
        let v = out_json(&h.call("web_search", json!({"query": q, "limit": 40})).await);
        assert_eq!(web(&v)[0]["title"], "B1");
    }
    let reqs = srv.reqs();
    assert_eq!(reqs[0].header("x-subscription-token"), Some("brave-key"));
    assert_eq!(reqs[0].query_pairs()["count"], "20");
    assert_eq!(reqs[0].query_pairs()["q"], "one");
    assert!(
        reqs[1].at.duration_since(reqs[0].at) >= Duration::from_millis(900),
        "Brave's free tier allows one request per second"
    );
    let out = h.call("web_search", json!({"query": "three"})).await;
    assert!(out.is_error);
    let e = out_json(&out)["error"].as_str().unwrap().to_string();
    assert!(
        e.contains("rate limited (HTTP 429)") && e.contains("retry after 120 s"),
        "{e}"
    );
}

const DDG_PAGE: &str = r#"<!DOCTYPE html><html><body><div id="links" class="results">
<div class="result results_links results_links_deep result--ad"><div class="links_main"><h2 class="result__title"><a class="result__a" href="https://duckduckgo.com/y.js?ad_domain=x">Sponsored</a></h2></div></div>
<div class="result results_links results_links_deep web-result "><div class="links_main links_deep result__body">
<h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdoc.rust-lang.org%2Fbook%2F&amp;rut=1">The Rust <b>Programming</b> Language</a></h2>
<a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">by Steve Klabnik and Carol Nichols</a></div></div>
<div class="result results_links results_links_deep web-result "><div class="links_main links_deep result__body">
<h2 class="result__title"><a rel="nofollow" class="result__a" href="https://www.rust-lang.org/">Rust</a></h2>
<a class="result__snippet" href="x">A language empowering everyone</a></div></div>
</div></body></html>"#;

#[tokio::test]
async fn keyless_default_is_duckduckgo_html() {
    let srv = TestServer::start(|req| {
        let n = req.n;
        assert_eq!(req.path, "/html/");
        if n == 1 {
            Resp::html(DDG_PAGE)
        } else {
            Resp::new(
                202,
                "text/html",
                "<html><div class='anomaly-modal'></div></html>",
            )
        }
    });
    let h = harness(
        &format!(
            "web: {{ddgs: {{base_url: '{}', min_interval: 0}}}}",
            srv.base()
        ),
        &[],
    );
    let out = h.call("web_search", json!({"query": "rust book"})).await;
    assert!(!out.is_error, "{:?}", out_json(&out));
    assert_eq!(
        web(&out_json(&out)),
        vec![
            json!({"title": "The Rust Programming Language", "url": "https://doc.rust-lang.org/book/", "description": "by Steve Klabnik and Carol Nichols", "position": 1}),
            json!({"title": "Rust", "url": "https://www.rust-lang.org/", "description": "A language empowering everyone", "position": 2}),
        ]
    );
    let r = &srv.reqs()[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.form()["q"], "rust book");
    assert!(r.header("user-agent").unwrap().starts_with("Mozilla/5.0"));
    let out = h.call("web_search", json!({"query": "again"})).await;
    assert!(out.is_error);
    assert!(
        out_json(&out)["error"]
            .as_str()
            .unwrap()
            .contains("HTTP 202")
    );
}

fn ctx(yaml: &str, env: &[(&str, &str)]) -> Context {
    Context::with_parts(
        HermesHome {
            path: "/nonexistent".into(),
            explicit: true,
        },
        Env::from_map(env.iter().map(|(k, v)| (k.to_string(), v.to_string()))),
        HermesConfig::from_yaml(yaml).unwrap(),
    )
}

#[test]
fn backends_are_chosen_as_hermes_chooses() {
    // Nothing configured: keyless DuckDuckGo search, built-in extraction.
    let c = ctx("", &[]);
    assert_eq!(search_backend(&c), Backend::Ddgs);
    assert_eq!(extract_backend(&c), Backend::Builtin);
    // Auto order: tavily, exa, parallel, firecrawl, searxng, brave, ddgs.
    let c = ctx(
        "",
        &[
            ("BRAVE_SEARCH_API_KEY", "b"),
            ("EXA_API_KEY", "e"),
            ("SEARXNG_URL", "http://s"),
        ],
    );
    assert_eq!(search_backend(&c), Backend::Exa);
    assert_eq!(extract_backend(&c), Backend::Exa);
    let c = ctx(
        "",
        &[("SEARXNG_URL", "http://s"), ("BRAVE_SEARCH_API_KEY", "b")],
    );
    assert_eq!(search_backend(&c), Backend::Searxng);
    assert_eq!(
        extract_backend(&c),
        Backend::Builtin,
        "search-only backends extract with the built-in extractor"
    );
    // web.backend wins without an availability check; the capability keys win when available.
    let c = ctx("web: {backend: parallel}", &[("TAVILY_API_KEY", "t")]);
    assert_eq!(search_backend(&c), Backend::Parallel);
    let c = ctx(
        "web: {backend: tavily, search_backend: searxng, extract_backend: firecrawl}",
        &[("TAVILY_API_KEY", "t"), ("SEARXNG_URL", "http://s")],
    );
    assert_eq!(search_backend(&c), Backend::Searxng);
    assert_eq!(
        extract_backend(&c),
        Backend::Tavily,
        "firecrawl is not configured"
    );
    let c = ctx(
        "web: {extract_backend: builtin}",
        &[("TAVILY_API_KEY", "t")],
    );
    assert_eq!(extract_backend(&c), Backend::Builtin);
    assert_eq!(search_backend(&c), Backend::Tavily);
    let c = ctx(
        "web: {backend: firecrawl}",
        &[("FIRECRAWL_API_URL", "http://f")],
    );
    assert_eq!(extract_backend(&c), Backend::Firecrawl);
}

#[tokio::test]
async fn missing_key_for_the_configured_backend_says_what_to_set() {
    let h = harness("web: {backend: tavily}", &[]);
    let out = h.call("web_search", json!({"query": "q"})).await;
    assert!(out.is_error);
    assert!(
        out_json(&out)["error"]
            .as_str()
            .unwrap()
            .contains("TAVILY_API_KEY")
    );
}

// --------------------------------------------------------------- extract --

fn results(o: &hermes_mcp::server::ToolOutput) -> Vec<Value> {
    out_json(o)["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn firecrawl_extract_scrapes_each_url_and_rechecks_the_landing_url() {
    let srv = TestServer::start(|req| {
        assert_eq!(req.path, "/v2/scrape");
        let url = req.json_or_null()["url"].as_str().unwrap().to_string();
        if url.contains("redirects") {
            return Resp::json(
                200,
                json!({"success": true, "data": {"markdown": "meta", "metadata": {"title": "M", "sourceURL": url, "url": "http://169.254.169.254/latest/"}}}),
            );
        }
        if url.contains("broken") {
            return Resp::json(500, json!({"success": false, "error": "Failed to scrape"}));
        }
        Resp::json(
            200,
            json!({"success": true, "data": {"markdown": format!("# Page\nbody of {url}"), "metadata": {"title": "Title", "sourceURL": url, "statusCode": 200}}}),
        )
    });
    let lookup = ScriptedLookup::new()
        .with("a.example", &[&["93.184.215.14"]])
        .with("redirects.example", &[&["93.184.215.14"]])
        .with("broken.example", &[&["93.184.215.14"]]);
    let h = harness_with(
        "security: {website_blocklist: {enabled: true, domains: [blocked.example]}}",
        &[
            ("FIRECRAWL_API_URL", &srv.base()),
            ("FIRECRAWL_API_KEY", "fc-k"),
        ],
        hermes_mcp::toolsets::web::WebOptions {
            lookup: std::sync::Arc::new(lookup),
            ..Default::default()
        },
    );
    let out = h
        .call(
            "web_extract",
            json!({"urls": ["https://a.example/x", "https://www.blocked.example/p", "https://redirects.example/", "https://broken.example/"]}),
        )
        .await;
    let r = results(&out);
    assert_eq!(r.len(), 4);
    assert_eq!(r[0]["title"], "Title");
    assert_eq!(r[0]["content"], "# Page\nbody of https://a.example/x");
    assert_eq!(r[0]["error"], Value::Null);
    assert_eq!(
        r[1]["error"],
        "Blocked by website policy: 'www.blocked.example' matched rule 'blocked.example' from config"
    );
    assert_eq!(
        r[1]["blocked_by_policy"],
        json!({"host": "www.blocked.example", "rule": "blocked.example", "source": "config"})
    );
    assert!(
        r[2]["error"]
            .as_str()
            .unwrap()
            .starts_with("Blocked: URL targets a cloud metadata endpoint")
    );
    assert_eq!(r[2]["content"], "");
    assert_eq!(
        r[3]["error"],
        "Firecrawl scrape failed: HTTP 500: Failed to scrape"
    );
    // The blocked URL never reached the provider.
    let sent: Vec<String> = srv
        .reqs()
        .iter()
        .map(|r| r.json_or_null()["url"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sent.len(), 3);
    assert!(!sent.iter().any(|u| u.contains("blocked")));
    assert_eq!(srv.reqs()[0].json_or_null()["formats"], json!(["markdown"]));
    assert_eq!(srv.reqs()[0].header("authorization"), Some("Bearer fc-k"));
}

#[tokio::test]
async fn tavily_extract_restores_input_order_and_reports_failures() {
    let srv = TestServer::start(|req| {
        assert_eq!(req.path, "/extract");
        Resp::json(
            200,
            json!({
            "results": [{"url": "https://two.example/", "raw_content": "second page"},
                        {"url": "https://one.example/", "raw_content": "first page ![x](data:image/png;base64,iVBORw0KGgo=)"}],
            "failed_results": [{"url": "https://three.example/", "error": "timeout"}]}),
        )
    });
    let lookup = ScriptedLookup::new()
        .with("one.example", &[&["93.184.215.14"]])
        .with("two.example", &[&["93.184.215.14"]])
        .with("three.example", &[&["93.184.215.14"]]);
    let h = harness_with(
        "",
        &[
            ("TAVILY_API_KEY", "tvly-k"),
            ("TAVILY_BASE_URL", &srv.base()),
        ],
        hermes_mcp::toolsets::web::WebOptions {
            lookup: std::sync::Arc::new(lookup),
            ..Default::default()
        },
    );
    let out = h
        .call("web_extract", json!({"urls": ["https://one.example/", "http://127.0.0.1/admin", "https://two.example/", "https://three.example/", " "]}))
        .await;
    let r = results(&out);
    assert_eq!(r[0]["content"], "first page [IMAGE: x]");
    assert_eq!(
        r[1]["error"],
        "Blocked: URL targets a private or internal network address"
    );
    assert_eq!(r[2]["content"], "second page");
    assert_eq!(r[3]["error"], "timeout");
    assert!(
        r[4]["error"]
            .as_str()
            .unwrap()
            .starts_with("Invalid URL item at index 4")
    );
    let body = srv.reqs()[0].json_or_null();
    assert_eq!(
        body["urls"],
        json!([
            "https://one.example/",
            "https://two.example/",
            "https://three.example/"
        ])
    );
    assert_eq!(srv.reqs()[0].header("authorization"), Some("Bearer tvly-k"));
}

#[tokio::test]
async fn exa_and_parallel_extract_wire_formats() {
    let srv = TestServer::start(|req| match req.path.as_str() {
        "/contents" => Resp::json(
            200,
            json!({
            "results": [{"id": "https://ok.example/", "url": "https://ok.example/", "title": "OK", "text": "exa text"}],
            "statuses": [{"id": "https://ok.example/", "status": "success"},
                         {"id": "https://gone.example/", "status": "error", "error": {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404}}]}),
        ),
        "/v1beta/extract" => Resp::json(
            200,
            json!({
            "extract_id": "e", "results": [{"url": "https://ok.example/", "title": "OK", "full_content": null, "excerpts": ["ex1", "ex2"]}],
            "errors": [{"url": "https://gone.example/", "error_type": "fetch_error", "http_status_code": 404, "content": null}]}),
        ),
        _ => Resp::json(404, json!({})),
    });
    let lookup = ScriptedLookup::new()
        .with("ok.example", &[&["93.184.215.14"]])
        .with("gone.example", &[&["93.184.215.14"]]);
    let opts = hermes_mcp::toolsets::web::WebOptions {
        lookup: std::sync::Arc::new(lookup),
        ..Default::default()
    };
    let h = harness_with(
        &format!(
            "web: {{extract_backend: exa, exa: {{base_url: '{}'}}}}",
            srv.base()
        ),
        &[("EXA_API_KEY", "exa-k")],
        opts.clone(),
    );
    let r = results(
        &h.call(
            "web_extract",
            json!({"urls": ["https://gone.example/", "https://ok.example/"]}),
        )
        .await,
    );
    assert_eq!(r[0]["error"], "Exa: CRAWL_NOT_FOUND (HTTP 404)");
    assert_eq!(r[1]["content"], "exa text");
    assert_eq!(r[1]["title"], "OK");
    let req = &srv.reqs()[0];
    assert_eq!(req.header("x-api-key"), Some("exa-k"));
    assert_eq!(
        req.json_or_null(),
        json!({"urls": ["https://gone.example/", "https://ok.example/"], "text": true})
    );

    let h = harness_with(
        &format!(
            "web: {{extract_backend: parallel, parallel: {{base_url: '{}'}}}}",
            srv.base()
        ),
        &[("PARALLEL_API_KEY", "par-k")],
        opts,
    );
    let r = results(
        &h.call(
            "web_extract",
            json!({"urls": ["https://ok.example/", "https://gone.example/"]}),
        )
        .await,
    );
    assert_eq!(r[0]["content"], "ex1\n\nex2");
    assert_eq!(r[1]["error"], "Parallel: fetch_error (HTTP 404)");
    let req = &srv.reqs()[1];
    assert_eq!(
        req.header("parallel-beta"),
        Some("search-extract-2025-10-10")
    );
    assert_eq!(req.json_or_null()["full_content"], true);
}

const ARTICLE: &str = r#"<!DOCTYPE html><html><head><title>Fallback title</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> <a href="/shop">Shop</a></nav>
<article><h1>The Article Heading</h1>
<p>Readability keeps this first paragraph because it is long enough and full of words, commas, and sentences that look like prose.</p>
<p>A second paragraph adds more text so the content score is comfortably above the threshold, with <a href="https://example.org/link">a link</a> inside.</p>
<p>An inline image <img alt="Chart" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="> and a third sentence to be safe, because readability wants at least a few hundred characters.</p>
</article><footer>Copyright footer text</footer></body></html>"#;

#[tokio::test]
async fn builtin_extractor_handles_html_text_pdf_and_errors() {
    let pdf = make_pdf("Hello from a PDF document");
    let srv = Routes::new()
        .on("GET", "/article", Resp::html(ARTICLE))
        .on(
            "GET",
            "/notes.txt",
            Resp::new(
                200,
                "text/plain; charset=windows-1252",
                b"caf\xe9 notes".to_vec(),
            ),
        )
        .on("GET", "/doc.pdf", Resp::new(200, "application/pdf", pdf))
        .on(
            "GET",
            "/bad.pdf",
            Resp::new(
                200,
                "application/pdf",
                b"%PDF-1.4\n1 0 obj garbage %%EOF".to_vec(),
            ),
        )
        .on(
            "GET",
            "/image.png",
            Resp::new(200, "image/png", b"\x89PNG\r\n".to_vec()),
        )
        .on("GET", "/moved", Resp::redirect("/article"))
        .otherwise(|_| Resp::new(404, "text/html", "<h1>Not here</h1>"))
        .start();
    let h = harness("", &[("HERMES_ALLOW_PRIVATE_URLS", "1")]);
    let out = h
        .call("web_extract", json!({"urls": [srv.url("/moved"), srv.url("/notes.txt"), srv.url("/doc.pdf"), srv.url("/missing"), srv.url("/image.png")]}))
        .await;
    assert!(!out.is_error);
    let r = results(&out);
    assert_eq!(r[0]["url"], srv.url("/moved"));
    assert_eq!(r[0]["title"], "Fallback title");
    let md = r[0]["content"].as_str().unwrap();
    assert!(
        md.contains("Readability keeps this first paragraph"),
        "{md}"
    );
    assert!(md.contains("[a link](https://example.org/link)"), "{md}");
    assert!(md.contains("[IMAGE: Chart]"), "{md}");
    assert!(!md.contains("base64"), "{md}");
    assert!(!md.contains("Shop"), "navigation is not content: {md}");
    assert_eq!(r[1]["content"], "café notes");
    assert!(
        r[2]["content"]
            .as_str()
            .unwrap()
            .contains("Hello from a PDF document"),
        "{}",
        r[2]
    );
    assert_eq!(r[2]["error"], Value::Null);
    assert!(
        r[3]["error"]
            .as_str()
            .unwrap()
            .starts_with("HTTP 404 Not Found fetching"),
        "{}",
        r[3]
    );
    assert!(
        r[4]["error"]
            .as_str()
            .unwrap()
            .starts_with("Unsupported content type image/png")
    );

    // A malformed PDF fails its URL only; the server keeps working.
    let out = h
        .call(
            "web_extract",
            json!({"urls": [srv.url("/bad.pdf"), srv.url("/notes.txt")]}),
        )
        .await;
    let r = results(&out);
    assert!(r[0]["error"].as_str().unwrap().contains("PDF"), "{}", r[0]);
    assert_eq!(r[1]["content"], "café notes");
}

#[tokio::test]
async fn builtin_extractor_applies_every_guard() {
    let srv = TestServer::start(|req| match req.path.as_str() {
        "/to-metadata" => Resp::redirect("http://169.254.169.254/latest/meta-data/"),
        _ => Resp::html("<p>internal</p>"),
    });
    // No allowance: loopback is private.
    let h = harness("", &[]);
    let out = h
        .call("web_extract", json!({"urls": [srv.url("/x")]}))
        .await;
    assert!(out.is_error, "every URL failed");
    assert_eq!(
        results(&out)[0]["error"],
        "Blocked: URL targets a private or internal network address"
    );
    assert_eq!(srv.count(), 0);
    // Whole-call blocks: secrets and credential-like parameters.
    let out = h
        .call(
            "web_extract",
            json!({"urls": ["https://example.com/?q=sk-abcdefghijklmnopqrstu"]}),
        )
        .await;
    assert_eq!(
        out_json(&out),
        json!({"success": false, "error": "Blocked: URL contains what appears to be an API key or token. Secrets must not be sent in URLs."})
    );
    let out = h
        .call(
            "web_extract",
            json!({"urls": ["https://example.com/a", "https://example.com/cb?access_token=abc"]}),
        )
        .await;
    assert!(
        out_json(&out)["error"]
            .as_str()
            .unwrap()
            .starts_with("Blocked: URL contains a credential-like query parameter (access_token).")
    );
    // Allowance on: loopback works, metadata via redirect still refused, blocklist applies.
    let h = harness(
        "security: {allow_private_urls: true, website_blocklist: {domains: ['*.tracker.test']}}",
        &[],
    );
    let r = results(&h.call("web_extract", json!({"urls": [srv.url("/ok"), srv.url("/to-metadata"), "http://x.tracker.test/", "file:///etc/passwd"]})).await);
    assert_eq!(r[0]["content"], "internal");
    assert_eq!(
        r[1]["error"],
        "Blocked: URL targets a cloud metadata endpoint"
    );
    assert_eq!(r[2]["blocked_by_policy"]["rule"], "*.tracker.test");
    assert_eq!(
        r[3]["error"],
        "Blocked: only http and https URLs can be fetched (got 'file')"
    );
    // HERMES_ALLOW_PRIVATE_URLS=false beats the config, as in Hermes.
    let h = harness(
        "security: {allow_private_urls: true}",
        &[("HERMES_ALLOW_PRIVATE_URLS", "false")],
    );
    assert!(
        h.call("web_extract", json!({"urls": [srv.url("/ok")]}))
            .await
            .is_error
    );
}

#[tokio::test]
async fn long_pages_are_truncated_with_the_footer_and_saved() {
    let body: String = (0..3000).map(|i| format!("line number {i}\n")).collect();
    let b2 = body.clone();
    let srv = TestServer::start(move |_| Resp::new(200, "text/plain", b2.clone()));
    let h = harness(
        "web: {extract_char_limit: 100}",
        &[("HERMES_ALLOW_PRIVATE_URLS", "yes")],
    );
    let url = srv.url("/long.txt");
    let r = results(&h.call("web_extract", json!({"urls": [url.clone()]})).await);
    let content = r[0]["content"].as_str().unwrap();
    // extract_char_limit 100 is clamped to 2000.
    let shown: usize = content
        .split("\n\n[... middle omitted")
        .next()
        .unwrap()
        .chars()
        .count();
    assert!(shown <= 1500 && shown > 1000, "{shown}");
    assert!(content.contains("──────── [TRUNCATED] ────────"));
    let saved = content
        .split("Full text saved to: ")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    assert!(
        saved.starts_with(h.dir.path().join("cache/web/127.0.0.1-").to_str().unwrap()),
        "{saved}"
    );
    assert_eq!(
        std::fs::read_to_string(saved).unwrap().trim_end(),
        body.trim_end()
    );
    // An explicit char_limit wins.
    let r = results(
        &h.call("web_extract", json!({"urls": [url], "char_limit": 100000}))
            .await,
    );
    assert_eq!(
        r[0]["content"].as_str().unwrap().trim_end(),
        body.trim_end()
    );
}

#[tokio::test]
async fn readability_fixture_pages_score_well() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/readability");
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(pages.len() >= 5, "fixtures missing in {}", dir.display());
    let root = dir.clone();
    let srv = TestServer::start(move |req| {
        let name = req.path.trim_matches('/');
        match std::fs::read(root.join(name).join("source.html")) {
            Ok(b) => Resp::new(200, "text/html; charset=utf-8", b),
            Err(_) => Resp::new(404, "text/plain", "no"),
        }
    });
    let h = harness("", &[("HERMES_ALLOW_PRIVATE_URLS", "1")]);
    let mut scores = Vec::new();
    for p in &pages {
        let r = results(
            &h.call(
                "web_extract",
                json!({"urls": [srv.url(&format!("/{p}/"))], "char_limit": 500000}),
            )
            .await,
        );
        let got = r[0]["content"].as_str().unwrap();
        let want = html_text(&std::fs::read_to_string(dir.join(p).join("expected.html")).unwrap());
        let f1 = token_f1(got, &want);
        eprintln!("readability fixture {p}: F1 {f1:.3}");
        assert!(f1 >= 0.75, "{p}: F1 {f1:.3} is too low");
        scores.push(f1);
    }
    let mean = scores.iter().sum::<f64>() / scores.len() as f64;
    eprintln!("readability fixtures: mean F1 {mean:.3}");
    assert!(mean >= 0.9, "mean F1 {mean:.3}");
}

// ------------------------------------------------------------------- MCP --

fn serve_env(t: &TestEnv) -> std::process::Command {
    Serve::new()
        .var("HERMES_ALLOW_PRIVATE_URLS", "1")
        .command(t)
}

#[test]
fn tools_list_has_both_web_tools_with_hermes_schemas() {
    let t = TestEnv::new();
    let mut c = RawClient::spawn(serve_env(&t));
    c.initialize();
    let r = c.request("tools/list", json!({}));
    let tools = r["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(&names[..2], &["web_search", "web_extract"]);
    assert_eq!(tools[1]["inputSchema"]["properties"]["urls"]["maxItems"], 5);
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
}

#[test]
fn extract_reports_progress_and_stops_fetching_when_cancelled() {
    let srv = TestServer::start(|req| match req.path.as_str() {
        "/slow" => Resp::html("<p>slow</p>").delayed(Duration::from_secs(20)),
        p => Resp::new(200, "text/plain", format!("page {p}")),
    });
    let t = TestEnv::new();
    let mut c = RawClient::spawn(serve_env(&t));
    c.initialize();
    let id = c.send(
        "tools/call",
        json!({"name": "web_extract", "arguments": {"urls": [srv.url("/a"), srv.url("/b")]}, "_meta": {"progressToken": "tok"}}),
    );
    let mut notes = Vec::new();
    let resp = c.response(id, &mut notes);
    let res = &resp["result"];
    assert!(!is_error(res));
    let v = result_json(res);
    assert_eq!(v["results"][0]["content"], "page /a");
    assert_eq!(v["results"][1]["content"], "page /b");
    let progress: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{notes:?}");
    assert_eq!(progress[1]["params"]["total"], 2.0);
    assert_eq!(progress[1]["params"]["progressToken"], "tok");

    let id = c.send(
        "tools/call",
        json!({"name": "web_extract", "arguments": {"urls": [srv.url("/slow")]}}),
    );
    srv.wait_for(
        "the slow page's request",
        |r| r.iter().any(|r| r.path == "/slow"),
        10,
    );
    c.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user"}),
    );
    poll_until(
        "the fetch's hang-up after the cancellation",
        5,
        || srv.hangups.load(std::sync::atomic::Ordering::SeqCst),
        |n| *n > 0,
    );
    // The server still answers.
    let r = c.call_tool("web_extract", json!({"urls": [srv.url("/c")]}));
    assert_eq!(result_json(&r)["results"][0]["content"], "page /c");
}

#[test]
fn provider_keys_are_read_from_the_hermes_dotenv() {
    let srv = TestServer::start(|_| {
        Resp::json(
            200,
            json!({"results": [{"title": "S", "url": "https://s/", "content": "c", "score": 1}]}),
        )
    });
    let t = TestEnv::new();
    t.write_hermes(".env", &format!("SEARXNG_URL={}\n", srv.base()));
    let mut c = RawClient::spawn(t.cmd());
    c.initialize();
    let r = c.call_tool("web_search", json!({"query": "from dotenv"}));
    assert!(!is_error(&r), "{r}");
    assert_eq!(result_json(&r)["data"]["web"][0]["title"], "S");
    assert_eq!(srv.reqs()[0].query_pairs()["q"], "from dotenv");
}

fn deflated(data: &[u8], zlib: bool) -> Vec<u8> {
    use std::io::Write;
    let level = flate2::Compression::default();
    if zlib {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
        e.write_all(data).unwrap();
        e.finish().unwrap()
    } else {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), level);
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }
}

/// Bodies in a coding reqwest does not decode itself: `deflate` as zlib and as
/// raw DEFLATE (both accepted by browsers), a `deflate, gzip` chain, a deflate
/// bomb (stopped at the same cap as any body), and `zstd` / unknown codings,
/// refused by name. None comes back as compressed bytes.
#[tokio::test]
async fn builtin_extractor_decodes_deflate_and_refuses_codings_it_cannot_decode() {
    use std::io::Write;
    const TEXT: &str = "Plain words that were deflated on the wire.";
    let zlib = deflated(TEXT.as_bytes(), true);
    let raw = deflated(TEXT.as_bytes(), false);
    let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    g.write_all(&zlib).unwrap();
    let chain = g.finish().unwrap();
    // 24 MiB of spaces in about 24 KiB: over the 20 MiB body cap once inflated.
    let bomb = deflated(&vec![b' '; 24 << 20], true);
    assert!(bomb.len() < 1 << 20);
    let coded = |coding: &str, body: &[u8]| {
        Resp::new(200, "text/plain; charset=utf-8", body.to_vec())
            .header("Content-Encoding", coding)
    };
    let srv = Routes::new()
        .on("GET", "/zlib.txt", coded("deflate", &zlib))
        .on("GET", "/raw.txt", coded("deflate", &raw))
        .on("GET", "/chain.txt", coded("deflate, gzip", &chain))
        .on("GET", "/bomb.txt", coded("deflate", &bomb))
        .on("GET", "/zstd.txt", coded("zstd", &raw))
        .on("GET", "/odd.txt", coded("x-squash", &raw))
        .start();
    let h = harness("", &[("HERMES_ALLOW_PRIVATE_URLS", "1")]);
    let paths = [
        "/zlib.txt",
        "/raw.txt",
        "/chain.txt",
        "/bomb.txt",
        "/zstd.txt",
        "/odd.txt",
    ];
    let urls: Vec<String> = paths.iter().map(|p| srv.url(p)).collect();
    // Hermes takes at most 5 URLs per call.
    let mut r = Vec::new();
    for part in urls.chunks(3) {
        let out = h.call("web_extract", json!({ "urls": part })).await;
        r.extend(results(&out));
    }
    assert_eq!(r.len(), paths.len(), "{r:?}");
    for i in 0..3 {
        assert_eq!(r[i]["content"], TEXT, "{}: {}", paths[i], r[i]);
        assert_eq!(r[i]["error"], Value::Null, "{}", r[i]);
    }
    assert_eq!(
        r[3]["error"], "response is larger than the 20971520 byte limit",
        "{}",
        r[3]
    );
    for (i, coding) in [(4, "zstd"), (5, "x-squash")] {
        assert_eq!(
            r[i]["error"],
            format!(
                "cannot decode the response from {}: the server sent it with Content-Encoding \"{coding}\", which hermes-mcp cannot decode (it decodes gzip, deflate and br)",
                urls[i]
            ),
            "{}",
            r[i]
        );
        assert_eq!(r[i]["content"].as_str().unwrap_or(""), "", "{}", r[i]);
    }
}
