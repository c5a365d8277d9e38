//! Runs every tidy rule over the real workspace: each crate's Cargo.toml and every `.rs` file.

use std::path::{Path, PathBuf};

use mcec_tidy::cfg_zones::{cfg_free_zone, platform_cfg_lines};
use mcec_tidy::graph::graph_violations;
use mcec_tidy::{boundary_violations, has_module_doc, rust_files, unguarded_deletions};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn crate_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace_root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn relative(path: &Path) -> String {
    path.strip_prefix(workspace_root()).unwrap().to_string_lossy().into_owned()
}

#[test]
fn every_crate_keeps_its_dependency_boundaries() {
    let dirs = crate_dirs();
    assert!(dirs.len() >= 6, "found only {dirs:?}: is the workspace layout still crates/*?");
    let mut problems = Vec::new();
    for dir in dirs {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        problems.extend(boundary_violations(&text).unwrap());
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_crate_keeps_to_its_place_in_the_crate_graph() {
    let mut problems = Vec::new();
    for dir in crate_dirs() {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        problems.extend(graph_violations(&text).unwrap());
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_cfg_free_zones_name_no_platform() {
    let mut found = Vec::new();
    let mut zone_files = 0;
    for dir in crate_dirs() {
        for file in rust_files(&dir).unwrap() {
            let path = relative(&file);
            let Some(zone) = cfg_free_zone(&path) else { continue };
            zone_files += 1;
            let lines = platform_cfg_lines(&std::fs::read_to_string(&file).unwrap());
            if lines.is_empty() {
                continue;
            }
            found.extend(lines.iter().map(|l| format!("{path}:{l} ({})", zone.why)));
        }
    }
    assert!(zone_files > 50, "only {zone_files} files in the cfg-free zones: did they move?");
    assert!(found.is_empty(), "platform cfg in a cfg-free zone: {found:#?}");
}

#[test]
fn every_source_file_opens_with_its_module_doc() {
    let mut missing = Vec::new();
    let mut seen = 0;
    for dir in crate_dirs() {
        for file in rust_files(&dir).unwrap() {
            seen += 1;
            if !has_module_doc(&std::fs::read_to_string(&file).unwrap()) {
                missing.push(relative(&file));
            }
        }
    }
    assert!(seen > 100, "only {seen} files seen");
    assert!(missing.is_empty(), "files without a `//!` opening: {missing:#?}");
}

#[test]
fn directory_trees_are_deleted_only_in_the_guarded_function() {
    let mut found = Vec::new();
    let mut guarded_seen = false;
    for dir in crate_dirs() {
        for file in rust_files(&dir).unwrap() {
            let path = relative(&file);
            let source = std::fs::read_to_string(&file).unwrap();
            guarded_seen |= path == mcec_tidy::GUARDED_FILE && source.contains(mcec_tidy::GUARDED_FN);
            found.extend(unguarded_deletions(&path, &source).into_iter().map(|l| format!("{path}:{l}")));
        }
    }
    assert!(guarded_seen, "the guarded function moved: update mcec_tidy::GUARDED_FILE/GUARDED_FN");
    assert!(found.is_empty(), "tree deletions outside the guarded function: {found:#?}");
}
