//! OCR of captured pixels for `get-text`: the engines, tried in order, and the answer they share.
//!
//! On Windows the system's own OCR (`Windows.Media.Ocr`, `winrt.rs`) is tried first where it can
//! be created; then the Tesseract CLI ([`tesseract`]), the only engine elsewhere. When none can
//! read, the answer is `unavailable` naming every engine tried and why each could not.

pub mod lines;
pub mod tesseract;
#[cfg(windows)]
mod winrt;

use std::time::Duration;

use mcec_desktop::types::{Point, Rect, RgbImage};
use mcec_rules::{ErrorCode, StopFlag, ToolError};
use serde::Serialize;

/// One word an OCR engine read.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Word {
    pub text: String,
    /// In desktop pixels.
    pub bounds: Rect,
    /// The engine's confidence, 0 to 100; absent where the engine gives none
    /// (`Windows.Media.Ocr` does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f32>,
}

/// What one OCR read: the engine, the text with one line per line read, and its words.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// `windows-media-ocr` or `tesseract`.
    pub engine: &'static str,
    pub text: String,
    pub words: Vec<Word>,
}

/// Why one engine could not be used, to be named in the `unavailable` answer.
#[derive(Debug, Clone, PartialEq)]
pub struct NotUsable {
    /// The engine as the detail names it (`Windows.Media.Ocr`, `Tesseract`).
    pub engine: &'static str,
    pub why: String,
}

/// The longest one OCR may take, whichever engine reads.
pub(crate) const OCR_TIMEOUT: Duration = Duration::from_secs(20);
/// How often a running OCR is looked at (done, stopped, past its time).
pub(crate) const POLL: Duration = Duration::from_millis(5);

/// The answer for an OCR that ran past [`OCR_TIMEOUT`] and was ended.
pub(crate) fn timed_out() -> ToolError {
    ToolError::new(ErrorCode::Timeout, "OCR took longer than 20 s and was ended.")
}

/// How to get an OCR engine where none is usable.
#[cfg(not(windows))]
pub(crate) const HOW_TO_INSTALL: &str = "Install the Debian packages `tesseract-ocr` and `tesseract-ocr-eng` \
     (apt-get install tesseract-ocr tesseract-ocr-eng).";
#[cfg(windows)]
pub(crate) const HOW_TO_INSTALL: &str = "Add an OCR language to Windows (Settings > Time & language > \
     Language & region, or `Add-WindowsCapability -Online -Name Language.OCR~~~en-US~0.0.1.0`), \
     or install Tesseract for Windows with its English data and put `tesseract.exe` on PATH \
     or set MCEC_TESSERACT to its full path.";

/// The `unavailable` answer naming every engine tried and why each could not read.
pub(crate) fn none_usable(tried: &[NotUsable]) -> ToolError {
    let why: Vec<String> = tried.iter().map(|t| format!("{}: {}", t.engine, t.why)).collect();
    ToolError::new(
        ErrorCode::Unavailable,
        format!("OCR is not available ({}). {HOW_TO_INSTALL}", why.join("; ")),
    )
}

/// Read `image`, whose top-left corner is `origin` on the desktop, with the first usable engine.
pub fn read(image: &RgbImage, origin: Point, stop: &StopFlag) -> Result<Reading, ToolError> {
    let mut tried = Vec::new();
    #[cfg(windows)]
    match winrt::read(image, origin, stop)? {
        Ok(reading) => return Ok(reading),
        Err(why) => tried.push(why),
    }
    match tesseract::read(image, origin, stop)? {
        Ok(reading) => Ok(reading),
        Err(why) => {
            tried.push(why);
            Err(none_usable(&tried))
        }
    }
}

/// The words as lines of text: a new line where the line changes (by the words' boxes).
pub fn join_words(words: &[Word]) -> String {
    let mut out = String::new();
    let mut last: Option<Rect> = None;
    for w in words {
        if let Some(prev) = last {
            let same_line = (w.bounds.y - prev.y).abs()
                < i32::try_from(prev.height.max(1)).unwrap_or(i32::MAX) / 2
                && w.bounds.x > prev.x;
            out.push(if same_line { ' ' } else { '\n' });
        }
        out.push_str(&w.text);
        last = Some(w.bounds);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_usable_names_every_engine_and_why() {
        let err = none_usable(&[
            NotUsable { engine: "Windows.Media.Ocr", why: "class not registered".into() },
            NotUsable { engine: "Tesseract", why: "`tesseract.exe` cannot be started".into() },
        ]);
        assert_eq!(err.code, ErrorCode::Unavailable);
        assert!(
            err.detail.starts_with(
                "OCR is not available (Windows.Media.Ocr: class not registered; \
                 Tesseract: `tesseract.exe` cannot be started). "
            ),
            "{}",
            err.detail
        );
        assert!(err.detail.ends_with(HOW_TO_INSTALL), "{}", err.detail);
    }

    #[test]
    fn a_word_without_confidence_leaves_it_out() {
        let w = Word { text: "OK".into(), bounds: Rect::new(1, 2, 3, 4), confidence: None };
        let json = serde_json::to_value(&w).unwrap();
        assert!(json.get("confidence").is_none(), "{json}");
        let w = Word { confidence: Some(90.0), ..w };
        assert_eq!(serde_json::to_value(&w).unwrap()["confidence"], 90.0);
    }
}
