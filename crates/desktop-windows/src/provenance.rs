//! Who sent an input event, from the flags and extra info a low-level hook receives.
//!
//! Windows sets `LLKHF_INJECTED` (keyboard) or `LLMHF_INJECTED` (mouse) on every event that
//! `SendInput`/`keybd_event`/`mouse_event` produced, and additionally the `LOWER_IL` bit when
//! the sender runs at a lower integrity level. Anything without those bits came from a device.
//! mcec marks its own injected events with [`MCEC_MARK`] in `dwExtraInfo`, so the monitor can
//! tell its own releases apart from a foreign program's input. The mark is believed only on an
//! injected event: a device event is physical whatever its extra info says.

/// `LLKHF_INJECTED` (winuser.h).
pub const LLKHF_INJECTED: u32 = 0x10;
/// `LLKHF_LOWER_IL_INJECTED` (winuser.h).
pub const LLKHF_LOWER_IL_INJECTED: u32 = 0x02;
/// `LLMHF_INJECTED` (winuser.h).
pub const LLMHF_INJECTED: u32 = 0x01;
/// `LLMHF_LOWER_IL_INJECTED` (winuser.h).
pub const LLMHF_LOWER_IL_INJECTED: u32 = 0x02;

/// The `dwExtraInfo` mcec puts on every event it injects ("MCEC" in ASCII, then a version).
pub const MCEC_MARK: usize = 0x4D43_4543_0001;

/// Where an event came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A keyboard or mouse: the operator's hand.
    Physical,
    /// mcec's own injection (marked).
    Mcec,
    /// Another program's injection (or an unmarked one of ours, which mcec never sends).
    Foreign,
}

impl Origin {
    pub fn is_physical(self) -> bool {
        self == Origin::Physical
    }

    pub fn name(self) -> &'static str {
        match self {
            Origin::Physical => "physical",
            Origin::Mcec => "mcec",
            Origin::Foreign => "foreign",
        }
    }
}

fn classify(injected: bool, extra_info: usize) -> Origin {
    match (injected, extra_info == MCEC_MARK) {
        (false, _) => Origin::Physical,
        (true, true) => Origin::Mcec,
        (true, false) => Origin::Foreign,
    }
}

/// Classifies a `KBDLLHOOKSTRUCT` by its `flags` and `dwExtraInfo`.
pub fn classify_key(flags: u32, extra_info: usize) -> Origin {
    classify(flags & (LLKHF_INJECTED | LLKHF_LOWER_IL_INJECTED) != 0, extra_info)
}

/// Classifies an `MSLLHOOKSTRUCT` by its `flags` and `dwExtraInfo`.
pub fn classify_mouse(flags: u32, extra_info: usize) -> Origin {
    classify(flags & (LLMHF_INJECTED | LLMHF_LOWER_IL_INJECTED) != 0, extra_info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyboard_flags() {
        assert_eq!(classify_key(0, 0), Origin::Physical);
        assert_eq!(classify_key(0x01 | 0x20 | 0x80, 0), Origin::Physical, "extended/alt/up bits");
        assert_eq!(classify_key(LLKHF_INJECTED, 0), Origin::Foreign);
        assert_eq!(classify_key(LLKHF_LOWER_IL_INJECTED, 0), Origin::Foreign);
        assert_eq!(classify_key(LLKHF_INJECTED | LLKHF_LOWER_IL_INJECTED, 7), Origin::Foreign);
        assert_eq!(classify_key(LLKHF_INJECTED, MCEC_MARK), Origin::Mcec);
    }

    #[test]
    fn a_mark_on_a_device_event_is_ignored() {
        assert_eq!(classify_key(0, MCEC_MARK), Origin::Physical);
        assert_eq!(classify_mouse(0, MCEC_MARK), Origin::Physical);
    }

    #[test]
    fn mouse_flags() {
        assert_eq!(classify_mouse(0, 0), Origin::Physical);
        assert_eq!(classify_mouse(LLMHF_INJECTED, 0), Origin::Foreign);
        assert_eq!(classify_mouse(LLMHF_LOWER_IL_INJECTED, 0), Origin::Foreign);
        assert_eq!(classify_mouse(LLMHF_INJECTED, MCEC_MARK), Origin::Mcec);
    }
}
