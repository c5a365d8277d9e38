//! OCR of captured pixels with the Tesseract command-line program (Debian `tesseract-ocr`
//! with `tesseract-ocr-eng`): the image goes to its stdin as a PPM, words come back as TSV
//! with their boxes, which are moved into desktop pixels here.
//!
//! The CLI, not a binding: nothing to link (the binary builds and runs where Tesseract is not
//! installed, and says so when asked to read), one process per call that a stop can kill, and
//! measured fast enough (`bench/bench_a11y.py`).

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use mcec_desktop::types::{Point, Rect, RgbImage};
use mcec_rules::{ErrorCode, StopFlag, ToolError};

use super::{NotUsable, OCR_TIMEOUT, POLL, Reading, Word, join_words, timed_out};

/// The program run; `MCEC_TESSERACT` overrides it (tests point it at a missing file).
const PROGRAM: &str = "tesseract";

fn program() -> String {
    std::env::var("MCEC_TESSERACT").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| PROGRAM.to_string())
}

/// Tesseract cannot be used, and why (the caller names it with the other engines tried).
fn missing(why: impl std::fmt::Display) -> NotUsable {
    NotUsable { engine: "Tesseract", why: why.to_string() }
}

fn ppm(image: &RgbImage) -> Vec<u8> {
    let mut out = format!("P6\n{} {}\n255\n", image.width, image.height).into_bytes();
    out.extend_from_slice(&image.pixels);
    out
}

/// Read `image`, whose top-left corner is `origin` on the desktop: the reading, or why
/// Tesseract cannot be used here (missing, no English data); an error for a failed run.
pub fn read(
    image: &RgbImage,
    origin: Point,
    stop: &StopFlag,
) -> Result<Result<Reading, NotUsable>, ToolError> {
    Ok(read_words_with(&program(), image, origin, stop)?.map(|words| Reading {
        engine: "tesseract",
        text: join_words(&words),
        words,
    }))
}

fn read_words_with(
    program: &str,
    image: &RgbImage,
    origin: Point,
    stop: &StopFlag,
) -> Result<Result<Vec<Word>, NotUsable>, ToolError> {
    let spawned = Command::new(program)
        .args(["stdin", "stdout", "-l", "eng", "tsv"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Ok(Err(missing(format!("`{program}` cannot be started ({e})")))),
    };
    let input = ppm(image);
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            // A write error means Tesseract exited early; its status says why.
            let _ = s.write_all(&input);
        }
    });
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_string(&mut out);
        }
        out
    });
    let mut stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut out = String::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_string(&mut out);
        }
        out
    });
    let started = Instant::now();
    let status = loop {
        let waited = child.try_wait().map_err(|e| {
            ToolError::new(ErrorCode::Internal, format!("Tesseract cannot be waited for: {e}"))
        })?;
        if let Some(status) = waited {
            break status;
        }
        if stop.is_set() || started.elapsed() > OCR_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            if stop.is_set() {
                return Err(ToolError::emergency_stopped());
            }
            return Err(timed_out());
        }
        std::thread::sleep(POLL);
    };
    let _ = writer.join();
    let tsv = reader.join().unwrap_or_default();
    let errors = err_reader.join().unwrap_or_default();
    if !status.success() {
        if errors.contains("Failed loading language") || errors.contains("eng.traineddata") {
            return Ok(Err(missing("it has no English data (eng.traineddata)")));
        }
        let first = errors.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message");
        return Err(ToolError::new(ErrorCode::Internal, format!("Tesseract failed ({status}): {first}")));
    }
    Ok(Ok(parse_tsv(&tsv, origin)))
}

/// Words from Tesseract's TSV (level 5 rows with text), moved by `origin`.
pub fn parse_tsv(tsv: &str, origin: Point) -> Vec<Word> {
    tsv.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 12 || f[0] != "5" {
                return None;
            }
            let text = f[11].trim();
            let confidence: f32 = f[10].parse().ok()?;
            if text.is_empty() || confidence < 0.0 {
                return None;
            }
            let n = |i: usize| f[i].parse::<i32>().ok();
            let (x, y, w, h) = (n(6)?, n(7)?, n(8)?, n(9)?);
            Some(Word {
                text: text.to_string(),
                bounds: Rect::new(
                    origin.x + x,
                    origin.y + y,
                    w.max(0).unsigned_abs(),
                    h.max(0).unsigned_abs(),
                ),
                confidence: Some(confidence),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TSV: &str = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
1\t1\t0\t0\t0\t0\t0\t0\t520\t90\t-1\t\n\
5\t1\t1\t1\t1\t1\t16\t20\t120\t40\t96.5\tQUICK\n\
5\t1\t1\t1\t1\t2\t150\t20\t140\t40\t95.1\tBROWN\n\
5\t1\t1\t1\t2\t1\t16\t80\t90\t40\t91\tFOX\n";

    #[test]
    fn words_move_into_desktop_pixels_and_join_by_line() {
        let words = parse_tsv(TSV, Point::new(100, 200));
        assert_eq!(words.len(), 3);
        assert_eq!(words[0].bounds, Rect::new(116, 220, 120, 40));
        assert!((words[1].confidence.unwrap() - 95.1).abs() < 0.01);
        assert_eq!(join_words(&words), "QUICK BROWN\nFOX");
    }

    #[test]
    fn a_missing_program_is_not_usable_saying_why() {
        let image = RgbImage { width: 1, height: 1, pixels: vec![255, 255, 255] };
        let why = read_words_with("/nonexistent/tesseract", &image, Point::new(0, 0), &StopFlag::new())
            .unwrap()
            .unwrap_err();
        assert_eq!(why.engine, "Tesseract");
        assert!(why.why.starts_with("`/nonexistent/tesseract` cannot be started ("), "{}", why.why);
    }
}
