//! Helpers for the media tests: fixtures (a real PNG, a WAV around PCM) and checks for audio
//! files. Their loopback servers are [`super::fake`].

use std::path::Path;
use std::process::Command;

/// Re-exported here: the media suites check their programs with it.
pub use super::prereq::require;

/// Our result and Hermes' agree on each of `keys`.
pub fn assert_fields_match(ours: &serde_json::Value, hermes: &serde_json::Value, keys: &[&str]) {
    for k in keys {
        assert_eq!(ours[*k], hermes[*k], "{k}");
    }
}

/// A 24 kHz mono 16-bit PCM WAV around `pcm` (what Gemini-style TTS fakes answer).
pub fn wav_24k_mono(pcm: Vec<u8>) -> Vec<u8> {
    let mut v = b"RIFF".to_vec();
    v.extend((36 + pcm.len() as u32).to_le_bytes());
    v.extend(b"WAVEfmt ");
    v.extend(16u32.to_le_bytes());
    v.extend(1u16.to_le_bytes());
    v.extend(1u16.to_le_bytes());
    v.extend(24000u32.to_le_bytes());
    v.extend(48000u32.to_le_bytes());
    v.extend(2u16.to_le_bytes());
    v.extend(16u16.to_le_bytes());
    v.extend(b"data");
    v.extend((pcm.len() as u32).to_le_bytes());
    v.extend(pcm);
    v
}

/// A real 2x1 RGB PNG (valid signature, IHDR, IDAT, IEND with correct CRCs).
pub fn png_bytes() -> Vec<u8> {
    const PNG: &str = "89504e470d0a1a0a0000000d49484452000000020000000108020000007b40e8dd0000000d49444154789c63f8cf0004ff01070001ffe2239e590000000049454e44ae426082";
    (0..PNG.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&PNG[i..i + 2], 16).unwrap())
        .collect()
}

/// `soxi -D <file>`: the duration sox reads from the file (fails the test when sox is missing).
pub fn soxi_duration(path: &Path) -> f64 {
    let out = Command::new("soxi")
        .arg("-D")
        .arg(path)
        .output()
        .expect("soxi (package sox) must be installed: tools/test.sh installs it");
    assert!(
        out.status.success(),
        "soxi failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}
