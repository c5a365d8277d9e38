#!/usr/bin/python3
"""The accessibility tests' own GTK 3 application: known widgets with known names, and a line
on stdout for everything done to it, so a test can tell what mcec's `invoke`, `click` and
`type` really did. Run with the system Python (it needs python3-gi and gir1.2-gtk-3.0).

Windows (their titles are what tests select by):
- "mcec a11y main": buttons "Press me", "Never enabled" (insensitive), two buttons both named "Twin", "Open dialog",
  "Close other"; check box "Remember me"; an entry named "Name field"; the label
  "Hello accessible world"; an image of the words in IMAGE_WORDS with no accessible text.
- "mcec a11y list": a button "List action" and a list of 1,000 rows "Row 0" .. "Row 999".
  Also "Drag source" and "Drop target" (panels): a drag that starts on the source prints
  where the button was released.
- "mcec a11y other": a button "Other button"; closed by "Close other".
- "mcec a11y dialog" (after "Open dialog", 0.8 s later): an "OK" button that becomes enabled
  1.2 s after the dialog shows.

With `--scaled` (run it with GDK_SCALE=2): only "mcec a11y scaled" with the button "Scaled
button", for bounds under a toolkit scale factor.

Lines printed: `ready`, `pressed <name>`, `toggled <name> <0|1>`, `entry <text>`,
`dragged <from> to <target or nothing>`, `closed other`, `dialog shown`, `dialog ok enabled`, `dialog ok`.
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
gi.require_version("PangoCairo", "1.0")
import cairo  # noqa: E402
from gi.repository import Gdk, GLib, Gtk, Pango, PangoCairo  # noqa: E402

IMAGE_WORDS = "QUICK BROWN FOX"


def say(line: str) -> None:
    print(line, flush=True)


def text_image(text: str) -> Gtk.Image:
    """Black words on white, drawn to pixels: the image has no accessible text at all."""
    width, height = 520, 90
    surface = cairo.ImageSurface(cairo.FORMAT_RGB24, width, height)
    cr = cairo.Context(surface)
    cr.set_source_rgb(1, 1, 1)
    cr.paint()
    cr.set_source_rgb(0, 0, 0)
    layout = PangoCairo.create_layout(cr)
    layout.set_font_description(Pango.FontDescription("Sans Bold 28"))
    layout.set_text(text, -1)
    cr.move_to(16, 14)
    PangoCairo.show_layout(cr, layout)
    pixbuf = Gdk.pixbuf_get_from_surface(surface, 0, 0, width, height)
    return Gtk.Image.new_from_pixbuf(pixbuf)


def button(label: str) -> Gtk.Button:
    b = Gtk.Button(label=label)
    b.connect("clicked", lambda _b: say(f"pressed {label}"))
    return b


def panel(name: str) -> Gtk.EventBox:
    """A named, framed area with no action of its own (what a drag starts on or ends over)."""
    box = Gtk.EventBox()
    frame = Gtk.Frame()
    frame.add(Gtk.Label(label=f"[{name}]"))
    box.add(frame)
    box.set_size_request(140, 40)
    box.get_accessible().set_name(name)
    return box


def contains(widget: Gtk.Widget, x_root: float, y_root: float) -> bool:
    window = widget.get_window()
    if window is None:
        return False
    ox, oy = window.get_origin()[1:]
    a = widget.get_allocation()
    if not widget.get_has_window():
        ox, oy = ox + a.x, oy + a.y
    return ox <= x_root < ox + a.width and oy <= y_root < oy + a.height


class App:
    def __init__(self) -> None:
        self.other: Gtk.Window | None = None
        self.main = Gtk.Window(title="mcec a11y main")
        self.main.move(40, 40)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
        self.main.add(box)
        box.pack_start(button("Press me"), False, False, 0)
        never = button("Never enabled")
        never.set_sensitive(False)
        box.pack_start(never, False, False, 0)
        twins = Gtk.Box(spacing=6)
        twins.pack_start(button("Twin"), False, False, 0)
        twins.pack_start(button("Twin"), False, False, 0)
        box.pack_start(twins, False, False, 0)
        check = Gtk.CheckButton(label="Remember me")
        check.connect("toggled", lambda c: say(f"toggled Remember me {int(c.get_active())}"))
        box.pack_start(check, False, False, 0)
        entry = Gtk.Entry()
        entry.get_accessible().set_name("Name field")
        entry.connect("changed", lambda e: say(f"entry {e.get_text()}"))
        box.pack_start(entry, False, False, 0)
        box.pack_start(Gtk.Label(label="Hello accessible world"), False, False, 0)
        opener = Gtk.Button(label="Open dialog")
        opener.connect("clicked", self.open_dialog_later)
        box.pack_start(opener, False, False, 0)
        closer = Gtk.Button(label="Close other")
        closer.connect("clicked", self.close_other)
        box.pack_start(closer, False, False, 0)
        drags = Gtk.Box(spacing=12)
        source, target = panel("Drag source"), panel("Drop target")
        source.add_events(Gdk.EventMask.BUTTON_PRESS_MASK | Gdk.EventMask.BUTTON_RELEASE_MASK)
        source.connect("button-press-event", lambda *_: True)
        source.connect(
            "button-release-event",
            lambda _w, ev: say(
                f"dragged Drag source to {'Drop target' if contains(target, ev.x_root, ev.y_root) else 'nothing'}"
            ),
        )
        drags.pack_start(source, False, False, 0)
        drags.pack_start(target, False, False, 0)
        box.pack_start(drags, False, False, 0)
        box.pack_start(text_image(IMAGE_WORDS), False, False, 0)
        self.main.connect("destroy", Gtk.main_quit)
        self.main.show_all()

        self.list_window = Gtk.Window(title="mcec a11y list")
        self.list_window.move(620, 40)
        self.list_window.set_default_size(300, 500)
        lbox = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
        lbox.pack_start(button("List action"), False, False, 0)
        store = Gtk.ListStore(str)
        for i in range(1000):
            store.append([f"Row {i}"])
        view = Gtk.TreeView(model=store)
        view.append_column(Gtk.TreeViewColumn("Rows", Gtk.CellRendererText(), text=0))
        scroller = Gtk.ScrolledWindow()
        scroller.add(view)
        lbox.pack_start(scroller, True, True, 0)
        self.list_window.add(lbox)
        self.list_window.show_all()

        self.other = Gtk.Window(title="mcec a11y other")
        self.other.move(620, 600)
        self.other.add(button("Other button"))
        self.other.show_all()
        GLib.idle_add(lambda: say("ready") and False)

    def close_other(self, _b: Gtk.Button) -> None:
        if self.other is not None:
            self.other.destroy()
            self.other = None
            say("closed other")

    def open_dialog_later(self, _b: Gtk.Button) -> None:
        GLib.timeout_add(800, self.open_dialog)

    def open_dialog(self) -> bool:
        dialog = Gtk.Window(title="mcec a11y dialog")
        dialog.move(300, 300)
        ok = Gtk.Button(label="OK")
        ok.set_sensitive(False)
        ok.connect("clicked", lambda _b: say("dialog ok"))
        dialog.add(ok)
        dialog.show_all()
        say("dialog shown")

        def enable() -> bool:
            ok.set_sensitive(True)
            say("dialog ok enabled")
            return False

        GLib.timeout_add(1200, enable)
        return False


def scaled() -> None:
    window = Gtk.Window(title="mcec a11y scaled")
    window.move(100, 250)
    window.add(button("Scaled button"))
    window.connect("destroy", Gtk.main_quit)
    window.show_all()
    GLib.idle_add(lambda: say("ready") and False)


if __name__ == "__main__":
    if "--scaled" in sys.argv:
        scaled()
    else:
        App()
    Gtk.main()
    sys.exit(0)
