//! vision_analyze through the real codex binary (tools/codex_e2e.py): in native
//! mode the model must receive the pixels as an `input_image`.

use std::io::Cursor;

use base64::Engine as _;
use serde_json::Value;

use super::support::codex::run_harness;

#[test]
fn codex_model_receives_input_image_for_a_local_png() {
    let dir = tempfile::tempdir().unwrap();
    let hermes_home = dir.path().join("hermes");
    std::fs::create_dir_all(&hermes_home).unwrap();
    let img = image::RgbImage::from_fn(32, 24, |x, y| image::Rgb([x as u8 * 8, y as u8 * 10, 200]));
    let mut png = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let path = dir.path().join("pixel-check.png");
    std::fs::write(&path, &png).unwrap();
    let args =
        serde_json::json!({"image_url": path.to_str().unwrap(), "question": "What is in it?"});
    let s = run_harness(&hermes_home, "vision_analyze", &args.to_string(), &[]);
    assert_eq!(
        s["ok"],
        true,
        "codex run failed:\n{}",
        serde_json::to_string_pretty(&s).unwrap()
    );
    let items = s["function_call_output"]
        .as_array()
        .unwrap_or_else(|| panic!("expected content items, got {}", s["function_call_output"]));
    let image = items
        .iter()
        .find(|i| i["type"] == "input_image")
        .unwrap_or_else(|| panic!("no input_image in {}", Value::Array(items.clone())));
    let url = image["image_url"].as_str().unwrap();
    let b64 = url
        .strip_prefix("data:image/png;base64,")
        .unwrap_or_else(|| panic!("not a PNG data URL: {}", &url[..url.len().min(60)]));
    let got = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    assert_eq!(got, png, "the model received exactly the image's pixels");
    let text: String = items
        .iter()
        .filter(|i| i["type"] == "input_text")
        .filter_map(|i| i["text"].as_str())
        .collect();
    assert!(text.contains("Question: What is in it?"), "{text}");
}
