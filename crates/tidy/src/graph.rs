//! The internal crate graph, pinned: which `mcec-*` crates each crate may depend on.
//!
//! ARCHITECTURE.md draws the crates as layers (rules at the bottom, the binary on top). The
//! compiler only refuses cycles, so a crate could quietly start importing one beside or above
//! it. This table is the picture in code: a new crate, or a new edge between two of ours,
//! fails until someone classifies it here on purpose.

use crate::dependencies;

/// A crate of the workspace and the workspace crates it may depend on (normal, dev or build,
/// on any target).
pub struct Layer {
    pub krate: &'static str,
    pub may_use: &'static [&'static str],
}

/// Every workspace crate, bottom layer first. An entry for a crate not (yet) in the tree is
/// harmless; a crate in the tree with no entry fails.
pub const CRATE_GRAPH: &[Layer] = &[
    // Pure rules: no OS, no other crate of ours.
    Layer { krate: "mcec-rules", may_use: &[] },
    // The checker of these very tables: it reads files, it links to none of ours.
    Layer { krate: "mcec-tidy", may_use: &[] },
    Layer { krate: "mcec-sessions", may_use: &["mcec-rules"] },
    // The seams, the tool layer and the pure monitor parts.
    Layer { krate: "mcec-desktop", may_use: &["mcec-rules", "mcec-sessions"] },
    // The platform backends behind mcec-desktop's seams.
    Layer { krate: "mcec-desktop-windows", may_use: &["mcec-rules", "mcec-desktop"] },
    Layer { krate: "mcec-desktop-x11", may_use: &["mcec-rules", "mcec-desktop", "mcec-sessions"] },
    // sway: IPC and the Wayland virtual devices; the stop's latch comes in through mcec-desktop.
    Layer { krate: "mcec-desktop-wayland", may_use: &["mcec-rules", "mcec-desktop"] },
    // The accessibility tools, AT-SPI and MSAA: a clipboard comes in through mcec-desktop's
    // seam. The Windows backend only as a dev-dependency: the MSAA Wine tests drive its desktop.
    Layer { krate: "mcec-a11y", may_use: &["mcec-rules", "mcec-desktop", "mcec-desktop-windows"] },
    Layer { krate: "mcec-operator", may_use: &["mcec-rules"] },
    Layer { krate: "mcec-mcp", may_use: &["mcec-rules", "mcec-sessions", "mcec-desktop", "mcec-a11y"] },
    // The binary wires every backend in.
    Layer {
        krate: "mcec",
        may_use: &[
            "mcec-rules",
            "mcec-sessions",
            "mcec-desktop",
            "mcec-desktop-windows",
            "mcec-desktop-x11",
            "mcec-desktop-wayland",
            "mcec-a11y",
            "mcec-operator",
            "mcec-mcp",
        ],
    },
];

/// Whether a package name is one of ours.
fn is_ours(package: &str) -> bool {
    package == "mcec" || package.starts_with("mcec-")
}

/// Every way a crate's manifest strays from [`CRATE_GRAPH`].
pub fn graph_violations(cargo_toml: &str) -> Result<Vec<String>, String> {
    let (name, mut deps) = dependencies(cargo_toml)?;
    let Some(layer) = CRATE_GRAPH.iter().find(|l| l.krate == name) else {
        return Ok(vec![format!(
            "{name} is not in mcec_tidy::CRATE_GRAPH: classify it (which of our crates may it use?)"
        )]);
    };
    // A crate used both as a dependency and a dev-dependency is one edge.
    deps.sort();
    deps.dedup();
    let out = deps
        .iter()
        .filter(|d| is_ours(d) && !layer.may_use.contains(&d.as_str()))
        .map(|dep| {
            format!(
                "{name} depends on {dep}: not in its CRATE_GRAPH entry (classify the edge in \
                 mcec_tidy::CRATE_GRAPH if the layering allows it)"
            )
        })
        .collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edge_not_in_the_table_fails_on_any_target_and_kind() {
        let up = "[package]\nname = \"mcec-rules\"\n[dependencies]\nmcec-desktop.workspace = true\n";
        let found = graph_violations(up).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("mcec-desktop"));
        let dev =
            "[package]\nname = \"mcec-operator\"\n[dev-dependencies]\nmcec-sessions = { path = \"../s\" }\n";
        assert_eq!(graph_violations(dev).unwrap().len(), 1);
        let target = "[package]\nname = \"mcec-mcp\"\n[target.'cfg(windows)'.dependencies]\nmcec-desktop-windows = \"0\"\n";
        assert_eq!(graph_violations(target).unwrap().len(), 1);
        let renamed =
            "[package]\nname = \"mcec-sessions\"\n[build-dependencies]\nd = { package = \"mcec-desktop\" }\n";
        assert_eq!(graph_violations(renamed).unwrap().len(), 1);
    }

    #[test]
    fn a_crate_not_in_the_table_must_be_classified() {
        let found = graph_violations("[package]\nname = \"mcec-new\"\n").unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].contains("classify"), "{found:?}");
    }

    #[test]
    fn allowed_edges_and_outside_crates_pass() {
        let ok = "[package]\nname = \"mcec-desktop\"\n[dependencies]\nmcec-rules.workspace = true\n\
                  serde = \"1\"\n[dev-dependencies]\nmcec-rules.workspace = true\n";
        assert!(graph_violations(ok).unwrap().is_empty());
    }

    #[test]
    fn the_table_names_each_crate_once_and_only_crates_it_names() {
        for (i, layer) in CRATE_GRAPH.iter().enumerate() {
            assert!(
                CRATE_GRAPH[..i].iter().all(|l| l.krate != layer.krate),
                "{} is listed twice",
                layer.krate
            );
            for dep in layer.may_use {
                assert!(CRATE_GRAPH.iter().any(|l| l.krate == *dep), "{} may use unknown {dep}", layer.krate);
                assert_ne!(*dep, layer.krate);
            }
        }
    }
}
