# KittenTTS as hermes-agent tools/tts_tool.py `_generate_kittentts` runs it.
def main():
    req = read_request()
    kt_config = req["config"] if isinstance(req.get("config"), dict) else {}
    try:
        from kittentts import KittenTTS
    except ImportError as e:
        fail(e)
    try:
        model_name = kt_config.get("model", req["default_model"])
        voice = kt_config.get("voice", req["default_voice"])
        speed = kt_config.get("speed", 1.0)
        clean_text = kt_config.get("clean_text", True)
        model = KittenTTS(model_name)
        audio = model.generate(req["text"], voice=voice, speed=speed, clean_text=clean_text)
        write_wav(req["out"], audio, 24000)
    except Exception as e:
        fail(e)


main()
