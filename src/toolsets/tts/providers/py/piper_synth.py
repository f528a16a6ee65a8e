# Piper through the piper-tts package, as hermes-agent tools/tts_tool.py
# `_generate_piper_tts` does it (the voice is already resolved to a .onnx path).
def main():
    req = read_request()
    piper_config = req["config"] if isinstance(req.get("config"), dict) else {}
    try:
        from piper import PiperVoice
    except ImportError as e:
        fail(e)
    import wave

    try:
        use_cuda = bool(piper_config.get("use_cuda", False))
        _raw_speaker = piper_config.get("speaker_id", 0)
        if isinstance(_raw_speaker, bool) or not isinstance(_raw_speaker, int):
            speaker_id = 0
        else:
            speaker_id = _raw_speaker
        voice = PiperVoice.load(req["model"], use_cuda=use_cuda)
        syn_config = None
        has_advanced = any(
            k in piper_config
            for k in (
                "length_scale",
                "noise_scale",
                "noise_w_scale",
                "volume",
                "normalize_audio",
                "speaker_id",
            )
        )
        if has_advanced:
            try:
                from piper import SynthesisConfig

                syn_config = SynthesisConfig(
                    length_scale=float(piper_config.get("length_scale", 1.0)),
                    noise_scale=float(piper_config.get("noise_scale", 0.667)),
                    noise_w_scale=float(piper_config.get("noise_w_scale", 0.8)),
                    volume=float(piper_config.get("volume", 1.0)),
                    normalize_audio=bool(piper_config.get("normalize_audio", True)),
                    speaker_id=speaker_id,
                )
            except ImportError:
                sys.stderr.write(
                    "SynthesisConfig not available in this piper-tts version; advanced knobs ignored\n"
                )
        with wave.open(req["out"], "wb") as wav_file:
            if syn_config is not None:
                voice.synthesize_wav(req["text"], wav_file, syn_config=syn_config)
            else:
                voice.synthesize_wav(req["text"], wav_file)
    except Exception as e:
        fail(e)


main()
