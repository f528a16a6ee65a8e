//! `bench_vision <image> <iterations>`: load, validate/downscale/encode for the
//! model, base64 data URL — hermes-mcp's pipeline exactly as `vision_analyze`
//! runs it (src/toolsets/vision/prep.rs). Prints JSON: per-run milliseconds,
//! output size, and this process's peak RSS.

#[path = "../../src/toolsets/vision/prep.rs"]
#[allow(dead_code)]
mod prep;

use std::time::Instant;

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: bench_vision <image> <iterations>");
    let n: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(10);
    if std::env::var_os("BENCH_PHASES").is_some() {
        for _ in 0..3 {
            phases(&path);
        }
    }
    let mut ms = Vec::new();
    let mut last = (0usize, 0u32, 0u32, "");
    for _ in 0..n {
        let t0 = Instant::now();
        let data = std::fs::read(&path).unwrap();
        let p = prep::prepare(&data, prep::Budget::default()).unwrap();
        let url = p.data_url();
        ms.push(t0.elapsed().as_secs_f64() * 1000.0);
        last = (url.len(), p.width, p.height, p.mime);
        std::hint::black_box(url);
    }
    println!(
        "{{\"ms\": {:?}, \"data_url_bytes\": {}, \"width\": {}, \"height\": {}, \"mime\": \"{}\", \"peak_rss_kb\": {}}}",
        ms,
        last.0,
        last.1,
        last.2,
        last.3,
        peak_rss_kb()
    );
}

/// `BENCH_PHASES=1`: time decode / resize / encode separately (diagnostics).
#[allow(dead_code)]
pub fn phases(path: &str) {
    let data = std::fs::read(path).unwrap();
    let t = Instant::now();
    let img = image::load_from_memory(&data).unwrap();
    let d = t.elapsed();
    let t = Instant::now();
    let (w, h) = prep::fit_dims(img.width(), img.height(), 1568);
    let small = img.thumbnail_exact(w, h);
    let r = t.elapsed();
    let t = Instant::now();
    let mut out = Vec::new();
    small
        .to_rgb8()
        .write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85))
        .unwrap();
    let e = t.elapsed();
    eprintln!("decode {d:?} resize {r:?} encode {e:?}");
}
