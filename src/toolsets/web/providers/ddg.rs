//! DuckDuckGo's keyless HTML endpoint (`POST /html/`), read as the `ddgs`
//! package behind Hermes' DuckDuckGo provider reads it (hermes-agent:
//! plugins/web/ddgs/provider.py): the search that works without an account.

use std::time::Duration;

use super::{Backend, Hit, ProviderError, Search, base_url, min_interval};
use crate::hermes::Context;
use crate::net::HttpClient;

/// Browser-like UA: DuckDuckGo's HTML endpoint turns unknown agents away.
const DDG_UA: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36";

/// Pages fetched at most for one search (ddgs stops on its own well before;
/// this bounds a server that keeps answering).
const MAX_PAGES: usize = 10;

/// Results wanted beyond one page are fetched page by page, as the `ddgs`
/// package's `DDGS().text(max_results=...)` does: page `n > 1` sends
/// `s = 10 + (n - 2) * 15` (ddgs: engines/duckduckgo.py `build_payload`), and
/// paging stops at `limit` results or when a page adds no new URL.
pub(super) async fn search(s: Search<'_>) -> Result<Vec<Hit>, ProviderError> {
    let Search { http, ctx, .. } = s;
    let (query, limit) = (s.query, s.limit);
    let mut hits: Vec<Hit> = Vec::new();
    for page in 1..=MAX_PAGES {
        let html = match fetch_page(http, ctx, query, page).await {
            Ok(h) => h,
            // A later page failing keeps what the earlier pages gave.
            Err(_) if !hits.is_empty() => break,
            Err(e) => return Err(e),
        };
        let found = parse_html(&html, usize::MAX);
        if page == 1 && found.is_empty() && html.contains("anomaly") {
            return Err(ProviderError::Refused(
                "DuckDuckGo asked for a bot check. Try again later or configure a search provider."
                    .into(),
            )
            .failed("DuckDuckGo", "search"));
        }
        let before = hits.len();
        for h in found {
            if hits.len() >= limit {
                break;
            }
            if hits.iter().any(|x| x.url == h.url) {
                continue;
            }
            let n = hits.len() + 1;
            hits.push(Hit { position: n, ..h });
        }
        if hits.len() >= limit || hits.len() == before {
            break;
        }
    }
    Ok(hits)
}

/// One result page's HTML (`POST /html/`).
async fn fetch_page(
    http: &HttpClient,
    ctx: &Context,
    query: &str,
    page: usize,
) -> Result<String, ProviderError> {
    let base = base_url(ctx, Backend::Ddgs);
    // The serializer is not Send: build the body before any await.
    let body = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("q", query)
            .append_pair("b", "")
            .append_pair("kl", "wt-wt");
        if page > 1 {
            form.append_pair("s", &(10 + (page - 2) * 15).to_string());
        }
        form.finish()
    };
    let req = http
        .api()
        .post(format!("{base}/html/"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("User-Agent", DDG_UA)
        .header("Referer", format!("{base}/"))
        .timeout(Duration::from_secs(20))
        .body(body);
    let r = http
        .send_api("ddgs", min_interval(ctx, Backend::Ddgs), req)
        .await
        .map_err(|e| ProviderError::Api(e).failed("DuckDuckGo", "search"))?;
    if r.status != 200 {
        return Err(ProviderError::Refused(format!(
            "HTTP {} — DuckDuckGo may be rate-limiting or asking for a bot check. Try again later or configure a search provider (TAVILY_API_KEY, EXA_API_KEY, BRAVE_SEARCH_API_KEY, SEARXNG_URL, ...).",
            r.status
        ))
        .failed("DuckDuckGo", "search"));
    }
    Ok(r.text())
}

/// Parse DuckDuckGo's HTML result page (`div.result`, `a.result__a`,
/// `.result__snippet`), skipping ads and unwrapping `/l/?uddg=` redirect links.
pub(super) fn parse_html(html: &str, limit: usize) -> Vec<Hit> {
    let doc = dom_query::Document::from(html);
    let mut out = Vec::new();
    for node in doc.select("div.result").iter() {
        if out.len() >= limit {
            break;
        }
        let class = node
            .attr("class")
            .map(|c| c.to_string())
            .unwrap_or_default();
        if class.contains("result--ad") {
            continue;
        }
        let a = node.select("a.result__a");
        let Some(href) = a.attr("href") else { continue };
        let Some(url) = ddg_target(&href) else {
            continue;
        };
        let title = squash(&a.text());
        let body = squash(&node.select(".result__snippet").text());
        out.push(Hit::new(&title, &url, &body, out.len() + 1));
    }
    out
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn ddg_target(href: &str) -> Option<String> {
    let abs = if href.starts_with("//") {
        format!("https:{href}")
    } else if href.starts_with('/') {
        format!("https://duckduckgo.com{href}")
    } else {
        href.to_string()
    };
    let u = url::Url::parse(&abs).ok()?;
    if u.path().ends_with("/y.js") {
        return None; // ad
    }
    if u.host_str().is_some_and(|h| h.ends_with("duckduckgo.com")) && u.path().starts_with("/l/") {
        return u
            .query_pairs()
            .find(|(k, _)| k == "uddg")
            .map(|(_, v)| v.into_owned());
    }
    Some(abs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddg_html_parsing() {
        let html = r#"<html><body>
<div class="result results_links result--ad"><h2><a class="result__a" href="https://duckduckgo.com/y.js?ad=1">Ad</a></h2></div>
<div class="result results_links results_links_deep web-result">
 <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2F&amp;rut=abc">Rust <b>Programming</b> Language</a></h2>
 <a class="result__snippet" href="x">A language empowering   everyone.</a>
</div>
<div class="result results_links web-result"><h2><a class="result__a" href="https://example.org/page">Example</a></h2>
 <div class="result__snippet">Plain snippet</div></div>
</body></html>"#;
        let hits = parse_html(html, 5);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].url, "https://www.rust-lang.org/");
        assert_eq!(hits[0].title, "Rust Programming Language");
        assert_eq!(hits[0].description, "A language empowering everyone.");
        assert_eq!(hits[0].position, 1);
        assert_eq!(hits[1].url, "https://example.org/page");
        assert_eq!(parse_html(html, 1).len(), 1);
    }
}
