//! The atoms the backend uses, interned once per connection in one round trip.

x11rb::atom_manager! {
    pub Atoms: AtomsCookie {
        _NET_CLIENT_LIST,
        _NET_ACTIVE_WINDOW,
        _NET_WM_NAME,
        _NET_WM_PID,
        _NET_WM_STATE,
        _NET_WM_STATE_HIDDEN,
        _NET_WM_STATE_MAXIMIZED_VERT,
        _NET_WM_STATE_MAXIMIZED_HORZ,
        _NET_SUPPORTING_WM_CHECK,
        _NET_FRAME_EXTENTS,
        UTF8_STRING,
        WM_STATE,
        WM_CHANGE_STATE,
        _XROOTPMAP_ID,
        ESETROOT_PMAP_ID,
    }
}
