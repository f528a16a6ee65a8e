# NeuTTS as hermes-agent tools/neutts_synth.py runs it (Hermes starts that
# script with its own Python; this is the same sequence of calls).
from pathlib import Path


def hermes_sample(name):
    """Hermes' bundled voice (`_default_neutts_ref_audio`): next to its tools package."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("tools.tts_tool")
        if spec is not None and spec.origin:
            return str(Path(spec.origin).parent / "neutts_samples" / name)
    except Exception:
        pass
    return str(Path("neutts_samples") / name)


def main():
    req = read_request()
    neutts_config = req["config"] if isinstance(req.get("config"), dict) else {}
    ref_audio = neutts_config.get("ref_audio", "") or hermes_sample("jo.wav")
    ref_text = neutts_config.get("ref_text", "") or hermes_sample("jo.txt")
    model = neutts_config.get("model", "neuphonic/neutts-air-q4-gguf")
    device = neutts_config.get("device", "cpu")
    ref_audio = Path(str(ref_audio)).expanduser()
    ref_text_path = Path(str(ref_text)).expanduser()
    if not ref_audio.exists():
        print(f"Error: reference audio not found: {ref_audio}", file=sys.stderr)
        sys.exit(1)
    if not ref_text_path.exists():
        print(f"Error: reference text not found: {ref_text_path}", file=sys.stderr)
        sys.exit(1)
    ref_text = ref_text_path.read_text(encoding="utf-8").strip()
    try:
        from neutts import NeuTTS
    except ImportError:
        print(
            "Error: neutts not installed. Run: python -m pip install -U neutts[all]",
            file=sys.stderr,
        )
        sys.exit(1)
    tts = NeuTTS(
        backbone_repo=model,
        backbone_device=device,
        codec_repo="neuphonic/neucodec",
        codec_device=device,
    )
    ref_codes = tts.encode_reference(str(ref_audio))
    wav = tts.infer(req["text"], ref_codes, ref_text)
    out_path = Path(req["out"])
    out_path.parent.mkdir(parents=True, exist_ok=True)
    write_wav(str(out_path), wav, 24000)
    print(f"OK: {out_path}", file=sys.stderr)


main()
