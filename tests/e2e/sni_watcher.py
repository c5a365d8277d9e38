#!/usr/bin/python3
"""A minimal tray for tests: owns `org.kde.StatusNotifierWatcher` on the session bus named by
DBUS_SESSION_BUS_ADDRESS, says a tray host is there, and prints `registered SENDER SERVICE`
for each item that registers (after `ready` once it owns the name). Run with the system
Python (it needs python3-gi); a desktop's real tray does more (draws the icons), which no
test here needs."""

from __future__ import annotations

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

NAME = "org.kde.StatusNotifierWatcher"
PATH = "/StatusNotifierWatcher"
XML = f"""<node><interface name="{NAME}">
  <method name="RegisterStatusNotifierItem"><arg name="service" type="s" direction="in"/></method>
  <method name="RegisterStatusNotifierHost"><arg name="service" type="s" direction="in"/></method>
  <property name="RegisteredStatusNotifierItems" type="as" access="read"/>
  <property name="IsStatusNotifierHostRegistered" type="b" access="read"/>
  <property name="ProtocolVersion" type="i" access="read"/>
  <signal name="StatusNotifierItemRegistered"><arg name="service" type="s"/></signal>
  <signal name="StatusNotifierItemUnregistered"><arg name="service" type="s"/></signal>
  <signal name="StatusNotifierHostRegistered"/>
</interface></node>"""

items: list[str] = []


def on_call(conn, sender, path, iface, method, params, invocation) -> None:
    if method == "RegisterStatusNotifierItem":
        (service,) = params.unpack()
        items.append(service)
        print(f"registered {sender} {service}", flush=True)
        conn.emit_signal(None, PATH, NAME, "StatusNotifierItemRegistered", GLib.Variant("(s)", (service,)))
    invocation.return_value(None)


def on_get(conn, sender, path, iface, prop):
    return {
        "RegisteredStatusNotifierItems": GLib.Variant("as", items),
        "IsStatusNotifierHostRegistered": GLib.Variant("b", True),
        "ProtocolVersion": GLib.Variant("i", 0),
    }[prop]


def on_bus(conn, _name) -> None:
    info = Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0]
    conn.register_object(PATH, info, on_call, on_get, None)


def main() -> None:
    loop = GLib.MainLoop()
    Gio.bus_own_name(
        Gio.BusType.SESSION,
        NAME,
        Gio.BusNameOwnerFlags.NONE,
        on_bus,
        lambda *_: print("ready", flush=True),
        lambda *_: (print("lost the name", flush=True), loop.quit()),
    )
    loop.run()


if __name__ == "__main__":
    main()
