//! The keys `browser_press` can press: Puppeteer's US keyboard layout
//! (puppeteer: packages/puppeteer-core/src/common/USKeyboardLayout.ts), one
//! entry per DOM `key` value, the first definition the layout gives for it.
//! That is why the arrow and page keys carry numpad codes (`Numpad8` for
//! `ArrowUp`) and `*` `+` `-` `/` are the numpad's: these are the values the
//! tool has always sent.

/// What `Input.dispatchKeyEvent` needs for one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyDef {
    /// DOM `KeyboardEvent.key`.
    pub(crate) key: &'static str,
    /// DOM `KeyboardEvent.code`.
    pub(crate) code: &'static str,
    /// `windowsVirtualKeyCode`.
    pub(crate) key_code: i64,
}

/// (key, code, windowsVirtualKeyCode).
#[rustfmt::skip]
const LAYOUT: &[(&str, &str, i64)] = &[
    ("0", "Digit0", 48), ("1", "Digit1", 49), ("2", "Digit2", 50), ("3", "Digit3", 51),
    ("4", "Digit4", 52), ("5", "Digit5", 53), ("6", "Digit6", 54), ("7", "Digit7", 55),
    ("8", "Digit8", 56), ("9", "Digit9", 57), ("Power", "Power", 0), ("Eject", "Eject", 0),
    ("Cancel", "Abort", 3), ("Help", "Help", 6), ("Backspace", "Backspace", 8), ("Tab", "Tab", 9),
    ("Clear", "Numpad5", 12), ("Enter", "Enter", 13), ("Shift", "ShiftLeft", 16),
    ("Control", "ControlLeft", 17), ("Alt", "AltLeft", 18), ("Pause", "Pause", 19),
    ("CapsLock", "CapsLock", 20), ("Escape", "Escape", 27), ("Convert", "Convert", 28),
    ("NonConvert", "NonConvert", 29), (" ", "Space", 32), ("PageUp", "Numpad9", 33),
    ("PageDown", "Numpad3", 34), ("End", "End", 35), ("Home", "Home", 36),
    ("ArrowLeft", "ArrowLeft", 37), ("ArrowUp", "Numpad8", 38), ("ArrowRight", "ArrowRight", 39),
    ("ArrowDown", "Numpad2", 40), ("Select", "Select", 41), ("Execute", "Open", 43),
    ("PrintScreen", "PrintScreen", 44), ("Insert", "Insert", 45), ("Delete", "Delete", 46),
    ("\u{0}", "NumpadDecimal", 46), ("a", "KeyA", 65), ("b", "KeyB", 66), ("c", "KeyC", 67),
    ("d", "KeyD", 68), ("e", "KeyE", 69), ("f", "KeyF", 70), ("g", "KeyG", 71), ("h", "KeyH", 72),
    ("i", "KeyI", 73), ("j", "KeyJ", 74), ("k", "KeyK", 75), ("l", "KeyL", 76), ("m", "KeyM", 77),
    ("n", "KeyN", 78), ("o", "KeyO", 79), ("p", "KeyP", 80), ("q", "KeyQ", 81), ("r", "KeyR", 82),
    ("s", "KeyS", 83), ("t", "KeyT", 84), ("u", "KeyU", 85), ("v", "KeyV", 86), ("w", "KeyW", 87),
    ("x", "KeyX", 88), ("y", "KeyY", 89), ("z", "KeyZ", 90), ("Meta", "MetaLeft", 91),
    ("ContextMenu", "ContextMenu", 93), ("*", "NumpadMultiply", 106), ("+", "NumpadAdd", 107),
    ("-", "NumpadSubtract", 109), ("/", "NumpadDivide", 111), ("F1", "F1", 112), ("F2", "F2", 113),
    ("F3", "F3", 114), ("F4", "F4", 115), ("F5", "F5", 116), ("F6", "F6", 117), ("F7", "F7", 118),
    ("F8", "F8", 119), ("F9", "F9", 120), ("F10", "F10", 121), ("F11", "F11", 122),
    ("F12", "F12", 123), ("F13", "F13", 124), ("F14", "F14", 125), ("F15", "F15", 126),
    ("F16", "F16", 127), ("F17", "F17", 128), ("F18", "F18", 129), ("F19", "F19", 130),
    ("F20", "F20", 131), ("F21", "F21", 132), ("F22", "F22", 133), ("F23", "F23", 134),
    ("F24", "F24", 135), ("NumLock", "NumLock", 144), ("ScrollLock", "ScrollLock", 145),
    ("AudioVolumeMute", "AudioVolumeMute", 173), ("AudioVolumeDown", "AudioVolumeDown", 174),
    ("AudioVolumeUp", "AudioVolumeUp", 175), ("MediaTrackNext", "MediaTrackNext", 176),
    ("MediaTrackPrevious", "MediaTrackPrevious", 177), ("MediaStop", "MediaStop", 178),
    ("MediaPlayPause", "MediaPlayPause", 179), (";", "Semicolon", 186), ("=", "Equal", 187),
    (",", "Comma", 188), (".", "Period", 190), ("`", "Backquote", 192), ("[", "BracketLeft", 219),
    ("\\", "Backslash", 220), ("]", "BracketRight", 221), ("'", "Quote", 222),
    ("AltGraph", "AltGraph", 225), ("CrSel", "Props", 247), ("Accept", "undefined", 30),
    ("ModeChange", "undefined", 31), ("Print", "undefined", 42), ("Attn", "undefined", 246),
    ("ExSel", "undefined", 248), ("EraseEof", "undefined", 249), ("Play", "undefined", 250),
    ("ZoomOut", "undefined", 251), (")", "Digit0", 48), ("!", "Digit1", 49), ("@", "Digit2", 50),
    ("#", "Digit3", 51), ("$", "Digit4", 52), ("%", "Digit5", 53), ("^", "Digit6", 54),
    ("&", "Digit7", 55), ("(", "Digit9", 57), ("A", "KeyA", 65), ("B", "KeyB", 66),
    ("C", "KeyC", 67), ("D", "KeyD", 68), ("E", "KeyE", 69), ("F", "KeyF", 70), ("G", "KeyG", 71),
    ("H", "KeyH", 72), ("I", "KeyI", 73), ("J", "KeyJ", 74), ("K", "KeyK", 75), ("L", "KeyL", 76),
    ("M", "KeyM", 77), ("N", "KeyN", 78), ("O", "KeyO", 79), ("P", "KeyP", 80), ("Q", "KeyQ", 81),
    ("R", "KeyR", 82), ("S", "KeyS", 83), ("T", "KeyT", 84), ("U", "KeyU", 85), ("V", "KeyV", 86),
    ("W", "KeyW", 87), ("X", "KeyX", 88), ("Y", "KeyY", 89), ("Z", "KeyZ", 90),
    (":", "Semicolon", 186), ("<", "Comma", 188), ("_", "Minus", 189), (">", "Period", 190),
    ("?", "Slash", 191), ("~", "Backquote", 192), ("{", "BracketLeft", 219),
    ("|", "Backslash", 220), ("}", "BracketRight", 221), ("\"", "Quote", 222),
];

/// The key named `key` (a DOM key value such as `Enter` or `a`).
pub(crate) fn find(key: &str) -> Option<KeyDef> {
    LAYOUT
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|&(key, code, key_code)| KeyDef {
            key,
            code,
            key_code,
        })
}

impl KeyDef {
    /// The text the key types without modifiers: `\r` for Enter, the
    /// character itself for a one-character key, none for the others.
    pub(crate) fn text(&self) -> Option<&'static str> {
        if self.key == "Enter" {
            Some("\r")
        } else if self.key.chars().count() == 1 {
            Some(self.key)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_as_the_us_layout_defines_them() {
        let enter = find("Enter").unwrap();
        assert_eq!(
            (enter.code, enter.key_code, enter.text()),
            ("Enter", 13, Some("\r"))
        );
        let a = find("a").unwrap();
        assert_eq!((a.code, a.key_code, a.text()), ("KeyA", 65, Some("a")));
        assert_eq!(find("A").unwrap().code, "KeyA");
        assert_eq!(find("!").unwrap().code, "Digit1");
        assert_eq!(find(" ").unwrap().text(), Some(" "));
        let down = find("ArrowDown").unwrap();
        assert_eq!(
            (down.code, down.key_code, down.text()),
            ("Numpad2", 40, None)
        );
        assert_eq!(find("\\").unwrap().code, "Backslash");
        assert_eq!(find("\"").unwrap().code, "Quote");
        assert_eq!(find("F12").unwrap().key_code, 123);
        assert!(find("Unknown").is_none() && find("enter").is_none());
        // One entry per key.
        let mut keys: Vec<&str> = LAYOUT.iter().map(|(k, _, _)| *k).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), LAYOUT.len());
        assert_eq!(LAYOUT.len(), 170);
    }
}
