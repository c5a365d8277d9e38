//! The tray icon on Unix: a StatusNotifierItem (with its `com.canonical.dbusmenu` menu) on the
//! session bus, served by `ksni` on a thread of its own, registered with the desktop's
//! `org.kde.StatusNotifierWatcher`.
//!
//! A desktop without a watcher (or without a session bus) has no tray: the item is not
//! started and one info line says why; nothing else changes. While it runs, every change of
//! the operator state that changes the icon's look or the menu's enabled items updates the
//! item (woken by a repaint hook, as the painters are), which sends the properties' change
//! signals.

use std::sync::mpsc::{self, Sender};

use ksni::blocking::TrayMethods as _;
use ksni::menu::StandardItem;
use ksni::{Icon, MenuItem, Status, ToolTip};

use super::{ICON_SIZE, Item, Look, choose, icon, items};
use crate::state::{OperatorEvent, OperatorState};

/// The item as `ksni` asks it: the last look and menu, and the way back to the core.
struct McecTray {
    look: Look,
    enabled: [(Item, bool); 3],
    state: OperatorState,
    events: Sender<OperatorEvent>,
}

impl ksni::Tray for McecTray {
    fn id(&self) -> String {
        "mcec".into()
    }

    fn title(&self) -> String {
        "mcec".into()
    }

    fn category(&self) -> ksni::Category {
        ksni::Category::SystemServices
    }

    fn status(&self) -> Status {
        if self.look == Look::Stopped { Status::NeedsAttention } else { Status::Active }
    }

    fn icon_pixmap(&self) -> Vec<Icon> {
        let side = ICON_SIZE as i32;
        vec![Icon { width: side, height: side, data: icon(self.look) }]
    }

    fn tool_tip(&self) -> ToolTip {
        ToolTip { title: format!("mcec: {}", self.look.words()), ..ToolTip::default() }
    }

    /// A click on the icon itself brings the console up.
    fn activate(&mut self, _x: i32, _y: i32) {
        choose(Item::OpenConsole, &self.state, &self.events);
    }

    fn menu(&self) -> Vec<MenuItem<Self>> {
        self.enabled
            .iter()
            .map(|&(item, enabled)| {
                StandardItem {
                    label: item.label().into(),
                    enabled,
                    activate: Box::new(move |tray: &mut Self| choose(item, &tray.state, &tray.events)),
                    ..StandardItem::default()
                }
                .into()
            })
            .collect()
    }
}

/// Start the item on a thread of its own (registering waits on the bus).
pub(super) fn start(state: OperatorState, events: Sender<OperatorEvent>) {
    let spawned = std::thread::Builder::new().name("mcec-tray".into()).spawn(move || run(state, events));
    if let Err(e) = spawned {
        tracing::info!("no tray icon: its thread could not start: {e}");
    }
}

fn run(state: OperatorState, events: Sender<OperatorEvent>) {
    let snap = state.snapshot();
    let tray = McecTray { look: Look::of(&snap), enabled: items(&snap), state: state.clone(), events };
    let handle = match tray.spawn() {
        Ok(handle) => handle,
        Err(e) => {
            tracing::info!("no tray icon: {e}");
            return;
        }
    };
    tracing::info!("tray icon shown (StatusNotifierItem)");
    // The hook only wakes this thread: it also runs inside the menu's callbacks, which `ksni`
    // calls holding the item's lock, and updating the item from there would wait on itself.
    let (wake, woken) = mpsc::channel::<()>();
    state.set_repaint_hook(move || {
        let _ = wake.send(());
    });
    let mut shown = (Look::of(&snap), items(&snap));
    while woken.recv().is_ok() {
        while woken.try_recv().is_ok() {}
        let snap = state.snapshot();
        let now = (Look::of(&snap), items(&snap));
        // Only when what the item shows changed: the hook runs on every state change.
        if now != shown {
            shown = now;
            handle.update(|tray| {
                tray.look = now.0;
                tray.enabled = now.1;
            });
        }
    }
}
