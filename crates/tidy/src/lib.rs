//! The workspace's boundaries, checked by a test instead of remembered.
//!
//! ARCHITECTURE.md states a few rules that nothing in the compiler enforces: which crates may
//! talk to the X server, MCP or the GUI toolkit, that `mcec-rules` does no I/O, which of our
//! crates may use which ([`graph`]), where no platform `cfg` may appear ([`cfg_zones`]), that
//! every source file opens with a `//!` saying why it exists, and that directory trees are
//! deleted in one guarded function. Each rule here is a pure function over a file's text, so its unit test
//! shows it failing on a small fixture; `tests/workspace.rs` runs them all over the real tree,
//! in the same `cargo nextest run --workspace` as every other test.

use std::path::{Path, PathBuf};

pub mod cfg_zones;
pub mod graph;

/// A dependency only some crates may have, and which ones.
pub struct Boundary {
    pub dependency: &'static str,
    pub allowed: &'static [&'static str],
    pub why: &'static str,
}

/// Who may depend on the crates that reach outside the process in a way one crate owns.
pub const BOUNDARIES: &[Boundary] = &[
    Boundary {
        dependency: "x11rb",
        // The X11 backend has a crate of its own (`mcec-desktop-x11`): `mcec-desktop`, the
        // seams and the tool layer, is platform-free and may not talk to X.
        allowed: &["mcec-desktop-x11", "mcec-operator", "mcec-a11y"],
        why: "the X server is spoken to by the X11 backend crate, the operator crate for its own \
              windows, and the accessibility crate for the clipboard's selection owner",
    },
    Boundary { dependency: "rmcp", allowed: &["mcec-mcp"], why: "only mcec-mcp knows MCP" },
    Boundary {
        dependency: "wayland-client",
        allowed: &["mcec-desktop-wayland"],
        why: "a Wayland compositor is spoken to by the Wayland backend crate alone",
    },
    Boundary {
        dependency: "egui",
        allowed: &["mcec-operator"],
        why: "only the operator crate draws windows",
    },
];

/// The crate that must stay free of I/O, and the dependencies it may have: pure data crates,
/// and the `tracing` facade (it writes nothing itself; the binary's subscriber does).
/// Anything new must be added here on purpose.
pub const PURE_CRATE: &str = "mcec-rules";
pub const PURE_DEPENDENCIES: &[&str] = &["serde_json", "toml", "subtle", "serde", "proptest", "tracing"];

/// The one function allowed to delete a directory tree, and the file it lives in.
pub const GUARDED_FILE: &str = "crates/sessions/src/remove.rs";
pub const GUARDED_FN: &str = "delete_tree";
/// Files allowed to call it directly: benches cleaning their own scratch directories (the
/// sessions bench also measures the guarded path against a bare baseline).
pub const DELETION_EXEMPT: &[&str] =
    &["crates/sessions/benches/sessions_bench.rs", "crates/desktop-windows/src/bin/mcec-backend-bench.rs"];

/// Spelled in two halves so this file does not trip its own rule.
const DELETE_TREE_CALL: &str = concat!("remove_dir", "_all");

/// A crate's name and every dependency it declares (normal, dev, build, any target), by the
/// name of the package depended on (a `package = "…"` rename is seen through).
pub fn dependencies(cargo_toml: &str) -> Result<(String, Vec<String>), String> {
    let doc: toml::Table = cargo_toml.parse().map_err(|e| format!("Cargo.toml does not parse: {e}"))?;
    let name = doc
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .ok_or("Cargo.toml has no package.name")?
        .to_string();
    let mut tables = vec![&doc];
    if let Some(targets) = doc.get("target").and_then(|t| t.as_table()) {
        tables.extend(targets.values().filter_map(|t| t.as_table()));
    }
    let mut deps = Vec::new();
    for table in tables {
        for kind in ["dependencies", "dev-dependencies", "build-dependencies"] {
            let Some(section) = table.get(kind).and_then(|s| s.as_table()) else { continue };
            for (key, spec) in section {
                let package = spec.get("package").and_then(|p| p.as_str()).unwrap_or(key);
                deps.push(package.to_string());
            }
        }
    }
    Ok((name, deps))
}

/// Every boundary a crate crosses that it may not.
pub fn boundary_violations(cargo_toml: &str) -> Result<Vec<String>, String> {
    let (name, deps) = dependencies(cargo_toml)?;
    let mut out = Vec::new();
    for b in BOUNDARIES {
        if deps.iter().any(|d| d == b.dependency) && !b.allowed.contains(&name.as_str()) {
            out.push(format!("{name} depends on {} ({})", b.dependency, b.why));
        }
    }
    if name == PURE_CRATE {
        for dep in deps.iter().filter(|d| !PURE_DEPENDENCIES.contains(&d.as_str())) {
            out.push(format!(
                "{name} depends on {dep}: mcec-rules does no I/O (add pure crates to PURE_DEPENDENCIES)"
            ));
        }
    }
    Ok(out)
}

/// Whether a source file opens (first non-blank line) with a `//!` module doc.
pub fn has_module_doc(source: &str) -> bool {
    source.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim_start().starts_with("//!"))
}

/// The 1-based lines of `source` that call the tree deletion outside the guarded function.
/// Comment lines are not calls. `path` is relative to the workspace root.
pub fn unguarded_deletions(path: &str, source: &str) -> Vec<usize> {
    if DELETION_EXEMPT.contains(&path) {
        return Vec::new();
    }
    let mut current_fn: Option<&str> = None;
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        if let Some(name) = fn_name(code) {
            current_fn = Some(name);
        }
        if code.contains(DELETE_TREE_CALL) && !(path == GUARDED_FILE && current_fn == Some(GUARDED_FN)) {
            out.push(i + 1);
        }
    }
    out
}

/// The name declared by a line such as `pub(crate) async fn name(…`, if it declares one.
fn fn_name(code: &str) -> Option<&str> {
    let at = code.find("fn ")?;
    let before = &code[..at];
    let is_decl = before.split_whitespace().all(|w| {
        matches!(w, "pub" | "async" | "const" | "unsafe" | "extern" | "\"C\"") || w.starts_with("pub(")
    });
    if !is_decl {
        return None;
    }
    let rest = &code[at + 3..];
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Every `.rs` file under `dir`, sorted, skipping `target`.
pub fn rust_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str, deps: &str) -> String {
        format!("[package]\nname = \"{name}\"\n\n[dependencies]\n{deps}\n")
    }

    #[test]
    fn a_crate_outside_the_x11_backend_and_operator_may_not_use_x11rb() {
        let bad = manifest("mcec-sessions", "x11rb.workspace = true");
        assert_eq!(boundary_violations(&bad).unwrap().len(), 1);
        let seams = manifest("mcec-desktop", "x11rb.workspace = true");
        assert_eq!(boundary_violations(&seams).unwrap().len(), 1, "the tool layer stays platform-free");
        let good = manifest("mcec-desktop-x11", "x11rb.workspace = true");
        assert!(boundary_violations(&good).unwrap().is_empty());
    }

    #[test]
    fn only_mcec_mcp_may_use_rmcp_even_renamed_or_for_tests() {
        let renamed = manifest("mcec", "mcp = { package = \"rmcp\", version = \"1\" }");
        assert_eq!(boundary_violations(&renamed).unwrap().len(), 1);
        let dev = "[package]\nname = \"mcec\"\n[dev-dependencies]\nrmcp = \"1\"\n";
        assert_eq!(boundary_violations(dev).unwrap().len(), 1);
        assert!(boundary_violations(&manifest("mcec-mcp", "rmcp = \"1\"")).unwrap().is_empty());
    }

    #[test]
    fn only_the_operator_may_use_egui_on_any_target() {
        let bad = "[package]\nname = \"mcec-desktop\"\n[target.'cfg(unix)'.dependencies]\negui = \"0\"\n";
        assert_eq!(boundary_violations(bad).unwrap().len(), 1);
        assert!(boundary_violations(&manifest("mcec-operator", "egui = \"0\"")).unwrap().is_empty());
    }

    #[test]
    fn mcec_rules_may_not_gain_an_io_dependency() {
        let bad = manifest("mcec-rules", "serde_json = \"1\"\ntokio = \"1\"");
        let found = boundary_violations(&bad).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("tokio"));
        assert!(boundary_violations(&manifest("mcec-rules", "serde_json = \"1\"")).unwrap().is_empty());
        // The same dependency is fine anywhere else.
        assert!(boundary_violations(&manifest("mcec", "tokio = \"1\"")).unwrap().is_empty());
    }

    #[test]
    fn a_source_file_must_open_with_its_module_doc() {
        assert!(!has_module_doc("use std::fs;\n//! too late\n"));
        assert!(!has_module_doc("/// an item doc, not a module doc\nfn f() {}\n"));
        assert!(!has_module_doc(""));
        assert!(has_module_doc("\n//! Why this file exists.\nuse std::fs;\n"));
    }

    #[test]
    fn tree_deletion_only_in_the_guarded_function() {
        let call = format!("    std::fs::{DELETE_TREE_CALL}(path)");
        let elsewhere = format!("fn helper(path: &Path) {{\n{call}\n}}\n");
        assert_eq!(unguarded_deletions("crates/mcec/src/x.rs", &elsewhere), vec![2]);
        // The same name in the guarded file but another function is still refused.
        assert_eq!(unguarded_deletions(GUARDED_FILE, &elsewhere), vec![2]);
        let guarded = format!("/// docs\npub(crate) fn {GUARDED_FN}(path: &Path) {{\n{call}\n}}\n");
        assert!(unguarded_deletions(GUARDED_FILE, &guarded).is_empty());
        // After the guarded function ends and another begins, it is refused again.
        let after = format!("{guarded}fn other() {{\n{call}\n}}\n");
        assert_eq!(unguarded_deletions(GUARDED_FILE, &after), vec![6]);
        let comment = format!("// see std::fs::{DELETE_TREE_CALL}\nfn f() {{}}\n");
        assert!(unguarded_deletions("crates/mcec/src/x.rs", &comment).is_empty());
    }
}
