//! The ⛔ and ✔ signs, painted rather than typeset.
//!
//! egui's bundled fonts have neither U+26D4 nor U+2714 (they render as boxes), and a system
//! font cannot be relied on, so the stop sign is drawn as a disc with a bar, and the check
//! mark as two strokes, in front of their text.

use egui::{self, Color32, FontId, Response, Sense, Stroke, StrokeKind};

/// A painted sign.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sign {
    /// ⛔: a disc with a bar across.
    Stop { disc: Color32, bar: Color32 },
    /// ✔: a check mark.
    Check(Color32),
}

/// Draw the sign and `text` as one item (centred in a centring layout): the sign is `size`
/// high, the text `size` points.
pub(crate) fn signed_text(
    ui: &mut egui::Ui,
    sign_kind: Sign,
    text: &str,
    size: f32,
    text_color: Color32,
) -> Response {
    let font = FontId::proportional(size);
    let galley = ui.painter().layout_no_wrap(text.to_owned(), font, text_color);
    let sign = size;
    let gap = size * 0.35;
    let height = galley.size().y.max(sign);
    let (rect, response) =
        ui.allocate_exact_size(egui::vec2(sign + gap + galley.size().x, height), Sense::hover());
    let painter = ui.painter();
    let center = egui::pos2(rect.left() + sign / 2.0, rect.center().y);
    match sign_kind {
        Sign::Stop { disc, bar } => {
            painter.circle_filled(center, sign / 2.0, disc);
            let bar_rect = egui::Rect::from_center_size(center, egui::vec2(sign * 0.62, sign * 0.2));
            painter.rect(bar_rect, sign * 0.04, bar, Stroke::NONE, StrokeKind::Inside);
        }
        Sign::Check(color) => {
            let at = |dx: f32, dy: f32| center + egui::vec2(dx * sign, dy * sign);
            let stroke = Stroke::new(sign * 0.14, color);
            painter.line_segment([at(-0.38, 0.02), at(-0.12, 0.28)], stroke);
            painter.line_segment([at(-0.12, 0.28), at(0.4, -0.3)], stroke);
        }
    }
    let text_pos = egui::pos2(rect.left() + sign + gap, rect.center().y - galley.size().y / 2.0);
    painter.galley(text_pos, galley, text_color);
    response
}
