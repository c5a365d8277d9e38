//! OCR with Windows' own engine, `Windows.Media.Ocr` (WinRT): the engine for the user
//! profile's languages, a `SoftwareBitmap` (BGRA8) made from the capture, `RecognizeAsync`
//! looked at until done, the stop set or [`OCR_TIMEOUT`] passed (then cancelled), and its
//! lines of words mapped by [`lines::from_lines`].
//!
//! The engine gives no confidence: words carry none. Where the engine cannot be created (no
//! OCR language installed; under Wine, the class is not registered) or the image is over its
//! size limit, the reason goes back to the caller, which tries Tesseract next.

use std::time::Instant;

use mcec_desktop::types::{Point, RgbImage};
use mcec_rules::{ErrorCode, StopFlag, ToolError};
use windows::Graphics::Imaging::{BitmapPixelFormat, SoftwareBitmap};
use windows::Media::Ocr::{OcrEngine, OcrResult};
use windows::Storage::Streams::DataWriter;
use windows_future::{AsyncStatus, IAsyncOperation};

use super::lines::{self, ImageBox, LineWord};
use super::{NotUsable, OCR_TIMEOUT, POLL, Reading, timed_out};

/// The engine as the answers name it.
const ENGINE: &str = "Windows.Media.Ocr";

/// A WinRT error as the answer shows it: its message (or, where the system has none, as
/// under Wine, the HRESULT's name) and the HRESULT.
fn describe(e: &windows::core::Error) -> String {
    // The HRESULT's bits, as Windows prints them (0x80040154).
    let code = e.code().0.cast_unsigned();
    let message = e.message();
    let message = match message.trim() {
        "" => known(code).unwrap_or("no message"),
        m => m,
    };
    format!("{message} (HRESULT {code:#010X})")
}

/// Names for the HRESULTs activating the engine is expected to meet.
fn known(code: u32) -> Option<&'static str> {
    match code {
        0x8004_0154 => Some("class not registered (REGDB_E_CLASSNOTREG)"),
        0x8000_4002 => Some("no such interface (E_NOINTERFACE)"),
        0x8007_007E => Some("module not found"),
        0x8000_4001 => Some("not implemented (E_NOTIMPL)"),
        _ => None,
    }
}

fn failed(what: &str, e: &windows::core::Error) -> ToolError {
    ToolError::new(ErrorCode::Internal, format!("{ENGINE}: {what} failed: {}", describe(e)))
}

/// The engine for the user profile's languages, or why there is none.
fn engine() -> Result<OcrEngine, NotUsable> {
    let not_usable = |why: String| NotUsable { engine: ENGINE, why };
    match OcrEngine::TryCreateFromUserProfileLanguages() {
        Ok(engine) => Ok(engine),
        // A null engine without an error: none of the profile's languages has OCR installed.
        Err(e) if e.code().is_ok() => {
            Err(not_usable("no OCR language is installed for the user profile's languages".into()))
        }
        Err(e) => Err(not_usable(format!("the engine cannot be created: {}", describe(&e)))),
    }
}

/// The capture as BGRA8 with full alpha, the pixel format the engine reads.
fn bgra(image: &RgbImage) -> Vec<u8> {
    image.pixels.chunks_exact(3).flat_map(|p| [p[2], p[1], p[0], 255]).collect()
}

fn bitmap(image: &RgbImage) -> windows::core::Result<SoftwareBitmap> {
    let writer = DataWriter::new()?;
    writer.WriteBytes(&bgra(image))?;
    let buffer = writer.DetachBuffer()?;
    // Width and height fit in i32: a capture is at most the desktop.
    let (w, h) =
        (i32::try_from(image.width).unwrap_or(i32::MAX), i32::try_from(image.height).unwrap_or(i32::MAX));
    SoftwareBitmap::CreateCopyFromBuffer(&buffer, BitmapPixelFormat::Bgra8, w, h)
}

/// The operation's result, looked at every [`POLL`]; cancelled on the stop or past the bound.
fn wait(op: &IAsyncOperation<OcrResult>, stop: &StopFlag) -> Result<OcrResult, ToolError> {
    let started = Instant::now();
    loop {
        let status = op.Status().map_err(|e| failed("RecognizeAsync", &e))?;
        if status == AsyncStatus::Completed {
            return op.GetResults().map_err(|e| failed("RecognizeAsync", &e));
        }
        if status != AsyncStatus::Started {
            let code = op.ErrorCode().map(|c| c.0.cast_unsigned()).unwrap_or(0);
            let how = if status == AsyncStatus::Canceled { "was cancelled" } else { "failed" };
            return Err(ToolError::new(
                ErrorCode::Internal,
                format!("{ENGINE}: RecognizeAsync {how} (HRESULT {code:#010X})"),
            ));
        }
        if stop.is_set() || started.elapsed() > OCR_TIMEOUT {
            let _ = op.Cancel();
            return Err(if stop.is_set() { ToolError::emergency_stopped() } else { timed_out() });
        }
        std::thread::sleep(POLL);
    }
}

/// The result's lines of words with their boxes in the image's pixels.
fn lines_of(result: &OcrResult) -> windows::core::Result<Vec<Vec<LineWord>>> {
    let lines = result.Lines()?;
    let mut out = Vec::new();
    for i in 0..lines.Size()? {
        let words = lines.GetAt(i)?.Words()?;
        let mut line = Vec::new();
        for j in 0..words.Size()? {
            let word = words.GetAt(j)?;
            let r = word.BoundingRect()?;
            line.push(LineWord {
                text: word.Text()?.to_string_lossy(),
                at: ImageBox { x: r.X, y: r.Y, width: r.Width, height: r.Height },
                confidence: None,
            });
        }
        out.push(line);
    }
    Ok(out)
}

/// Read `image`, whose top-left corner is `origin` on the desktop: the reading, or why this
/// engine cannot be used here; an error for a recognition that failed, was stopped or timed out.
pub fn read(
    image: &RgbImage,
    origin: Point,
    stop: &StopFlag,
) -> Result<Result<Reading, NotUsable>, ToolError> {
    let engine = match engine() {
        Ok(engine) => engine,
        Err(why) => return Ok(Err(why)),
    };
    if let Ok(max) = OcrEngine::MaxImageDimension()
        && (image.width > max || image.height > max)
    {
        return Ok(Err(NotUsable {
            engine: ENGINE,
            why: format!("the image is {}x{} px, over its {max} px limit", image.width, image.height),
        }));
    }
    let bitmap = bitmap(image).map_err(|e| failed("making the SoftwareBitmap", &e))?;
    let op = engine.RecognizeAsync(&bitmap).map_err(|e| failed("RecognizeAsync", &e))?;
    let result = wait(&op, stop)?;
    let lines = lines_of(&result).map_err(|e| failed("reading the lines", &e))?;
    let (text, words) = lines::from_lines(lines, origin);
    Ok(Ok(Reading { engine: "windows-media-ocr", text, words }))
}
