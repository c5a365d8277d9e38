//! `get-text`: the text of an element, a window or a desktop region. The accessibility tree
//! first (the Text interface of labels, entries, documents, terminals); where it has none,
//! OCR of the pixels inside the element's or window's bounds. The answer names its source.

use mcec_desktop::types::{Point, Rect};
use mcec_rules::{ErrorCode, StopFlag, ToolError};
use serde::Serialize;

use super::{A11yTools, FIND_BOUNDS, WindowRef};
use crate::model::Element;
use crate::ocr::{self, Word};
use crate::requests::{GetTextRequest, TextSource};
use crate::seam::{NodeRef, Want};
use crate::walk::{self, Bounds, Cut};

/// The most text one answer carries, in characters.
pub const MAX_TEXT: usize = 100_000;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTextResult {
    /// `accessibility` or `ocr`.
    pub source: &'static str,
    pub text: String,
    /// True when the text was longer than 100000 characters and was cut.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// For OCR: the engine that read, `windows-media-ocr` (Windows' own) or `tesseract`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<&'static str>,
    /// For OCR: each word with its box in desktop pixels and, from Tesseract, its confidence
    /// (0-100; `Windows.Media.Ocr` gives none, so its words have no `confidence`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub words: Option<Vec<Word>>,
    /// The area read by OCR, in desktop pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Rect>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<Element>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
}

impl GetTextResult {
    fn accessibility(text: String) -> GetTextResult {
        let truncated = text.chars().count() > MAX_TEXT;
        let text = if truncated { text.chars().take(MAX_TEXT).collect() } else { text };
        GetTextResult {
            source: "accessibility",
            text,
            truncated,
            engine: None,
            words: None,
            bounds: None,
            element: None,
            window: None,
            cut: None,
        }
    }
}

fn no_text(what: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ElementNotFound,
        format!("{what} exposes no accessible text; `source: ocr` (or `auto`) reads its pixels."),
    )
}

impl A11yTools {
    pub fn get_text(&self, req: &GetTextRequest, stop: &StopFlag) -> Result<GetTextResult, ToolError> {
        let source = req.source.unwrap_or_default();
        let sel = req.selector();
        let element_given = req.element_id.is_some() || req.value.is_some();
        if let Some(region) = req.region {
            if element_given || !sel.is_empty() {
                return Err(ToolError::bad_argument(
                    "region",
                    "give a region, an element or a window, not several",
                ));
            }
            if source == TextSource::Accessibility {
                return Err(ToolError::bad_argument("source", "a region is read by OCR only"));
            }
            let (Ok(x), Ok(y), Ok(w), Ok(h)) = (
                i32::try_from(region.x),
                i32::try_from(region.y),
                u32::try_from(region.width),
                u32::try_from(region.height),
            ) else {
                return Err(ToolError::bad_argument("region", "lies outside the desktop"));
            };
            if w == 0 || h == 0 || w > 16_384 || h > 16_384 {
                return Err(ToolError::bad_argument("region", "width and height must be 1 to 16384"));
            }
            return self.ocr(Rect::new(x, y, w, h), stop);
        }
        if element_given {
            let node = self.resolve(&sel, &req.target(), stop)?;
            return self.element_text(&node, source, stop);
        }
        let window = self.target_window(&sel)?;
        let mut out = if source == TextSource::Ocr {
            None
        } else {
            match self.backend.window_root(&window) {
                Ok(root) => {
                    let (text, cut) = self.window_text(&root, stop)?;
                    (!text.trim().is_empty())
                        .then(|| GetTextResult { cut, ..GetTextResult::accessibility(text) })
                }
                // No tree to read (the application is not on the bus, or there is no bus):
                // `auto` reads the window's pixels, as it does for a tree without text.
                Err(e) if source == TextSource::Auto && e.code == ErrorCode::Unavailable => None,
                Err(e) => return Err(e),
            }
        };
        if out.is_none() {
            if source == TextSource::Accessibility {
                return Err(no_text(&format!("The window {:?}", window.title)));
            }
            out = Some(self.ocr(window.geometry()?, stop)?);
        }
        let mut out = out.unwrap_or_else(|| GetTextResult::accessibility(String::new()));
        out.window = Some(WindowRef::from(&window));
        Ok(out)
    }

    fn element_text(
        &self,
        node: &NodeRef,
        source: TextSource,
        stop: &StopFlag,
    ) -> Result<GetTextResult, ToolError> {
        let raw = self.backend.describe(node, Want::DETAILS)?;
        let element = self.element(node, raw.clone());
        if source != TextSource::Ocr
            && let Some(text) = self.backend.text(node, MAX_TEXT)?
            && !text.is_empty()
        {
            return Ok(GetTextResult { element: Some(element), ..GetTextResult::accessibility(text) });
        }
        if source == TextSource::Accessibility {
            return Err(no_text(&format!("The {} {:?}", raw.role, raw.name)));
        }
        let Some(bounds) = raw.bounds else {
            return Err(ToolError::new(
                ErrorCode::NoTarget,
                "The element has no bounds on screen to read by OCR.",
            ));
        };
        Ok(GetTextResult { element: Some(element), ..self.ocr(bounds, stop)? })
    }

    /// The text of every element with a Text interface under `root`, in tree order, one per line.
    fn window_text(&self, root: &NodeRef, stop: &StopFlag) -> Result<(String, Option<Cut>), ToolError> {
        let bounds = Bounds { want: Want { text: true, ..Want::default() }, ..FIND_BOUNDS };
        let found = walk::walk(self.backend.as_ref(), root, bounds, stop)?;
        let mut lines = Vec::new();
        let mut total = 0;
        for v in
            found.visited.iter().filter(|v| v.element.text.as_deref().is_some_and(|t| !t.trim().is_empty()))
        {
            if total > MAX_TEXT {
                break;
            }
            let full = match self.backend.text(&v.node, MAX_TEXT) {
                Ok(Some(t)) => t,
                _ => continue,
            };
            total += full.chars().count();
            lines.push(full);
        }
        Ok((lines.join("\n"), found.cut))
    }

    fn ocr(&self, area: Rect, stop: &StopFlag) -> Result<GetTextResult, ToolError> {
        let image = self.desktop.backend().capture(area)?.image;
        let reading = ocr::read(&image, Point::new(area.x, area.y), stop)?;
        Ok(GetTextResult {
            source: "ocr",
            text: reading.text,
            truncated: false,
            engine: Some(reading.engine),
            words: Some(reading.words),
            bounds: Some(area),
            element: None,
            window: None,
            cut: None,
        })
    }
}
