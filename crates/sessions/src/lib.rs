//! # mcec-sessions: sessions on disk
//!
//! An agent never drives the operator's own mcec. When the operator has opted in, it gets a
//! session copy instead: a session directory under `$XDG_STATE_HOME/mcec/sessions/<id>`
//! holding a copy of the executable and an agent-ready co-located config, guarded by a token
//! and removed when the agent is done (or by the reaper 12 h later). This crate is everything
//! about those directories:
//!
//! * [`install`]: is this copy *installed* (and so bootstrap-only)?
//! * [`paths`]: where config, sessions and artefacts live for a given copy.
//! * [`lock`]: the instance lock a running copy holds, the crash-safe "running" signal.
//! * [`id`], [`token`]: the session id (a type that cannot hold a path) and the credential.
//! * [`provision`](mod@provision): create a session and return the handoff.
//! * [`teardown`]: `end-session`, token-checked.
//! * [`reaper`]: age-based clean-up.
//! * [`list`]: the operator's view.
//! * [`own_display`](mod@own_display): how many sessions have an X display of their own.
//! * [`atomic`]: the temp-file-and-rename write of a config file.
//! * [`remove`]: the one guarded directory removal all of the above use.
//! * [`user_home`]: the home directory from the user database, never `$HOME`.
//! * [`os`]: the few file-system calls whose form differs between Unix and Windows.
//! * [`safe_open`]: the one way a file in a session or config directory is opened (no
//!   symlink followed, no FIFO waited on, only regular files).
//!
//! Invariants, written as absences: nothing here deletes outside the sessions root; nothing
//! here follows a symlink while deleting; no token is ever logged or shown by `Debug`. The
//! crate knows nothing of MCP, X11 or the settings model beyond the keys it writes; the MCP
//! tools and the CLI are thin layers on top.

pub mod atomic;
pub mod id;
pub mod install;
pub mod list;
pub mod lock;
pub mod os;
pub mod own_display;
pub mod paths;
pub mod provision;
pub mod reaper;
pub mod relay_mark;
pub mod remove;
pub mod safe_open;
pub mod stamp;
pub mod teardown;
pub mod token;
pub mod user_home;

pub use id::{IdError, SessionId};
pub use install::{is_installed_copy, is_installed_copy_with, is_installed_with};
pub use list::{SessionState, SessionSummary, list_sessions};
pub use lock::{InstanceLock, LockError, is_locked};
pub use paths::{McecPaths, XdgDirs, is_session_dir};
pub use provision::{Handoff, ProvisionError, ProvisionRequest, provision};
pub use reaper::{REAP_AGE, ReapReport, reap};
pub use remove::{Removal, RemoveAllReport, RemoveError, remove_all_sessions, remove_session_dir};
pub use teardown::{EndOutcome, TeardownError, end_session};
pub use token::SessionToken;
