//! Keeps mcec's bindings in sway: each one on every physical keyboard, in every binding mode
//! the session entered, checked by removing and re-adding them in one IPC message. The stop's
//! guard keeps one binding for the whole process; the prompts' guard (`prompts.rs`) keeps
//! those of the prompts shown, changing them as prompts open and close.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::chord::Binding;
use crate::ipc::{Ipc, Message};

/// The identifier sway gives keyboards of the virtual-keyboard protocol (wlroots names the
/// device `virtual keyboard`; sway writes spaces as `_` and has no vendor or product for it).
pub(crate) const VIRTUAL_KEYBOARD: &str = "0:0:virtual_keyboard";

/// Bindings and the keyboards they are on.
#[derive(Debug)]
pub(crate) struct Guard {
    ipc: Ipc,
    bindings: Vec<Binding>,
    devices: BTreeSet<String>,
    /// The binding mode the bindings were last checked in.
    mode: Option<String>,
    connected: bool,
}

impl Guard {
    pub(crate) fn new(ipc: Ipc, bindings: Vec<Binding>) -> Guard {
        Guard { ipc, bindings, devices: BTreeSet::new(), mode: None, connected: true }
    }

    pub(crate) fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// Keeps `bindings` from now on: the ones no longer wanted are removed from every
    /// keyboard, the new ones added. An `Err` when sway refused to add one.
    pub(crate) fn set_bindings(&mut self, bindings: Vec<Binding>) -> Result<(), String> {
        let gone: Vec<Binding> = self.bindings.iter().filter(|b| !bindings.contains(b)).cloned().collect();
        let added: Vec<Binding> = bindings.iter().filter(|b| !self.bindings.contains(b)).cloned().collect();
        let mut commands: Vec<String> =
            self.devices.iter().flat_map(|d| gone.iter().map(move |b| b.unbind(d))).collect();
        let removals = commands.len();
        commands.extend(self.devices.iter().flat_map(|d| added.iter().map(move |b| b.bind(d))));
        self.bindings = bindings;
        if commands.is_empty() {
            return Ok(());
        }
        let results = self.run(&commands.join("; "))?;
        match results.iter().skip(removals).find_map(|r| r.as_ref().err()) {
            Some(e) => Err(format!("sway refused mcec's binding: {e}")),
            None => Ok(()),
        }
    }

    pub(crate) fn devices(&self) -> &BTreeSet<String> {
        &self.devices
    }

    /// False once a request on the command connection failed.
    pub(crate) fn connected(&self) -> bool {
        self.connected
    }

    /// Binds new physical keyboards and drops the bindings of keyboards that went away.
    pub(crate) fn sync_devices(&mut self) -> Result<(), String> {
        let inputs = self.request(Message::GetInputs, "")?;
        let now = physical_keyboards(&inputs);
        let added: Vec<String> = now.difference(&self.devices).cloned().collect();
        let gone: Vec<String> = self.devices.difference(&now).cloned().collect();
        let binds: Vec<String> =
            added.iter().flat_map(|d| self.bindings.iter().map(move |b| b.bind(d))).collect();
        let bound = binds.len();
        let mut commands = binds;
        commands.extend(gone.iter().flat_map(|d| self.bindings.iter().map(move |b| b.unbind(d))));
        if !commands.is_empty() {
            let results = self.run(&commands.join("; "))?;
            if let Some(Err(e)) = results.iter().take(bound).find(|r| r.is_err()) {
                return Err(format!("sway refused mcec's binding: {e}"));
            }
        }
        self.devices = now;
        Ok(())
    }

    /// The binding mode changed: bindings added over IPC go to the current mode, so add ours
    /// there (in a mode that has them already, sway replaces them with themselves).
    pub(crate) fn mode_changed(&mut self) {
        let commands: Vec<String> = self.pairs().map(|(d, b)| b.bind(&d)).collect();
        if !commands.is_empty() {
            let _ = self.run(&commands.join("; "));
        }
    }

    /// Every (keyboard, binding) pair, in a fixed order.
    fn pairs(&self) -> impl Iterator<Item = (String, Binding)> + use<'_> {
        self.devices.iter().flat_map(|d| self.bindings.iter().map(move |b| (d.clone(), b.clone())))
    }

    /// Every binding is still there. Each is removed and re-added in one message; a removal
    /// sway answers with an error means it was gone (it is back now), which is the `Err`.
    pub(crate) fn check(&mut self) -> Result<(), String> {
        let pairs: Vec<(String, Binding)> = self.pairs().collect();
        let commands: Vec<String> = pairs.iter().flat_map(|(d, b)| [b.unbind(d), b.bind(d)]).collect();
        if commands.is_empty() {
            return Ok(());
        }
        // A mode entered since the last check has no bindings of ours until its `mode` event is
        // read; the check adds them there, so a removal that fails then is no tampering (the
        // mode is asked before and after, so a switch in between counts too).
        let before = self.current_mode()?;
        let results = self.run(&commands.join("; "))?;
        let after = self.current_mode()?;
        let entered = self.mode.as_ref().is_some_and(|m| *m != before) || before != after;
        self.mode = Some(after);
        for ((device, binding), pair) in pairs.iter().zip(results.chunks(2)) {
            let what = binding.what();
            match pair {
                [Ok(()), Ok(())] => {}
                [Err(_), Ok(())] if entered => {}
                [Err(e), _] => {
                    return Err(format!("tampered: mcec's {what} binding on {device} was removed ({e})"));
                }
                _ => {
                    return Err(format!("tampered: mcec's {what} binding on {device} could not be restored"));
                }
            }
        }
        if results.len() != commands.len() {
            return Err("tampered: sway answered fewer commands than it was sent".into());
        }
        Ok(())
    }

    /// The binding mode sway is in.
    fn current_mode(&mut self) -> Result<String, String> {
        let state = self.request(Message::GetBindingState, "")?;
        Ok(state.get("name").and_then(Value::as_str).unwrap_or("").to_string())
    }

    /// Removes every binding (at exit; failures are of no use to anyone then).
    pub(crate) fn remove_all(&mut self) {
        let commands: Vec<String> = self.pairs().map(|(d, b)| b.unbind(&d)).collect();
        if !commands.is_empty() && self.connected {
            let _ = self.run(&commands.join("; "));
        }
        self.devices.clear();
    }

    pub(crate) fn run(&mut self, commands: &str) -> Result<Vec<Result<(), String>>, String> {
        let reply = self.request(Message::RunCommand, commands)?;
        Ok(crate::ipc::command_results(&reply))
    }

    fn request(&mut self, message: Message, payload: &str) -> Result<Value, String> {
        self.ipc.request(message, payload).map_err(|e| {
            self.connected = false;
            e.to_string()
        })
    }
}

/// The identifiers of the keyboards in a `GET_INPUTS` reply that are not virtual ones.
pub(crate) fn physical_keyboards(inputs: &Value) -> BTreeSet<String> {
    inputs
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("keyboard"))
        .filter_map(|i| i.get("identifier").and_then(Value::as_str))
        .filter(|id| *id != VIRTUAL_KEYBOARD)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn virtual_keyboards_pointers_and_touch_are_left_out() {
        let inputs = json!([
            {"identifier": "0:0:X11_touch", "type": "touch"},
            {"identifier": "0:0:X11_pointer", "type": "pointer"},
            {"identifier": "0:0:X11_keyboard", "type": "keyboard"},
            {"identifier": "1:1:AT_Translated_Set_2_keyboard", "type": "keyboard"},
            {"identifier": "0:0:virtual_keyboard", "type": "keyboard"},
        ]);
        let got: Vec<String> = physical_keyboards(&inputs).into_iter().collect();
        assert_eq!(got, ["0:0:X11_keyboard", "1:1:AT_Translated_Set_2_keyboard"]);
        assert!(physical_keyboards(&json!({"error": "x"})).is_empty());
    }
}
