//! What is said and how: the SSML document edge-tts builds (`mkssml`), the two text frames
//! that carry the request (`speech.config`, `ssml`), the voice and prosody checks edge-tts
//! makes before it connects (`TTSConfig`, with its `ValueError` texts), and the text
//! preparation: control characters out, `&`, `<`, `>` escaped, the result cut into
//! [`CHUNK_BYTES`] pieces exactly where edge-tts cuts it (`split_text_by_byte_length`).

use serde::Serialize;

use super::{EdgeTtsError, date_to_string};

/// The only format edge-tts requests: 48 kbit/s constant-bitrate mono MP3.
pub const OUTPUT_FORMAT: &str = "audio-24khz-48kbitrate-mono-mp3";
/// Longest UTF-8 text (after XML escaping) sent in one SSML request.
const CHUNK_BYTES: usize = 4096;

/// Voice parameters as edge-tts' `Communicate` takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prosody {
    /// `[+-]N%`.
    pub rate: String,
    /// `[+-]N%`.
    pub volume: String,
    /// `[+-]NHz`.
    pub pitch: String,
}

impl Default for Prosody {
    fn default() -> Self {
        Prosody {
            rate: "+0%".into(),
            volume: "+0%".into(),
            pitch: "+0Hz".into(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MetadataOptions {
    sentence_boundary_enabled: &'static str,
    word_boundary_enabled: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AudioConfig {
    metadataoptions: MetadataOptions,
    output_format: &'static str,
}

#[derive(Serialize)]
struct Synthesis {
    audio: AudioConfig,
}

#[derive(Serialize)]
struct SpeechContext {
    synthesis: Synthesis,
}

#[derive(Serialize)]
struct SpeechConfig {
    context: SpeechContext,
}

/// The `speech.config` frame (edge-tts' default `SentenceBoundary` metadata).
pub fn speech_config_message() -> String {
    let body = SpeechConfig {
        context: SpeechContext {
            synthesis: Synthesis {
                audio: AudioConfig {
                    metadataoptions: MetadataOptions {
                        sentence_boundary_enabled: "true",
                        word_boundary_enabled: "false",
                    },
                    output_format: OUTPUT_FORMAT,
                },
            },
        },
    };
    format!(
        "X-Timestamp:{}\r\nContent-Type:application/json; charset=utf-8\r\nPath:speech.config\r\n\r\n{}\r\n",
        date_to_string(),
        serde_json::to_string(&body).expect("serializable")
    )
}

/// The `ssml` frame. The `Z` after the JavaScript-style date is Edge's own quirk.
pub fn ssml_message(request_id: &str, timestamp: &str, ssml: &str) -> String {
    format!(
        "X-RequestId:{request_id}\r\nContent-Type:application/ssml+xml\r\nX-Timestamp:{timestamp}Z\r\nPath:ssml\r\n\r\n{ssml}"
    )
}

/// edge-tts' `mkssml`; `escaped_text` is already XML-escaped.
pub fn mkssml(long_voice: &str, p: &Prosody, escaped_text: &str) -> String {
    format!(
        "<speak version='1.0' xmlns='http://www.w3.org/2001/10/synthesis' xml:lang='en-US'>\
         <voice name='{long_voice}'><prosody pitch='{}' rate='{}' volume='{}'>{escaped_text}\
         </prosody></voice></speak>",
        p.pitch, p.rate, p.volume
    )
}

/// `en-US-AriaNeural` → `Microsoft Server Speech Text to Speech Voice (en-US, AriaNeural)`
/// (edge-tts' `TTSConfig`), then validated as edge-tts does.
pub fn long_voice_name(voice: &str) -> Result<String, EdgeTtsError> {
    let short = regex::Regex::new(r"^([a-z]{2,})-([A-Z]{2,})-(.+Neural)$").expect("regex");
    let mut out = voice.to_string();
    if let Some(c) = short.captures(voice) {
        let (lang, mut region, mut name) = (&c[1], c[2].to_string(), c[3].to_string());
        if let Some(i) = name.find('-') {
            region = format!("{region}-{}", &name[..i]);
            name = name[i + 1..].to_string();
        }
        out = format!("Microsoft Server Speech Text to Speech Voice ({lang}-{region}, {name})");
    }
    validate(
        "voice",
        &out,
        r"^Microsoft Server Speech Text to Speech Voice \(.+,.+\)$",
    )?;
    Ok(out)
}

/// `text` as edge-tts sends it: incompatible characters replaced, XML-escaped, and split
/// into pieces of at most [`CHUNK_BYTES`] bytes, one SSML request each.
pub(super) fn escaped_chunks(text: &str) -> Vec<String> {
    let escaped = xml_escape(&remove_incompatible_characters(text));
    split_text_by_byte_length(escaped.as_bytes(), CHUNK_BYTES)
        .into_iter()
        // The split never cuts a UTF-8 sequence of valid input.
        .map(|chunk| String::from_utf8_lossy(chunk).into_owned())
        .collect()
}

/// edge-tts' checks of rate, volume and pitch (`[+-]N%`, `[+-]N%`, `[+-]NHz`).
pub(super) fn validate_prosody(p: &Prosody) -> Result<(), EdgeTtsError> {
    validate("rate", &p.rate, r"^[+-]\d+%$")?;
    validate("volume", &p.volume, r"^[+-]\d+%$")?;
    validate("pitch", &p.pitch, r"^[+-]\d+Hz$")
}

fn validate(name: &str, value: &str, pattern: &str) -> Result<(), EdgeTtsError> {
    // Python's re.match anchors at the start only; every pattern here also ends in `$`.
    if regex::Regex::new(pattern).expect("regex").is_match(value) {
        Ok(())
    } else {
        Err(EdgeTtsError::InvalidParam(format!(
            "Invalid {name} '{value}'."
        )))
    }
}

/// Control characters the service rejects become spaces (vertical tab from OCR'd PDFs…).
pub fn remove_incompatible_characters(s: &str) -> String {
    s.chars()
        .map(|c| match c as u32 {
            0..=8 | 11..=12 | 14..=31 => ' ',
            _ => c,
        })
        .collect()
}

/// `xml.sax.saxutils.escape`: `&`, `<`, `>` only.
pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// edge-tts' `split_text_by_byte_length`, byte for byte (including its choice of a
/// UTF-8-safe split point over the whole remaining text when no space is in range).
pub fn split_text_by_byte_length(mut text: &[u8], limit: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while text.len() > limit {
        let mut split_at = text[..limit]
            .iter()
            .rposition(|&b| b == b'\n')
            .or_else(|| text[..limit].iter().rposition(|&b| b == b' '))
            .map(|i| i as isize)
            .unwrap_or(-1);
        if split_at < 0 {
            split_at = safe_utf8_split_point(text) as isize;
        }
        let mut split = split_at.max(0) as usize;
        while split > 0 && text[..split].contains(&b'&') {
            let amp = text[..split]
                .iter()
                .rposition(|&b| b == b'&')
                .expect("contains &");
            if text[amp..split].contains(&b';') {
                break;
            }
            split = amp;
        }
        let chunk = py_strip(&text[..split]);
        if !chunk.is_empty() {
            out.push(chunk);
        }
        text = &text[if split > 0 { split } else { 1 }..];
    }
    let rest = py_strip(text);
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

fn safe_utf8_split_point(seg: &[u8]) -> usize {
    let mut at = seg.len();
    while at > 0 {
        if std::str::from_utf8(&seg[..at]).is_ok() {
            return at;
        }
        at -= 1;
    }
    0
}

/// `bytes.strip()`: ASCII whitespace.
fn py_strip(b: &[u8]) -> &[u8] {
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let start = b.iter().position(|c| !ws(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |i| i + 1);
    &b[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voices_expand_like_edge_tts() {
        assert_eq!(
            long_voice_name("en-US-AriaNeural").unwrap(),
            "Microsoft Server Speech Text to Speech Voice (en-US, AriaNeural)"
        );
        assert_eq!(
            long_voice_name("zh-CN-liaoning-XiaobeiNeural").unwrap(),
            "Microsoft Server Speech Text to Speech Voice (zh-CN-liaoning, XiaobeiNeural)"
        );
        assert_eq!(
            long_voice_name("nope").unwrap_err().to_string(),
            "Invalid voice 'nope'."
        );
    }

    #[test]
    fn splitting_keeps_entities_and_strips() {
        let t = b"aaa &amp; bbb";
        assert_eq!(
            split_text_by_byte_length(t, 7),
            vec![&b"aaa"[..], b"&amp;", b"bbb"]
        );
        assert_eq!(split_text_by_byte_length(b"  x  ", 4096), vec![&b"x"[..]]);
    }
}
