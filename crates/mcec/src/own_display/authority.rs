//! The own display's cookie and its authority file (the `.Xauthority` format: per entry a
//! big-endian u16 family, then address, display number, protocol name and data, each a
//! big-endian u16 length and the bytes).
//!
//! One entry, for any address and any display number (family "wild", number empty): the
//! cookie is known to this one server only, so it opens nothing else, and the file can be
//! written before the server has picked its number.

/// Bytes of a cookie: 128 bits from the OS random source.
const COOKIE_BYTES: usize = 16;
/// The `.Xauthority` family that matches any address.
const FAMILY_WILD: u16 = 0xffff;

/// A fresh cookie.
pub fn cookie() -> Result<Vec<u8>, String> {
    let mut cookie = vec![0u8; COOKIE_BYTES];
    getrandom::fill(&mut cookie).map_err(|e| format!("no OS randomness for the display's cookie: {e}"))?;
    Ok(cookie)
}

/// The authority file holding `cookie` for the own display.
pub fn file_bytes(cookie: &[u8]) -> Vec<u8> {
    let mut out = FAMILY_WILD.to_be_bytes().to_vec();
    for field in [&b""[..], b"", mcec_desktop_x11::own_server::COOKIE_PROTOCOL, cookie] {
        out.extend_from_slice(&(field.len() as u16).to_be_bytes());
        out.extend_from_slice(field);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_one_wild_entry_with_the_cookie() {
        let cookie = cookie().expect("cookie");
        assert_eq!(cookie.len(), 16);
        assert_ne!(cookie, super::cookie().expect("another"), "each display gets its own cookie");
        let bytes = file_bytes(&cookie);
        let mut want = vec![0xff, 0xff, 0, 0, 0, 0, 0, 18];
        want.extend_from_slice(b"MIT-MAGIC-COOKIE-1");
        want.extend_from_slice(&[0, 16]);
        want.extend_from_slice(&cookie);
        assert_eq!(bytes, want);
    }
}
