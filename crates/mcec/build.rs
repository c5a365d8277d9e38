//! Linker settings for the release binary, which provisioning copies into every session and
//! whose pages count in every agent's memory (issue 30; measured in docs/decisions.md, "Binary
//! size and memory").
//!
//! - `--strip-all` (Linux and Windows GNU): the release profile keeps `strip = false` so that
//!   `scripts/hot-order` can build the very same binary with its symbols
//!   (`MCEC_KEEP_SYMBOLS=1`); a profile that strips gives other symbol names, and the order
//!   file would match nothing.
//!
//! On x86-64 Linux, also:
//! - `-z pack-relative-relocs`: the position-independent binary's relative relocations as
//!   DT_RELR (glibc 2.36+), a twentieth of their RELA size.
//! - `--icf=all`: one copy of functions whose code is identical.
//! - `--symbol-ordering-file=link/hot.order`: the functions an agent's session runs placed
//!   first in `.text`, together. The kernel maps 64 KB around each page touched, so code that
//!   ran spread over the whole text made nearly all of it resident. Names the file has and the
//!   binary no longer has are skipped.
//!
//! The last two are LLD's options; rustc links with its own LLD on that target from 1.90 on.
//! With an older rustc they are left out, and `MCEC_PLAIN_LINK=1` leaves them out for a build
//! with another linker.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=link/hot.order");
    println!("cargo:rerun-if-env-changed=MCEC_PLAIN_LINK");
    println!("cargo:rerun-if-env-changed=MCEC_KEEP_SYMBOLS");
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    if env("PROFILE") != "release" {
        return;
    }
    let target = env("TARGET");
    let mut args = Vec::new();
    let gnu_linker = target.contains("-linux-") || target.ends_with("-windows-gnu");
    if gnu_linker && env("MCEC_KEEP_SYMBOLS") != "1" {
        args.push("-Wl,--strip-all".to_owned());
    }
    if target == "x86_64-unknown-linux-gnu"
        && env("MCEC_PLAIN_LINK") != "1"
        && rustc_links_with_lld(&env("RUSTC"))
    {
        let order = std::path::Path::new(&env("CARGO_MANIFEST_DIR")).join("link/hot.order");
        args.push("-Wl,-z,pack-relative-relocs".to_owned());
        args.push("-Wl,--icf=all".to_owned());
        args.push(format!("-Wl,--symbol-ordering-file={}", order.display()));
        args.push("-Wl,--no-warn-symbol-ordering".to_owned());
    }
    for arg in args {
        println!("cargo:rustc-link-arg-bins={arg}");
    }
}

/// Whether `rustc` is 1.90 or later, which links x86-64 Linux programs with its own LLD.
fn rustc_links_with_lld(rustc: &str) -> bool {
    let Ok(out) = Command::new(rustc).arg("--version").output() else { return false };
    let version = String::from_utf8_lossy(&out.stdout);
    let mut parts = version.split_whitespace().nth(1).unwrap_or("").split('.');
    let (major, minor) = (parts.next(), parts.next());
    major == Some("1") && minor.and_then(|m| m.parse::<u32>().ok()).is_some_and(|m| m >= 90)
}
