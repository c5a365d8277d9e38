//! Which X input devices are synthetic.
//!
//! The server routes every ordinary XTEST `FakeInput` through a slave named
//! `<master> XTEST keyboard/pointer` that carries the read-only `XTEST Device` property.
//! A source is treated as injected when it has that property, when it is a master device
//! (a real key always arrives with a slave as its source), or when its name contains
//! ` XTEST `. Unknown device ids are injected too: the safe reading. The table is rebuilt on
//! every hierarchy change, since a new master brings a new XTEST pair.

use std::collections::HashMap;

use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::xinput::{ConnectionExt as _, DeviceType};
use x11rb::protocol::xproto::{Atom, ConnectionExt as _};

/// What the monitor knows about one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    pub injected: bool,
}

/// The classification rule, pure so it can be tested without a server.
pub fn is_injected(name: &str, master: bool, has_xtest_property: bool) -> bool {
    has_xtest_property || master || name.contains(" XTEST ")
}

/// The device table of one server.
#[derive(Debug, Clone, Default)]
pub struct DeviceTable {
    devices: HashMap<u16, DeviceInfo>,
}

impl DeviceTable {
    /// The atom of the `XTEST Device` property, or 0 when no device has ever had it.
    pub fn xtest_atom(conn: &impl Connection) -> Result<Atom, ReplyError> {
        Ok(conn.intern_atom(true, b"XTEST Device")?.reply()?.atom)
    }

    /// Reads every device and its properties.
    pub fn load(conn: &impl Connection, xtest_atom: Atom) -> Result<DeviceTable, ReplyError> {
        let reply = conn.xinput_xi_query_device(0u16)?.reply()?;
        let mut devices = HashMap::new();
        for info in reply.infos {
            let name = String::from_utf8_lossy(&info.name).into_owned();
            let master = matches!(info.type_, DeviceType::MASTER_KEYBOARD | DeviceType::MASTER_POINTER);
            let has_prop = xtest_atom != 0 && has_property(conn, info.deviceid, xtest_atom)?;
            let injected = is_injected(&name, master, has_prop);
            devices.insert(info.deviceid, DeviceInfo { name, injected });
        }
        Ok(DeviceTable { devices })
    }

    /// True unless `id` is a known physical device.
    pub fn injected(&self, id: u16) -> bool {
        self.devices.get(&id).is_none_or(|d| d.injected)
    }

    pub fn get(&self, id: u16) -> Option<&DeviceInfo> {
        self.devices.get(&id)
    }

    /// The first physical device whose name contains `needle` (tests use it to find the
    /// Xephyr keyboard).
    pub fn find_physical(&self, needle: &str) -> Option<u16> {
        let mut ids: Vec<_> =
            self.devices.iter().filter(|(_, d)| !d.injected && d.name.contains(needle)).collect();
        ids.sort_by_key(|(id, _)| **id);
        ids.first().map(|(id, _)| **id)
    }

    pub fn len(&self) -> usize {
        self.devices.len()
    }

    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }
}

fn has_property(conn: &impl Connection, device: u16, atom: Atom) -> Result<bool, ReplyError> {
    let props = conn.xinput_xi_list_properties(device)?.reply()?;
    Ok(props.properties.contains(&atom))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_table() {
        let table = [
            ("Xephyr virtual keyboard", false, false, false),
            ("AT Translated Set 2 keyboard", false, false, false),
            ("Virtual core XTEST keyboard", false, true, true),
            ("Virtual core XTEST keyboard", false, false, true),
            ("agent XTEST pointer", false, false, true),
            ("Virtual core keyboard", true, false, true),
            ("Some keyboard", false, true, true),
            ("XTESTER", false, false, false),
        ];
        for (name, master, prop, want) in table {
            assert_eq!(is_injected(name, master, prop), want, "{name} master={master} prop={prop}");
        }
    }

    #[test]
    fn unknown_devices_count_as_injected() {
        let t = DeviceTable::default();
        assert!(t.injected(12));
        assert!(t.is_empty());
    }
}
