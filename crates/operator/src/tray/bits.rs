//! The tray icon's pixels as Windows' `CreateIcon` takes them: the colour image as 32-bit
//! BGRA (a little-endian `0xAARRGGBB` per pixel) and the monochrome AND mask, one bit per
//! pixel, set where the icon is transparent. Pure, so it is tested on every platform.

use super::{ICON_SIZE, Look, icon};

/// Bytes of one row of the AND mask (a whole number of 16-bit words, as `CreateIcon` wants).
const MASK_ROW: usize = ICON_SIZE.div_ceil(16) * 2;

/// The icon for `look` as `(and_mask, bgra)`, rows top to bottom.
pub(crate) fn icon_bits(look: Look) -> (Vec<u8>, Vec<u8>) {
    let argb = icon(look);
    let mut mask = vec![0u8; MASK_ROW * ICON_SIZE];
    let mut bgra = Vec::with_capacity(argb.len());
    for (i, px) in argb.chunks_exact(4).enumerate() {
        let [a, r, g, b] = [px[0], px[1], px[2], px[3]];
        bgra.extend_from_slice(&[b, g, r, a]);
        if a == 0 {
            let (x, y) = (i % ICON_SIZE, i / ICON_SIZE);
            mask[y * MASK_ROW + x / 8] |= 0x80 >> (x % 8);
        }
    }
    (mask, bgra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bits_are_the_icon_in_bgra_with_a_mask_of_its_transparent_pixels() {
        let stopped = icon_bits(Look::Stopped);
        let (mask, bgra) = &stopped;
        assert_eq!(bgra.len(), ICON_SIZE * ICON_SIZE * 4);
        assert_eq!(mask.len(), ICON_SIZE * ICON_SIZE / 8);
        let px = |x: usize, y: usize| bgra[(y * ICON_SIZE + x) * 4..][..4].to_vec();
        let masked = |x: usize, y: usize| mask[y * MASK_ROW + x / 8] & (0x80 >> (x % 8)) != 0;
        let [r, g, b] = Look::Stopped.rgb();
        assert_eq!(px(16, 6), [b, g, r, 0xFF], "the disc, blue first");
        assert_eq!(px(16, 16), [0xFF; 4], "the white bar");
        assert_eq!(px(0, 0), [0; 4]);
        assert!(masked(0, 0) && masked(ICON_SIZE - 1, ICON_SIZE - 1), "the corners are transparent");
        assert!(!masked(16, 6) && !masked(16, 16), "the disc is not");
        let opaque = (0..ICON_SIZE * ICON_SIZE).filter(|i| !masked(i % ICON_SIZE, i / ICON_SIZE)).count();
        let alpha = bgra.chunks_exact(4).filter(|p| p[3] == 0xFF).count();
        assert_eq!(opaque, alpha, "the mask leaves exactly the opaque pixels");
        let [r, g, b] = Look::Armed.rgb();
        assert_eq!(icon_bits(Look::Armed).1[(6 * ICON_SIZE + 16) * 4..][..4], [b, g, r, 0xFF]);
    }
}
