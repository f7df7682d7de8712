//! Heatmaps: a grid of cells coloured on a diverging blue–vermillion scale, each cell carrying
//! its numbers as text (so the chart reads in grey-scale too), row labels at the left, column
//! labels below (turned upright when they would collide), a colour key under the grid.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::frame::{self, err};
use super::style;
use super::{Chart, ChartError};

#[derive(Clone, Debug)]
pub struct HeatCell {
    /// Colour value in [-1, 1]: negative vermillion, positive blue, 0 white.
    pub value: f64,
    /// Text in the cell.
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Heatmap {
    pub id: String,
    pub title: String,
    pub subtitle: Option<String>,
    /// Axis label of the columns (drawn below the grid).
    pub x_label: String,
    /// Axis label of the rows (drawn upright at the left).
    pub y_label: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    /// Row-major: `cells[row][column]`.
    pub cells: Vec<Vec<Option<HeatCell>>>,
    /// Labels of the colour key's negative and positive ends.
    pub key: (String, String),
}

const NEG: RGBColor = style::PALETTE[5];
const POS: RGBColor = style::PALETTE[0];

fn blend(c: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let m = |a: u8| (255.0 - (255.0 - a as f64) * t).round() as u8;
    RGBColor(m(c.0), m(c.1), m(c.2))
}

fn fill(v: f64) -> RGBColor {
    if v >= 0.0 {
        blend(POS, 0.85 * v)
    } else {
        blend(NEG, 0.85 * -v)
    }
}

fn ink_for(v: f64) -> RGBColor {
    if v.abs() > 0.55 {
        WHITE
    } else {
        style::INK
    }
}

pub fn draw(spec: &Heatmap) -> Result<Chart, ChartError> {
    let w = style::WIDTH;
    let th = frame::title_height(spec.subtitle.as_deref());
    let row_label_w = spec.rows.iter().map(|r| style::text_width(&frame::ellipsize(r, 26), 12)).max().unwrap_or(40) + 16;
    let left = 36 + row_label_w;
    let right = 24;
    let ncols = spec.columns.len().max(1) as u32;
    let cell_w = ((w - left - right) / ncols).clamp(30, 160);
    let grid_w = cell_w * ncols;
    let cell_h = 32u32;
    let grid_h = cell_h * spec.rows.len().max(1) as u32;
    let col_labels: Vec<String> = spec.columns.iter().map(|c| frame::ellipsize(c, 24)).collect();
    let widest = col_labels.iter().map(|c| style::text_width(c, 12)).max().unwrap_or(0);
    let upright = widest + 8 > cell_w;
    let col_label_h = if upright { widest + 12 } else { 24 };
    let h = th + 10 + grid_h + col_label_h + 34 + 56;

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        frame::title(&root, &spec.title, spec.subtitle.as_deref())?;
        let gx = left as i32;
        let gy = (th + 10) as i32;
        for (r, row) in spec.rows.iter().enumerate() {
            let y = gy + (r as u32 * cell_h) as i32;
            root.draw(&Text::new(
                frame::ellipsize(row, 26),
                (gx - 8, y + cell_h as i32 / 2),
                (style::FONT, 14).into_font().color(&style::INK).pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(err)?;
            for c in 0..spec.columns.len() {
                let x = gx + (c as u32 * cell_w) as i32;
                let cell = spec.cells.get(r).and_then(|row| row.get(c)).and_then(Option::as_ref);
                let (bg, text, ink) = match cell {
                    Some(cell) => (fill(cell.value), cell.text.clone(), ink_for(cell.value)),
                    None => (RGBColor(0xF2, 0xF2, 0xF2), "–".to_string(), style::MUTED),
                };
                root.draw(&Rectangle::new([(x, y), (x + cell_w as i32, y + cell_h as i32)], bg.filled())).map_err(err)?;
                root.draw(&Rectangle::new([(x, y), (x + cell_w as i32, y + cell_h as i32)], style::GRID.stroke_width(1))).map_err(err)?;
                root.draw(&Text::new(
                    text,
                    (x + cell_w as i32 / 2, y + cell_h as i32 / 2),
                    (style::FONT, 14).into_font().color(&ink).pos(Pos::new(HPos::Center, VPos::Center)),
                ))
                .map_err(err)?;
            }
        }
        // column labels
        let ly = gy + grid_h as i32 + 6;
        for (c, label) in col_labels.iter().enumerate() {
            let cx = gx + (c as u32 * cell_w + cell_w / 2) as i32;
            if upright {
                let font =
                    (style::FONT, 14).into_font().color(&style::INK).transform(FontTransform::Rotate270).pos(Pos::new(HPos::Right, VPos::Center));
                root.draw(&Text::new(label.clone(), (cx, ly), font)).map_err(err)?;
            } else {
                root.draw(&Text::new(
                    label.clone(),
                    (cx, ly),
                    (style::FONT, 14).into_font().color(&style::INK).pos(Pos::new(HPos::Center, VPos::Top)),
                ))
                .map_err(err)?;
            }
        }
        // axis labels
        let xl_y = ly + col_label_h as i32 + 4;
        root.draw(&Text::new(
            spec.x_label.clone(),
            (gx + grid_w as i32 / 2, xl_y),
            (style::FONT, 16).into_font().color(&style::INK).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(err)?;
        let yl_font = (style::FONT, 16).into_font().color(&style::INK).transform(FontTransform::Rotate270).pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new(spec.y_label.clone(), (14, gy + grid_h as i32 / 2), yl_font)).map_err(err)?;
        // colour key
        let ky = xl_y + 30;
        let steps = [-1.0, -0.5, 0.0, 0.5, 1.0];
        let kw = 34;
        let kx = gx;
        root.draw(&Text::new(
            spec.key.0.clone(),
            (kx - 6, ky + 8),
            (style::FONT, 14).into_font().color(&style::INK).pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(err)?;
        for (i, v) in steps.iter().enumerate() {
            let x = kx + i as i32 * kw;
            root.draw(&Rectangle::new([(x, ky), (x + kw, ky + 16)], fill(*v).filled())).map_err(err)?;
            root.draw(&Rectangle::new([(x, ky), (x + kw, ky + 16)], style::GRID.stroke_width(1))).map_err(err)?;
        }
        root.draw(&Text::new(
            spec.key.1.clone(),
            (kx + kw * steps.len() as i32 + 6, ky + 8),
            (style::FONT, 14).into_font().color(&style::INK).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(err)?;
        root.present().map_err(err)?;
    }
    let desc = format!("{} — columns: {}; rows: {}", spec.title, spec.x_label, spec.y_label);
    Ok(Chart { id: spec.id.clone(), title: spec.title.clone(), svg: frame::finish(&svg, &[], &spec.id, &spec.title, &desc), series: Vec::new() })
}
