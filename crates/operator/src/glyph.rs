//! The ⛔ sign, painted rather than typeset.
//!
//! egui's bundled fonts have no U+26D4 (it renders as a box), and a system font cannot be
//! relied on, so the stop sign is drawn as a disc with a bar in front of its text.

use eframe::egui::{self, Color32, FontId, Response, Sense, Stroke, StrokeKind};

/// Draw `⛔ text` as one centred-able item: the sign is `size` high, the text `size` points.
pub(crate) fn signed_text(
    ui: &mut egui::Ui,
    text: &str,
    size: f32,
    text_color: Color32,
    disc: Color32,
    bar: Color32,
) -> Response {
    let font = FontId::proportional(size);
    let galley = ui
        .painter()
        .layout_no_wrap(text.to_owned(), font, text_color);
    let sign = size;
    let gap = size * 0.35;
    let height = galley.size().y.max(sign);
    let (rect, response) = ui.allocate_exact_size(
        egui::vec2(sign + gap + galley.size().x, height),
        Sense::hover(),
    );
    let painter = ui.painter();
    let center = egui::pos2(rect.left() + sign / 2.0, rect.center().y);
    painter.circle_filled(center, sign / 2.0, disc);
    let bar_rect = egui::Rect::from_center_size(center, egui::vec2(sign * 0.62, sign * 0.2));
    painter.rect(
        bar_rect,
        sign * 0.04,
        bar,
        Stroke::NONE,
        StrokeKind::Inside,
    );
    let text_pos = egui::pos2(
        rect.left() + sign + gap,
        rect.center().y - galley.size().y / 2.0,
    );
    painter.galley(text_pos, galley, text_color);
    response
}
