//! vision_analyze: every image source, format handling, native mode, and
//! auxiliary mode against a loopback chat-completions server.

use std::io::Cursor;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use hermes_mcp::server::{Availability, ToolOutput};
use image::{DynamicImage, ImageFormat};
use serde_json::json;

use super::support::common::*;
use super::support::fake::{Req, Resp, TestServer};
use super::support::vision::{H, mk};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

// ----------------------------------------------------------------- helpers

/// The vision-only server of [`super::support::vision`], asked about any image.
struct Harness(H);

impl std::ops::Deref for Harness {
    type Target = H;
    fn deref(&self) -> &H {
        &self.0
    }
}

fn harness(config_yaml: &str, env: &[(&str, &str)]) -> Harness {
    Harness(mk(config_yaml, env, None))
}

impl Harness {
    async fn analyze(&self, image_url: &str, question: &str) -> ToolOutput {
        self.0.ask(image_url, question).await
    }
}

fn encode(img: DynamicImage, fmt: ImageFormat) -> Vec<u8> {
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), fmt).unwrap();
    out
}

/// A gradient (so resizing is visible) of the given size.
fn png(w: u32, h: u32) -> Vec<u8> {
    encode(
        DynamicImage::ImageRgb8(image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 251) as u8, (y % 241) as u8, 90])
        })),
        ImageFormat::Png,
    )
}

fn solid_png(w: u32, h: u32) -> Vec<u8> {
    encode(
        DynamicImage::ImageRgb8(image::RgbImage::from_pixel(w, h, image::Rgb([200, 30, 30]))),
        ImageFormat::Png,
    )
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A small valid PNG whose IHDR claims `w`×`h` (a decompression-bomb header).
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    let mut data = solid_png(4, 4);
    // Signature (8) + length (4) + "IHDR" (4): width/height follow.
    data[16..20].copy_from_slice(&w.to_be_bytes());
    data[20..24].copy_from_slice(&h.to_be_bytes());
    let crc = crc32(&data[12..29]);
    data[29..33].copy_from_slice(&crc.to_be_bytes());
    data
}

fn text_of(out: &ToolOutput) -> String {
    out.content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .expect("text content")
}

/// The (base64, mime) of the image content block.
fn image_of(out: &ToolOutput) -> (Vec<u8>, String) {
    let v = serde_json::to_value(&out.content).unwrap();
    let img = v
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no image content in {v}"));
    (
        B64.decode(img["data"].as_str().unwrap()).unwrap(),
        img["mimeType"].as_str().unwrap().to_string(),
    )
}

fn has_image(out: &ToolOutput) -> bool {
    serde_json::to_value(&out.content)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["type"] == "image")
}

fn dims(bytes: &[u8]) -> (u32, u32) {
    let i = image::load_from_memory(bytes).unwrap();
    (i.width(), i.height())
}

/// A native-mode failure: Hermes' `{"error": ..., "success": false}` with isError.
fn native_err(out: &ToolOutput) -> String {
    assert!(out.is_error, "expected an error, got {:?}", text_of(out));
    assert!(!has_image(out));
    let v = out.first_json().unwrap();
    assert_eq!(v["success"], false, "{v}");
    v["error"].as_str().unwrap().to_string()
}

// ------------------------------------------------------------ native mode

#[tokio::test]
async fn native_local_png_is_returned_as_image_content_unchanged() {
    let h = harness("", &[]);
    let data = png(120, 80);
    let path = h.file("shot.png", &data);
    let out = h.analyze(&path, "What colour is the corner?").await;
    assert!(!out.is_error, "{}", text_of(&out));
    let text = text_of(&out);
    assert!(
        text.starts_with("Image loaded into your context — you can see it natively now."),
        "{text}"
    );
    assert!(
        text.contains("\n\nQuestion: What colour is the corner?"),
        "{text}"
    );
    let (bytes, mime) = image_of(&out);
    assert_eq!(mime, "image/png");
    assert_eq!(
        bytes, data,
        "an accepted image that fits is passed through byte-for-byte"
    );
}

#[tokio::test]
async fn native_file_url_and_data_url() {
    let h = harness("", &[]);
    let data = png(30, 20);
    let path = h.file("a b.png", &data);
    let url = format!("file://{}", path.replace(' ', "%20"));
    let out = h.analyze(&url, "q").await;
    assert_eq!(image_of(&out).0, data, "{}", text_of(&out));
    // Hermes' plain `file://` prefix form (no percent-encoding) works too.
    let out = h.analyze(&format!("file://{path}"), "q").await;
    assert_eq!(image_of(&out).0, data, "{}", text_of(&out));

    let data_url = format!("data:image/png;base64,{}", B64.encode(&data));
    let out = h.analyze(&data_url, "q").await;
    assert_eq!(image_of(&out), (data.clone(), "image/png".into()));
    // The declared type is not trusted: the bytes decide.
    let lying = format!("data:image/jpeg;base64,{}", B64.encode(&data));
    assert_eq!(image_of(&h.analyze(&lying, "q").await).1, "image/png");

    let e = native_err(&h.analyze("data:image/png,notbase64", "q").await);
    assert!(e.contains("base64"), "{e}");
    let e = native_err(&h.analyze("data:image/png;base64,@@@@", "q").await);
    assert!(e.contains("invalid base64"), "{e}");
}

#[tokio::test]
async fn local_path_errors_are_clear() {
    let h = harness("", &[]);
    let missing = h.dir.path().join("nope.png");
    let e = native_err(&h.analyze(&missing.display().to_string(), "q").await);
    assert!(
        e.contains("image file not found") && e.contains("nope.png"),
        "{e}"
    );
    let e = native_err(&h.analyze(&h.dir.path().display().to_string(), "q").await);
    assert!(e.contains("not a regular file"), "{e}");
    let e = native_err(&h.analyze("/dev/zero", "q").await);
    assert!(e.contains("not a regular file"), "{e}");
    let fifo = h.dir.path().join("pipe.png");
    super::support::fs::mkfifo(&fifo);
    let e = native_err(&h.analyze(&fifo.display().to_string(), "q").await);
    assert!(e.contains("not a regular file"), "{e}");
    let e = native_err(&h.analyze("ftp://example.com/a.png", "q").await);
    assert!(e.contains("Unrecognized image source scheme"), "{e}");
    let e = native_err(&h.analyze("   ", "q").await);
    assert!(e.contains("image_url is required"), "{e}");
    let text = h.file("notes.txt", b"just some text, not pixels");
    let e = native_err(&h.analyze(&text, "q").await);
    assert_eq!(e, "source is not a recognized image");
}

#[tokio::test]
async fn corrupt_png_is_refused() {
    let h = harness("", &[]);
    let mut data = png(200, 200);
    data.truncate(data.len() * 2 / 3);
    let e = native_err(&h.analyze(&h.file("broken.png", &data), "q").await);
    assert!(e.contains("PNG image is corrupt or truncated"), "{e}");
    // Garbage after a valid signature.
    let mut junk = b"\x89PNG\r\n\x1a\n".to_vec();
    junk.extend_from_slice(&[7u8; 300]);
    let e = native_err(&h.analyze(&h.file("junk.png", &junk), "q").await);
    assert!(e.contains("corrupt"), "{e}");
}

#[tokio::test]
async fn twelve_thousand_pixel_images() {
    let h = harness("", &[]);
    // A long screenshot: downscaled so the long side is 1568 px.
    let out = h
        .analyze(&h.file("long.png", &solid_png(12_000, 600)), "q")
        .await;
    assert!(!out.is_error, "{}", text_of(&out));
    let (bytes, mime) = image_of(&out);
    assert_eq!(mime, "image/png");
    assert_eq!(dims(&bytes), (1568, 78));
    assert!(
        text_of(&out).contains("from a 12000×600 PNG"),
        "{}",
        text_of(&out)
    );
    // 12,000 × 12,000 (144 MP) is refused before decoding, with what to do.
    let e = native_err(
        &h.analyze(&h.file("bomb.png", &png_claiming(12_000, 12_000)), "q")
            .await,
    );
    assert!(e.contains("12000×12000") && e.contains("megapixel"), "{e}");
    assert!(e.contains("downscale or crop"), "{e}");
}

#[tokio::test]
async fn svg_bmp_tiff_become_png() {
    let h = harness("", &[]);
    let svg = br##"<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="300" height="150" viewBox="0 0 300 150">
  <rect width="300" height="150" fill="#0000ff"/>
  <circle cx="150" cy="75" r="40" fill="#ffff00"/>
</svg>"##;
    let out = h.analyze(&h.file("logo.svg", svg), "q").await;
    assert!(!out.is_error, "{}", text_of(&out));
    let (bytes, mime) = image_of(&out);
    assert_eq!(mime, "image/png");
    let img = image::load_from_memory(&bytes).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (512, 256));
    assert_eq!(img.get_pixel(5, 5).0, [0, 0, 255, 255]);
    assert_eq!(img.get_pixel(256, 128).0, [255, 255, 0, 255]);

    let e = native_err(
        &h.analyze(
            &h.file("bad.svg", b"<svg xmlns='http://www.w3.org/2000/svg'><rect"),
            "q",
        )
        .await,
    );
    assert!(e.contains("This is an SVG"), "{e}");

    let src = DynamicImage::ImageRgb8(image::RgbImage::from_pixel(40, 20, image::Rgb([1, 2, 3])));
    for (name, fmt) in [("a.bmp", ImageFormat::Bmp), ("a.tiff", ImageFormat::Tiff)] {
        let out = h
            .analyze(&h.file(name, &encode(src.clone(), fmt)), "q")
            .await;
        let (bytes, mime) = image_of(&out);
        assert_eq!(mime, "image/png", "{name}");
        let back = image::load_from_memory(&bytes).unwrap().to_rgb8();
        assert_eq!(back.dimensions(), (40, 20));
        assert_eq!(back.get_pixel(3, 3).0, [1, 2, 3]);
    }
}

#[tokio::test]
async fn large_jpeg_is_downscaled_and_stays_jpeg() {
    let h = harness("", &[]);
    let jpg = encode(
        DynamicImage::ImageRgb8(image::RgbImage::from_fn(2400, 1800, |x, y| {
            image::Rgb([(x / 10) as u8, (y / 10) as u8, 128])
        })),
        ImageFormat::Jpeg,
    );
    let out = h.analyze(&h.file("photo.jpg", &jpg), "q").await;
    let (bytes, mime) = image_of(&out);
    assert_eq!(mime, "image/jpeg");
    assert_eq!(dims(&bytes), (1568, 1176));
}

#[tokio::test]
async fn tool_is_listed_read_only_and_available_without_keys() {
    let h = harness("", &[]);
    let entries = h.server.entries();
    let (_, e) = entries
        .iter()
        .find(|(_, e)| e.spec.name == "vision_analyze")
        .unwrap();
    assert_eq!(e.availability, Availability::Available);
    assert!(e.spec.hints.read_only && e.spec.hints.open_world);
    assert_eq!(
        e.spec.input_schema["required"],
        json!(["image_url", "question"])
    );
}

// ------------------------------------------------------------- downloads

fn allow_private() -> [(&'static str, &'static str); 1] {
    [("HERMES_ALLOW_PRIVATE_URLS", "1")]
}

#[tokio::test]
async fn http_image_downloads_through_the_guarded_client() {
    let data = png(64, 48);
    let served = data.clone();
    let srv = TestServer::start(move |r: &Req| match r.path.as_str() {
        "/img" => Resp::new(200, "image/png", served.clone()),
        "/hop" => Resp::redirect("/img"),
        _ => Resp::new(404, "text/plain", "no"),
    });
    let h = harness("", &allow_private());
    let out = h.analyze(&srv.url("/hop"), "q").await;
    assert_eq!(image_of(&out).0, data, "{}", text_of(&out));
    let accept = srv.reqs()[0].header("accept").unwrap_or("").to_string();
    assert!(accept.starts_with("image/"), "{accept}");

    // 404 is not retried.
    let before = srv.count();
    let e = native_err(&h.analyze(&srv.url("/missing"), "q").await);
    assert!(e.contains("HTTP 404"), "{e}");
    assert_eq!(srv.count(), before + 1);
}

#[tokio::test]
async fn loopback_urls_need_the_explicit_private_allowance() {
    let srv = TestServer::start(|_| Resp::new(200, "image/png", png(4, 4)));
    let h = harness("", &[]);
    let e = native_err(&h.analyze(&srv.url("/img"), "q").await);
    assert!(
        e.starts_with("blocked") && e.contains("allow_private_urls"),
        "{e}"
    );
    assert_eq!(srv.count(), 0, "no request may reach a private address");
    // The config key works as well as the env var.
    let h = harness("security:\n  allow_private_urls: true\n", &[]);
    assert!(!h.analyze(&srv.url("/img"), "q").await.is_error);
}

#[tokio::test]
async fn redirect_to_cloud_metadata_is_blocked() {
    let srv = TestServer::start(|r: &Req| match r.path.as_str() {
        "/a" => Resp::redirect("http://169.254.169.254/latest/meta-data/"),
        "/b" => Resp::redirect("http://[::ffff:169.254.169.254]/"),
        _ => Resp::new(404, "text/plain", ""),
    });
    let h = harness("", &allow_private());
    for p in ["/a", "/b"] {
        let e = native_err(&h.analyze(&srv.url(p), "q").await);
        assert!(e.starts_with("blocked"), "{p}: {e}");
        assert!(
            e.contains("metadata") && e.contains("169.254.169.254"),
            "{p}: {e}"
        );
    }
}

#[tokio::test]
async fn oversize_non_image_and_slow_downloads() {
    let srv = TestServer::start(|r: &Req| match r.path.as_str() {
        "/huge" => Resp::new(200, "image/png", vec![0u8; 50 * 1024 * 1024 + 10]),
        "/page" => Resp::html("<html><body>Not an image</body></html>"),
        "/slow" => Resp::new(200, "image/png", png(4, 4)).delayed(Duration::from_secs(4)),
        _ => Resp::new(404, "text/plain", ""),
    });
    let h = harness(
        "auxiliary:\n  vision:\n    download_timeout: 1\n",
        &allow_private(),
    );
    let e = native_err(&h.analyze(&srv.url("/huge"), "q").await);
    assert!(e.contains("exceeds size limit"), "{e}");
    let e = native_err(&h.analyze(&srv.url("/page"), "q").await);
    assert!(
        e.starts_with("source is not a recognized image") && e.contains("text/html"),
        "{e}"
    );
    let t0 = std::time::Instant::now();
    let e = native_err(&h.analyze(&srv.url("/slow"), "q").await);
    assert!(e.contains("timed out after 1 s"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(4));
}

// -------------------------------------------------------- auxiliary mode

/// A loopback chat-completions server answering from a script, one entry per call.
fn chat_server(script: Vec<Resp>) -> (TestServer, Arc<AtomicUsize>) {
    let script = Arc::new(std::sync::Mutex::new(script.into_iter()));
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let srv = TestServer::start(move |_| {
        n2.fetch_add(1, Ordering::SeqCst);
        script
            .lock()
            .unwrap()
            .next()
            .unwrap_or_else(|| Resp::json(500, json!({"error": "script exhausted"})))
    });
    (srv, n)
}

fn answer(text: &str) -> Resp {
    Resp::json(
        200,
        json!({"id": "c1", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}),
    )
}

fn aux_yaml(srv: &TestServer) -> String {
    format!(
        "auxiliary:\n  vision:\n    provider: custom\n    base_url: {}/v1\n    model: acme/vision-1\n    api_key: sk-test-123\n    temperature: 0.2\n    extra_body:\n      top_k: 5\n      provider: {{order: [acme]}}\n",
        srv.base()
    )
}

fn image_in(req: &Req) -> Vec<u8> {
    let url = req.json_or_null()["messages"][0]["content"][1]["image_url"]["url"]
        .as_str()
        .unwrap()
        .to_string();
    B64.decode(url.split_once(',').unwrap().1).unwrap()
}

#[tokio::test]
async fn auxiliary_request_and_answer() {
    let (srv, _) = chat_server(vec![answer("A red square on white.")]);
    // No private-URL allowance: the configured endpoint is trusted.
    let h = harness(&aux_yaml(&srv), &[]);
    let data = png(50, 40);
    let out = h.analyze(&h.file("x.png", &data), "What shape?").await;
    assert!(!out.is_error, "{}", text_of(&out));
    assert!(!has_image(&out));
    assert_eq!(
        out.first_json().unwrap(),
        json!({"success": true, "analysis": "A red square on white."})
    );
    let reqs = srv.reqs();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(r.header("authorization"), Some("Bearer sk-test-123"));
    let body = r.json_or_null();
    assert_eq!(body["model"], "acme/vision-1");
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body["max_tokens"], 2000);
    assert_eq!(body["top_k"], 5, "extra_body is merged into the request");
    assert_eq!(body["provider"], json!({"order": ["acme"]}));
    let content = &body["messages"][0]["content"];
    assert_eq!(body["messages"][0]["role"], "user");
    assert_eq!(
        content[0],
        json!({"type": "text", "text": "Fully describe and explain everything about this image, then answer the following question:\n\nWhat shape?"})
    );
    assert_eq!(content[1]["type"], "image_url");
    assert!(
        content[1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    assert_eq!(image_in(r), data);
}

#[tokio::test]
async fn auxiliary_openrouter_headers_key_and_model_from_env() {
    let (srv, _) = chat_server(vec![answer("ok")]);
    let yaml = format!(
        "auxiliary:\n  vision:\n    provider: openrouter\n    base_url: {}/api/v1\n",
        srv.base()
    );
    let h = harness(
        &yaml,
        &[
            ("OPENROUTER_API_KEY", "sk-or-env"),
            ("AUXILIARY_VISION_MODEL", "env/model"),
        ],
    );
    let out = h.analyze(&h.file("x.png", &png(8, 8)), "q").await;
    assert_eq!(out.first_json().unwrap()["analysis"], "ok");
    let r = &srv.reqs()[0];
    assert_eq!(r.path, "/api/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer sk-or-env"));
    assert_eq!(r.json_or_null()["model"], "env/model");
}

#[tokio::test]
async fn auxiliary_retries_once_on_an_empty_answer() {
    let (srv, n) = chat_server(vec![answer(""), answer("Second try.")]);
    let h = harness(&aux_yaml(&srv), &[]);
    let out = h.analyze(&h.file("x.png", &png(8, 8)), "q").await;
    assert_eq!(out.first_json().unwrap()["analysis"], "Second try.");
    assert_eq!(n.load(Ordering::SeqCst), 2);

    let (srv, n) = chat_server(vec![answer("  "), answer("<think>only thoughts</think>")]);
    let h = harness(&aux_yaml(&srv), &[]);
    let out = h.analyze(&h.file("x.png", &png(8, 8)), "q").await;
    assert_eq!(
        out.first_json().unwrap(),
        json!({"success": true, "analysis": "There was a problem with the request and the image could not be analyzed."})
    );
    assert_eq!(n.load(Ordering::SeqCst), 2, "only one retry");
}

#[tokio::test]
async fn auxiliary_402_gives_the_credits_hint() {
    let (srv, n) = chat_server(vec![Resp::json(
        402,
        json!({"error": {"message": "Insufficient credits", "code": 402}}),
    )]);
    let h = harness(&aux_yaml(&srv), &[]);
    let out = h.analyze(&h.file("x.png", &png(8, 8)), "q").await;
    assert!(out.is_error);
    let v = out.first_json().unwrap();
    assert_eq!(v["success"], false);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("Error analyzing image: Error code: 402"),
        "{v}"
    );
    assert!(
        v["analysis"]
            .as_str()
            .unwrap()
            .starts_with("Insufficient credits or payment required. Please top up"),
        "{v}"
    );
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn auxiliary_no_vision_model_and_rejected_image_hints() {
    let (srv, _) = chat_server(vec![Resp::json(
        404,
        json!({"error": {"message": "No endpoints found that support image input"}}),
    )]);
    let h = harness(&aux_yaml(&srv), &[]);
    let v = h
        .analyze(&h.file("x.png", &png(8, 8)), "q")
        .await
        .first_json()
        .unwrap();
    assert!(
        v["analysis"]
            .as_str()
            .unwrap()
            .starts_with("acme/vision-1 does not support vision or our request was not accepted"),
        "{v}"
    );

    // A rejection that mentions image_url: one shrink-and-retry, then the hint.
    let bad = || {
        Resp::json(
            400,
            json!({"error": {"message": "Invalid image_url: could not process image", "type": "invalid_request_error"}}),
        )
    };
    let (srv, n) = chat_server(vec![bad(), bad()]);
    let h = harness(&aux_yaml(&srv), &[]);
    let v = h
        .analyze(&h.file("x.png", &png(600, 400)), "q")
        .await
        .first_json()
        .unwrap();
    assert!(
        v["analysis"]
            .as_str()
            .unwrap()
            .starts_with("The vision API rejected the image."),
        "{v}"
    );
    assert_eq!(n.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn auxiliary_413_shrinks_the_image_and_retries() {
    let (srv, n) = chat_server(vec![
        Resp::json(
            413,
            json!({"error": {"message": "Request payload too large"}}),
        ),
        answer("Fits now."),
    ]);
    let h = harness(&aux_yaml(&srv), &[]);
    let out = h.analyze(&h.file("big.png", &png(1400, 700)), "q").await;
    assert_eq!(
        out.first_json().unwrap()["analysis"],
        "Fits now.",
        "{}",
        text_of(&out)
    );
    assert_eq!(n.load(Ordering::SeqCst), 2);
    let reqs = srv.reqs();
    assert_eq!(dims(&image_in(&reqs[0])), (1400, 700));
    assert_eq!(dims(&image_in(&reqs[1])), (700, 350));
}

#[tokio::test]
async fn auxiliary_500_is_reported_with_the_generic_hint() {
    let (srv, n) = chat_server(vec![Resp::json(
        500,
        json!({"error": {"message": "upstream exploded"}}),
    )]);
    let h = harness(&aux_yaml(&srv), &[]);
    let v = h
        .analyze(&h.file("x.png", &png(8, 8)), "q")
        .await
        .first_json()
        .unwrap();
    assert_eq!(v["success"], false);
    assert!(
        v["error"].as_str().unwrap().contains("Error code: 500"),
        "{v}"
    );
    assert!(
        v["error"].as_str().unwrap().contains("upstream exploded"),
        "{v}"
    );
    assert!(
        v["analysis"].as_str().unwrap().starts_with(
            "There was a problem with the request and the image could not be analyzed. Error:"
        ),
        "{v}"
    );
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn auxiliary_image_errors_use_hermes_error_shape() {
    let (srv, n) = chat_server(vec![]);
    let h = harness(&aux_yaml(&srv), &[]);
    let v = h
        .analyze("/no/such/file.png", "q")
        .await
        .first_json()
        .unwrap();
    assert_eq!(v["success"], false);
    assert_eq!(
        v["error"],
        "Error analyzing image: image file not found: '/no/such/file.png'"
    );
    assert!(
        v["analysis"]
            .as_str()
            .unwrap()
            .starts_with("There was a problem")
    );
    assert_eq!(
        n.load(Ordering::SeqCst),
        0,
        "no API call for an image that failed to load"
    );
}

#[tokio::test]
async fn auxiliary_provider_without_key_is_unavailable_with_a_reason() {
    let h = harness("auxiliary:\n  vision:\n    provider: nous\n", &[]);
    let entries = h.server.entries();
    let (_, e) = entries
        .iter()
        .find(|(_, e)| e.spec.name == "vision_analyze")
        .unwrap();
    let Availability::Unavailable(why) = &e.availability else {
        panic!("{:?}", e.availability)
    };
    assert!(why.contains("auth.json"), "{why}");
    let out = h.analyze("/x.png", "q").await;
    assert!(out.is_error);
    assert!(text_of(&out).contains("No LLM provider configured"));
    // With a key for the auto chain it falls back (Hermes' call_llm does).
    let h = harness(
        "auxiliary:\n  vision:\n    provider: nous\n",
        &[("OPENROUTER_API_KEY", "k")],
    );
    assert!(
        h.server
            .entries()
            .iter()
            .all(|(_, e)| e.availability == Availability::Available)
    );
}

// --------------------------------------------------- through serve (stdio)

#[test]
fn serve_resolves_relative_paths_against_its_cwd() {
    let env = TestEnv::new();
    let work = env.dir.path().join("work");
    std::fs::create_dir_all(work.join("pics")).unwrap();
    let data = png(10, 10);
    std::fs::write(work.join("pics/r.png"), &data).unwrap();
    let mut cmd = env.cmd();
    cmd.current_dir(&work);
    let mut c = RawClient::spawn(cmd);
    c.initialize();
    let tools = c.request("tools/list", json!({}));
    let tool = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "vision_analyze")
        .cloned()
        .expect("vision_analyze listed");
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
    let r = c.call_tool(
        "vision_analyze",
        json!({"image_url": "pics/r.png", "question": "hi"}),
    );
    assert!(!is_error(&r), "{r}");
    assert!(
        r.get("structuredContent").is_none(),
        "Codex drops images next to structuredContent"
    );
    let content = r["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "text");
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["mimeType"], "image/png");
    assert_eq!(
        B64.decode(content[1]["data"].as_str().unwrap()).unwrap(),
        data
    );
    c.finish(Duration::from_secs(10));
}
