//! The own panel's accessible objects: what `mcec-controls own` serves through `WM_GETOBJECT`
//! instead of Wine's `oleacc` standing in for it, so that what Wine's standard controls never
//! offer (default actions, `accSelect`, `accFocus`) can be tested from another process.
//!
//! Two `IAccessible` objects (the `windows` crate's `#[implement]`):
//! - [`Panel`], the panel window's client area (`ROLE_SYSTEM_CLIENT`, "Own controls"), with
//!   three children: the simple elements 1 `Apply` (a push button, default action `Press`)
//!   and 2 `Bold` (a check box, `Check`/`Uncheck`), and child 3, the list object;
//! - [`List`], "Colours" (`ROLE_SYSTEM_LIST`), whose simple elements 1..3 are the items of
//!   [`COLOURS`]: selectable and focusable, `accSelect` with `SELFLAG_TAKESELECTION` and
//!   `SELFLAG_TAKEFOCUS` selects and focuses one (a single-selection list: other flags are
//!   refused).
//!
//! Every change goes through [`own_state::change`], which prints it; every answer is made from
//! the state at the time of the call. Locations are screen pixels from the panel window's
//! place ([`LAYOUT`]), which the panel also paints.

#![allow(unsafe_code)]

use core::ffi::c_void;
use std::mem::ManuallyDrop;

use windows::Win32::Foundation::{DISP_E_MEMBERNOTFOUND, E_INVALIDARG, E_NOTIMPL, HWND, S_FALSE};
use windows::Win32::System::Com::{
    DISPATCH_FLAGS, DISPPARAMS, EXCEPINFO, IDispatch, IDispatch_Impl, ITypeInfo,
};
use windows::Win32::System::Variant::{VARIANT, VT_DISPATCH, VT_I4};
use windows::Win32::UI::Accessibility::{CreateStdAccessibleObject, IAccessible, IAccessible_Impl};
use windows::core::{BSTR, Error, GUID, Interface, PCWSTR, Result, implement};

use crate::own_state::{self, COLOURS, Focus, Own};

/// Where each part is in the panel's client area: left, top, width, height.
pub struct Layout {
    pub apply: (i32, i32, i32, i32),
    pub bold: (i32, i32, i32, i32),
    pub list: (i32, i32, i32, i32),
    /// The height of one list item (the items fill the list from its top, 2 px in).
    pub item_height: i32,
}

pub const LAYOUT: Layout =
    Layout { apply: (10, 10, 80, 26), bold: (100, 10, 80, 26), list: (10, 46, 120, 70), item_height: 22 };

/// List item `i`'s place in the panel's client area.
pub fn item_rect(i: usize) -> (i32, i32, i32, i32) {
    let (x, y, w, _) = LAYOUT.list;
    (x + 2, y + 2 + LAYOUT.item_height * i as i32, w - 4, LAYOUT.item_height)
}

const CHILDID_SELF: i32 = 0;
const APPLY: i32 = 1;
const BOLD: i32 = 2;
const LIST: i32 = 3;

const ROLE_CLIENT: i32 = 10;
const ROLE_LIST: i32 = 33;
const ROLE_LISTITEM: i32 = 34;
const ROLE_PUSHBUTTON: i32 = 43;
const ROLE_CHECKBUTTON: i32 = 44;

const STATE_SELECTED: i32 = 0x2;
const STATE_FOCUSED: i32 = 0x4;
const STATE_CHECKED: i32 = 0x10;
const STATE_FOCUSABLE: i32 = 0x10_0000;
const STATE_SELECTABLE: i32 = 0x20_0000;

const SELFLAG_TAKEFOCUS: i32 = 0x1;
const SELFLAG_TAKESELECTION: i32 = 0x2;

/// `OBJID_WINDOW`: the window object around a client area (the panel's parent).
const OBJID_WINDOW: i32 = 0;

/// A `VT_I4` VARIANT's value.
fn child_id(v: &VARIANT) -> Option<i32> {
    // SAFETY: the member read matches the discriminant.
    unsafe {
        let inner = &*v.Anonymous.Anonymous;
        if inner.vt == VT_I4 { Some(inner.Anonymous.lVal) } else { None }
    }
}

fn i4(n: i32) -> VARIANT {
    let mut v = VARIANT::default();
    // SAFETY: writing the discriminant and the matching member of an empty VARIANT.
    unsafe {
        (*v.Anonymous.Anonymous).vt = VT_I4;
        (*v.Anonymous.Anonymous).Anonymous.lVal = n;
    }
    v
}

fn dispatch(d: IDispatch) -> VARIANT {
    let mut v = VARIANT::default();
    // SAFETY: as above; the VARIANT now owns the reference (the caller clears it).
    unsafe {
        (*v.Anonymous.Anonymous).vt = VT_DISPATCH;
        (*v.Anonymous.Anonymous).Anonymous.pdispVal = ManuallyDrop::new(Some(d));
    }
    v
}

fn bad() -> Error {
    E_INVALIDARG.into()
}

fn not_impl<T>() -> Result<T> {
    Err(E_NOTIMPL.into())
}

/// `rect` (panel client coordinates) in screen pixels, written to MSAA's out pointers.
fn locate(panel: usize, rect: (i32, i32, i32, i32), out: [*mut i32; 4]) -> Result<()> {
    let mut origin = windows_sys::Win32::Foundation::POINT { x: 0, y: 0 };
    // SAFETY: the point is ours; the window is the panel (a failed call is reported).
    if unsafe { windows_sys::Win32::Graphics::Gdi::ClientToScreen(panel as *mut c_void, &mut origin) } == 0 {
        return Err(E_INVALIDARG.into());
    }
    let values = [origin.x + rect.0, origin.y + rect.1, rect.2, rect.3];
    for (p, v) in out.into_iter().zip(values) {
        if p.is_null() {
            return Err(E_INVALIDARG.into());
        }
        // SAFETY: a non-null out pointer the caller handed us.
        unsafe { *p = v };
    }
    Ok(())
}

/// The panel's client-area object.
#[implement(IAccessible)]
pub struct Panel {
    pub hwnd: usize,
}

/// The "Colours" list, child 3 of the panel.
#[implement(IAccessible)]
pub struct List {
    pub hwnd: usize,
}

/// The IDispatch half MSAA's interface derives from: never used by MSAA clients.
macro_rules! no_dispatch {
    ($t:ty) => {
        impl IDispatch_Impl for $t {
            fn GetTypeInfoCount(&self) -> Result<u32> {
                not_impl()
            }
            fn GetTypeInfo(&self, _: u32, _: u32) -> Result<ITypeInfo> {
                not_impl()
            }
            fn GetIDsOfNames(
                &self,
                _: *const GUID,
                _: *const PCWSTR,
                _: u32,
                _: u32,
                _: *mut i32,
            ) -> Result<()> {
                not_impl()
            }
            fn Invoke(
                &self,
                _: i32,
                _: *const GUID,
                _: u32,
                _: DISPATCH_FLAGS,
                _: *const DISPPARAMS,
                _: *mut VARIANT,
                _: *mut EXCEPINFO,
                _: *mut u32,
            ) -> Result<()> {
                not_impl()
            }
        }
    };
}

no_dispatch!(Panel_Impl);
no_dispatch!(List_Impl);

fn focus_state(s: &Own, f: Focus) -> i32 {
    if s.focus == Some(f) { STATE_FOCUSED } else { 0 }
}

impl IAccessible_Impl for Panel_Impl {
    fn accParent(&self) -> Result<IDispatch> {
        let mut raw: *mut c_void = std::ptr::null_mut();
        // SAFETY: the out pointer receives a reference we then own.
        unsafe {
            CreateStdAccessibleObject(HWND(self.hwnd as *mut c_void), OBJID_WINDOW, &IDispatch::IID, &mut raw)
        }?;
        if raw.is_null() {
            return Err(E_NOTIMPL.into());
        }
        // SAFETY: a non-null IDispatch the call handed over.
        Ok(unsafe { IDispatch::from_raw(raw) })
    }
    fn accChildCount(&self) -> Result<i32> {
        Ok(3)
    }
    fn get_accChild(&self, child: &VARIANT) -> Result<IDispatch> {
        match child_id(child) {
            Some(LIST) => IAccessible::from(List { hwnd: self.hwnd }).cast(),
            // Simple elements have no object of their own.
            Some(APPLY | BOLD) => Err(Error::from_hresult(S_FALSE)),
            _ => Err(bad()),
        }
    }
    fn get_accName(&self, child: &VARIANT) -> Result<BSTR> {
        Ok(BSTR::from(match child_id(child).ok_or_else(bad)? {
            CHILDID_SELF => "Own controls",
            APPLY => "Apply",
            BOLD => "Bold",
            LIST => "Colours",
            _ => return Err(bad()),
        }))
    }
    fn get_accValue(&self, _: &VARIANT) -> Result<BSTR> {
        Err(DISP_E_MEMBERNOTFOUND.into())
    }
    fn get_accDescription(&self, _: &VARIANT) -> Result<BSTR> {
        Ok(BSTR::new())
    }
    fn get_accRole(&self, child: &VARIANT) -> Result<VARIANT> {
        Ok(i4(match child_id(child).ok_or_else(bad)? {
            CHILDID_SELF => ROLE_CLIENT,
            APPLY => ROLE_PUSHBUTTON,
            BOLD => ROLE_CHECKBUTTON,
            LIST => ROLE_LIST,
            _ => return Err(bad()),
        }))
    }
    fn get_accState(&self, child: &VARIANT) -> Result<VARIANT> {
        let s = own_state::get();
        Ok(i4(match child_id(child).ok_or_else(bad)? {
            CHILDID_SELF => 0,
            APPLY => STATE_FOCUSABLE | focus_state(&s, Focus::Apply),
            BOLD => STATE_FOCUSABLE | focus_state(&s, Focus::Bold) | if s.bold { STATE_CHECKED } else { 0 },
            LIST => STATE_FOCUSABLE,
            _ => return Err(bad()),
        }))
    }
    fn get_accHelp(&self, _: &VARIANT) -> Result<BSTR> {
        Ok(BSTR::new())
    }
    fn get_accHelpTopic(&self, _: *mut BSTR, _: &VARIANT) -> Result<i32> {
        not_impl()
    }
    fn get_accKeyboardShortcut(&self, _: &VARIANT) -> Result<BSTR> {
        Ok(BSTR::new())
    }
    fn accFocus(&self) -> Result<VARIANT> {
        Ok(match own_state::get().focus {
            None => VARIANT::default(),
            Some(Focus::Apply) => i4(APPLY),
            Some(Focus::Bold) => i4(BOLD),
            Some(Focus::Item(_)) => dispatch(IAccessible::from(List { hwnd: self.hwnd }).cast()?),
        })
    }
    fn accSelection(&self) -> Result<VARIANT> {
        Ok(VARIANT::default())
    }
    fn get_accDefaultAction(&self, child: &VARIANT) -> Result<BSTR> {
        Ok(BSTR::from(match child_id(child).ok_or_else(bad)? {
            APPLY => "Press",
            BOLD if own_state::get().bold => "Uncheck",
            BOLD => "Check",
            CHILDID_SELF | LIST => return Err(DISP_E_MEMBERNOTFOUND.into()),
            _ => return Err(bad()),
        }))
    }
    fn accSelect(&self, flags: i32, child: &VARIANT) -> Result<()> {
        let focus = match child_id(child).ok_or_else(bad)? {
            APPLY => Focus::Apply,
            BOLD => Focus::Bold,
            _ => return Err(bad()),
        };
        if flags != SELFLAG_TAKEFOCUS {
            return Err(bad());
        }
        own_state::change("focus", |s| s.focus = Some(focus));
        Ok(())
    }
    fn accLocation(&self, x: *mut i32, y: *mut i32, w: *mut i32, h: *mut i32, child: &VARIANT) -> Result<()> {
        let rect = match child_id(child).ok_or_else(bad)? {
            CHILDID_SELF => {
                let mut r = windows_sys::Win32::Foundation::RECT { left: 0, top: 0, right: 0, bottom: 0 };
                // SAFETY: the rectangle is ours; the window is the panel.
                unsafe {
                    windows_sys::Win32::UI::WindowsAndMessaging::GetClientRect(
                        self.hwnd as *mut c_void,
                        &mut r,
                    )
                };
                (0, 0, r.right, r.bottom)
            }
            APPLY => LAYOUT.apply,
            BOLD => LAYOUT.bold,
            LIST => LAYOUT.list,
            _ => return Err(bad()),
        };
        locate(self.hwnd, rect, [x, y, w, h])
    }
    fn accNavigate(&self, _: i32, _: &VARIANT) -> Result<VARIANT> {
        not_impl()
    }
    fn accHitTest(&self, _: i32, _: i32) -> Result<VARIANT> {
        not_impl()
    }
    fn accDoDefaultAction(&self, child: &VARIANT) -> Result<()> {
        match child_id(child).ok_or_else(bad)? {
            APPLY => own_state::change("press", |s| s.applied += 1),
            BOLD => own_state::change("toggle", |s| s.bold = !s.bold),
            CHILDID_SELF | LIST => return Err(DISP_E_MEMBERNOTFOUND.into()),
            _ => return Err(bad()),
        }
        Ok(())
    }
    fn put_accName(&self, _: &VARIANT, _: &BSTR) -> Result<()> {
        not_impl()
    }
    fn put_accValue(&self, _: &VARIANT, _: &BSTR) -> Result<()> {
        not_impl()
    }
}

/// A list item's index into [`COLOURS`], from its child id (1-based).
fn item(child: &VARIANT) -> Result<Option<usize>> {
    match child_id(child).ok_or_else(bad)? {
        CHILDID_SELF => Ok(None),
        n if (1..=COLOURS.len() as i32).contains(&n) => Ok(Some(n as usize - 1)),
        _ => Err(bad()),
    }
}

impl IAccessible_Impl for List_Impl {
    fn accParent(&self) -> Result<IDispatch> {
        IAccessible::from(Panel { hwnd: self.hwnd }).cast()
    }
    fn accChildCount(&self) -> Result<i32> {
        Ok(COLOURS.len() as i32)
    }
    fn get_accChild(&self, child: &VARIANT) -> Result<IDispatch> {
        match item(child)? {
            Some(_) => Err(Error::from_hresult(S_FALSE)),
            None => Err(bad()),
        }
    }
    fn get_accName(&self, child: &VARIANT) -> Result<BSTR> {
        Ok(BSTR::from(item(child)?.map_or("Colours", |i| COLOURS[i])))
    }
    fn get_accValue(&self, _: &VARIANT) -> Result<BSTR> {
        Err(DISP_E_MEMBERNOTFOUND.into())
    }
    fn get_accDescription(&self, _: &VARIANT) -> Result<BSTR> {
        Ok(BSTR::new())
    }
    fn get_accRole(&self, child: &VARIANT) -> Result<VARIANT> {
        Ok(i4(if item(child)?.is_some() { ROLE_LISTITEM } else { ROLE_LIST }))
    }
    fn get_accState(&self, child: &VARIANT) -> Result<VARIANT> {
        let s = own_state::get();
        Ok(i4(match item(child)? {
            None => STATE_FOCUSABLE,
            Some(i) => {
                STATE_SELECTABLE
                    | STATE_FOCUSABLE
                    | focus_state(&s, Focus::Item(i))
                    | if s.selected == Some(i) { STATE_SELECTED } else { 0 }
            }
        }))
    }
    fn get_accHelp(&self, _: &VARIANT) -> Result<BSTR> {
        Ok(BSTR::new())
    }
    fn get_accHelpTopic(&self, _: *mut BSTR, _: &VARIANT) -> Result<i32> {
        not_impl()
    }
    fn get_accKeyboardShortcut(&self, _: &VARIANT) -> Result<BSTR> {
        Ok(BSTR::new())
    }
    fn accFocus(&self) -> Result<VARIANT> {
        Ok(match own_state::get().focus {
            Some(Focus::Item(i)) => i4(i as i32 + 1),
            _ => VARIANT::default(),
        })
    }
    fn accSelection(&self) -> Result<VARIANT> {
        Ok(own_state::get().selected.map_or_else(VARIANT::default, |i| i4(i as i32 + 1)))
    }
    fn get_accDefaultAction(&self, _: &VARIANT) -> Result<BSTR> {
        Err(DISP_E_MEMBERNOTFOUND.into())
    }
    fn accSelect(&self, flags: i32, child: &VARIANT) -> Result<()> {
        let Some(i) = item(child)? else { return Err(bad()) };
        // One selected item at a time: adding, extending or removing a selection is refused.
        let (focus, select) = (flags & SELFLAG_TAKEFOCUS != 0, flags & SELFLAG_TAKESELECTION != 0);
        if flags & !(SELFLAG_TAKEFOCUS | SELFLAG_TAKESELECTION) != 0 || !(focus || select) {
            return Err(bad());
        }
        let what = match (select, focus) {
            (true, true) => "select+focus",
            (true, false) => "select",
            _ => "focus",
        };
        own_state::change(what, |s| {
            if select {
                s.selected = Some(i);
            }
            if focus {
                s.focus = Some(Focus::Item(i));
            }
        });
        Ok(())
    }
    fn accLocation(&self, x: *mut i32, y: *mut i32, w: *mut i32, h: *mut i32, child: &VARIANT) -> Result<()> {
        let rect = item(child)?.map_or(LAYOUT.list, item_rect);
        locate(self.hwnd, rect, [x, y, w, h])
    }
    fn accNavigate(&self, _: i32, _: &VARIANT) -> Result<VARIANT> {
        not_impl()
    }
    fn accHitTest(&self, _: i32, _: i32) -> Result<VARIANT> {
        not_impl()
    }
    fn accDoDefaultAction(&self, _: &VARIANT) -> Result<()> {
        Err(DISP_E_MEMBERNOTFOUND.into())
    }
    fn put_accName(&self, _: &VARIANT, _: &BSTR) -> Result<()> {
        not_impl()
    }
    fn put_accValue(&self, _: &VARIANT, _: &BSTR) -> Result<()> {
        not_impl()
    }
}
