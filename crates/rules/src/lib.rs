//! # mcec-rules: the rules with no OS in them
//!
//! Everything mcec decides, as plain data and pure functions: the error codes and the
//! [`envelope`] an agent sees, the [`gates`] of a tool call in the contract's order, the
//! [`http_gate`], the [`settings`] model, the tool [`catalog`], the run
//! [`record`], and (from the emergency-stop work) the hotkey grammar, the chord detector
//! and the latch.
//!
//! This crate does no I/O and knows nothing of X11, MCP or files: callers hand it strings
//! and flags and get values back. That is what lets every safety rule be unit-tested
//! without a display.

pub mod activation;
pub mod audit;
pub mod catalog;
pub mod chord;
pub mod command_lang;
pub mod consent;
pub mod desktop_choice;
pub mod envelope;
pub mod error;
pub mod gates;
pub mod guard;
pub mod hotkey;
pub mod http_gate;
pub mod latch;
pub mod narration;
pub mod operator_hand;
pub mod opt_in;
pub mod own_display;
pub mod own_windows;
pub mod progress;
pub mod record;
pub mod settings;
pub mod stop_flag;
pub mod stop_plan;
pub mod stop_record;
pub mod stop_steps;
pub mod text;

pub use error::{ErrorCode, ToolError};
pub use stop_flag::StopFlag;
