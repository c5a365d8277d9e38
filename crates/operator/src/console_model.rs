//! The host console's Agents and Activity panes as data (issue 25): the rows the display's
//! guard sets, the last actions of every agent, and this process's own call count. Kept in
//! [`crate::OperatorState`]; every word is made by `mcec_rules::guard` (rows) and
//! `mcec_rules::narration` (actions), so the activity never holds clipboard text or tokens.

use std::collections::VecDeque;

use mcec_rules::guard::{ACTIVITY_LINES, ActivityLine, AgentRow};

#[derive(Debug, Default)]
pub(crate) struct Console {
    pub agents: Vec<AgentRow>,
    /// Oldest first; at most [`ACTIVITY_LINES`].
    activity: VecDeque<ActivityLine>,
    /// Calls this process's own agent made.
    pub calls: u64,
    /// What this process's own agent is called in the activity list.
    pub own_label: Option<String>,
}

impl Console {
    pub fn record(&mut self, at: u64, agent: String, line: String) {
        if self.activity.len() == ACTIVITY_LINES {
            self.activity.pop_front();
        }
        self.activity.push_back(ActivityLine { at, agent, line });
    }

    /// The activity list, newest first.
    pub fn newest_first(&self) -> Vec<ActivityLine> {
        self.activity.iter().rev().cloned().collect()
    }
}

/// Seconds since the Unix epoch, now.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_keeps_the_last_fifty_newest_first() {
        let mut console = Console::default();
        for i in 0..60 {
            console.record(i, "a".into(), format!("clicked at ({i}, 0)"));
        }
        let lines = console.newest_first();
        assert_eq!(lines.len(), ACTIVITY_LINES);
        assert_eq!(lines[0].line, "clicked at (59, 0)");
        assert_eq!(lines[ACTIVITY_LINES - 1].line, "clicked at (10, 0)");
    }
}
