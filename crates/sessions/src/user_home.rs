//! The user's home directory as the user database (`getpwuid_r`) has it, never `$HOME`
//! (on Windows: the profile folder the shell's known-folder API names, never `%USERPROFILE%`).
//!
//! Whatever must not move when a program relaunches mcec with a different environment (the
//! durable stop record; the `~/.local/bin` of the installed-copy check) is found under this home: `HOME` and the `XDG_*` variables are the
//! caller's to set, the user database is not.

pub use crate::os::home_from_user_database;
