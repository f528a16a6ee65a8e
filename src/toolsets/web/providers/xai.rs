//! xAI Web Search: Grok's server-side `web_search` tool on the Responses API
//! (`POST {base}/responses`), as Hermes calls it (hermes-agent:
//! plugins/web/xai/provider.py). Grok is asked for a JSON object of results;
//! when it answers otherwise, the `url_citation` annotations and then the
//! `citations` list stand in, in that order, exactly as Hermes reads them.
//!
//! Config (`web.xai.*`): `model` (default `grok-build-0.1`), `timeout`
//! (seconds, default 90), `allowed_domains` / `excluded_domains` (at most 5,
//! not both), and `base_url` (ours, for proxies and loopback tests; else the
//! credentials' base URL). Credentials: Hermes' xAI Grok sign-in, else
//! `XAI_API_KEY` ([`xai_auth`]); a 401 on the sign-in's token is retried once
//! after a forced refresh, as Hermes does.
//!
//! Search only, and never auto-detected: Hermes' `_get_backend` does not list
//! it, so it is used when `web.backend` / `web.search_backend` names it.

use serde::Serialize;
use serde_json::{Value, json};

use super::{Backend, Hit, ProviderError, Search, base_url, min_interval};
use crate::auth::xai as xai_auth;
use crate::net::ApiError;
use crate::pycompat::{py_bool, py_str_or_json};

const DEFAULT_MODEL: &str = "grok-build-0.1";
const DEFAULT_TIMEOUT: f64 = 90.0;
/// xAI's cap on `allowed_domains` / `excluded_domains`.
const MAX_DOMAIN_FILTERS: usize = 5;
/// `hermes_xai_user_agent()` with hermes-agent 0.19.0's version.
const USER_AGENT: &str = "Hermes-Agent/0.19.0";

const NO_KEY: &str = "No xAI credentials found. Run `hermes auth` to sign in with xAI Grok OAuth, or set XAI_API_KEY.";
const BOTH_FILTERS: &str =
    "web.xai.allowed_domains and web.xai.excluded_domains cannot both be set (xAI restriction).";

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    input: [Message<'a>; 1],
    tools: [Value; 1],
    include: [&'static str; 1],
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
}

/// A `web.xai` domain list (non-blank, stripped strings) cut to at most 5
/// (`_coerce_domain_list`).
fn domains(list: &[String]) -> Vec<String> {
    list.iter().take(MAX_DOMAIN_FILTERS).cloned().collect()
}

/// Hermes' `_build_prompt`, word for word.
fn prompt(query: &str, limit: usize) -> String {
    format!(
        "Use the web_search tool to find current information for the query below, \
         then respond with ONLY a single JSON object \u{2014} no prose, no markdown \
         fences, no inline citation links \u{2014} matching this exact schema:\n\n\
         {{\"results\": [{{\"title\": \"string\", \"url\": \"string\", \
         \"description\": \"1-2 sentence summary\"}}]}}\n\n\
         Return at most {limit} results, ordered by relevance, with absolute \
         https:// URLs. If no usable results exist, return \
         {{\"results\": []}}.\n\n\
         Query: {query}"
    )
}

pub(super) async fn search(s: Search<'_>) -> Result<Vec<Hit>, ProviderError> {
    let Search { http, ctx, .. } = s;
    let (query, limit) = (s.query, s.limit);
    let mut creds = match xai_auth::resolve(ctx, http.api()).await {
        Ok(c) => c,
        Err(xai_auth::NoCreds { locked: Some(why) }) => return Err(ProviderError::Refused(why)),
        Err(_) => return Err(ProviderError::NotConfigured(NO_KEY)),
    };
    let limit = limit.clamp(1, 100);
    let cfg = ctx.sections().web.section("xai");
    let model = cfg.model.as_deref().unwrap_or(DEFAULT_MODEL).to_string();
    let timeout = cfg
        .timeout
        .filter(|t| t.is_finite() && *t > 0.0)
        .unwrap_or(DEFAULT_TIMEOUT)
        .min(3600.0);
    let (allowed, excluded) = (
        domains(&cfg.allowed_domains),
        domains(&cfg.excluded_domains),
    );
    let mut tool = json!({"type": "web_search"});
    match (allowed.is_empty(), excluded.is_empty()) {
        (false, false) => return Err(ProviderError::NotConfigured(BOTH_FILTERS)),
        (false, true) => tool["filters"] = json!({"allowed_domains": allowed}),
        (true, false) => tool["filters"] = json!({"excluded_domains": excluded}),
        (true, true) => {}
    }
    let text = prompt(query, limit);
    let body = Request {
        model: &model,
        input: [Message {
            role: "user",
            content: &text,
        }],
        tools: [tool],
        include: ["no_inline_citations"],
    };
    let configured = base_url(ctx, Backend::Xai);
    let mut retried = false;
    let r = loop {
        let base = if configured.is_empty() {
            creds.base_url.as_str()
        } else {
            configured.as_str()
        };
        let req = http
            .api()
            .post(format!("{base}/responses"))
            .bearer_auth(&creds.api_key)
            .header("User-Agent", USER_AGENT)
            .timeout(crate::pycompat::seconds(timeout))
            .json(&body);
        let r = http
            .send_api("xai", min_interval(ctx, Backend::Xai), req)
            .await;
        if let Ok(resp) = &r
            && resp.status == 401
            && !retried
            && let Some(fresh) = xai_auth::refresh_rejected(ctx, http.api(), &creds).await
        {
            tracing::info!("xAI web search got 401; retrying once with a refreshed sign-in");
            creds = fresh;
            retried = true;
            continue;
        }
        break r;
    };
    let r = match r {
        Ok(r) => r,
        Err(ApiError::RateLimited { .. }) => {
            return Err(ProviderError::Refused(
                "xAI web search returned HTTP 429".into(),
            ));
        }
        Err(e) => {
            return Err(ProviderError::Unreachable {
                what: "xAI".into(),
                source: e,
            });
        }
    };
    if !(200..300).contains(&r.status) {
        let body: String = r.text().chars().take(300).collect();
        let msg = format!("xAI web search returned HTTP {}: {body}", r.status);
        return Err(ProviderError::Refused(msg.trim_end().to_string()));
    }
    let Ok(data) = serde_json::from_slice::<Value>(&r.body) else {
        return Err(ProviderError::Refused(
            "Could not parse xAI Responses API reply as JSON".into(),
        ));
    };
    if let Some(Value::Object(err)) = data.get("error") {
        let pick = |k: &str| err.get(k).filter(|v| py_bool(v)).map(py_str_or_json);
        let msg = pick("message")
            .or_else(|| pick("code"))
            .unwrap_or_else(|| "unknown error".into());
        return Err(ProviderError::Refused(format!(
            "xAI returned an error: {msg}"
        )));
    }
    Ok(extract_results(&data, limit))
}

/// `_extract_results`: the JSON object Grok was asked for, else the
/// `url_citation` annotations, else the bare `citations` list.
pub(super) fn extract_results(data: &Value, limit: usize) -> Vec<Hit> {
    let (texts, annotations) = collect_output_text(data);
    for t in &texts {
        if let Some(hits) = json_results(t, limit) {
            return hits;
        }
    }
    if !annotations.is_empty() {
        let hits = annotation_results(&annotations, &texts.join("\n"), limit);
        if !hits.is_empty() {
            return hits;
        }
    }
    let Some(Value::Array(citations)) = data.get("citations") else {
        return Vec::new();
    };
    citations
        .iter()
        .take(limit)
        .enumerate()
        .filter_map(|(i, u)| {
            let u = u.as_str().filter(|u| !u.trim().is_empty())?;
            Some(Hit::new("", u, "", i + 1))
        })
        .collect()
}

/// Text of every `output_text` chunk of every `message` output item, and
/// their annotations.
fn collect_output_text(data: &Value) -> (Vec<String>, Vec<&Value>) {
    let (mut texts, mut anns) = (Vec::new(), Vec::new());
    let Some(Value::Array(output)) = data.get("output") else {
        return (texts, anns);
    };
    for item in output {
        if item.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        let Some(Value::Array(content)) = item.get("content") else {
            continue;
        };
        for chunk in content {
            if chunk.get("type").and_then(Value::as_str) != Some("output_text") {
                continue;
            }
            if let Some(t) = chunk.get("text").and_then(Value::as_str)
                && !t.trim().is_empty()
            {
                texts.push(t.to_string());
            }
            if let Some(Value::Array(a)) = chunk.get("annotations") {
                anns.extend(a.iter().filter(|a| a.is_object()));
            }
        }
    }
    (texts, anns)
}

/// `_try_parse_json_results`: the whole text, then the span from its first
/// `{` to its last `}`, as `{"results": [...]}`; rows without a URL dropped.
fn json_results(text: &str, limit: usize) -> Option<Vec<Hit>> {
    let mut candidates = vec![text];
    if let (Some(a), Some(b)) = (text.find('{'), text.rfind('}'))
        && a < b
        && &text[a..=b] != text
    {
        candidates.push(&text[a..=b]);
    }
    for c in candidates {
        let Ok(Value::Object(parsed)) = serde_json::from_str::<Value>(c) else {
            continue;
        };
        let Some(Value::Array(rows)) = parsed.get("results") else {
            continue;
        };
        let field = |row: &Value, k: &str| {
            row.get(k)
                .map(py_str_or_json)
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        let mut out: Vec<Hit> = Vec::new();
        for row in rows.iter().take(limit).filter(|r| r.is_object()) {
            let url = field(row, "url");
            if url.is_empty() {
                continue;
            }
            let hit = Hit::new(
                &field(row, "title"),
                &url,
                &field(row, "description"),
                out.len() + 1,
            );
            out.push(hit);
        }
        if !out.is_empty() {
            return Some(out);
        }
    }
    None
}

/// `_results_from_annotations`: each distinct `url_citation` URL, with up to
/// 200 characters of the text before it as the description.
fn annotation_results(anns: &[&Value], joined: &str, limit: usize) -> Vec<Hit> {
    let chars: Vec<char> = joined.chars().collect();
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<Hit> = Vec::new();
    for a in anns {
        if a.get("type").and_then(Value::as_str) != Some("url_citation") {
            continue;
        }
        let url = a.get("url").map(py_str_or_json).unwrap_or_default();
        let url = url.trim();
        if url.is_empty() || !seen.insert(url.to_string()) {
            continue;
        }
        let index = |k: &str| a.get(k).and_then(Value::as_i64);
        let mut description = String::new();
        if let (Some(start), Some(end)) = (index("start_index"), index("end_index"))
            && 0 <= start
            && start < end
            && end <= chars.len() as i64
        {
            let start = start as usize;
            let window: String = chars[start.saturating_sub(200)..start].iter().collect();
            description = window.trim().to_string();
        }
        out.push(Hit::new("", url, &description, out.len() + 1));
        if out.len() >= limit {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_block_amid_prose() {
        let data = json!({"output": [
            {"type": "web_search_call"},
            {"type": "message", "content": [{"type": "output_text",
             "text": "Sure:\n{\"results\": [{\"title\": \" A \", \"url\": \"https://a.example/\", \"description\": \"d\"}, {\"title\": \"no url\"}, {\"url\": \"https://b.example/\"}]}\nDone"}]}
        ]});
        let hits = extract_results(&data, 5);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0], Hit::new("A", "https://a.example/", "d", 1));
        assert_eq!(hits[1], Hit::new("", "https://b.example/", "", 2));
    }

    /// Expected values are what hermes-agent 0.19.0's `_extract_results` returns for the same input.
    #[test]
    fn annotations_then_citations() {
        let text = "Rust is a language. See docs.";
        let data = json!({"output": [{"type": "message", "content": [{"type": "output_text",
            "text": text, "annotations": [
                {"type": "url_citation", "url": "https://r.example/", "start_index": 19, "end_index": 20},
                {"type": "url_citation", "url": "https://r.example/"},
                {"type": "url_citation", "url": "https://s.example/"}]}]}]});
        let hits = extract_results(&data, 5);
        assert_eq!(
            hits,
            vec![
                Hit::new("", "https://r.example/", "Rust is a language.", 1),
                Hit::new("", "https://s.example/", "", 2)
            ]
        );
        let data = json!({"citations": ["https://x.example/", 3, " ", "https://y.example/"]});
        let hits = extract_results(&data, 5);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[1].position, 4);
        assert!(extract_results(&json!({}), 5).is_empty());
    }
}
