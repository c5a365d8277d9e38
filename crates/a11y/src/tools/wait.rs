//! `wait-for`: poll the tree under a window until a condition on the selector's match holds,
//! bounded by `timeoutMs`, asking the stop flag (which the client's cancel also sets) between
//! polls and inside every walk. The window itself may not exist yet (a dialog that opens
//! later): until it does, nothing matches.

use std::time::{Duration, Instant};

use mcec_rules::{ErrorCode, StopFlag, ToolError, progress};
use serde::Serialize;

use super::{A11yTools, WindowRef, ambiguous};
use crate::model::Element;
use crate::requests::{WaitForCondition, WaitForRequest};
use crate::selector::Selector;
use crate::walk::Cut;

const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// The bound, past the project's 50 s per call (`MAX_CALL_MS`): like the consent
/// prompt, a long wait tells a client that sent a `progressToken` how far it got every 2 s,
/// which is what keeps such a client's request timeout from cutting it.
pub const MAX_TIMEOUT_MS: u64 = 60_000;
/// Time between two looks at the tree.
const POLL: Duration = Duration::from_millis(100);
/// How often a pause between looks asks the stop flag.
const STOP_POLL: Duration = Duration::from_millis(5);

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitForResult {
    pub window: WindowRef,
    /// The element the condition holds for (absent for `disappears`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<Element>,
    pub waited_ms: u64,
}

/// One look: whether the condition holds, and the element it holds for.
enum Look {
    Holds(WindowRef, Option<Box<Element>>),
    NotYet(String),
}

impl A11yTools {
    fn look(
        &self,
        req: &WaitForRequest,
        selector: &Selector,
        condition: WaitForCondition,
        stop: &StopFlag,
    ) -> Result<Look, ToolError> {
        let (window, root) = match self.window_root(&req.selector()) {
            Ok(found) => found,
            Err(e) if matches!(e.code, ErrorCode::WindowNotFound | ErrorCode::WindowClosed) => {
                if condition == WaitForCondition::Disappears && !req.selector().is_empty() {
                    return Ok(Look::Holds(WindowRef { id: 0, title: String::new() }, None));
                }
                return Ok(Look::NotYet("the window is not there".into()));
            }
            Err(e) if e.code == ErrorCode::StaleElement => {
                return Ok(Look::NotYet("the window's tree changed".into()));
            }
            Err(e) => return Err(e),
        };
        let (found, cut) = self.matches(&root, selector, stop)?;
        let whole = matches!(cut, None | Some(Cut::Depth));
        let window = WindowRef::from(&window);
        if condition == WaitForCondition::Disappears {
            return Ok(if found.is_empty() && whole {
                Look::Holds(window, None)
            } else {
                Look::NotYet(format!("{} match", found.len()))
            });
        }
        let mut elements: Vec<Element> = found.into_iter().map(|(_, e)| e).collect();
        if elements.len() > 1 || (elements.len() == 1 && !whole) {
            return Err(ambiguous(selector, &elements, cut));
        }
        let Some(e) = elements.pop() else {
            return Ok(Look::NotYet("no element matches".into()));
        };
        let state = match condition {
            WaitForCondition::Appears | WaitForCondition::Disappears => None,
            WaitForCondition::Enabled => Some("enabled"),
            WaitForCondition::Focused => Some("focused"),
            WaitForCondition::Showing => Some("showing"),
        };
        Ok(match state {
            Some(s) if !e.states.contains(&s) => Look::NotYet(format!("{} {:?} is not {s}", e.role, e.name)),
            _ => Look::Holds(window, Some(Box::new(e))),
        })
    }

    pub fn wait_for(&self, req: &WaitForRequest, stop: &StopFlag) -> Result<WaitForResult, ToolError> {
        let selector = Selector::of(&req.target())?;
        let timeout = req.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout > MAX_TIMEOUT_MS {
            return Err(ToolError::bad_argument("timeoutMs", format!("must be 0 to {MAX_TIMEOUT_MS}")));
        }
        let condition = req.condition.unwrap_or_default();
        let started = Instant::now();
        let deadline = started + Duration::from_millis(timeout);
        loop {
            if stop.is_set() {
                return Err(crate::stopped_waiting(started));
            }
            let last = match self.look(req, &selector, condition, stop)? {
                Look::Holds(window, element) => {
                    let waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    return Ok(WaitForResult { window, element: element.map(|e| *e), waited_ms });
                }
                Look::NotYet(why) => why,
            };
            let waited = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            progress::report(waited.min(timeout), timeout, "ms waited");
            let next = Instant::now() + POLL;
            if next > deadline {
                return Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!(
                        "After {waited} ms the condition did not hold for {}: {last}.",
                        selector.describe()
                    ),
                ));
            }
            while Instant::now() < next {
                if stop.is_set() {
                    return Err(crate::stopped_waiting(started));
                }
                std::thread::sleep(STOP_POLL);
            }
        }
    }
}
