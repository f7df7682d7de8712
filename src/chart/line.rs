//! Line charts in small multiples: one or more panels sharing the axes' meaning, each series a
//! line with markers and an optional translucent 95% band, the legend in a strip below.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::frame::{self, err, Groups, LegendEntry};
use super::style::{self, SeriesStyle};
use super::{Chart, ChartError};

/// One line.
#[derive(Clone, Debug)]
pub struct Series {
    /// The series key (`data-series` in the SVG).
    pub name: String,
    /// The legend label.
    pub label: String,
    pub style: SeriesStyle,
    pub points: Vec<(f64, f64)>,
    /// (x, low, high) of a 95% band; empty for none.
    pub band: Vec<(f64, f64, f64)>,
}

#[derive(Clone, Debug, Default)]
pub struct Panel {
    pub title: String,
    pub series: Vec<Series>,
    /// Shown in the panel when it has no data.
    pub empty_note: Option<String>,
}

#[derive(Clone, Debug)]
pub struct LineChart {
    pub id: String,
    pub title: String,
    pub subtitle: Option<String>,
    pub x_label: String,
    pub y_label: String,
    pub y_range: (f64, f64),
    /// Tick labels of y as percentages of 1.
    pub y_percent: bool,
    /// x takes integer values only (iterations, budgets): ticks are labelled only at integers.
    pub x_integer: bool,
    /// Draw a horizontal reference line at y = 0.
    pub zero_line: bool,
    pub panels: Vec<Panel>,
    pub columns: usize,
    pub panel_height: u32,
}

impl LineChart {
    pub fn new(id: &str, title: &str, x_label: &str, y_label: &str) -> LineChart {
        LineChart {
            id: id.into(),
            title: title.into(),
            subtitle: None,
            x_label: x_label.into(),
            y_label: y_label.into(),
            y_range: (0.0, 1.0),
            y_percent: true,
            x_integer: true,
            zero_line: false,
            panels: Vec::new(),
            columns: 2,
            panel_height: 330,
        }
    }
}

fn legend_entries(panels: &[Panel]) -> Vec<LegendEntry> {
    let mut out: Vec<LegendEntry> = Vec::new();
    for p in panels {
        for s in &p.series {
            if !out.iter().any(|e| e.name == s.name) {
                out.push(LegendEntry { name: s.name.clone(), label: s.label.clone(), style: s.style, line: true });
            }
        }
    }
    out
}

pub fn draw(spec: &LineChart) -> Result<Chart, ChartError> {
    let entries = legend_entries(&spec.panels);
    let cols = spec.columns.clamp(1, spec.panels.len().max(1));
    let rows = spec.panels.len().div_ceil(cols).max(1);
    let w = style::WIDTH;
    let th = frame::title_height(spec.subtitle.as_deref());
    let lh = frame::legend_height(&entries, w);
    let h = th + rows as u32 * spec.panel_height + lh;
    let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in spec.panels.iter().flat_map(|p| p.series.iter()) {
        for (x, _) in &s.points {
            x0 = x0.min(*x);
            x1 = x1.max(*x);
        }
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 - x0 < 1.0 {
        x1 = x0 + 1.0;
    }
    let pad = (x1 - x0) * 0.04 + if spec.x_integer { 0.15 } else { 0.0 };
    let xr = (x0 - pad)..(x1 + pad);
    let (y0, y1) = spec.y_range;
    let ypad = (y1 - y0) * 0.03;
    let yr = (y0 - ypad)..(y1 + ypad);
    let span = (x1 - x0).round() as usize;
    let x_labels = if spec.x_integer { (span + 1).clamp(2, 11) } else { 8 };

    let mut svg = String::new();
    let mut groups = Groups::default();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (top, rest) = root.split_vertically(th);
        frame::title(&top, &spec.title, spec.subtitle.as_deref())?;
        let (plots, legend_area) = rest.split_vertically(rows as u32 * spec.panel_height);
        let cells = plots.split_evenly((rows, cols));
        let x_fmt = |x: &f64| {
            if spec.x_integer {
                if (x - x.round()).abs() < 1e-6 && *x >= x0 - 1e-6 && *x <= x1 + 1e-6 {
                    format!("{}", x.round() as i64)
                } else {
                    String::new()
                }
            } else {
                format!("{x:.1}")
            }
        };
        let y_fmt = |y: &f64| {
            let v = if spec.y_percent { (y * 100.0).round() } else { (y * 100.0).round() / 100.0 };
            let v = if v == 0.0 { 0.0 } else { v };
            if spec.y_percent {
                format!("{v}%")
            } else {
                format!("{v:.2}")
            }
        };
        for (cell, panel) in cells.iter().zip(spec.panels.iter()) {
            let mut chart = ChartBuilder::on(cell)
                .caption(frame::ellipsize(&panel.title, 70), (style::FONT, 17).into_font().color(&style::INK))
                .margin_left(12)
                .margin_right(22)
                .margin_top(6)
                .margin_bottom(6)
                .x_label_area_size(44)
                .y_label_area_size(64)
                .build_cartesian_2d(xr.clone(), yr.clone())
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc(spec.x_label.clone())
                .y_desc(spec.y_label.clone())
                .x_labels(x_labels)
                .y_labels(6)
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .light_line_style(WHITE)
                .bold_line_style(style::GRID)
                .axis_desc_style((style::FONT, 16).into_font().color(&style::INK))
                .label_style((style::FONT, 14).into_font().color(&style::MUTED))
                .draw()
                .map_err(err)?;
            if spec.zero_line && y0 < 0.0 && y1 > 0.0 {
                chart
                    .draw_series(std::iter::once(PathElement::new(vec![(xr.start, 0.0), (xr.end, 0.0)], style::MUTED.stroke_width(1))))
                    .map_err(err)?;
            }
            let plot = chart.plotting_area();
            if panel.series.iter().all(|s| s.points.is_empty()) {
                let note = panel.empty_note.clone().unwrap_or_else(|| "no data".into());
                let (pw, ph) = plot.dim_in_pixel();
                let c = chart.backend_coord(&(xr.start, yr.end));
                root.draw(&Text::new(
                    note,
                    (c.0 + pw as i32 / 2, c.1 + ph as i32 / 2),
                    (style::FONT, 16).into_font().color(&style::MUTED).pos(Pos::new(HPos::Center, VPos::Center)),
                ))
                .map_err(err)?;
                continue;
            }
            // bands first, so every line is drawn over every band
            for s in &panel.series {
                if s.band.len() < 2 {
                    continue;
                }
                groups.open(&root, "band", &s.name, None)?;
                let mut poly: Vec<(f64, f64)> = s.band.iter().map(|(x, _, hi)| (*x, *hi)).collect();
                poly.extend(s.band.iter().rev().map(|(x, lo, _)| (*x, *lo)));
                chart.draw_series(std::iter::once(Polygon::new(poly, s.style.color.mix(0.16).filled()))).map_err(err)?;
                groups.close(&root)?;
            }
            // solid lines first, so a dashed line over an equal solid one stays visible
            let mut order: Vec<&Series> = panel.series.iter().collect();
            order.sort_by_key(|s| s.style.dash.is_some());
            for s in order {
                if s.points.is_empty() {
                    continue;
                }
                groups.open(&root, "series", &s.name, s.style.dash)?;
                chart.draw_series(std::iter::once(PathElement::new(s.points.clone(), s.style.color.stroke_width(2)))).map_err(err)?;
                groups.open(&root, "markers", &s.name, None)?;
                for p in &s.points {
                    frame::marker(&root, chart.backend_coord(p), &s.style, 4)?;
                }
                groups.close(&root)?;
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
