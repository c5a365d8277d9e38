#!/usr/bin/python3
"""A test logind: the few `org.freedesktop.login1` methods and properties mcec reads, on the
bus whose address is in DBUS_STARTER_ADDRESS (a private bus a test started). Run with the
system Python (python3-gi).

    logind_stub.py UID 'ID,TYPE,DISPLAY,yes|no[,LEADER_PID]' ...

serves `Manager.ListSessions` (`a(susso)`) and, per session, the `Session` properties `Id`,
`Type`, `Display`, `Active`, `Leader` and `User` (through GDBus's own `Properties.Get/GetAll`). It
prints `ready` once the name is owned."""

from __future__ import annotations

import os
import sys

from gi.repository import Gio, GLib

NAME = "org.freedesktop.login1"
MANAGER_XML = """<node><interface name="org.freedesktop.login1.Manager">
<method name="ListSessions"><arg type="a(susso)" direction="out"/></method>
</interface></node>"""
SESSION_XML = """<node><interface name="org.freedesktop.login1.Session">
<property name="Id" type="s" access="read"/>
<property name="Type" type="s" access="read"/>
<property name="Display" type="s" access="read"/>
<property name="Active" type="b" access="read"/>
<property name="Leader" type="u" access="read"/>
<property name="User" type="(uo)" access="read"/>
</interface></node>"""


def main() -> None:
    uid = int(sys.argv[1])
    sessions = []
    for spec in sys.argv[2:]:
        sid, kind, display, active, *leader = spec.split(",")
        pid = int(leader[0]) if leader else 0
        sessions.append({"id": sid, "type": kind, "display": display, "active": active == "yes", "leader": pid})
    bus = Gio.DBusConnection.new_for_address_sync(
        os.environ["DBUS_STARTER_ADDRESS"],
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None,
        None,
    )
    manager = Gio.DBusNodeInfo.new_for_xml(MANAGER_XML).interfaces[0]
    session_iface = Gio.DBusNodeInfo.new_for_xml(SESSION_XML).interfaces[0]
    user_path = f"/org/freedesktop/login1/user/_{uid}"

    def path(s: dict) -> str:
        return f"/org/freedesktop/login1/session/_{s['id']}"

    def on_manager(conn, sender, obj, iface, method, params, invocation) -> None:
        if method == "ListSessions":
            listed = [(s["id"], uid, "you", "seat0", path(s)) for s in sessions]
            invocation.return_value(GLib.Variant("(a(susso))", (listed,)))
        else:
            invocation.return_dbus_error("org.freedesktop.DBus.Error.UnknownMethod", method)

    bus.register_object("/org/freedesktop/login1", manager, on_manager, None, None)
    for s in sessions:

        def get(conn, sender, obj, iface, prop, s=s):
            return {
                "Id": GLib.Variant("s", s["id"]),
                "Type": GLib.Variant("s", s["type"]),
                "Display": GLib.Variant("s", s["display"]),
                "Active": GLib.Variant("b", s["active"]),
                "Leader": GLib.Variant("u", s["leader"]),
                "User": GLib.Variant("(uo)", (uid, user_path)),
            }[prop]

        bus.register_object(path(s), session_iface, None, get, None)

    loop = GLib.MainLoop()

    def acquired(*_args) -> None:
        print("ready", flush=True)

    Gio.bus_own_name_on_connection(bus, NAME, Gio.BusNameOwnerFlags.NONE, acquired, lambda *_: loop.quit())
    loop.run()


if __name__ == "__main__":
    main()
