//! `dispatch::call` against a fake desktop: the gate order (the first gate that matches
//! answers, and nothing reaches the desktop before the last gate passed), one audit line per
//! call, and the envelope of each outcome (success, refusal, tool failure, cancel).

mod common;

use std::sync::{Arc, Mutex};

use common::{ID, agent, agent_with, audited};
use mcec_desktop::keys::Key;
use mcec_desktop::seams::{Backend, Injector, Screens, WindowManager, WindowOp};
use mcec_desktop::{
    Captured, DesktopConfig, DesktopTools, DisplayInfo, MouseButton, Point, Rect, RgbImage, ScrollDirection,
    WindowInfo,
};
use mcec_mcp::dispatch::{self, Answer};
use mcec_mcp::tools::ToolServices;
use mcec_rules::gates::DesktopGate;
use mcec_rules::settings::Commands;
use mcec_rules::{ErrorCode, StopFlag, ToolError};
use serde_json::{Map, Value, json};

/// A desktop that records what reaches it and can be told to fail pressing a button.
#[derive(Default)]
struct FakeDesktop {
    calls: Mutex<Vec<String>>,
    fail_button: Mutex<Option<ErrorCode>>,
}

impl FakeDesktop {
    fn log(&self, what: String) -> Result<(), ToolError> {
        self.calls.lock().unwrap().push(what);
        Ok(())
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

impl Screens for FakeDesktop {
    fn displays(&self) -> Result<Vec<DisplayInfo>, ToolError> {
        Ok(vec![DisplayInfo {
            index: 0,
            name: "fake".into(),
            primary: true,
            bounds: Rect::new(0, 0, 640, 480),
            dpi: mcec_desktop::types::Dpi::assumed(),
        }])
    }

    fn capture(&self, area: Rect) -> Result<Captured, ToolError> {
        let pixels = vec![0; area.width as usize * area.height as usize * 3];
        let via = mcec_desktop::CaptureVia::Getimage;
        Ok(Captured {
            image: RgbImage { width: area.width, height: area.height, pixels },
            left_out: None,
            via,
        })
    }
}

impl WindowManager for FakeDesktop {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, ToolError> {
        Ok(Vec::new())
    }

    fn window_info(&self, id: u64) -> Result<WindowInfo, ToolError> {
        Err(ToolError::new(ErrorCode::WindowClosed, format!("window {id} is gone")))
    }

    fn window_op(&self, id: u64, op: WindowOp) -> Result<(), ToolError> {
        self.log(format!("window {id} {op:?}"))
    }

    fn parent_process(&self, _pid: u32) -> Option<u32> {
        None
    }
}

impl Injector for FakeDesktop {
    fn pointer_move(&self, to: Point) -> Result<(), ToolError> {
        self.log(format!("move {},{}", to.x, to.y))
    }

    fn pointer_position(&self) -> Result<Point, ToolError> {
        Ok(Point::new(0, 0))
    }

    fn button(&self, button: MouseButton, down: bool) -> Result<(), ToolError> {
        if let Some(code) = *self.fail_button.lock().unwrap() {
            return Err(ToolError::new(code, "the fake refused the button"));
        }
        self.log(format!("button {button:?} {}", if down { "down" } else { "up" }))
    }

    fn scroll(&self, direction: ScrollDirection) -> Result<(), ToolError> {
        self.log(format!("scroll {direction:?}"))
    }

    fn key(&self, key: Key, down: bool, _stop: &StopFlag) -> Result<(), ToolError> {
        self.log(format!("key {key:?} {down}"))
    }

    fn type_text(&self, text: &str, _stop: &StopFlag) -> Result<(), ToolError> {
        self.log(format!("type {text}"))
    }

    fn settle(&self) -> Result<(), ToolError> {
        Ok(())
    }

    fn release_all(&self) -> Result<(), ToolError> {
        self.log("release all".into())
    }
}

impl Backend for FakeDesktop {
    fn display_name(&self) -> &str {
        ":fake"
    }

    fn prepare_program(&self, _program: &mut std::process::Command) {}
}

fn services(fake: &Arc<FakeDesktop>) -> ToolServices {
    let config = DesktopConfig { artifact_dir: std::env::temp_dir().join("mcec-dispatch-test-unused") };
    ToolServices {
        sessions: None,
        desktop: Some(Arc::new(DesktopTools::new(fake.clone(), config))),
        a11y: None,
    }
}

fn args(v: Value) -> Option<Map<String, Value>> {
    v.as_object().cloned()
}

fn click() -> Option<Map<String, Value>> {
    args(json!({"at": {"x": 10, "y": 20}}))
}

fn call(agent: &mcec_mcp::Agent, name: &str, a: Option<Map<String, Value>>) -> (Answer, Vec<String>) {
    audited(|| dispatch::call(agent, name, a, &agent.call_flag()))
}

fn code(answer: &Answer) -> &str {
    answer.envelope["error"]["code"].as_str().unwrap_or("(none)")
}

#[test]
fn a_click_that_passes_every_gate_reaches_the_desktop_and_answers_ok() {
    let fake = Arc::new(FakeDesktop::default());
    let agent = agent(DesktopGate::Ready, services(&fake));
    let (answer, audit) = call(&agent, "click", click());
    assert!(answer.ok(), "{}", answer.envelope);
    assert_eq!(answer.envelope["runId"], json!(ID));
    assert!(answer.envelope.get("error").is_none() && answer.envelope.get("result").is_some());
    assert!(fake.calls().contains(&"move 10,20".to_string()), "{:?}", fake.calls());
    assert!(fake.calls().iter().any(|c| c.starts_with("button Left down")), "{:?}", fake.calls());
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert!(audit[0].starts_with("AGENT-AUDIT: call; tool=click ok=true"), "{audit:?}");
    let (status, _) = call(&agent, "session-status", None);
    assert_eq!(status.envelope["result"]["calls"], json!(2), "{}", status.envelope);
}

/// Each case holds every later gate's refusal too, so only the order picks the answer; and
/// nothing reaches the desktop. The last row is the positive control: the same fake is reached.
#[test]
fn the_first_gate_that_matches_answers_and_the_desktop_is_never_reached() {
    let stopped_too = |c: &mut mcec_mcp::AgentConfig| c.stop.set();
    let installed = |c: &mut mcec_mcp::AgentConfig| c.installed_copy = true;
    let commands_off = |c: &mut mcec_mcp::AgentConfig| c.agent_commands_enabled = false;
    let no_click = |c: &mut mcec_mcp::AgentConfig| c.commands = Commands::enabling(["capture"]);
    let unarmed = DesktopGate::StopUnavailable { why: "test".into() };
    let bad_args = args(json!({"at": "nowhere"}));
    type Edit = fn(&mut mcec_mcp::AgentConfig);
    type Case<'a> = (&'a str, Vec<Edit>, &'a str, Option<Map<String, Value>>, &'a str);
    let cases: Vec<Case> = vec![
        (
            "1 stop first",
            vec![stopped_too, installed, commands_off],
            "no-such-tool",
            None,
            "emergency-stopped",
        ),
        ("2 installed copy", vec![installed, commands_off], "click", bad_args.clone(), "bootstrap-only"),
        (
            "4 commands off",
            vec![commands_off, no_click],
            "click",
            bad_args.clone(),
            "agent-commands-disabled",
        ),
        ("5 unknown tool", vec![], "no-such-tool", bad_args.clone(), "unknown-tool"),
        ("5 disabled command", vec![no_click], "click", bad_args.clone(), "command-disabled"),
        ("6 arguments before the desktop gate", vec![], "click", bad_args, "bad-arguments"),
        ("7 actuation with no armed stop", vec![], "click", click(), "emergency-stop-unavailable"),
    ];
    for (what, edits, tool, a, expected) in cases {
        let fake = Arc::new(FakeDesktop::default());
        let agent = agent_with(unarmed.clone(), services(&fake), |c| edits.iter().for_each(|e| e(c)));
        let (answer, audit) = call(&agent, tool, a);
        assert_eq!(code(&answer), expected, "{what}: {}", answer.envelope);
        assert_eq!(answer.envelope["ok"], json!(false), "{what}");
        assert_eq!(answer.envelope["runId"], json!(ID), "{what}");
        assert!(answer.envelope["error"]["detail"].as_str().is_some_and(|d| !d.is_empty()), "{what}");
        assert!(fake.calls().is_empty(), "{what}: the desktop was reached: {:?}", fake.calls());
        assert_eq!(audit.len(), 1, "{what}: {audit:?}");
        let line = &audit[0];
        assert!(
            line.starts_with("AGENT-AUDIT: refused; ") && line.contains(&format!("code={expected}")),
            "{line}"
        );
    }
    // Positive control: observation passes gate 7 with the same unarmed stop and reaches the fake.
    let fake = Arc::new(FakeDesktop::default());
    let agent = agent(unarmed, services(&fake));
    let (answer, _) = call(&agent, "capture", None);
    assert!(answer.ok(), "{}", answer.envelope);
    assert!(answer.image.is_some(), "a capture carries its image");
}

#[test]
fn a_tool_that_runs_and_fails_is_audited_as_a_call_not_a_refusal_and_counted() {
    let fake = Arc::new(FakeDesktop::default());
    *fake.fail_button.lock().unwrap() = Some(ErrorCode::Internal);
    let agent = agent(DesktopGate::Ready, services(&fake));
    let (answer, audit) = call(&agent, "click", click());
    assert_eq!(code(&answer), "internal", "{}", answer.envelope);
    assert_eq!(answer.envelope["error"]["detail"], json!("the fake refused the button"));
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert!(audit[0].starts_with("AGENT-AUDIT: call; tool=click ok=false code=internal"), "{audit:?}");
    let (status, _) = call(&agent, "session-status", None);
    assert_eq!(status.envelope["result"]["refusals"], json!({"internal": 1}), "{}", status.envelope);
}

#[test]
fn a_call_whose_own_flag_is_set_is_cancelled_not_emergency_stopped() {
    let fake = Arc::new(FakeDesktop::default());
    let agent = agent(DesktopGate::Ready, services(&fake));
    let flag = agent.call_flag();
    flag.set();
    let (answer, audit) = audited(|| dispatch::call(&agent, "click", click(), &flag));
    assert_eq!(code(&answer), "cancelled", "{}", answer.envelope);
    assert!(!fake.calls().iter().any(|c| c.contains("down")), "nothing pressed: {:?}", fake.calls());
    assert_eq!(audit.len(), 1, "{audit:?}");
    // Control: the operator's stop set during the call is reported as the stop.
    agent.stop.set();
    let (answer, _) = audited(|| dispatch::call(&agent, "click", click(), &agent.call_flag()));
    assert_eq!(code(&answer), "emergency-stopped");
}

/// What the operator's overlay is told: each admitted call in plain words.
#[derive(Default)]
struct Heard(Arc<Mutex<Vec<(String, String)>>>);

impl mcec_mcp::CallObserver for Heard {
    fn on_call(&self, tool: &str, summary: &str) {
        self.0.lock().unwrap().push((tool.to_string(), summary.to_string()));
    }
}

#[test]
fn the_observer_hears_admitted_calls_in_plain_words_and_never_the_typed_text() {
    let fake = Arc::new(FakeDesktop::default());
    let heard = Heard::default();
    let lines = heard.0.clone();
    let agent = agent(DesktopGate::Ready, services(&fake)).with_observer(Box::new(heard));
    let secret = "hunter2 is my password";
    assert!(call(&agent, "type", args(json!({"text": secret}))).0.ok());
    assert!(
        fake.calls().iter().any(|c| c.contains(secret)),
        "control: the text was typed: {:?}",
        fake.calls()
    );
    assert!(call(&agent, "click", click()).0.ok());
    // Refused by the tool's parser (gate 6): nothing is narrated.
    assert_eq!(code(&call(&agent, "type", args(json!({"text": 5}))).0), "bad-arguments");
    let heard = lines.lock().unwrap().clone();
    assert_eq!(
        heard,
        [
            ("type".to_string(), "typed 22 characters".to_string()),
            ("click".into(), "clicked at (10, 20)".into())
        ]
    );
}

#[test]
fn a_name_with_control_characters_is_audited_printable() {
    let fake = Arc::new(FakeDesktop::default());
    let agent = agent(DesktopGate::Ready, services(&fake));
    let (answer, audit) = call(&agent, "evil\nAGENT-AUDIT: forged", None);
    assert_eq!(code(&answer), "unknown-tool");
    assert_eq!(audit.len(), 1, "one line, not two: {audit:?}");
}

#[test]
fn every_catalogued_tool_is_bound_and_listed_once_enabled() {
    let fake = Arc::new(FakeDesktop::default());
    let agent = Arc::new(agent(DesktopGate::Ready, services(&fake)));
    let listed: Vec<String> = mcec_mcp::server::McecServer::new(agent)
        .listed_tools()
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    let catalogued: Vec<&str> = mcec_rules::catalog::TOOLS.iter().map(|t| t.name).collect();
    assert_eq!(listed, catalogued);
}
