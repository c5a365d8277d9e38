//! One function per AT-SPI2 method the tools use, on a blocking connection, and what each
//! D-Bus failure means to an agent.

use std::collections::HashMap;
use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::task::Poll;

use zbus::export::futures_core::Stream;

use mcec_desktop::types::Rect;
use mcec_rules::{ErrorCode, ToolError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use zbus::blocking::Connection;
use zbus::zvariant::{DynamicType, OwnedObjectPath, OwnedValue, Type, Value};

use crate::model::{Operation, ROLES, RawElement, SHORT_TEXT, STATES};
use crate::seam::{NodeRef, Want};
use mcec_rules::text::ellipsize;

const ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
const COMPONENT: &str = "org.a11y.atspi.Component";
const ACTION: &str = "org.a11y.atspi.Action";
const TEXT: &str = "org.a11y.atspi.Text";
const EDITABLE_TEXT: &str = "org.a11y.atspi.EditableText";
const VALUE: &str = "org.a11y.atspi.Value";
const SELECTION: &str = "org.a11y.atspi.Selection";
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";
const COLLECTION: &str = "org.a11y.atspi.Collection";
/// AT-SPI2's `ATSPI_COORD_TYPE_SCREEN`: extents in root-window (desktop) pixels.
const COORD_SCREEN: u32 = 0;

/// A failed call, kept as `zbus` reported it until the caller turns it into a tool error.
#[derive(Debug)]
pub struct CallError(zbus::Error);

impl From<zbus::Error> for CallError {
    fn from(e: zbus::Error) -> Self {
        CallError(e)
    }
}

impl CallError {
    fn method_error(&self) -> Option<&str> {
        match &self.0 {
            zbus::Error::MethodError(name, _, _) => Some(name.as_str()),
            zbus::Error::FDO(e) => match **e {
                zbus::fdo::Error::UnknownObject(_) => Some("org.freedesktop.DBus.Error.UnknownObject"),
                zbus::fdo::Error::ServiceUnknown(_) => Some("org.freedesktop.DBus.Error.ServiceUnknown"),
                zbus::fdo::Error::UnknownMethod(_) => Some("org.freedesktop.DBus.Error.UnknownMethod"),
                zbus::fdo::Error::NameHasNoOwner(_) => Some("org.freedesktop.DBus.Error.NameHasNoOwner"),
                _ => None,
            },
            _ => None,
        }
    }

    /// The object or its whole application is gone.
    pub fn gone(&self) -> bool {
        self.method_error().is_some_and(|n| {
            n.ends_with(".UnknownObject")
                || n.ends_with(".ServiceUnknown")
                || n.ends_with(".NameHasNoOwner")
                || n.ends_with(".UnknownMethod")
        })
    }

    /// The connection itself failed (not one application): reconnect next time.
    pub fn broken_connection(&self) -> bool {
        matches!(&self.0, zbus::Error::InputOutput(e) if e.kind() != std::io::ErrorKind::TimedOut)
    }

    fn timed_out(&self) -> bool {
        match &self.0 {
            zbus::Error::InputOutput(e) => e.kind() == std::io::ErrorKind::TimedOut,
            other => other.to_string().to_ascii_lowercase().contains("timed out"),
        }
    }

    pub fn into_tool_error(self) -> ToolError {
        if self.gone() {
            return ToolError::new(
                ErrorCode::StaleElement,
                "The element is gone (its window closed or the application removed it); find it again.",
            );
        }
        if self.timed_out() {
            return ToolError::new(
                ErrorCode::Unavailable,
                format!(
                    "The application did not answer its accessibility call within {} ms.",
                    super::CALL_TIMEOUT.as_millis()
                ),
            );
        }
        tracing::warn!("AT-SPI call failed: {}", self.0);
        ToolError::new(ErrorCode::Unavailable, format!("An accessibility call failed: {}", self.0))
    }
}

pub type Call<T> = Result<T, CallError>;

pub fn call<B, R>(c: &Connection, node: &NodeRef, iface: &str, method: &str, body: &B) -> Call<R>
where
    B: Serialize + DynamicType,
    R: DeserializeOwned + Type,
{
    let reply = c.call_method(Some(node.owner.as_str()), node.id.as_str(), Some(iface), method, body)?;
    Ok(reply.body().deserialize::<R>()?)
}

fn property(c: &Connection, node: &NodeRef, iface: &str, name: &str) -> Call<OwnedValue> {
    call(c, node, PROPERTIES, "Get", &(iface, name))
}

fn refs(list: Vec<(String, OwnedObjectPath)>) -> Vec<NodeRef> {
    list.into_iter().map(|(owner, path)| NodeRef { owner, id: path.to_string() }).collect()
}

pub fn children(c: &Connection, node: &NodeRef) -> Call<Vec<NodeRef>> {
    Ok(refs(call(c, node, ACCESSIBLE, "GetChildren", &())?))
}

fn string_of(props: &HashMap<String, OwnedValue>, key: &str) -> String {
    props.get(key).and_then(|v| v.try_clone().ok()).and_then(|v| String::try_from(v).ok()).unwrap_or_default()
}

fn states_of(bits: &[u32]) -> Vec<&'static str> {
    let mut out = Vec::new();
    for (word, b) in bits.iter().enumerate().take(2) {
        for bit in 0..32 {
            if b & (1 << bit) != 0
                && let Some(name) = STATES.get(word * 32 + bit)
            {
                out.push(*name);
            }
        }
    }
    out
}

pub fn extents(c: &Connection, node: &NodeRef) -> Call<Option<Rect>> {
    let (x, y, w, h): (i32, i32, i32, i32) = call(c, node, COMPONENT, "GetExtents", &COORD_SCREEN)?;
    if w <= 0 || h <= 0 || x == i32::MIN || y == i32::MIN {
        return Ok(None);
    }
    Ok(Some(Rect::new(x, y, w.unsigned_abs(), h.unsigned_abs())))
}

pub fn describe(c: &Connection, node: &NodeRef, want: Want) -> Call<RawElement> {
    let props: HashMap<String, OwnedValue> = call(c, node, PROPERTIES, "GetAll", &ACCESSIBLE)?;
    let role: u32 = if want.role { call(c, node, ACCESSIBLE, "GetRole", &())? } else { ROLE_UNKNOWN };
    let state_bits: Vec<u32> =
        if want.states { call(c, node, ACCESSIBLE, "GetState", &())? } else { Vec::new() };
    let interfaces: Vec<String> = if want.states || want.text || want.geometry {
        call(c, node, ACCESSIBLE, "GetInterfaces", &())?
    } else {
        Vec::new()
    };
    let has = |i: &str| interfaces.iter().any(|x| x == i);
    let mut e = RawElement {
        role: ROLES.get(role as usize).copied().unwrap_or("unknown"),
        name: string_of(&props, "Name"),
        description: string_of(&props, "Description"),
        automation_id: string_of(&props, "AccessibleId"),
        states: states_of(&state_bits),
        child_count: props
            .get("ChildCount")
            .and_then(|v| v.try_clone().ok())
            .and_then(|v| i32::try_from(v).ok())
            .map_or(0, |n| n.max(0).unsigned_abs()),
        editable_text: has(EDITABLE_TEXT),
        has_value: has(VALUE),
        can_focus: has(COMPONENT),
        ..RawElement::default()
    };
    if want.geometry {
        if has(COMPONENT) {
            e.bounds = extents(c, node)?;
        }
        if has(ACTION) {
            // GetActions answers localized names; GetName the stable ones agents can name.
            let actions: Vec<(String, String, String)> = call(c, node, ACTION, "GetActions", &())?;
            e.actions = (0..actions.len())
                .map(|i| call(c, node, ACTION, "GetName", &i32::try_from(i).unwrap_or(i32::MAX)))
                .collect::<Call<Vec<String>>>()?;
        }
        if has(VALUE) {
            e.value = property(c, node, VALUE, "CurrentValue").ok().and_then(|v| f64::try_from(v).ok());
        }
    }
    if want.text && has(TEXT) {
        e.text = Some(ellipsize(&read_text(c, node, SHORT_TEXT)?, SHORT_TEXT));
    }
    Ok(e)
}

/// The element's text through its Text interface, up to `max_chars` (plus one, so the caller
/// can tell it was cut); `None` without a Text interface.
pub fn text(c: &Connection, node: &NodeRef, max_chars: usize) -> Call<Option<String>> {
    let interfaces: Vec<String> = call(c, node, ACCESSIBLE, "GetInterfaces", &())?;
    if !interfaces.iter().any(|i| i == TEXT) {
        return Ok(None);
    }
    read_text(c, node, max_chars).map(Some)
}

/// The text of an element known to have a Text interface.
fn read_text(c: &Connection, node: &NodeRef, max_chars: usize) -> Call<String> {
    let count = i32::try_from(property(c, node, TEXT, "CharacterCount")?).unwrap_or(0).max(0);
    let end = count.min(i32::try_from(max_chars.saturating_add(1)).unwrap_or(i32::MAX));
    call(c, node, TEXT, "GetText", &(0i32, end))
}

/// AT-SPI2's `ATSPI_Collection_MATCH_ALL` and `MATCH_ANY`. Roles use ANY: at-spi2-atk's ALL
/// compares its own role numbers with AT-SPI2's.
const MATCH_ALL: i32 = 1;
const MATCH_ANY: i32 = 2;
/// `ATSPI_Collection_SORT_ORDER_CANONICAL`: tree order.
const SORT_CANONICAL: u32 = 1;

/// A set of AT-SPI2 numbers (roles or states) as the bit array a match rule carries.
fn bits(numbers: &[usize]) -> Vec<i32> {
    let mut words = vec![0u32; numbers.iter().max().map_or(0, |n| n / 32 + 1)];
    for n in numbers {
        words[n / 32] |= 1 << (n % 32);
    }
    words.into_iter().map(|w| w.cast_signed()).collect()
}

/// `Collection.GetMatches` on `root`: its descendants with one of `roles` (any role when
/// empty) and all of `states`, in tree order, at most `count`, filtered by the application.
pub fn get_matches(
    c: &Connection,
    root: &NodeRef,
    roles: &[usize],
    states: &[usize],
    count: usize,
) -> Call<Vec<NodeRef>> {
    let rule = (
        bits(states),
        MATCH_ALL,
        HashMap::<String, String>::new(),
        MATCH_ALL,
        bits(roles),
        MATCH_ANY,
        Vec::<String>::new(),
        MATCH_ALL,
        false,
    );
    let count = i32::try_from(count).unwrap_or(i32::MAX);
    Ok(refs(call(c, root, COLLECTION, "GetMatches", &(rule, SORT_CANONICAL, count, true))?))
}

/// Calls sent before their replies are read in [`strings`]: well inside the connection's
/// queue of unread messages (`bus.rs`), so no reply is dropped while the next are sent.
const IN_FLIGHT: usize = 256;

/// The string property `name` of `Accessible` on every node. The calls are sent without
/// waiting, [`IN_FLIGHT`] at a time, and their replies read from one stream by serial: the
/// application still answers one after another, but the bus's and the scheduler's share of
/// every round trip overlaps. Each batch's replies share one [`super::CALL_TIMEOUT`].
pub fn strings(c: &Connection, nodes: &[NodeRef], name: &str) -> Vec<Call<String>> {
    let conn = c.inner();
    zbus::block_on(async {
        let mut out: Vec<Call<String>> = Vec::with_capacity(nodes.len());
        for chunk in nodes.chunks(IN_FLIGHT) {
            let first = out.len();
            out.extend(chunk.iter().map(|_| Err(CallError(zbus::Error::InputOutput(timed_out().into())))));
            let mut stream = zbus::MessageStream::from(conn);
            let mut waiting: HashMap<NonZeroU32, usize> = HashMap::new();
            for (i, n) in chunk.iter().enumerate() {
                let sent = async {
                    let msg = zbus::Message::method_call(n.id.as_str(), "Get")?
                        .destination(n.owner.as_str())?
                        .interface(PROPERTIES)?
                        .build(&(ACCESSIBLE, name))?;
                    let serial = msg.primary_header().serial_num();
                    conn.send(&msg).await?;
                    Ok::<NonZeroU32, zbus::Error>(serial)
                };
                match sent.await {
                    Ok(serial) => {
                        waiting.insert(serial, first + i);
                    }
                    Err(e) => out[first + i] = Err(e.into()),
                }
            }
            let mut deadline = async_io::Timer::after(super::CALL_TIMEOUT);
            while !waiting.is_empty() {
                let next = std::future::poll_fn(|cx| {
                    if let Poll::Ready(m) = Pin::new(&mut stream).poll_next(cx) {
                        return Poll::Ready(m);
                    }
                    Pin::new(&mut deadline).poll(cx).map(|_| None)
                })
                .await;
                let Some(Ok(msg)) = next else { break };
                let Some(i) = msg.header().reply_serial().and_then(|s| waiting.remove(&s)) else { continue };
                out[i] = reply_string(&msg);
            }
        }
        out
    })
}

fn timed_out() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::TimedOut, "no reply in time")
}

/// A `Properties.Get` reply (or error reply) as a string.
fn reply_string(msg: &zbus::Message) -> Call<String> {
    if msg.message_type() == zbus::message::Type::Error {
        return Err(zbus::Error::from(msg.clone()).into());
    }
    let value: OwnedValue = msg.body().deserialize()?;
    Ok(String::try_from(value).map_err(zbus::Error::from)?)
}

/// The most parents followed looking for the application.
const MAX_ANCESTORS: usize = 256;
/// AT-SPI2's role number of an application (the root of its tree).
const ROLE_APPLICATION: u32 = 75;
/// AT-SPI2's `unknown` role, for a description that did not ask for the role.
const ROLE_UNKNOWN: u32 = 67;

fn parent(c: &Connection, node: &NodeRef) -> Call<Option<NodeRef>> {
    let (owner, path): (String, OwnedObjectPath) =
        OwnedValue::try_into(property(c, node, ACCESSIBLE, "Parent")?).map_err(zbus::Error::from)?;
    Ok((!path.as_str().ends_with("/null") && !owner.is_empty())
        .then(|| NodeRef { owner, id: path.to_string() }))
}

/// Whether following `Parent` from `node` reaches the application, and each node is among its
/// parent's children (a closed window's widgets keep answering but are cut off from the tree).
pub fn attached(c: &Connection, node: &NodeRef) -> Call<bool> {
    let mut at = node.clone();
    for _ in 0..MAX_ANCESTORS {
        let role: u32 = call(c, &at, ACCESSIBLE, "GetRole", &())?;
        if role == ROLE_APPLICATION {
            return Ok(true);
        }
        let Some(up) = parent(c, &at)? else { return Ok(false) };
        let index: i32 = call(c, &at, ACCESSIBLE, "GetIndexInParent", &())?;
        if index < 0 {
            return Ok(false);
        }
        let (owner, path): (String, OwnedObjectPath) = call(c, &up, ACCESSIBLE, "GetChildAtIndex", &index)?;
        if owner != at.owner || path.as_str() != at.id {
            return Ok(false);
        }
        at = up;
    }
    Ok(false)
}

fn refused(what: &str) -> CallError {
    CallError(zbus::Error::Failure(format!("the application refused to {what}")))
}

fn ok_or(done: bool, what: &str) -> Call<()> {
    if done { Ok(()) } else { Err(refused(what)) }
}

pub fn perform(c: &Connection, node: &NodeRef, op: &Operation) -> Call<()> {
    match op {
        Operation::Action { index, name } => {
            let i = i32::try_from(*index).unwrap_or(i32::MAX);
            ok_or(call(c, node, ACTION, "DoAction", &i)?, &format!("do `{name}`"))
        }
        Operation::Focus => ok_or(call(c, node, COMPONENT, "GrabFocus", &())?, "give it focus"),
        Operation::SetValue(v) => {
            let () = call(c, node, PROPERTIES, "Set", &(VALUE, "CurrentValue", Value::F64(*v)))?;
            Ok(())
        }
        Operation::SetText(t) => {
            ok_or(call(c, node, EDITABLE_TEXT, "SetTextContents", &t.as_str())?, "set its text")
        }
        Operation::AppendText(t) => {
            let at = i32::try_from(property(c, node, TEXT, "CharacterCount")?).unwrap_or(0);
            let len = i32::try_from(t.chars().count()).unwrap_or(i32::MAX);
            ok_or(call(c, node, EDITABLE_TEXT, "InsertText", &(at, t.as_str(), len))?, "insert text")
        }
        Operation::Select => {
            let Some(parent) = parent(c, node)? else {
                return Err(refused("select it (it has no container)"));
            };
            let index: i32 = call(c, node, ACCESSIBLE, "GetIndexInParent", &())?;
            ok_or(call(c, &parent, SELECTION, "SelectChild", &index)?, "select it")
        }
    }
}
