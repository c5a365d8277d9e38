//! The mapping of an engine's lines of words (boxes in the image's pixels, as floats) into
//! mcec's answer: words in desktop pixels, one text line per line read. Pure, so it is tested
//! on every platform; `Windows.Media.Ocr` (src/ocr/winrt.rs) reads into it.

use mcec_desktop::types::{Point, Rect};

use super::Word;

/// A box in the image's pixels, as the engine gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImageBox {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
}

/// One word as the engine read it.
#[derive(Debug, Clone, PartialEq)]
pub struct LineWord {
    pub text: String,
    pub at: ImageBox,
    /// 0 to 100, where the engine gives one.
    pub confidence: Option<f32>,
}

/// The box in desktop pixels: the image's box moved by `origin`, its edges rounded outwards
/// so the word stays inside it.
pub fn to_desktop(at: ImageBox, origin: Point) -> Rect {
    let finite = |v: f32| if v.is_finite() { v.max(0.0) } else { 0.0 };
    let (x, y) = (finite(at.x), finite(at.y));
    let (right, bottom) = (x + finite(at.width), y + finite(at.height));
    // Image coordinates fit in i32/u32 (an image is at most a desktop); `as` saturates.
    let (left, top) = (x.floor() as i32, y.floor() as i32);
    let (right, bottom) = (right.ceil() as i32, bottom.ceil() as i32);
    Rect::new(
        origin.x.saturating_add(left),
        origin.y.saturating_add(top),
        (right - left).max(0).unsigned_abs(),
        (bottom - top).max(0).unsigned_abs(),
    )
}

/// The text (each line's words joined by a space, lines by a newline) and the words in
/// desktop pixels. Empty words, and lines with none left, are dropped.
pub fn from_lines(lines: Vec<Vec<LineWord>>, origin: Point) -> (String, Vec<Word>) {
    let mut text_lines = Vec::new();
    let mut words = Vec::new();
    for line in lines {
        let kept: Vec<LineWord> = line.into_iter().filter(|w| !w.text.trim().is_empty()).collect();
        if kept.is_empty() {
            continue;
        }
        text_lines.push(kept.iter().map(|w| w.text.trim()).collect::<Vec<_>>().join(" "));
        words.extend(kept.into_iter().map(|w| Word {
            text: w.text.trim().to_string(),
            bounds: to_desktop(w.at, origin),
            confidence: w.confidence,
        }));
    }
    (text_lines.join("\n"), words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str, x: f32, y: f32, width: f32, height: f32) -> LineWord {
        LineWord { text: text.into(), at: ImageBox { x, y, width, height }, confidence: None }
    }

    #[test]
    fn lines_become_text_and_words_in_desktop_pixels() {
        let lines = vec![
            vec![word("QUICK", 16.0, 20.0, 120.0, 40.0), word("BROWN", 150.5, 20.25, 139.5, 39.5)],
            vec![word("  ", 0.0, 0.0, 1.0, 1.0)],
            vec![word("FOX", 16.0, 80.0, 90.0, 40.0)],
        ];
        let (text, words) = from_lines(lines, Point::new(100, 200));
        assert_eq!(text, "QUICK BROWN\nFOX");
        assert_eq!(words.len(), 3);
        assert_eq!(words[0].bounds, Rect::new(116, 220, 120, 40));
        // Fractions round outwards: 150.5..290 by 20.25..59.75 covers 150..290 by 20..60.
        assert_eq!(words[1].bounds, Rect::new(250, 220, 140, 40));
        assert_eq!(words[2].confidence, None);
    }

    #[test]
    fn nonsense_boxes_stay_inside_the_image_origin() {
        let at = ImageBox { x: f32::NAN, y: -5.0, width: f32::INFINITY, height: 3.0 };
        assert_eq!(to_desktop(at, Point::new(10, 10)), Rect::new(10, 10, 0, 3));
    }
}
