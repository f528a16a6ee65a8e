# `python -m piper.download_voices VOICE --download-dir DIR` (hermes-agent:
# tools/tts_tool.py `_resolve_piper_voice_path`): piper's own download from its
# default URL. A configured tts.piper.voices_base_url is fetched by hermes-mcp
# itself (src/toolsets/tts/providers/pylocal.rs), never by this script.
import sys

import piper.download_voices as d

sys.argv = ["piper.download_voices"] + sys.argv[1:]
d.main()
