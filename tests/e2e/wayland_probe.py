#!/usr/bin/python3
"""A Wayland-native window that writes down the input it receives, for the sway tests.

    GDK_BACKEND=wayland python3 wayland_probe.py TITLE LOG

GTK 3 on Wayland (system Python with python3-gi and gir1.2-gtk-3.0). Each line of LOG is one
event, in surface pixels (the window's own coordinates):
`ready`, `motion X Y`, `press B X Y`, `release B X Y`, `scroll up|down|left|right`,
`key NAME ctrl=0|1`, `focus-in`. No client can read sway's pointer or buttons, so this is
how a test sees what mcec's virtual pointer and keyboard really did.
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

title, log_path = sys.argv[1], sys.argv[2]
log = open(log_path, "a", buffering=1)


def say(line: str) -> bool:
    log.write(line + "\n")
    return False


def on_motion(_w, e) -> bool:
    return say(f"motion {round(e.x)} {round(e.y)}")


def on_press(_w, e) -> bool:
    if e.type == Gdk.EventType.BUTTON_PRESS:
        say(f"press {e.button} {round(e.x)} {round(e.y)}")
    return False


def on_release(_w, e) -> bool:
    return say(f"release {e.button} {round(e.x)} {round(e.y)}")


def on_scroll(_w, e) -> bool:
    names = {
        Gdk.ScrollDirection.UP: "up",
        Gdk.ScrollDirection.DOWN: "down",
        Gdk.ScrollDirection.LEFT: "left",
        Gdk.ScrollDirection.RIGHT: "right",
    }
    if e.direction == Gdk.ScrollDirection.SMOOTH:
        _, dx, dy = e.get_scroll_deltas()
        if dy:
            say("scroll down" if dy > 0 else "scroll up")
        if dx:
            say("scroll right" if dx > 0 else "scroll left")
    elif e.direction in names:
        say(f"scroll {names[e.direction]}")
    return False


def on_key(_w, e) -> bool:
    ctrl = int(bool(e.state & Gdk.ModifierType.CONTROL_MASK))
    return say(f"key {Gdk.keyval_name(e.keyval)} ctrl={ctrl}")


window = Gtk.Window(title=title)
window.set_default_size(400, 300)
area = Gtk.DrawingArea()
area.add_events(
    Gdk.EventMask.POINTER_MOTION_MASK
    | Gdk.EventMask.BUTTON_PRESS_MASK
    | Gdk.EventMask.BUTTON_RELEASE_MASK
    | Gdk.EventMask.SCROLL_MASK
    | Gdk.EventMask.SMOOTH_SCROLL_MASK
)
area.connect("motion-notify-event", on_motion)
area.connect("button-press-event", on_press)
area.connect("button-release-event", on_release)
area.connect("scroll-event", on_scroll)
window.connect("key-press-event", on_key)
window.connect("focus-in-event", lambda *_: say("focus-in"))
window.connect("destroy", Gtk.main_quit)
window.add(area)
window.show_all()
# GDK drops motion events still queued when a newer one arrives; under load that left a drag
# with no motion between its press and its release. Keep every one.
for gdk_window in (window.get_window(), area.get_window()):
    gdk_window.set_event_compression(False)
GLib.idle_add(say, "ready")
Gtk.main()
