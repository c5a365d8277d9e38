//! Probe (issue 28), kept in history only: what Wine 8.0's uiautomationcore answers through UI
//! Automation's procedural client API. Run: `scripts/windows-build --test --test uia_probe -- --nocapture`
//! (`PROBE_PATTERNS=1` also calls the pattern functions, which are stubs in Wine 8.0 and abort
//! the process). What it printed is in docs/decisions.md, "UI Automation under Wine 8.0".
#![cfg(windows)]
#![allow(unsafe_code, warnings, clippy::all, clippy::pedantic, clippy::restriction, clippy::nursery)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use windows::Win32::Foundation::HWND;
use windows::Win32::System::Com::{COINIT_MULTITHREADED, CoInitializeEx, SAFEARRAY};
use windows::Win32::System::Ole::{
    SafeArrayAccessData, SafeArrayGetDim, SafeArrayGetLBound, SafeArrayGetUBound, SafeArrayUnaccessData,
};
use windows::Win32::System::Variant::*;
use windows::Win32::UI::Accessibility::*;
use windows::Win32::UI::WindowsAndMessaging::{FindWindowExW, FindWindowW, GetDesktopWindow};
use windows::core::{BSTR, HSTRING, Interface};

fn exe() -> String {
    let me = std::env::current_exe().unwrap();
    let dir = me.parent().and_then(|d| d.parent()).unwrap();
    dir.join("mcec-controls.exe").to_string_lossy().into_owned()
}

struct Kid(Child);
impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn open(title: &str, more: &[&str]) -> (Kid, u64, std::sync::mpsc::Receiver<String>) {
    let mut child = Command::new(exe())
        .args([title, "60", "60"])
        .args(more)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let ready = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    let h = ready.split_whitespace().find_map(|w| w.strip_prefix("hwnd=0x")).unwrap();
    (Kid(child), u64::from_str_radix(h, 16).unwrap(), rx)
}

fn fmt_var(v: &VARIANT) -> String {
    unsafe {
        let inner = &v.Anonymous.Anonymous;
        let vt = inner.vt;
        if vt == VT_BSTR {
            format!("BSTR {:?}", inner.Anonymous.bstrVal.to_string())
        } else if vt == VT_I4 {
            format!("I4 {}", inner.Anonymous.lVal)
        } else if vt == VT_BOOL {
            format!("BOOL {}", inner.Anonymous.boolVal.0)
        } else if vt == VT_EMPTY {
            "EMPTY".into()
        } else if vt == VT_UNKNOWN {
            let reserved = UiaGetReservedNotSupportedValue().ok();
            let p = inner.Anonymous.punkVal.as_ref().map(|u| u.as_raw());
            if reserved.as_ref().map(|r| r.as_raw()) == p {
                "NOT-SUPPORTED".into()
            } else {
                format!("UNKNOWN {p:?}")
            }
        } else if vt.0 == (VT_ARRAY.0 | VT_R8.0) {
            let psa = inner.Anonymous.parray;
            let mut lb = 0;
            let mut ub = 0;
            lb = SafeArrayGetLBound(psa, 1).unwrap_or(0);
            ub = SafeArrayGetUBound(psa, 1).unwrap_or(0);
            let mut data = std::ptr::null_mut();
            let _ = SafeArrayAccessData(psa, &mut data);
            let d = std::slice::from_raw_parts(data as *const f64, (ub - lb + 1).max(0) as usize).to_vec();
            let _ = SafeArrayUnaccessData(psa);
            format!("R8[] {d:?}")
        } else {
            format!("vt={}", vt.0)
        }
    }
}

fn prop(node: HUIANODE, id: UIA_PROPERTY_ID) -> String {
    let mut v = VARIANT::default();
    match unsafe { UiaGetPropertyValue(node, id.0, &mut v) } {
        Ok(()) => fmt_var(&v),
        Err(e) => format!("ERR {:#010x} {}", e.code().0, e.message()),
    }
}

fn describe(node: HUIANODE, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let props = [
        ("Name", UIA_NamePropertyId),
        ("ControlType", UIA_ControlTypePropertyId),
        ("Bounds", UIA_BoundingRectanglePropertyId),
        ("AutomationId", UIA_AutomationIdPropertyId),
        ("IsEnabled", UIA_IsEnabledPropertyId),
        ("HasKeyboardFocus", UIA_HasKeyboardFocusPropertyId),
        ("IsKeyboardFocusable", UIA_IsKeyboardFocusablePropertyId),
        ("ClassName", UIA_ClassNamePropertyId),
        ("LocalizedControlType", UIA_LocalizedControlTypePropertyId),
        ("IsOffscreen", UIA_IsOffscreenPropertyId),
        ("HelpText", UIA_HelpTextPropertyId),
        ("RuntimeId", UIA_RuntimeIdPropertyId),
        ("NativeWindowHandle", UIA_NativeWindowHandlePropertyId),
        ("ProviderDescription", UIA_ProviderDescriptionPropertyId),
        ("IsInvokeAvail", UIA_IsInvokePatternAvailablePropertyId),
        ("IsToggleAvail", UIA_IsTogglePatternAvailablePropertyId),
        ("IsSelItemAvail", UIA_IsSelectionItemPatternAvailablePropertyId),
        ("IsValueAvail", UIA_IsValuePatternAvailablePropertyId),
        ("IsLegacyAvail", UIA_IsLegacyIAccessiblePatternAvailablePropertyId),
        ("ToggleState", UIA_ToggleToggleStatePropertyId),
        ("IsSelected", UIA_SelectionItemIsSelectedPropertyId),
        ("ValueValue", UIA_ValueValuePropertyId),
        ("LegacyRole", UIA_LegacyIAccessibleRolePropertyId),
        ("LegacyState", UIA_LegacyIAccessibleStatePropertyId),
        ("LegacyDefaultAction", UIA_LegacyIAccessibleDefaultActionPropertyId),
        ("LegacyName", UIA_LegacyIAccessibleNamePropertyId),
    ];
    props.iter().map(|(n, id)| format!("{pad}{n}: {}\n", prop(node, *id))).collect()
}

/// The first element of a requested-data array, as a node.
fn first_node(psa: *mut SAFEARRAY) -> Option<HUIANODE> {
    if psa.is_null() {
        return None;
    }
    unsafe {
        let dims = SafeArrayGetDim(psa);
        let mut shape = vec![];
        for d in 1..=dims {
            let (mut lb, mut ub) = (0, 0);
            lb = SafeArrayGetLBound(psa, d).unwrap_or(0);
            ub = SafeArrayGetUBound(psa, d).unwrap_or(0);
            shape.push((lb, ub));
        }
        eprintln!("    requested data: dims={dims} bounds={shape:?}");
        let mut data = std::ptr::null_mut();
        SafeArrayAccessData(psa, &mut data).ok()?;
        let v = data as *mut VARIANT;
        let mut node = HUIANODE::default();
        let r = UiaHUiaNodeFromVariant(v, &mut node);
        let _ = SafeArrayUnaccessData(psa);
        match r {
            Ok(()) => Some(node),
            Err(e) => {
                eprintln!("    UiaHUiaNodeFromVariant: ERR {:#010x}", e.code().0);
                None
            }
        }
    }
}

fn navigate(node: HUIANODE, dir: NavigateDirection) -> Option<HUIANODE> {
    let mut cond = UiaCondition { ConditionType: ConditionType_True };
    let mut req = UiaCacheRequest {
        pViewCondition: &mut cond,
        Scope: TreeScope_Element,
        automationElementMode: AutomationElementMode_Full,
        ..Default::default()
    };
    let mut data: *mut SAFEARRAY = std::ptr::null_mut();
    let mut tree = BSTR::new();
    let mut cond2 = UiaCondition { ConditionType: ConditionType_True };
    match unsafe { UiaNavigate(node, dir, &mut cond2, &mut req, &mut data, &mut tree) } {
        Ok(()) => first_node(data),
        Err(e) => {
            eprintln!("    UiaNavigate({}): ERR {:#010x} {}", dir.0, e.code().0, e.message());
            None
        }
    }
}

fn walk(node: HUIANODE, depth: usize, max: usize) {
    eprint!("{}", describe(node, depth * 2));
    if depth >= max {
        return;
    }
    let mut kid = navigate(node, NavigateDirection_FirstChild);
    let mut n = 0;
    while let Some(k) = kid {
        eprintln!("{}-- child {n} of depth {depth}", " ".repeat(depth * 2));
        walk(k, depth + 1, max);
        kid = navigate(k, NavigateDirection_NextSibling);
        n += 1;
        if n > 30 {
            break;
        }
    }
}

fn node_of(hwnd: u64) -> Option<HUIANODE> {
    let mut node = HUIANODE::default();
    match unsafe { UiaNodeFromHandle(HWND(hwnd as usize as *mut _), &mut node) } {
        Ok(()) => Some(node),
        Err(e) => {
            eprintln!("UiaNodeFromHandle: ERR {:#010x} {}", e.code().0, e.message());
            None
        }
    }
}

fn updated_cache_children(node: HUIANODE) {
    let mut cond = UiaCondition { ConditionType: ConditionType_True };
    let mut props = [UIA_NamePropertyId.0, UIA_ControlTypePropertyId.0];
    let mut req = UiaCacheRequest {
        pViewCondition: &mut cond,
        Scope: TreeScope(TreeScope_Element.0 | TreeScope_Children.0),
        pProperties: props.as_mut_ptr(),
        cProperties: 2,
        automationElementMode: AutomationElementMode_Full,
        ..Default::default()
    };
    let mut data: *mut SAFEARRAY = std::ptr::null_mut();
    let mut tree = BSTR::new();
    let r = unsafe {
        UiaGetUpdatedCache(node, &mut req, NormalizeState_None, std::ptr::null_mut(), &mut data, &mut tree)
    };
    eprintln!("UiaGetUpdatedCache(Element|Children): {r:?} tree={:?}", tree.to_string());
    if r.is_ok() && !data.is_null() {
        unsafe {
            let dims = SafeArrayGetDim(data);
            let mut shape = vec![];
            for d in 1..=dims {
                let (mut lb, mut ub) = (0, 0);
                lb = SafeArrayGetLBound(data, d).unwrap_or(0);
                ub = SafeArrayGetUBound(data, d).unwrap_or(0);
                shape.push((lb, ub));
            }
            eprintln!("  data dims={dims} {shape:?}");
            let mut p = std::ptr::null_mut();
            if SafeArrayAccessData(data, &mut p).is_ok() {
                let total: i32 = shape.iter().map(|(l, u)| u - l + 1).product();
                let vs = std::slice::from_raw_parts(p as *const VARIANT, total as usize);
                for (i, v) in vs.iter().enumerate() {
                    eprintln!("  [{i}] {}", fmt_var(v));
                }
                let _ = SafeArrayUnaccessData(data);
            }
        }
    }
}

fn uia_find(node: HUIANODE) {
    let mut cond = UiaCondition { ConditionType: ConditionType_True };
    let mut fcond = UiaCondition { ConditionType: ConditionType_True };
    let mut props = [UIA_NamePropertyId.0, UIA_ControlTypePropertyId.0];
    let mut req = UiaCacheRequest {
        pViewCondition: &mut cond,
        Scope: TreeScope_Element,
        pProperties: props.as_mut_ptr(),
        cProperties: 2,
        automationElementMode: AutomationElementMode_Full,
        ..Default::default()
    };
    let mut params = UiaFindParams {
        MaxDepth: 2,
        FindFirst: false.into(),
        ExcludeRoot: true.into(),
        pFindCondition: &mut fcond,
    };
    let mut data: *mut SAFEARRAY = std::ptr::null_mut();
    let mut offsets: *mut SAFEARRAY = std::ptr::null_mut();
    let mut trees: *mut SAFEARRAY = std::ptr::null_mut();
    let r = unsafe { UiaFind(node, &mut params, &mut req, &mut data, &mut offsets, &mut trees) };
    eprintln!("UiaFind(MaxDepth 2, true condition, Name+ControlType): {r:?}");
    if r.is_ok() && !data.is_null() {
        unsafe {
            let dims = SafeArrayGetDim(data);
            let mut shape = vec![];
            for d in 1..=dims {
                shape.push((
                    SafeArrayGetLBound(data, d).unwrap_or(0),
                    SafeArrayGetUBound(data, d).unwrap_or(0),
                ));
            }
            eprintln!("  data dims={dims} {shape:?}");
            let mut p = std::ptr::null_mut();
            if SafeArrayAccessData(data, &mut p).is_ok() {
                let total: i32 = shape.iter().map(|(l, u)| u - l + 1).product();
                let vs = std::slice::from_raw_parts(p as *const VARIANT, total as usize);
                for (i, v) in vs.iter().enumerate() {
                    eprintln!("  [{i}] {}", fmt_var(v));
                }
                let _ = SafeArrayUnaccessData(data);
            }
        }
    }
}

fn find_named(root: HUIANODE, name: &str, depth: usize) -> Option<HUIANODE> {
    if prop(root, UIA_NamePropertyId) == format!("BSTR {name:?}") {
        return Some(root);
    }
    if depth > 5 {
        return None;
    }
    let mut kid = navigate(root, NavigateDirection_FirstChild);
    while let Some(k) = kid {
        if let Some(f) = find_named(k, name, depth + 1) {
            return Some(f);
        }
        kid = navigate(k, NavigateDirection_NextSibling);
    }
    None
}

fn pattern(node: HUIANODE, id: UIA_PATTERN_ID) -> Option<HUIAPATTERNOBJECT> {
    let mut h = HUIAPATTERNOBJECT::default();
    match unsafe { UiaGetPatternProvider(node, id.0, &mut h) } {
        Ok(()) if !h.is_invalid() => Some(h),
        Ok(()) => {
            eprintln!("  UiaGetPatternProvider({}): OK but null", id.0);
            None
        }
        Err(e) => {
            eprintln!("  UiaGetPatternProvider({}): ERR {:#010x} {}", id.0, e.code().0, e.message());
            None
        }
    }
}

fn drain(rx: &std::sync::mpsc::Receiver<String>) {
    std::thread::sleep(Duration::from_millis(500));
    while let Ok(l) = rx.try_recv() {
        eprintln!("  program said: {l}");
    }
}

fn node_via_iaccessible(hwnd: u64, what: &str) -> Option<HUIANODE> {
    let h = HWND(hwnd as usize as *mut _);
    let mut p = std::ptr::null_mut();
    // OBJID_CLIENT = -4
    if let Err(e) = unsafe { AccessibleObjectFromWindow(h, (-4i32) as u32, &IAccessible::IID, &mut p) } {
        eprintln!("{what}: AccessibleObjectFromWindow ERR {:#010x}", e.code().0);
        return None;
    }
    let acc = unsafe { IAccessible::from_raw(p) };
    let prov = match unsafe { UiaProviderFromIAccessible(&acc, 0, UIA_PFIA_DEFAULT) } {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{what}: UiaProviderFromIAccessible ERR {:#010x} {}", e.code().0, e.message());
            return None;
        }
    };
    eprintln!("{what}: UiaProviderFromIAccessible OK");
    let mut node = HUIANODE::default();
    match unsafe { UiaNodeFromProvider(&prov, &mut node) } {
        Ok(()) => {
            eprintln!("{what}: UiaNodeFromProvider OK");
            Some(node)
        }
        Err(e) => {
            eprintln!("{what}: UiaNodeFromProvider ERR {:#010x} {}", e.code().0, e.message());
            None
        }
    }
}

fn other_entries(hwnd: u64) {
    eprintln!("UiaGetRootNode: not called (a Wine 8.0 stub: calling it aborts the process)");
    let mut cond = UiaCondition { ConditionType: ConditionType_True };
    let mut req = UiaCacheRequest {
        pViewCondition: &mut cond,
        Scope: TreeScope_Element,
        automationElementMode: AutomationElementMode_Full,
        ..Default::default()
    };
    let mut data: *mut SAFEARRAY = std::ptr::null_mut();
    let mut tree = BSTR::new();
    let _ = (&mut req, &mut data, &mut tree);
    eprintln!("UiaNodeFromFocus: not called (a Wine 8.0 stub)");
    match unsafe { UiaHostProviderFromHwnd(HWND(hwnd as usize as *mut _)) } {
        Ok(prov) => {
            eprintln!("UiaHostProviderFromHwnd: OK");
            let mut node = HUIANODE::default();
            match unsafe { UiaNodeFromProvider(&prov, &mut node) } {
                Ok(()) => {
                    eprintln!("  UiaNodeFromProvider(host): OK");
                    walk(node, 0, 1);
                }
                Err(e) => eprintln!("  UiaNodeFromProvider(host): ERR {:#010x} {}", e.code().0, e.message()),
            }
        }
        Err(e) => eprintln!("UiaHostProviderFromHwnd: ERR {:#010x}", e.code().0),
    }
}

fn try_patterns(root: HUIANODE, rx: Option<&std::sync::mpsc::Receiver<String>>) {
    for (name, pats) in [
        ("OK", &[UIA_InvokePatternId, UIA_LegacyIAccessiblePatternId][..]),
        ("Remember me", &[UIA_TogglePatternId, UIA_LegacyIAccessiblePatternId][..]),
        ("Apply", &[UIA_InvokePatternId, UIA_LegacyIAccessiblePatternId][..]),
        ("Bold", &[UIA_TogglePatternId, UIA_LegacyIAccessiblePatternId][..]),
        ("Green", &[UIA_SelectionItemPatternId, UIA_LegacyIAccessiblePatternId][..]),
    ] {
        let Some(n) = find_named(root, name, 0) else {
            eprintln!("-- {name}: not found");
            continue;
        };
        eprintln!("-- {name}:");
        for p in pats {
            if std::env::var_os("PROBE_PATTERNS").is_none() {
                eprintln!("  pattern {}: not called (UiaGetPatternProvider is a Wine 8.0 stub)", p.0);
                continue;
            }
            let Some(h) = pattern(n, *p) else { continue };
            let r = unsafe {
                if *p == UIA_InvokePatternId {
                    InvokePattern_Invoke(h)
                } else if *p == UIA_TogglePatternId {
                    TogglePattern_Toggle(h)
                } else if *p == UIA_SelectionItemPatternId {
                    SelectionItemPattern_Select(h)
                } else {
                    LegacyIAccessiblePattern_DoDefaultAction(h)
                }
            };
            eprintln!("  pattern {} call: {r:?}", p.0);
            if let Some(rx) = rx {
                drain(rx);
            }
        }
    }
}

#[test]
fn probe() {
    unsafe {
        let _ = CoInitializeEx(None, COINIT_MULTITHREADED);
    }
    for more in [&[][..], &["own"][..]] {
        let (_k, hwnd, rx) = open("mcec uia probe", more);
        eprintln!("===== mcec-controls {more:?} hwnd={hwnd:#x}");
        other_entries(hwnd);
        if let Some(root) = node_of(hwnd) {
            walk(root, 0, 4);
            updated_cache_children(root);
            try_patterns(root, Some(&rx));
        }
        if let Some(root) = node_via_iaccessible(hwnd, "top window client") {
            walk(root, 0, 3);
            updated_cache_children(root);
            uia_find(root);
            try_patterns(root, Some(&rx));
        }
        let panel = unsafe {
            FindWindowExW(Some(HWND(hwnd as usize as *mut _)), None, &HSTRING::from("McecOwnPanel"), None)
        }
        .map(|h| h.0 as usize)
        .unwrap_or(0);
        if panel != 0 {
            if let Some(root) = node_via_iaccessible(panel as u64, "own panel client") {
                walk(root, 0, 3);
                updated_cache_children(root);
                uia_find(root);
                try_patterns(root, Some(&rx));
                if std::env::var_os("PROBE_PATTERNS").is_some() {
                    if let Some(first) = navigate(root, NavigateDirection_FirstChild) {
                        eprintln!(
                            "-- the first own child (ControlType {}):",
                            prop(first, UIA_ControlTypePropertyId)
                        );
                        if let Some(h) = pattern(first, UIA_InvokePatternId) {
                            eprintln!("  InvokePattern_Invoke: {:?}", unsafe { InvokePattern_Invoke(h) });
                            drain(&rx);
                        }
                    }
                }
            }
        }
    }
    let mut w = Kid(Command::new("winecfg.exe").spawn().unwrap());
    let mut found = 0;
    for _ in 0..150 {
        found = unsafe { FindWindowW(None, &HSTRING::from("Wine configuration")) }
            .map(|h| h.0 as usize)
            .unwrap_or(0);
        if found != 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("===== winecfg hwnd={found:#x}");
    if let Some(root) = node_of(found as u64).or_else(|| node_via_iaccessible(found as u64, "winecfg client"))
    {
        walk(root, 0, 3);
        updated_cache_children(root);
        if let Some(apply) = find_named(root, "Apply", 0) {
            eprintln!("-- winecfg Apply");
            for p in [UIA_InvokePatternId, UIA_LegacyIAccessiblePatternId] {
                if std::env::var_os("PROBE_PATTERNS").is_none() {
                    continue;
                }
                if let Some(h) = pattern(apply, p) {
                    let r = unsafe {
                        if p == UIA_InvokePatternId {
                            InvokePattern_Invoke(h)
                        } else {
                            LegacyIAccessiblePattern_DoDefaultAction(h)
                        }
                    };
                    eprintln!("  pattern {} call: {r:?}", p.0);
                }
            }
        }
    }
    let _ = w.0.kill();
}
