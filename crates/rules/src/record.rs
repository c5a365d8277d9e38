//! The run record: what this mcec process (one *run*, id `runId`) has done for its agents,
//! served by the `session-status` tool. One per process; counters only grow.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::ErrorCode;
use crate::desktop_choice::Source;
use crate::own_display::OwnDisplaySize;

/// One engagement of the emergency stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopStamp {
    pub at: SystemTime,
    pub why: String,
    pub rearmed_at: Option<SystemTime>,
}

#[derive(Debug, Clone)]
pub struct RunRecord {
    pub id: String,
    pub started_at: SystemTime,
    pub calls: u64,
    pub refusals: BTreeMap<ErrorCode, u64>,
    pub stops: Vec<StopStamp>,
    /// The X display this process uses and how it was found (`None`: no desktop).
    pub desktop: Option<(String, Source)>,
    /// A session's own X display (the tools act there; `desktop` stays the operator's, which
    /// the stop watches), with its size.
    pub own_display: Option<(String, OwnDisplaySize)>,
}

impl RunRecord {
    pub fn new(id: String, started_at: SystemTime) -> Self {
        RunRecord {
            id,
            started_at,
            calls: 0,
            refusals: BTreeMap::new(),
            stops: Vec::new(),
            desktop: None,
            own_display: None,
        }
    }

    pub fn count_call(&mut self) {
        self.calls += 1;
    }

    pub fn count_refusal(&mut self, code: ErrorCode) {
        *self.refusals.entry(code).or_default() += 1;
    }

    pub fn stamp_stop(&mut self, at: SystemTime, why: String) {
        self.stops.push(StopStamp { at, why, rearmed_at: None });
    }

    /// Adds to the reason of the stop still in force (e.g. tampering seen after it engaged).
    pub fn amend_open_stop(&mut self, note: &str) {
        if let Some(open) = self.stops.iter_mut().rev().find(|s| s.rearmed_at.is_none())
            && !open.why.contains(note)
        {
            open.why = format!("{}; then {note}", open.why);
        }
    }

    /// Marks the latest open stop as re-armed.
    pub fn stamp_rearm(&mut self, at: SystemTime) {
        if let Some(open) = self.stops.iter_mut().rev().find(|s| s.rearmed_at.is_none()) {
            open.rearmed_at = Some(at);
        }
    }

    /// The `session-status` result.
    pub fn to_json(&self, stopped: bool) -> Value {
        let refusals: BTreeMap<&str, u64> = self.refusals.iter().map(|(c, n)| (c.as_str(), *n)).collect();
        let stops: Vec<Value> = self
            .stops
            .iter()
            .map(|s| json!({"at": unix_ms(s.at), "why": s.why, "rearmedAt": s.rearmed_at.map(unix_ms)}))
            .collect();
        json!({
            "runId": self.id,
            "startedAtUnixMs": unix_ms(self.started_at),
            "calls": self.calls,
            "refusals": refusals,
            "emergencyStopped": stopped,
            "stops": stops,
            "desktop": self.desktop_json(),
        })
    }

    /// `desktop`: the display the tools act on. An own display says `own: true`, its size, and
    /// the operator's display the stop watches.
    fn desktop_json(&self) -> Value {
        let operator = self.desktop.as_ref();
        match &self.own_display {
            Some((display, size)) => json!({
                "own": true,
                "display": display,
                "width": size.width,
                "height": size.height,
                "operatorDisplay": operator.map(|(display, _)| display),
            }),
            None => match operator {
                Some((display, source)) => json!({"display": display, "source": source.as_str()}),
                None => Value::Null,
            },
        }
    }
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn counts_and_stops_show_in_json() {
        let t0 = UNIX_EPOCH + Duration::from_secs(1000);
        let mut r = RunRecord::new("abc".into(), t0);
        r.count_call();
        r.count_call();
        r.count_refusal(ErrorCode::UnknownTool);
        r.count_refusal(ErrorCode::UnknownTool);
        r.stamp_stop(t0 + Duration::from_secs(1), "chord Ctrl+Alt+Shift+S".into());
        let v = r.to_json(true);
        assert_eq!(v["calls"], 2);
        assert_eq!(v["refusals"]["unknown-tool"], 2);
        assert_eq!(v["emergencyStopped"], true);
        assert_eq!(v["stops"][0]["rearmedAt"], Value::Null);
        r.amend_open_stop("input tampering detected");
        r.amend_open_stop("input tampering detected");
        assert_eq!(r.stops[0].why, "chord Ctrl+Alt+Shift+S; then input tampering detected");
        r.stamp_rearm(t0 + Duration::from_secs(5));
        assert_eq!(r.to_json(false)["stops"][0]["rearmedAt"], 1_005_000);
    }

    #[test]
    fn an_own_display_is_the_desktop_with_its_size() {
        let mut r = RunRecord::new("abc".into(), UNIX_EPOCH);
        assert_eq!(r.to_json(false)["desktop"], Value::Null);
        r.desktop = Some((":0".into(), Source::Environment));
        assert_eq!(r.to_json(false)["desktop"], json!({"display": ":0", "source": "environment"}));
        r.own_display = Some((":7".into(), OwnDisplaySize { width: 1024, height: 768 }));
        assert_eq!(
            r.to_json(false)["desktop"],
            json!({"own": true, "display": ":7", "width": 1024, "height": 768, "operatorDisplay": ":0"})
        );
    }
}
