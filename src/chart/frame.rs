//! Drawing scaffolding shared by the chart kinds: the SVG canvas, the title block, the legend
//! strip outside the plot area, data markers, and the grouping of each series' elements.
//!
//! plotters writes flat SVG. To make series recognisable (and dash patterns real
//! `stroke-dasharray`s rather than hundreds of segments), every group of elements is bracketed
//! while drawing by two placeholder `<text>` elements; [`finish`] replaces them with
//! `<g class=".." data-series="..">` / `</g>` and adds the dash pattern to the group's lines.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, Marker, SeriesStyle};
use super::ChartError;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

const OPEN: &str = "@@hs-group:";
const CLOSE: &str = "@@hs-group-end@@";

#[derive(Clone, Debug)]
pub(crate) struct GroupSpec {
    pub class: &'static str,
    pub series: String,
    pub dash: Option<&'static str>,
}

/// One legend entry.
#[derive(Clone, Debug)]
pub(crate) struct LegendEntry {
    pub name: String,
    pub label: String,
    pub style: SeriesStyle,
    /// Draw a line sample (lines) or only the marker (dots).
    pub line: bool,
}

pub(crate) fn err<E: std::fmt::Debug>(e: E) -> ChartError {
    ChartError(format!("{e:?}"))
}

/// Collects group brackets while drawing.
#[derive(Default)]
pub(crate) struct Groups {
    pub specs: Vec<GroupSpec>,
}

impl Groups {
    pub fn open(&mut self, area: &Area, class: &'static str, series: &str, dash: Option<&'static str>) -> Result<(), ChartError> {
        let i = self.specs.len();
        self.specs.push(GroupSpec { class, series: series.to_string(), dash });
        area.draw(&Text::new(format!("{OPEN}{i}@@"), (0, 0), (style::FONT, 10).into_font())).map_err(err)
    }
    pub fn close(&mut self, area: &Area) -> Result<(), ChartError> {
        area.draw(&Text::new(CLOSE.to_string(), (0, 0), (style::FONT, 10).into_font())).map_err(err)
    }
}

fn escape_attr(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Replace the group placeholders, add dash patterns, and put a `<title>`/`<desc>` and chart
/// metadata on the root element.
pub(crate) fn finish(svg: &str, groups: &[GroupSpec], id: &str, title: &str, desc: &str) -> String {
    let lines: Vec<&str> = svg.lines().collect();
    let mut out = String::with_capacity(svg.len() + 256);
    let mut dash_stack: Vec<Option<&'static str>> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if i == 0 {
            // <svg width=".." height=".." viewBox=".." xmlns="..">
            out.push_str(&line.replacen("<svg ", &format!("<svg class=\"hs-chart\" data-chart=\"{}\" role=\"img\" ", escape_attr(id)), 1));
            out.push_str(&format!("\n<title>{}</title>\n<desc>{}</desc>\n", escape_text(title), escape_text(desc)));
            i += 1;
            continue;
        }
        if line.starts_with("<text") && i + 2 < lines.len() && lines[i + 2] == "</text>" {
            let content = lines[i + 1];
            if let Some(rest) = content.strip_prefix(OPEN) {
                let idx: usize = rest.trim_end_matches("@@").parse().unwrap_or(usize::MAX);
                if let Some(g) = groups.get(idx) {
                    out.push_str(&format!("<g class=\"{}\" data-series=\"{}\">\n", g.class, escape_attr(&g.series)));
                    dash_stack.push(g.dash);
                }
                i += 3;
                continue;
            }
            if content == CLOSE {
                out.push_str("</g>\n");
                dash_stack.pop();
                i += 3;
                continue;
            }
        }
        match dash_stack.last().copied().flatten() {
            Some(d) if line.starts_with("<polyline ") => {
                out.push_str(&line.replacen("<polyline ", &format!("<polyline stroke-dasharray=\"{d}\" stroke-linejoin=\"round\" "), 1));
            }
            _ => out.push_str(line),
        }
        out.push('\n');
        i += 1;
    }
    out
}

fn escape_text(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Draw a marker at pixel `at`.
pub(crate) fn marker(area: &Area, at: (i32, i32), s: &SeriesStyle, size: i32) -> Result<(), ChartError> {
    if s.hollow && !matches!(s.marker, Marker::Cross | Marker::Plus) {
        // white inside, the series' colour around
        let white = SeriesStyle { color: WHITE, hollow: false, ..*s };
        let outline = SeriesStyle { hollow: false, ..*s };
        marker(area, at, &outline, size + 1)?;
        return marker(area, at, &white, size - 1);
    }
    let fill = s.color.filled();
    let stroke = s.color.stroke_width(2);
    let r = size;
    let res = match s.marker {
        Marker::Circle => area.draw(&Circle::new(at, r, fill)),
        Marker::Square => area.draw(&Rectangle::new([(at.0 - r, at.1 - r), (at.0 + r, at.1 + r)], fill)),
        Marker::Triangle => area.draw(&Polygon::new(vec![(at.0, at.1 - r - 1), (at.0 + r + 1, at.1 + r), (at.0 - r - 1, at.1 + r)], fill)),
        Marker::InvertedTriangle => area.draw(&Polygon::new(vec![(at.0, at.1 + r + 1), (at.0 + r + 1, at.1 - r), (at.0 - r - 1, at.1 - r)], fill)),
        Marker::Diamond => {
            area.draw(&Polygon::new(vec![(at.0, at.1 - r - 1), (at.0 + r + 1, at.1), (at.0, at.1 + r + 1), (at.0 - r - 1, at.1)], fill))
        }
        Marker::Cross => {
            area.draw(&PathElement::new(vec![(at.0 - r, at.1 - r), (at.0 + r, at.1 + r)], stroke)).map_err(err)?;
            area.draw(&PathElement::new(vec![(at.0 - r, at.1 + r), (at.0 + r, at.1 - r)], stroke))
        }
        Marker::Plus => {
            area.draw(&PathElement::new(vec![(at.0 - r - 1, at.1), (at.0 + r + 1, at.1)], stroke)).map_err(err)?;
            area.draw(&PathElement::new(vec![(at.0, at.1 - r - 1), (at.0, at.1 + r + 1)], stroke))
        }
    };
    res.map_err(err)
}

/// Rows the legend needs at `width`.
pub(crate) fn legend_layout(entries: &[LegendEntry], width: u32) -> Vec<Vec<(usize, u32)>> {
    let mut rows: Vec<Vec<(usize, u32)>> = vec![Vec::new()];
    let mut x = 0u32;
    for (i, e) in entries.iter().enumerate() {
        let w = 44 + style::text_width(&e.label, 15) + 24;
        if x + w > width && !rows.last().map(Vec::is_empty).unwrap_or(true) {
            rows.push(Vec::new());
            x = 0;
        }
        rows.last_mut().expect("a row").push((i, x));
        x += w;
    }
    rows
}

pub(crate) const LEGEND_ROW: u32 = 26;

/// Height of the legend strip for these entries.
pub(crate) fn legend_height(entries: &[LegendEntry], width: u32) -> u32 {
    if entries.is_empty() {
        0
    } else {
        legend_layout(entries, width - 40).len() as u32 * LEGEND_ROW + 16
    }
}

/// Draw the legend strip (below the plots, outside every plot area).
pub(crate) fn legend(area: &Area, groups: &mut Groups, entries: &[LegendEntry]) -> Result<(), ChartError> {
    let (w, _) = area.dim_in_pixel();
    for (r, row) in legend_layout(entries, w - 40).iter().enumerate() {
        let y = 8 + r as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        for &(i, x0) in row {
            let e = &entries[i];
            let x = 20 + x0 as i32;
            groups.open(area, "legend-entry", &e.name, e.style.dash)?;
            if e.line {
                area.draw(&PathElement::new(vec![(x, y), (x + 36, y)], e.style.color.stroke_width(2))).map_err(err)?;
            }
            marker(area, (x + 18, y), &e.style, 4)?;
            area.draw(&Text::new(
                e.label.clone(),
                (x + 44, y),
                (style::FONT, 15).into_font().color(&style::INK).pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(err)?;
            groups.close(area)?;
        }
    }
    Ok(())
}

/// Draw the title and an optional subtitle at the top of `area`.
pub(crate) fn title(area: &Area, title: &str, subtitle: Option<&str>) -> Result<(), ChartError> {
    area.draw(&Text::new(title.to_string(), (16, 10), (style::FONT, 24).into_font().style(FontStyle::Bold).color(&style::INK))).map_err(err)?;
    if let Some(s) = subtitle {
        area.draw(&Text::new(s.to_string(), (16, 38), (style::FONT, 15).into_font().color(&style::MUTED))).map_err(err)?;
    }
    Ok(())
}

/// Height of the title block.
pub(crate) fn title_height(subtitle: Option<&str>) -> u32 {
    if subtitle.is_some() {
        66
    } else {
        46
    }
}

/// Shorten a label to at most `max` characters.
pub(crate) fn ellipsize(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max.saturating_sub(1)).collect::<String>())
    }
}
