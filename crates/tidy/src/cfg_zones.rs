//! The places that must not know which platform they run on.
//!
//! Each platform is a folder behind one interface: the rules, MCP, the tool layers and the
//! sessions logic are written once, and a platform `cfg` in them means a platform leaked out of
//! its folder. This rule finds such a `cfg` (attribute, `cfg_attr` or `cfg!`) in the zones below.

/// A directory (relative to the workspace root) that holds no platform `cfg`, with the
/// directories under it where the platform halves live instead.
pub struct CfgFreeZone {
    pub dir: &'static str,
    pub except: &'static [&'static str],
    pub why: &'static str,
}

pub const CFG_FREE_ZONES: &[CfgFreeZone] = &[
    CfgFreeZone { dir: "crates/rules", except: &[], why: "the rules are the same on every platform" },
    CfgFreeZone {
        dir: "crates/mcp",
        except: &[],
        why: "MCP is the same on every platform; the binary chooses the backends",
    },
    CfgFreeZone {
        dir: "crates/desktop/src/api",
        except: &[],
        why: "the desktop tool layer speaks to the seams, not to a platform",
    },
    CfgFreeZone {
        dir: "crates/a11y/src/tools",
        except: &[],
        why: "the accessibility tool layer speaks to the seam, not to a platform",
    },
    CfgFreeZone {
        dir: "crates/sessions/src",
        except: &["crates/sessions/src/os"],
        why: "sessions' platform halves live in os/",
    },
];

/// `cfg` keys and bare predicates that name a platform.
const PLATFORM_WORDS: &[&str] =
    &["unix", "windows", "target_os", "target_family", "target_env", "target_vendor", "target_arch"];

/// The zone a file (relative path, `/`-separated) falls in, if any.
pub fn cfg_free_zone(path: &str) -> Option<&'static CfgFreeZone> {
    let under = |dir: &str| path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'));
    CFG_FREE_ZONES.iter().find(|z| under(z.dir) && !z.except.iter().any(|e| under(e)))
}

/// The 1-based lines where a `cfg(…)`, `cfg_attr(…)` or `cfg!(…)` naming a platform begins.
/// Comment lines are skipped; a predicate may span lines.
pub fn platform_cfg_lines(source: &str) -> Vec<usize> {
    let code: String = source
        .lines()
        .map(|l| if l.trim_start().starts_with("//") { "" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for (at, _) in code.match_indices("cfg") {
        let ident_before = at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let rest = &code[at + 3..];
        let Some(open) = ["(", "!(", "_attr("].iter().find(|p| rest.starts_with(**p)) else { continue };
        if ident_before {
            continue;
        }
        let predicate = balanced(&rest[open.len()..]);
        if names_platform(predicate) && !test_only(predicate) {
            let line = code[..at].matches('\n').count() + 1;
            if out.last() != Some(&line) {
                out.push(line);
            }
        }
    }
    out
}

/// The text up to the `)` closing an already opened parenthesis (or to the end).
fn balanced(text: &str) -> &str {
    let mut depth = 1;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &text[..i];
                }
            }
            _ => {}
        }
    }
    text
}

/// Whether a predicate gates test code only (`all(test, unix)`): a test that needs Unix file
/// types may say so; what ships may not.
fn test_only(predicate: &str) -> bool {
    predicate.trim().strip_prefix("all(").is_some_and(|inner| inner.trim_start().starts_with("test,"))
}

/// Whether a predicate names a platform outside string literals (`path = "windows.rs"` does not).
fn names_platform(predicate: &str) -> bool {
    predicate
        .split('"')
        .step_by(2)
        .flat_map(|outside| outside.split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .any(|word| PLATFORM_WORDS.contains(&word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_platform_cfg_is_found() {
        let source = "#[cfg(unix)]\nfn a() {}\n#[cfg(not(windows))]\nfn b() {}\n\
                      fn c() { if cfg!(target_os = \"linux\") {} }\n#[cfg_attr(windows, allow(x))]\n\
                      #[cfg(all(feature = \"x\", any(\n    target_family = \"unix\",\n)))]\nmod t {}\n";
        assert_eq!(platform_cfg_lines(source), vec![1, 3, 5, 6, 7]);
    }

    #[test]
    fn other_cfgs_comments_and_lookalikes_are_not_platform_cfgs() {
        let source = "#[cfg(test)]\nmod t {}\n// #[cfg(unix)] was here\n#[cfg(feature = \"windows\")]\n\
                      fn my_cfg(unix: u8) {}\nlet windows = cfg!(debug_assertions);\n";
        assert!(platform_cfg_lines(source).is_empty(), "{:?}", platform_cfg_lines(source));
    }

    #[test]
    fn zones_cover_their_trees_but_not_their_exceptions() {
        assert!(cfg_free_zone("crates/rules/src/latch.rs").is_some());
        assert!(cfg_free_zone("crates/mcp/tests/http.rs").is_some());
        assert!(cfg_free_zone("crates/sessions/src/paths.rs").is_some());
        assert!(cfg_free_zone("crates/sessions/src/os/unix.rs").is_none());
        assert!(cfg_free_zone("crates/sessions/tests/x.rs").is_none());
        assert!(cfg_free_zone("crates/desktop/src/x11/mod.rs").is_none());
        assert!(cfg_free_zone("crates/rules-extra/src/lib.rs").is_none());
    }

    #[test]
    fn a_platform_gate_on_test_code_only_is_allowed() {
        let source = "#[cfg(all(test, unix))]\nmod t {}\n#[cfg(all( test, windows))]\nmod w {}\n";
        assert!(platform_cfg_lines(source).is_empty(), "{:?}", platform_cfg_lines(source));
        assert_eq!(platform_cfg_lines("#[cfg(all(unix, test))]\nfn f() {}\n"), vec![1]);
    }
}
