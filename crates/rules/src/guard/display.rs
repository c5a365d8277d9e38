//! What the guard's one banner says for every agent on the display: how many there are, how
//! many act, and whether they are stopped. Stopped outranks everything: no banner says an
//! agent may act while one is stopped, and none says STOPPED while one may act (a display
//! where some are stopped and some are not says exactly that).

use super::MemberState;

/// The agents on a display, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DisplayCount {
    pub agents: usize,
    pub acting: usize,
    pub stopped: usize,
}

impl DisplayCount {
    /// The count over the members' states.
    pub fn of<'a>(members: impl IntoIterator<Item = &'a MemberState>) -> DisplayCount {
        members.into_iter().fold(DisplayCount::default(), |c, m| c.with(m.stopped, m.acting))
    }

    /// This count with one more agent (the guard's own).
    pub fn with(self, stopped: bool, acting: bool) -> DisplayCount {
        DisplayCount {
            agents: self.agents + 1,
            acting: self.acting + usize::from(acting && !stopped),
            stopped: self.stopped + usize::from(stopped),
        }
    }

    /// What the banner shows.
    pub fn look(&self) -> DisplayLook {
        match (self.stopped, self.acting) {
            (0, 0) => DisplayLook::Quiet,
            (0, _) => DisplayLook::Acting,
            (s, _) if s == self.agents => DisplayLook::Stopped,
            _ => DisplayLook::PartlyStopped,
        }
    }
}

/// The banner's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisplayLook {
    /// Nothing stopped, nothing acting: no banner.
    Quiet,
    /// Nothing stopped, some act.
    Acting,
    /// Every agent is stopped.
    Stopped,
    /// Some are stopped and the others may act (a member whose re-arm went through while
    /// another's was refused, or a stop still on its way to one).
    PartlyStopped,
}

/// The banner's line about the agents, e.g. "all 3 agents on this display are stopped".
pub fn headline(count: DisplayCount) -> String {
    let DisplayCount { agents, acting, stopped } = count;
    let agents_word = if agents == 1 { "agent" } else { "agents" };
    match count.look() {
        DisplayLook::Stopped if agents == 1 => "the agent is stopped".into(),
        DisplayLook::Stopped => format!("all {agents} agents on this display are stopped"),
        DisplayLook::PartlyStopped => format!(
            "{stopped} of {agents} agents stopped; {} may still act: re-arm or stop again",
            agents - stopped
        ),
        DisplayLook::Acting | DisplayLook::Quiet => {
            format!("{acting} of {agents} {agents_word} acting")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(stopped: bool, acting: bool) -> MemberState {
        MemberState { stopped, stop_id: None, acting, calls: None }
    }

    #[test]
    fn three_agents_acting_then_all_stopped() {
        let acting = DisplayCount::of(&[member(false, true), member(false, false)]).with(false, true);
        assert_eq!(acting, DisplayCount { agents: 3, acting: 2, stopped: 0 });
        assert_eq!(acting.look(), DisplayLook::Acting);
        assert_eq!(headline(acting), "2 of 3 agents acting");
        let stopped = DisplayCount::of(&[member(true, true), member(true, false)]).with(true, true);
        assert_eq!(
            stopped,
            DisplayCount { agents: 3, acting: 0, stopped: 3 },
            "a stopped agent does not act"
        );
        assert_eq!(stopped.look(), DisplayLook::Stopped);
        assert_eq!(headline(stopped), "all 3 agents on this display are stopped");
    }

    #[test]
    fn one_stopped_among_free_agents_is_neither_armed_nor_stopped() {
        let mixed = DisplayCount::of(&[member(true, false), member(false, true)]).with(false, false);
        assert_eq!(mixed.look(), DisplayLook::PartlyStopped);
        assert_eq!(headline(mixed), "1 of 3 agents stopped; 2 may still act: re-arm or stop again");
        let guard_stopped_alone = DisplayCount::of(&[member(false, false)]).with(true, false);
        assert_eq!(guard_stopped_alone.look(), DisplayLook::PartlyStopped);
    }

    #[test]
    fn nobody_acting_shows_nothing_and_one_agent_reads_well() {
        assert_eq!(DisplayCount::of(&[member(false, false)]).with(false, false).look(), DisplayLook::Quiet);
        assert_eq!(headline(DisplayCount::default().with(true, false)), "the agent is stopped");
        assert_eq!(headline(DisplayCount::default().with(false, true)), "1 of 1 agent acting");
    }
}
