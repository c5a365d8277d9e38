//! mcec's own image downscaler: separable convolution with a triangle ("bilinear") filter
//! widened by the scale factor, so every output pixel averages the source pixels it covers.
//!
//! It exists for binary size (issue 30): `fast_image_resize` did the same job with about
//! 800 KB of kernels (SSE4.1, AVX2 and plain Rust, for each pixel type), where mcec needs one
//! filter, downscaling only, on 3- and 4-byte pixels. The filter and its fixed-point weights
//! are the ones `fast_image_resize`'s `Convolution(Bilinear)` computed, except that each output
//! pixel's weights are made to sum to exactly one (so a flat colour stays that colour): the two
//! outputs differed by at most one level (docs/decisions.md, "Binary size and memory").
//!
//! The vertical pass comes first, one output row at a time, and eight such rows are kept by
//! source column (each column's eight pixels side by side), so the horizontal pass narrows
//! eight rows at once as a weighted sum of whole columns: the same straight-lane loop as the
//! vertical pass, where one output pixel's short dot product would not vectorize. The only
//! work buffer is those columns (120 KB at 4K), however tall the frame. Both loops are plain
//! slice arithmetic on `i32` accumulators that LLVM vectorizes at `opt-level = 2`, with no
//! intrinsics; on x86-64 the same code is compiled a second time for AVX2 and picked at run
//! time when the CPU has it (the SSE2 baseline is about half as fast), so every target builds
//! and runs one algorithm.

/// The first source pixel of one output pixel and how many source pixels it weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    first: usize,
    len: usize,
}

/// One axis's weights: per output pixel a [`Span`] and its weights (in `weights`, one span
/// after the other), fixed point with `precision` fractional bits, each span's weights
/// summing to exactly `1 << precision`.
#[derive(Debug, Clone)]
struct Taps {
    precision: u32,
    spans: Vec<Span>,
    weights: Vec<i16>,
}

/// Fractional bits at most: a pixel (8 bits) times the weights' sum must fit an `i32`.
const MAX_PRECISION: u32 = 21;

impl Taps {
    /// The weights taking `src` pixels to `dst` (both at least 1) along one axis.
    fn new(src: usize, dst: usize) -> Taps {
        let scale = src as f64 / dst as f64;
        // Downscaling widens the triangle to cover every source pixel under an output pixel.
        let filter_scale = scale.max(1.0);
        let radius = filter_scale;
        let recip = 1.0 / filter_scale;
        let mut spans = Vec::with_capacity(dst);
        let mut real: Vec<f64> = Vec::with_capacity(dst * (radius.ceil() as usize * 2 + 1));
        for out in 0..dst {
            let center = (out as f64 + 0.5) * scale;
            let lo = (center - radius).floor().max(0.0) as usize;
            let hi = ((center + radius).ceil() as usize).min(src);
            // Source pixel x's centre is x + 0.5: measure from `center - 0.5` to x.
            let center = center - 0.5;
            let at = real.len();
            let mut first = lo;
            for x in lo..hi {
                let w = triangle((x as f64 - center) * recip);
                if w == 0.0 && x == first {
                    first += 1;
                } else {
                    real.push(w);
                }
            }
            while real.len() > at && real.last() == Some(&0.0) {
                real.pop();
            }
            let sum: f64 = real[at..].iter().sum();
            if sum > 0.0 {
                real[at..].iter_mut().for_each(|w| *w /= sum);
            }
            spans.push(Span { first, len: real.len() - at });
        }
        Taps::fixed_point(spans, &real)
    }

    /// Round `real` weights (each span's summing to 1) to `i16` with as many fractional bits
    /// as the largest weight leaves room for, then put each span's rounding error on its
    /// largest weight so the span sums to exactly `1 << precision`: a flat colour stays
    /// exactly that colour.
    fn fixed_point(spans: Vec<Span>, real: &[f64]) -> Taps {
        let max = real.iter().copied().fold(0.0, f64::max);
        let precision = (0..MAX_PRECISION)
            .find(|p| (max * f64::from(1u32 << (p + 1))).round() >= f64::from(i16::MAX) + 1.0)
            .unwrap_or(MAX_PRECISION);
        let one = 1i32 << precision;
        let mut weights: Vec<i16> = Vec::with_capacity(real.len());
        let mut at = 0;
        for span in &spans {
            let start = weights.len();
            weights.extend(real[at..at + span.len].iter().map(|w| (w * f64::from(one)).round() as i16));
            at += span.len;
            let mine = &mut weights[start..];
            let error = one - mine.iter().map(|&w| i32::from(w)).sum::<i32>();
            if let Some(largest) = mine.iter_mut().max() {
                *largest = (i32::from(*largest) + error).clamp(0, i32::from(i16::MAX)) as i16;
            }
        }
        Taps { precision, spans, weights }
    }

    /// Each output pixel's span and weights, in order.
    fn iter(&self) -> impl Iterator<Item = (Span, &[i16])> {
        let mut rest = self.weights.as_slice();
        self.spans.iter().map(move |&span| {
            let (mine, after) = rest.split_at(span.len);
            rest = after;
            (span, mine)
        })
    }
}

/// The triangle filter of support 1.
fn triangle(x: f64) -> f64 {
    (1.0 - x.abs()).max(0.0)
}

/// A sum of `precision`-bit fixed-point products (with its rounding half already in) as a byte.
#[inline(always)]
fn clip(sum: i32, precision: u32) -> u8 {
    (sum >> precision).clamp(0, 255) as u8
}

/// Scale `src` (`src_w`x`src_h` pixels of `C` bytes, rows unpadded) into `dst`
/// (`dst_w`x`dst_h` the same way), every byte a channel of its own (a fourth byte is scaled
/// like a colour, not used as alpha). `L` is `C` times the output rows narrowed together
/// (8 for 3- and 4-byte pixels: `L` 24 or 32). `work` is the work buffer, kept by the caller
/// between frames. `Err` when a size is 0 or a buffer is shorter than its size says.
pub(crate) fn resize<const C: usize, const L: usize>(
    src: &[u8],
    src_size: (usize, usize),
    dst: &mut [u8],
    dst_size: (usize, usize),
    work: &mut Vec<u8>,
) -> Result<(), String> {
    const { assert!(C > 0 && L > 0 && L.is_multiple_of(C)) };
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[allow(unsafe_code)]
        // SAFETY: `resize_avx2` only needs a CPU with AVX2, and this one has it (checked above).
        return unsafe { resize_avx2::<C, L>(src, src_size, dst, dst_size, work) };
    }
    resize_here::<C, L>(src, src_size, dst, dst_size, work)
}

/// [`resize_here`] compiled for AVX2: the same code, which LLVM vectorizes 8 lanes wide
/// (the x86-64 baseline, SSE2, has 4).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn resize_avx2<const C: usize, const L: usize>(
    src: &[u8],
    src_size: (usize, usize),
    dst: &mut [u8],
    dst_size: (usize, usize),
    work: &mut Vec<u8>,
) -> Result<(), String> {
    resize_here::<C, L>(src, src_size, dst, dst_size, work)
}

/// [`resize`] in the instruction set of the function it is inlined into: rows are narrowed
/// `L / C` at a time, from `work` holding for every source column that column's pixels in
/// those rows side by side (`L` bytes).
#[inline(always)]
fn resize_here<const C: usize, const L: usize>(
    src: &[u8],
    (src_w, src_h): (usize, usize),
    dst: &mut [u8],
    (dst_w, dst_h): (usize, usize),
    work: &mut Vec<u8>,
) -> Result<(), String> {
    if src_w == 0 || src_h == 0 || dst_w == 0 || dst_h == 0 {
        return Err(format!("cannot scale {src_w}x{src_h} to {dst_w}x{dst_h}"));
    }
    let (src_stride, dst_stride) = (src_w * C, dst_w * C);
    let (Some(src), Some(dst)) = (src.get(..src_stride * src_h), dst.get_mut(..dst_stride * dst_h)) else {
        return Err(format!("pixel buffers too short for {src_w}x{src_h} to {dst_w}x{dst_h}"));
    };
    let down = (src_h != dst_h).then(|| Taps::new(src_h, dst_h));
    let mut spans = down.as_ref().map(Taps::iter);
    if src_w == dst_w {
        for (y, dst_row) in dst.chunks_exact_mut(dst_stride).enumerate() {
            match (&down, spans.as_mut().and_then(Iterator::next)) {
                (Some(down), Some((span, ks))) => {
                    let rows = &src[span.first * src_stride..(span.first + span.len) * src_stride];
                    vertical::<L>(rows, src_stride, ks, down.precision, |at, bytes| {
                        dst_row[at..at + bytes.len()].copy_from_slice(bytes);
                    });
                }
                _ => dst_row.copy_from_slice(&src[y * src_stride..(y + 1) * src_stride]),
            }
        }
        return Ok(());
    }
    let across = Taps::new(src_w, dst_w);
    work.resize(src_w * L, 0);
    let columns = work.as_chunks_mut::<L>().0;
    for (group, dst_rows) in dst.chunks_mut(dst_stride * (L / C)).enumerate() {
        for r in 0..dst_rows.len() / dst_stride {
            // Row `r` of the group into the `r`th pixel of every column.
            let mut put = |at: usize, bytes: &[u8]| {
                for (column, px) in columns[at / C..].iter_mut().zip(bytes.as_chunks::<C>().0) {
                    column[r * C..(r + 1) * C].copy_from_slice(px);
                }
            };
            match (&down, spans.as_mut().and_then(Iterator::next)) {
                (Some(down), Some((span, ks))) => {
                    let rows = &src[span.first * src_stride..(span.first + span.len) * src_stride];
                    vertical::<L>(rows, src_stride, ks, down.precision, put);
                }
                _ => {
                    let y = group * (L / C) + r;
                    put(0, &src[y * src_stride..(y + 1) * src_stride]);
                }
            }
        }
        horizontal::<C, L>(columns, &across, dst_rows, dst_stride);
    }
    Ok(())
}

/// Weigh the rows of `rows` (each `stride` bytes) by `ks` into one row, handed to `put` as
/// (offset, bytes) `B` bytes at a time (fewer at the end). `B` `i32` accumulators stay in
/// registers across all the rows of a span (24 or 32: 6 or 8 SSE registers).
#[inline(always)]
fn vertical<const B: usize>(
    rows: &[u8],
    stride: usize,
    ks: &[i16],
    precision: u32,
    mut put: impl FnMut(usize, &[u8]),
) {
    let half = 1i32 << (precision - 1);
    let taps = rows.chunks_exact(stride).zip(ks);
    for b in 0..stride / B {
        let mut sums = [half; B];
        for (src, &k) in taps.clone() {
            let src = &src.as_chunks::<B>().0[b];
            for (sum, &v) in sums.iter_mut().zip(src) {
                *sum += i32::from(v) * i32::from(k);
            }
        }
        put(b * B, &sums.map(|sum| clip(sum, precision)));
    }
    let done = stride - stride % B;
    let mut tail = [0u8; B];
    for (i, o) in tail[..stride % B].iter_mut().enumerate() {
        let mut sum = half;
        for (src, &k) in taps.clone() {
            sum += i32::from(src[done + i]) * i32::from(k);
        }
        *o = clip(sum, precision);
    }
    put(done, &tail[..stride % B]);
}

/// Weigh `columns` (each the `C`-byte pixels of up to `L / C` rows side by side) by `taps`
/// into the rows of `out` (each `stride` bytes).
#[inline(always)]
fn horizontal<const C: usize, const L: usize>(
    columns: &[[u8; L]],
    taps: &Taps,
    out: &mut [u8],
    stride: usize,
) {
    let half = 1i32 << (taps.precision - 1);
    for (x, (span, ks)) in taps.iter().enumerate() {
        let mut sums = [half; L];
        for (column, &k) in columns[span.first..].iter().zip(ks) {
            for (sum, &v) in sums.iter_mut().zip(column) {
                *sum += i32::from(v) * i32::from(k);
            }
        }
        let bytes = sums.map(|sum| clip(sum, taps.precision));
        for (out_row, px) in out.chunks_exact_mut(stride).zip(bytes.as_chunks::<C>().0) {
            out_row[x * C..(x + 1) * C].copy_from_slice(px);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaled<const C: usize, const L: usize>(
        src: &[u8],
        from: (usize, usize),
        to: (usize, usize),
    ) -> Vec<u8> {
        let mut dst = vec![0; to.0 * to.1 * C];
        resize::<C, L>(src, from, &mut dst, to, &mut Vec::new()).unwrap();
        dst
    }

    fn flat<const C: usize>(px: [u8; C], (w, h): (usize, usize)) -> Vec<u8> {
        px.iter().copied().cycle().take(w * h * C).collect()
    }

    #[test]
    fn a_flat_colour_stays_exactly_that_colour() {
        for (from, to) in [
            ((1280, 800), (640, 400)),
            ((1000, 10), (333, 7)),
            ((3840, 2160), (1280, 720)),
            ((7, 5), (3, 2)),
            ((1920, 1080), (1429, 804)),
        ] {
            let rgb = [17, 254, 128];
            assert_eq!(scaled::<3, 24>(&flat(rgb, from), from, to), flat(rgb, to), "{from:?} -> {to:?}");
            let x4 = [255, 1, 0, 99];
            assert_eq!(scaled::<4, 32>(&flat(x4, from), from, to), flat(x4, to), "{from:?} -> {to:?}");
        }
    }

    #[test]
    fn weights_sum_to_one_in_fixed_point() {
        for (src, dst) in [(1280, 640), (1000, 333), (3840, 1280), (10, 7), (5, 5), (1, 1), (2160, 1)] {
            let taps = Taps::new(src, dst);
            assert_eq!(taps.spans.len(), dst);
            for (span, ks) in taps.iter() {
                assert_eq!(
                    ks.iter().map(|&k| i32::from(k)).sum::<i32>(),
                    1 << taps.precision,
                    "{src} -> {dst}"
                );
                assert!(span.first + span.len <= src && span.len > 0);
            }
        }
    }

    #[test]
    fn halving_a_checkerboard_gives_the_mean_grey() {
        // Pixel-sized squares: every 2x2 block holds two black and two white pixels.
        let (w, h) = (64, 48);
        let board: Vec<u8> =
            (0..w * h).flat_map(|i| [if (i % w + i / w) % 2 == 0 { 255 } else { 0 }; 3]).collect();
        let (sw, sh) = (w / 2, h / 2);
        let small = scaled::<3, 24>(&board, (w, h), (sw, sh));
        for (i, px) in small.chunks_exact(3).enumerate() {
            let (x, y) = (i % sw, i / sw);
            // The edge pixels weigh fewer source pixels (the filter is cut there), so their
            // mean leans to whichever colour the cut kept more of.
            let want = if x == 0 || y == 0 || x == sw - 1 || y == sh - 1 { 118..=138 } else { 127..=128 };
            assert!(px.iter().all(|v| want.contains(v)), "({x}, {y}): {px:?}");
        }
    }

    #[test]
    fn a_bright_column_is_spread_but_its_energy_kept() {
        let (w, h) = (30, 4);
        let mut src = vec![0u8; w * h];
        for y in 0..h {
            src[y * w + 14] = 240;
        }
        let small = scaled::<1, 8>(&src, (w, h), (10, 4));
        let row = &small[..10];
        assert!(row.iter().filter(|&&v| v > 0).count() >= 2, "spread over neighbours: {row:?}");
        let energy: u32 = row.iter().map(|&v| u32::from(v)).sum();
        // 240 over 3 source pixels per output pixel: 80 in all, within rounding.
        assert!((79..=81).contains(&energy), "{row:?}");
        assert!(small.chunks_exact(10).all(|r| r == row), "every row alike");
    }

    #[test]
    fn output_size_is_exact_and_thin_images_work() {
        for (from, to) in
            [((1, 100), (1, 7)), ((100, 1), (7, 1)), ((1, 1), (1, 1)), ((5, 9), (1, 1)), ((9, 5), (9, 2))]
        {
            let src: Vec<u8> = (0..from.0 * from.1 * 4).map(|i| (i * 7 % 256) as u8).collect();
            let mut dst = vec![0xAA; to.0 * to.1 * 4 + 8];
            resize::<4, 32>(&src, from, &mut dst, to, &mut Vec::new()).unwrap();
            assert!(
                dst[to.0 * to.1 * 4..].iter().all(|&v| v == 0xAA),
                "{from:?} -> {to:?} wrote past its size"
            );
        }
        // A column of a ramp, thinned: the ends average towards the middle, in order.
        let ramp: Vec<u8> = (0..100).map(|i| (i * 2) as u8).collect();
        let thin = scaled::<1, 8>(&ramp, (1, 100), (1, 10));
        assert!(thin.windows(2).all(|p| p[0] < p[1]), "{thin:?}");
        assert_eq!(scaled::<1, 8>(&ramp, (100, 1), (10, 1)), thin, "a row scales as a column does");
    }

    #[test]
    fn three_and_four_byte_pixels_agree_and_the_fourth_byte_is_a_colour() {
        let (w, h) = (37, 23);
        let rgb: Vec<u8> = (0..w * h * 3).map(|i| (i * 31 % 251) as u8).collect();
        let x4: Vec<u8> = rgb.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], p[0]]).collect();
        let small3 = scaled::<3, 24>(&rgb, (w, h), (12, 9));
        let small4 = scaled::<4, 32>(&x4, (w, h), (12, 9));
        let small1 = scaled::<1, 8>(&rgb.chunks_exact(3).map(|p| p[0]).collect::<Vec<_>>(), (w, h), (12, 9));
        for ((p3, p4), &p1) in small3.chunks_exact(3).zip(small4.chunks_exact(4)).zip(&small1) {
            assert_eq!(p3, &p4[..3]);
            assert_eq!(p4[3], p1, "the fourth byte scales like the first, which it copies");
        }
        // A fourth byte of 0 (as X leaves it) stays 0 and does not darken the colours.
        let zero4: Vec<u8> = rgb.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 0]).collect();
        let small0 = scaled::<4, 32>(&zero4, (w, h), (12, 9));
        assert!(
            small0.chunks_exact(4).zip(small3.chunks_exact(3)).all(|(p4, p3)| p4[3] == 0 && &p4[..3] == p3)
        );
    }

    #[test]
    fn the_portable_build_and_the_dispatched_one_agree() {
        let (w, h) = (203, 117);
        let src: Vec<u8> = (0..w * h * 4).map(|i| (i * 131 % 253) as u8).collect();
        for to in [(67, 39), (203, 40), (50, 117), (202, 116)] {
            let mut here = vec![0; to.0 * to.1 * 4];
            resize_here::<4, 32>(&src, (w, h), &mut here, to, &mut Vec::new()).unwrap();
            assert_eq!(here, scaled::<4, 32>(&src, (w, h), to), "{to:?}");
        }
    }

    #[test]
    fn one_axis_alone_and_bad_sizes() {
        let src: Vec<u8> = (0..40 * 30 * 3).map(|i| (i % 256) as u8).collect();
        let both = scaled::<3, 24>(&src, (40, 30), (40, 10));
        assert_eq!(both.len(), 40 * 10 * 3);
        assert_eq!(scaled::<3, 24>(&src, (40, 30), (40, 30)), src, "same size: a copy");
        let mut dst = vec![0; 20 * 10 * 3];
        assert!(resize::<3, 24>(&src, (40, 30), &mut dst, (20, 0), &mut Vec::new()).is_err());
        assert!(resize::<3, 24>(&src[1..], (40, 30), &mut dst, (20, 10), &mut Vec::new()).is_err());
        assert!(resize::<3, 24>(&src, (40, 30), &mut dst[1..], (20, 10), &mut Vec::new()).is_err());
    }
}
