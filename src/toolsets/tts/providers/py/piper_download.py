# `python -m piper.download_voices VOICE --download-dir DIR` (hermes-agent:
# tools/tts_tool.py `_resolve_piper_voice_path`), with the voices' base URL
# moved when argv[1] is not empty (hermes-mcp's tts.piper.voices_base_url).
import sys

import piper.download_voices as d

base = sys.argv[1]
if base:
    d.URL_FORMAT = (
        base.rstrip("/")
        + "/{lang_family}/{lang_code}/{voice_name}/{voice_quality}/"
        + "{lang_code}-{voice_name}-{voice_quality}{extension}?download=true"
    )
sys.argv = ["piper.download_voices"] + sys.argv[2:]
d.main()
