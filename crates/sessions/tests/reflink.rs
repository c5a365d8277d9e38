//! A session copy on a file system with reflinks costs no data blocks and stays separate from
//! the installed binary. Needs a real reflink file system: the test makes an XFS image
//! (`mkfs.xfs -m reflink=1`, from xfsprogs) and loop-mounts it, which takes root; where it
//! cannot, it prints why and passes without checking anything (the copy path is tested in
//! `src/os/unix/copy.rs`).

#![cfg(target_os = "linux")]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use mcec_sessions::os::{CopyWay, clone_or_copy};
use mcec_sessions::{ProvisionRequest, provision};

const BINARY_BYTES: usize = 16 << 20;

/// An XFS with reflinks mounted on a loop device, unmounted when dropped.
struct Xfs {
    _tmp: tempfile::TempDir,
    mount: PathBuf,
}

impl Xfs {
    fn make() -> Result<Xfs, String> {
        let tmp = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
        let image = tmp.path().join("xfs.img");
        let mount = tmp.path().join("mnt");
        std::fs::create_dir(&mount).map_err(|e| e.to_string())?;
        // Sparse: the image costs only what is written into it. 300 MiB is mkfs.xfs's minimum.
        let file = std::fs::File::create(&image).map_err(|e| e.to_string())?;
        file.set_len(320 << 20).map_err(|e| e.to_string())?;
        run(Command::new("mkfs.xfs").args(["-q", "-m", "reflink=1"]).arg(&image))
            .map_err(|e| format!("cannot make an XFS image (apt-get install xfsprogs): {e}"))?;
        run(Command::new("mount").args(["-o", "loop"]).arg(&image).arg(&mount))
            .map_err(|e| format!("cannot loop-mount an XFS image (needs root and a loop device): {e}"))?;
        Ok(Xfs { _tmp: tmp, mount })
    }

    fn used_bytes(&self) -> u64 {
        let _ = Command::new("sync").arg("-f").arg(&self.mount).status();
        let s = rustix::fs::statvfs(&self.mount).expect("statvfs");
        (s.f_blocks - s.f_bfree) * s.f_frsize
    }
}

impl Drop for Xfs {
    fn drop(&mut self) {
        if let Err(e) = run(Command::new("umount").arg(&self.mount)) {
            eprintln!("could not unmount {}: {e}", self.mount.display());
        }
    }
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| e.to_string())?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!("{}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim()))
}

/// Bytes that do not compress or repeat, so no file system can store them for less.
fn binary_at(path: &Path) -> Vec<u8> {
    let mut seed = 0x9E37_79B9u32;
    let bytes: Vec<u8> = (0..BINARY_BYTES)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as u8
        })
        .collect();
    std::fs::write(path, &bytes).expect("write the binary");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bytes
}

#[test]
fn a_session_on_a_reflink_file_system_shares_the_binarys_blocks() {
    let xfs = match Xfs::make() {
        Ok(xfs) => xfs,
        Err(why) => {
            eprintln!("SKIPPED: no reflink file system to test on: {why}");
            return;
        }
    };
    let exe = xfs.mount.join("mcec");
    let bytes = binary_at(&exe);

    let clone = xfs.mount.join("clone");
    let before = xfs.used_bytes();
    assert_eq!(clone_or_copy(&exe, &clone).expect("clone"), CopyWay::Reflink);
    let cost = xfs.used_bytes().saturating_sub(before);
    assert!(cost < BINARY_BYTES as u64 / 8, "a reflink of {BINARY_BYTES} bytes used {cost} bytes");

    let before = xfs.used_bytes();
    let handoff = provision(ProvisionRequest {
        sessions_root: xfs.mount.join("sessions"),
        source_exe: exe.clone(),
        mcp_server: false,
        commands: None,
        all_tool_names: vec!["click".into()],
        operator_hotkey: "Ctrl+Alt+Q".into(),
        requested_by: "test",
        own_display: None,
        own_display_sessions_max: mcec_rules::own_display::DEFAULT_SESSIONS_MAX,
    })
    .expect("provision");
    let cost = xfs.used_bytes().saturating_sub(before);
    assert!(cost < BINARY_BYTES as u64 / 8, "a session of a {BINARY_BYTES}-byte binary used {cost} bytes");
    let mode = std::fs::metadata(&handoff.exe_path).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the copy's permissions are a copy's");
    assert!(std::fs::read(&handoff.exe_path).expect("read the copy") == bytes);

    // Copy-on-write: rewriting the session's copy leaves the installed binary as it was.
    std::fs::write(&handoff.exe_path, b"overwritten by the session").expect("write the copy");
    assert!(std::fs::read(&exe).expect("read the binary") == bytes, "the installed binary changed");
    let metadata = std::fs::metadata(&exe).expect("stat");
    assert_eq!(metadata.permissions().mode() & 0o777, 0o755);
}
