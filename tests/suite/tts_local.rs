//! `text_to_speech` with Hermes' local models run by their Python packages
//! (`tts.provider: piper | neutts | kittentts`), through the real server binary.
//!
//! * Piper is the real `piper-tts` package (in `$PIPER_PYTHON`, default
//!   `/opt/piper-venv/bin/python`; tools/test.sh installs it with `onnx`). Its
//!   voices come from huggingface, which tests cannot reach, so the voice is a tiny
//!   ONNX graph built here with piper's input/output signature (phoneme ids in,
//!   `round(256 * length_scale)` samples of a tone per id out) and a config whose
//!   phoneme map covers espeak's IPA. Everything else is real: piper's espeak
//!   phonemizer, onnxruntime, `synthesize_wav`; the voice comes from a loopback
//!   mirror (`tts.piper.voices_base_url`, which hermes-mcp fetches itself with
//!   piper's `download_voices` URLs and file names). Hermes' own
//!   `_generate_piper_tts` runs on the same voice and must write the same WAV bytes.
//! * NeuTTS and KittenTTS models come from huggingface too, and their packages pull
//!   in torch; here `neutts` and `kittentts` are **API-shaped stand-ins**: Python
//!   modules exposing exactly the classes and method signatures Hermes calls
//!   (`NeuTTS(backbone_repo, backbone_device, codec_repo, codec_device)`,
//!   `.encode_reference(path)`, `.infer(text, ref_codes, ref_text)`;
//!   `KittenTTS(model_name)`, `.generate(text, voice=, speed=, clean_text=)`), which
//!   log every call and return a tone. Hermes' own code is run against the same
//!   stand-ins and must make the same calls.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::support::common::*;
use super::support::fake::*;
use super::support::prereq::piper_python;
use super::support::tts::{hermes_tts, ours, tts_choice};

/// Builds the tiny voice `<argv[1]>` (+ `.json`): piper's ONNX signature
/// (`input` [1,N] int64, `input_lengths` [1], `scales` [noise, length, noise_w]) →
/// `output` [1,1,1,T], T = N * round(256 * length_scale).
const TINY_VOICE: &str = r#"
import json, sys
import onnx
from onnx import helper, TensorProto
out = sys.argv[1]
def c(name, dt, vals, dims):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name + "_v", dt, dims, vals))
nodes = [
    c("idx1", TensorProto.INT64, [1], [1]),
    helper.make_node("Gather", ["scales", "idx1"], ["ls"], axis=0),
    c("hop", TensorProto.FLOAT, [256.0], [1]),
    helper.make_node("Mul", ["ls", "hop"], ["rf"]),
    helper.make_node("Round", ["rf"], ["rr"]),
    helper.make_node("Cast", ["rr"], ["r"], to=TensorProto.INT64),
    c("ones", TensorProto.INT64, [1, 1], [2]),
    helper.make_node("Concat", ["ones", "r"], ["reps"], axis=0),
    helper.make_node("Cast", ["input"], ["f"], to=TensorProto.FLOAT),
    c("k", TensorProto.FLOAT, [0.37], [1]),
    helper.make_node("Mul", ["f", "k"], ["fk"]),
    helper.make_node("Sin", ["fk"], ["s"]),
    c("ax", TensorProto.INT64, [2], [1]),
    helper.make_node("Unsqueeze", ["s", "ax"], ["s3"]),
    helper.make_node("Tile", ["s3", "reps"], ["tiled"]),
    c("shape", TensorProto.INT64, [1, 1, 1, -1], [4]),
    helper.make_node("Reshape", ["tiled", "shape"], ["output"]),
]
g = helper.make_graph(nodes, "tiny-piper", [
    helper.make_tensor_value_info("input", TensorProto.INT64, [1, "n"]),
    helper.make_tensor_value_info("input_lengths", TensorProto.INT64, [1]),
    helper.make_tensor_value_info("scales", TensorProto.FLOAT, [3]),
], [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1, 1, "t"])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, out)
ids = {"_": [0], "^": [1], "$": [2], " ": [3]}
for i, ch in enumerate("abcdefghijklmnopqrstuvwxyzæçðøħŋœɐɑɒɓɔɕɖɗɘəɚɛɜɞɟɠɡɢɣɤɥɦɧɨɪɫɬɭɮɯɰɱɲɳɴɵɶɸɹɺɻɽɾʀʁʂʃʄʈʉʊʋʌʍʎʏʐʑʒʔʕʘʙʛʜʝʟʡʢˈˌːˑ̩̃ᵻ,.!?'"):
    ids.setdefault(ch, [4 + i])
json.dump({"audio": {"sample_rate": 16000}, "espeak": {"voice": "en-us"}, "num_symbols": 256,
           "num_speakers": 1, "phoneme_id_map": ids, "phoneme_type": "espeak",
           "inference": {"noise_scale": 0.667, "length_scale": 1, "noise_w": 0.8}},
          open(out + ".json", "w"), ensure_ascii=False)
"#;

/// The tiny voice's files (`.onnx`, `.onnx.json`).
fn tiny_voice(py: &Path, dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let out = dir.join("tiny.onnx");
    let o = Command::new(py)
        .args(["-c", TINY_VOICE])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (
        std::fs::read(&out).unwrap(),
        std::fs::read(dir.join("tiny.onnx.json")).unwrap(),
    )
}

fn wav_secs(path: &Path) -> f64 {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    hermes_mcp::toolsets::tts::audio::parse_wav(&b)
        .unwrap_or_else(|| panic!("{} is not a WAV file", path.display()))
        .duration_secs()
}

#[test]
fn piper_package_downloads_the_voice_from_the_mirror_and_honours_the_synthesis_knobs() {
    let py = piper_python();
    let env = TestEnv::new();
    let (onnx, json_cfg) = tiny_voice(&py, env.dir.path());
    let srv = TestServer::start(move |req| match req.target.as_str() {
        "/en/en_US/tiny/medium/en_US-tiny-medium.onnx?download=true" => {
            Resp::bytes("application/octet-stream", onnx.clone())
        }
        "/en/en_US/tiny/medium/en_US-tiny-medium.onnx.json?download=true" => {
            Resp::bytes("application/json", json_cfg.clone())
        }
        _ => Resp::json(404, json!({"error": "no such voice"})),
    });
    let py_s = py.to_str().unwrap();
    let vars = [("HERMES_PYTHON", py_s)];
    let config = |extra: &str| {
        format!(
            "tts:\n  provider: piper\n  piper:\n    voice: en_US-tiny-medium\n    voices_base_url: {}\n{extra}",
            srv.base()
        )
    };
    env.write_hermes("config.yaml", &config(""));
    let (tool, choice) = tts_choice(&env, &vars);
    assert_eq!(tool["available"], true, "{tool}");
    assert_eq!(choice["provider"], "piper");
    assert_eq!(
        choice["why"],
        format!("tts.provider: piper: `piper` importable by {py_s} (HERMES_PYTHON)")
    );

    // First use downloads the voice into $HERMES_HOME/cache/piper-voices/.
    let wav = env.dir.path().join("one.wav");
    let v = ours(&env, &vars, "Hello there. Piper speaks.", &wav);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "piper");
    assert_eq!(v["format"], "wav");
    let paths: Vec<String> = srv.reqs().iter().map(|r| r.target.clone()).collect();
    assert_eq!(
        paths,
        [
            "/en/en_US/tiny/medium/en_US-tiny-medium.onnx?download=true",
            "/en/en_US/tiny/medium/en_US-tiny-medium.onnx.json?download=true"
        ]
    );
    let voices = env.hermes_home().join("cache/piper-voices");
    assert!(voices.join("en_US-tiny-medium.onnx.json").is_file());
    let one = wav_secs(&wav);
    assert!(one > 0.3, "{one}");

    // length_scale reaches piper's SynthesisConfig (twice the samples per phoneme);
    // the voice is not downloaded again.
    env.write_hermes("config.yaml", &config("    length_scale: 2.0\n"));
    let wav2 = env.dir.path().join("two.wav");
    let v = ours(&env, &vars, "Hello there. Piper speaks.", &wav2);
    assert_eq!(v["success"], true, "{v}");
    assert!((wav_secs(&wav2) / one - 2.0).abs() < 0.05, "{one} {v}");
    assert_eq!(srv.reqs().len(), 2);

    // A bad knob is Hermes' ValueError: a configuration error.
    env.write_hermes("config.yaml", &config("    noise_scale: loud\n"));
    let v = ours(&env, &vars, "Hi.", &env.dir.path().join("bad.wav"));
    assert_eq!(
        v["error"], "TTS configuration error (piper): could not convert string to float: 'loud'",
        "{v}"
    );

    // A voice the mirror does not have: piper's downloader fails, worded as Hermes.
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: piper\n  piper:\n    voice: en_US-nobody-low\n    voices_base_url: {}\n",
            srv.base()
        ),
    );
    let v = ours(&env, &vars, "Hi.", &env.dir.path().join("x.wav"));
    let err = v["error"].as_str().unwrap();
    assert!(
        err.starts_with(
            "TTS generation failed (piper): Piper voice download failed for 'en_US-nobody-low': "
        ) && err.contains("404"),
        "{v}"
    );
}

/// A mirror that redirects to cloud metadata: refused at the redirect, before
/// any connection there, and nothing is written (piper's own `urlopen` would
/// follow it anywhere, so a configured mirror is fetched by `crate::net`).
#[test]
fn piper_mirror_redirecting_to_metadata_is_refused() {
    let py = piper_python();
    let env = TestEnv::new();
    let srv = TestServer::start(|_| Resp::redirect("http://169.254.169.254/latest/meta-data/"));
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: piper\n  piper:\n    voice: en_US-tiny-medium\n    voices_base_url: {}/voices\n",
            srv.base()
        ),
    );
    let vars = [("HERMES_PYTHON", py.to_str().unwrap())];
    let v = ours(&env, &vars, "Hi.", &env.dir.path().join("x.wav"));
    assert_eq!(
        v["error"],
        format!(
            "TTS generation failed (piper): tts.piper.voices_base_url is refused: fetching {}/voices/en/en_US/tiny/medium/en_US-tiny-medium.onnx?download=true reached a refused address: Blocked: URL targets a cloud metadata endpoint",
            srv.base()
        ),
        "{v}"
    );
    assert_eq!(srv.count(), 1, "{:?}", srv.paths());
    let voices = env.hermes_home().join("cache/piper-voices");
    let left: Vec<_> = std::fs::read_dir(&voices)
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn piper_package_writes_the_same_audio_as_hermes() {
    let py = piper_python();
    let env = TestEnv::new();
    let voices = env.dir.path().join("voices");
    std::fs::create_dir_all(&voices).unwrap();
    let (onnx, json_cfg) = tiny_voice(&py, env.dir.path());
    std::fs::write(voices.join("en_GB-tiny-low.onnx"), onnx).unwrap();
    std::fs::write(voices.join("en_GB-tiny-low.onnx.json"), json_cfg).unwrap();
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: piper\n  piper:\n    voice: en_GB-tiny-low\n    voices_dir: {}\n    length_scale: 1.5\n    volume: 0.5\n",
            voices.display()
        ),
    );
    // Hermes imports piper from its own process: give its Python piper's packages.
    let site = Command::new(&py)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    let site = String::from_utf8(site.stdout).unwrap().trim().to_string();
    let text = "Piper, as Hermes runs it.";
    let theirs_out = env.dir.path().join("hermes.wav");
    let theirs = hermes_tts(&env, &[("PYTHONPATH", &site)], text, &theirs_out);
    assert_eq!(theirs["success"], true, "{theirs}");
    let ours_out = env.dir.path().join("ours.wav");
    let v = ours(
        &env,
        &[("HERMES_PYTHON", py.to_str().unwrap())],
        text,
        &ours_out,
    );
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], theirs["provider"]);
    let (a, b) = (
        std::fs::read(&theirs_out).unwrap(),
        std::fs::read(&ours_out).unwrap(),
    );
    assert!(a.len() > 1000);
    assert!(a == b, "the WAVs differ ({} vs {} bytes)", a.len(), b.len());
}

#[test]
fn piper_without_the_package_or_command_says_how_to_install() {
    let env = TestEnv::new();
    env.write_hermes("config.yaml", "tts: {provider: piper}\n");
    let hermes_py = hermes_python("tools.tts_tool");
    let empty = tempfile::tempdir().unwrap();
    let vars = [
        ("HERMES_PYTHON", hermes_py.to_str().unwrap()),
        ("PATH", empty.path().to_str().unwrap()),
    ];
    let (tool, choice) = tts_choice(&env, &vars);
    assert_eq!(tool["available"], false);
    let why = choice["why"].as_str().unwrap();
    assert!(
        why.starts_with("Piper provider selected but 'piper-tts' package not installed. Run 'hermes tools' and select Piper under TTS, or install manually: pip install piper-tts (`piper` cannot be imported by ")
            && why.contains("HERMES_PYTHON"),
        "{why}"
    );
}

const NEUTTS_STANDIN: &str = r#"
"""API-shaped stand-in for the `neutts` package (NeuTTS Air), NOT the model: the
class and methods hermes-agent's tools/neutts_synth.py calls, with their
signatures. Each call is logged; infer returns a 0.5 s tone at 24 kHz."""
import json, math
LOG = "@LOG@"
def _log(call, **kw):
    with open(LOG, "a") as f:
        f.write(json.dumps({"call": call, **kw}, sort_keys=True) + "\n")
class NeuTTS:
    def __init__(self, backbone_repo="neuphonic/neutts-air", backbone_device="cpu",
                 codec_repo="neuphonic/neucodec", codec_device="cpu"):
        _log("NeuTTS", backbone_repo=backbone_repo, backbone_device=backbone_device,
             codec_repo=codec_repo, codec_device=codec_device)
    def encode_reference(self, ref_audio_path):
        _log("encode_reference", ref_audio_path=str(ref_audio_path))
        return [7, 8, 9]
    def infer(self, text, ref_codes, ref_text):
        _log("infer", text=text, ref_codes=list(ref_codes), ref_text=ref_text)
        return [0.5 * math.sin(i * 0.06) for i in range(12000)]
"#;

const KITTENTTS_STANDIN: &str = r#"
"""API-shaped stand-in for the `kittentts` package, NOT the model: the class and
method hermes-agent's `_generate_kittentts` calls, with KittenTTS 0.8's
signatures. Each call is logged; generate returns a 0.25 s tone at 24 kHz, as a
float32 numpy array (what KittenTTS returns) when numpy is importable."""
import json, math
LOG = "@LOG@"
def _log(call, **kw):
    with open(LOG, "a") as f:
        f.write(json.dumps({"call": call, **kw}, sort_keys=True) + "\n")
class KittenTTS:
    def __init__(self, model_name="KittenML/kitten-tts-nano-0.8", cache_dir=None):
        _log("KittenTTS", model_name=model_name, cache_dir=cache_dir)
    def generate(self, text, voice="expr-voice-5-m", speed=1.0, clean_text=False):
        _log("generate", text=text, voice=voice, speed=speed, clean_text=clean_text)
        samples = [0.5 * math.sin(i * 0.06) for i in range(6000)]
        try:
            import numpy as np
        except ImportError:
            return samples
        return np.array(samples, dtype=np.float32)
"#;

/// `py` (default: Hermes' Python) with the stand-ins importable: a wrapper that
/// puts them on `PYTHONPATH`. Returns (wrapper, stand-in dir, log).
fn standin_python(dir: &Path, py: Option<&Path>) -> (PathBuf, PathBuf, PathBuf) {
    let py = py.map_or_else(|| hermes_python("tools.tts_tool"), Path::to_path_buf);
    let mods = dir.join("standins");
    let log = dir.join("calls.jsonl");
    for (name, src) in [("neutts", NEUTTS_STANDIN), ("kittentts", KITTENTTS_STANDIN)] {
        std::fs::create_dir_all(mods.join(name)).unwrap();
        std::fs::write(
            mods.join(name).join("__init__.py"),
            src.replace("@LOG@", log.to_str().unwrap()),
        )
        .unwrap();
    }
    let wrapper = dir.join("python-with-standins");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nPYTHONPATH='{}' exec '{}' \"$@\"\n",
            mods.display(),
            py.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    (wrapper, mods, log)
}

fn take_calls(log: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn neutts_runs_the_package_with_hermes_calls_and_reference_voice() {
    let env = TestEnv::new();
    let (wrapper, mods, log) = standin_python(env.dir.path(), None);
    let ref_wav = env.dir.path().join("me.wav");
    std::fs::write(&ref_wav, b"RIFF").unwrap();
    let ref_txt = env.dir.path().join("me.txt");
    std::fs::write(&ref_txt, "  This is my voice.\n").unwrap();
    env.write_hermes(
        "config.yaml",
        &format!(
            "tts:\n  provider: neutts\n  neutts:\n    ref_audio: {}\n    ref_text: {}\n    model: neuphonic/neutts-nano\n",
            ref_wav.display(),
            ref_txt.display()
        ),
    );
    let vars = [("HERMES_PYTHON", wrapper.to_str().unwrap())];
    let (tool, choice) = tts_choice(&env, &vars);
    assert_eq!(tool["available"], true, "{tool}");
    assert_eq!(choice["provider"], "neutts");
    assert!(
        choice["why"]
            .as_str()
            .unwrap()
            .contains("`neutts` importable by"),
        "{choice}"
    );
    let out = env.dir.path().join("n.wav");
    let v = ours(&env, &vars, "Hello from NeuTTS.", &out);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "neutts");
    assert!((wav_secs(&out) - 0.5).abs() < 0.01);
    let calls = take_calls(&log);
    assert_eq!(
        calls,
        [
            json!({"call": "NeuTTS", "backbone_repo": "neuphonic/neutts-nano", "backbone_device": "cpu", "codec_repo": "neuphonic/neucodec", "codec_device": "cpu"}),
            json!({"call": "encode_reference", "ref_audio_path": ref_wav.to_str().unwrap()}),
            json!({"call": "infer", "text": "Hello from NeuTTS.", "ref_codes": [7, 8, 9], "ref_text": "This is my voice."}),
        ]
    );
    // Hermes' own neutts_synth.py makes the same calls on the same stand-in (it
    // then fails to write the WAV: its venv has neither soundfile nor numpy).
    let site = mods.to_str().unwrap();
    let _ = hermes_tts(
        &env,
        &[("PYTHONPATH", site)],
        "Hello from NeuTTS.",
        &env.dir.path().join("h.wav"),
    );
    assert_eq!(take_calls(&log), calls);

    // Without ref_audio: Hermes' bundled sample next to its tools package, which the
    // 0.19.0 wheel does not ship; both say so alike.
    env.write_hermes("config.yaml", "tts: {provider: neutts}\n");
    let v = ours(&env, &vars, "x", &env.dir.path().join("d.wav"));
    let theirs = hermes_tts(
        &env,
        &[("PYTHONPATH", site)],
        "x",
        &env.dir.path().join("hd.wav"),
    );
    assert_eq!(v["error"], theirs["error"], "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("TTS generation failed (neutts): NeuTTS synthesis failed: Error: reference audio not found: "),
        "{v}"
    );
}

#[test]
fn kittentts_runs_the_package_with_hermes_calls() {
    let env = TestEnv::new();
    let (wrapper, mods, log) = standin_python(env.dir.path(), None);
    env.write_hermes(
        "config.yaml",
        "tts:\n  provider: kittentts\n  kittentts:\n    voice: Luna\n    speed: 1.25\n",
    );
    let vars = [("HERMES_PYTHON", wrapper.to_str().unwrap())];
    let out = env.dir.path().join("k.wav");
    let v = ours(&env, &vars, "Hello from Kitten.", &out);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["provider"], "kittentts");
    assert!((wav_secs(&out) - 0.25).abs() < 0.01);
    let calls = take_calls(&log);
    assert_eq!(
        calls,
        [
            json!({"call": "KittenTTS", "model_name": "KittenML/kitten-tts-nano-0.8-int8", "cache_dir": null}),
            json!({"call": "generate", "text": "Hello from Kitten.", "voice": "Luna", "speed": 1.25, "clean_text": true}),
        ]
    );
    let _ = hermes_tts(
        &env,
        &[("PYTHONPATH", mods.to_str().unwrap())],
        "Hello from Kitten.",
        &env.dir.path().join("h.wav"),
    );
    assert_eq!(take_calls(&log), calls, "Hermes' calls");

    // A Python with numpy gets a float32 array back, as from the real package.
    let np_dir = tempfile::tempdir().unwrap();
    let (np_wrapper, _, np_log) = standin_python(np_dir.path(), Some(&piper_python()));
    let out = env.dir.path().join("np.wav");
    let v = ours(
        &env,
        &[("HERMES_PYTHON", np_wrapper.to_str().unwrap())],
        "Hello from Kitten.",
        &out,
    );
    assert_eq!(v["success"], true, "{v}");
    assert!((wav_secs(&out) - 0.25).abs() < 0.01);
    assert_eq!(take_calls(&np_log), calls);

    // Hermes' Python without the package: unavailable, with Hermes' install hint.
    let hermes_py = hermes_python("tools.tts_tool");
    let (tool, _) = tts_choice(&env, &[("HERMES_PYTHON", hermes_py.to_str().unwrap())]);
    assert_eq!(tool["available"], false);
    assert!(
        tool["reason"]
            .as_str()
            .unwrap()
            .starts_with("KittenTTS provider selected but 'kittentts' package not installed."),
        "{tool}"
    );
}

/// A relative `output_path` is relative to the server's working directory, as
/// Hermes' `Path(output_path).expanduser()` is to its own; the server under
/// test runs in the env's `work/` dir, never in the repository.
#[test]
fn a_relative_output_path_lands_in_the_working_directory_as_in_hermes() {
    let env = TestEnv::new();
    env.write_hermes(
        "config.yaml",
        "tts:\n  provider: echoer\n  providers:\n    echoer:\n      type: command\n      command: \"cat {input_path} > {output_path}\"\n      output_format: wav\n",
    );
    let mut rc = super::support::common::client(&env, &[]);
    let v = result_json(&rc.call_tool(
        "text_to_speech",
        json!({"text": "spoken", "output_path": "out/ours.wav"}),
    ));
    let want = env.work_dir().join("out/ours.wav");
    assert_eq!(v["file_path"], want.to_str().unwrap(), "{v}");
    assert_eq!(std::fs::read_to_string(&want).unwrap(), "spoken");
    let h = hermes_tts(&env, &[], "spoken", Path::new("out/hermes.wav"));
    assert_eq!(h["success"], true, "{h}");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("out/hermes.wav")).unwrap(),
        "spoken",
        "Hermes wrote {h}"
    );
}
