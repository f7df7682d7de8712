//! Dot-and-whisker charts: categories down the side (labels horizontal, never overlapping), a
//! value with its 95% interval per series, series offset within a category row.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::frame::{self, err, Groups, LegendEntry};
use super::style::{self, SeriesStyle};
use super::{Chart, ChartError};

#[derive(Clone, Debug)]
pub struct DotSeries {
    pub name: String,
    pub label: String,
    pub style: SeriesStyle,
    /// Per category: (value, low, high), or `None` where the series has no value; low = high
    /// draws no whisker.
    pub values: Vec<Option<(f64, f64, f64)>>,
    /// Per category, the colour to draw it in (the category's arm); empty: the series' colour.
    /// The legend then shows the series in ink, and the series differ by marker and fill.
    pub colors: Vec<RGBColor>,
}

#[derive(Clone, Debug, Default)]
pub struct DotPanel {
    pub title: String,
    pub categories: Vec<String>,
    pub series: Vec<DotSeries>,
}

#[derive(Clone, Debug)]
pub struct DotChart {
    pub id: String,
    pub title: String,
    pub subtitle: Option<String>,
    pub x_label: String,
    pub y_label: String,
    pub x_range: (f64, f64),
    /// Tick labels of x as percentages (of 1), or percentage points when `signed`.
    pub x_percent: bool,
    pub zero_line: bool,
    pub panels: Vec<DotPanel>,
    pub columns: usize,
}

pub fn draw(spec: &DotChart) -> Result<Chart, ChartError> {
    let mut entries: Vec<LegendEntry> = Vec::new();
    for p in &spec.panels {
        for s in &p.series {
            if !entries.iter().any(|e| e.name == s.name) {
                // colours by category: the legend names the marker, in ink
                let style = if s.colors.is_empty() { s.style } else { s.style.colored(style::INK) };
                entries.push(LegendEntry { name: s.name.clone(), label: s.label.clone(), style, line: false });
            }
        }
    }
    let cols = spec.columns.clamp(1, spec.panels.len().max(1));
    let rows = spec.panels.len().div_ceil(cols).max(1);
    let max_cats = spec.panels.iter().map(|p| p.categories.len()).max().unwrap_or(1).max(1);
    let panel_h = 90 + 34 * max_cats as u32;
    let w = style::WIDTH;
    let th = frame::title_height(spec.subtitle.as_deref());
    let lh = frame::legend_height(&entries, w);
    let h = th + rows as u32 * panel_h + lh;
    let label_w = spec.panels.iter().flat_map(|p| p.categories.iter()).map(|c| style::text_width(&frame::ellipsize(c, 28), 14)).max().unwrap_or(40);
    let (x0, x1) = spec.x_range;
    let xpad = (x1 - x0) * 0.03;
    let xr = (x0 - xpad)..(x1 + xpad);

    let mut svg = String::new();
    let mut groups = Groups::default();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (top, rest) = root.split_vertically(th);
        frame::title(&top, &spec.title, spec.subtitle.as_deref())?;
        let (plots, legend_area) = rest.split_vertically(rows as u32 * panel_h);
        let cells = plots.split_evenly((rows, cols));
        let x_fmt = |x: &f64| {
            if spec.x_percent {
                let v = (x * 100.0).round();
                // never "-0"
                format!("{}", if v == 0.0 { 0.0 } else { v })
            } else {
                format!("{x:.2}")
            }
        };
        for (cell, panel) in cells.iter().zip(spec.panels.iter()) {
            let n = panel.categories.len().max(1);
            let yr = -0.6..(n as f64 - 0.4);
            let mut chart = ChartBuilder::on(cell)
                .caption(frame::ellipsize(&panel.title, 70), (style::FONT, 17).into_font().color(&style::INK))
                .margin_left(12)
                .margin_right(22)
                .margin_top(6)
                .margin_bottom(6)
                .x_label_area_size(44)
                .y_label_area_size(label_w as i32 + 40)
                .build_cartesian_2d(xr.clone(), yr)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc(spec.x_label.clone())
                .y_desc(spec.y_label.clone())
                .x_labels(8)
                .y_labels(0)
                .x_label_formatter(&x_fmt)
                .disable_y_mesh()
                .light_line_style(WHITE)
                .bold_line_style(style::GRID)
                .axis_desc_style((style::FONT, 16).into_font().color(&style::INK))
                .label_style((style::FONT, 14).into_font().color(&style::MUTED))
                .draw()
                .map_err(err)?;
            // category labels, top to bottom
            for (i, c) in panel.categories.iter().enumerate() {
                let y = (n - 1 - i) as f64;
                let at = chart.backend_coord(&(xr.start, y));
                root.draw(&Text::new(
                    frame::ellipsize(c, 28),
                    (at.0 - 8, at.1),
                    (style::FONT, 14).into_font().color(&style::INK).pos(Pos::new(HPos::Right, VPos::Center)),
                ))
                .map_err(err)?;
                if i + 1 < n {
                    let sep = chart.backend_coord(&(xr.start, y - 0.5));
                    let end = chart.backend_coord(&(xr.end, y - 0.5));
                    root.draw(&PathElement::new(vec![sep, end], style::GRID.stroke_width(1))).map_err(err)?;
                }
            }
            if spec.zero_line && x0 < 0.0 && x1 > 0.0 {
                let a = chart.backend_coord(&(0.0, -0.6));
                let b = chart.backend_coord(&(0.0, n as f64 - 0.4));
                root.draw(&PathElement::new(vec![a, b], style::MUTED.stroke_width(1))).map_err(err)?;
            }
            let k = panel.series.len().max(1);
            for (si, s) in panel.series.iter().enumerate() {
                if s.values.iter().all(Option::is_none) {
                    continue;
                }
                let off = if k > 1 { 0.5 * ((si as f64) / (k - 1) as f64 - 0.5) } else { 0.0 };
                groups.open(&root, "series", &s.name, None)?;
                for (i, v) in s.values.iter().enumerate() {
                    let Some((v, lo, hi)) = v else { continue };
                    let y = (n - 1 - i) as f64 - off;
                    let clamp = |x: f64| x.clamp(xr.start, xr.end);
                    let st = match s.colors.get(i) {
                        Some(c) => s.style.colored(*c),
                        None => s.style,
                    };
                    if hi > lo {
                        let a = chart.backend_coord(&(clamp(*lo), y));
                        let b = chart.backend_coord(&(clamp(*hi), y));
                        root.draw(&PathElement::new(vec![a, b], st.color.stroke_width(2))).map_err(err)?;
                        for e in [a, b] {
                            root.draw(&PathElement::new(vec![(e.0, e.1 - 4), (e.0, e.1 + 4)], st.color.stroke_width(2))).map_err(err)?;
                        }
                    }
                    frame::marker(&root, chart.backend_coord(&(clamp(*v), y)), &st, 5)?;
                }
                groups.close(&root)?;
            }
        }
        frame::legend(&legend_area, &mut groups, &entries)?;
        root.present().map_err(err)?;
    }
    let series: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
    let desc = format!("{} — x: {}; y: {}; series: {}", spec.title, spec.x_label, spec.y_label, series.join(", "));
    Ok(Chart { id: spec.id.clone(), title: spec.title.clone(), svg: frame::finish(&svg, &groups.specs, &spec.id, &spec.title, &desc), series })
}
