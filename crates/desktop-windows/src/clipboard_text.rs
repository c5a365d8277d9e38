//! The pure half of the Win32 clipboard: line ends and size bounds, built and tested on every
//! target (the Win32 calls are in `desktop/clipboard.rs`).
//!
//! Windows text on the clipboard ends its lines with CR LF (Notepad and the edit controls
//! paste a lone LF as no line break at all on older Windows); an agent's text, like the X11
//! selection's, ends them with LF. So `set` writes CR LF and `get` gives LF back, and text set
//! then read comes back as it was given.

/// The most UTF-16 units `get` reads (8 MiB of clipboard memory): beyond it the answer is
/// `unavailable`, as X11 answers a selection too large for one transfer.
pub const MAX_GET_UNITS: usize = 4 << 20;

/// `text` as CF_UNICODETEXT wants it: lone LFs made CR LF, NUL-terminated UTF-16.
pub fn to_clipboard(text: &str) -> Vec<u16> {
    let mut out = Vec::with_capacity(text.len() + 1);
    let mut previous = '\0';
    for c in text.chars() {
        if c == '\n' && previous != '\r' {
            out.push(u16::from(b'\r'));
        }
        let mut units = [0u16; 2];
        out.extend_from_slice(c.encode_utf16(&mut units));
        previous = c;
    }
    out.push(0);
    out
}

/// The text of a CF_UNICODETEXT block: up to its first NUL (the block may be larger than the
/// text), CR LF made LF; invalid UTF-16 becomes U+FFFD.
pub fn from_clipboard(units: &[u16]) -> String {
    let end = units.iter().position(|&u| u == 0).unwrap_or(units.len());
    String::from_utf16_lossy(&units[..end]).replace("\r\n", "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_in_cr_lf_on_the_clipboard_and_in_lf_for_the_agent() {
        let text = "hé€ ✓ 漢字\ntwo\r\nthree\n";
        let units = to_clipboard(text);
        assert_eq!(units.last(), Some(&0));
        assert_eq!(String::from_utf16(&units[..units.len() - 1]).unwrap(), "hé€ ✓ 漢字\r\ntwo\r\nthree\r\n");
        assert_eq!(from_clipboard(&units), "hé€ ✓ 漢字\ntwo\nthree\n");
    }

    #[test]
    fn characters_outside_the_basic_plane_survive() {
        let units = to_clipboard("🦀");
        assert_eq!(units.len(), 3, "a surrogate pair and the NUL");
        assert_eq!(from_clipboard(&units), "🦀");
    }

    #[test]
    fn the_text_ends_at_the_first_nul() {
        let mut units: Vec<u16> = "ab".encode_utf16().collect();
        units.extend([0, u16::from(b'x'), 0]);
        assert_eq!(from_clipboard(&units), "ab");
        assert_eq!(from_clipboard(&[u16::from(b'z')]), "z", "no NUL: the whole block");
        assert_eq!(from_clipboard(&[0xD800, 0]), "\u{FFFD}");
    }
}
