//! The look shared by every chart: the Okabe–Ito palette (safe for the common colour-vision
//! deficiencies), one dash pattern and one marker per series so the series stay apart in
//! grey-scale print, and fixed styles per arm so an arm looks the same in every chart.

use plotters::style::RGBColor;

/// A marker shape drawn at every data point of a series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
    InvertedTriangle,
    Plus,
}

impl Marker {
    /// The marker's name in the app's charts (and `chart_style`).
    pub fn name(self) -> &'static str {
        match self {
            Marker::Circle => "circle",
            Marker::Square => "square",
            Marker::Triangle => "triangle",
            Marker::Diamond => "diamond",
            Marker::Cross => "cross",
            Marker::InvertedTriangle => "inverted-triangle",
            Marker::Plus => "plus",
        }
    }
}

/// How one series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesStyle {
    pub color: RGBColor,
    /// SVG `stroke-dasharray`, `None` for a solid line.
    pub dash: Option<&'static str>,
    pub marker: Marker,
    /// Draw the marker as an outline (white inside): a second kind of point in the same colour,
    /// such as held-out families beside training families, or a run compared with this one.
    pub hollow: bool,
}

impl SeriesStyle {
    /// The same style with an outlined marker.
    pub const fn hollow(self) -> SeriesStyle {
        SeriesStyle { hollow: true, ..self }
    }

    /// The same style in another colour.
    pub const fn colored(self, color: RGBColor) -> SeriesStyle {
        SeriesStyle { color, ..self }
    }

    /// The same style with another dash pattern.
    pub const fn dashed(self, dash: Option<&'static str>) -> SeriesStyle {
        SeriesStyle { dash, ..self }
    }

    /// The same style with another marker.
    pub const fn with_marker(self, marker: Marker) -> SeriesStyle {
        SeriesStyle { marker, ..self }
    }
}

/// Okabe & Ito (2008), without yellow (too light for lines on white), ordered for contrast.
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
];

/// Dash patterns, paired with the palette by index.
pub const DASHES: [Option<&str>; 7] = [None, Some("9 4"), Some("2 3"), Some("10 3 2 3"), Some("15 4"), Some("5 2 1 2 1 2"), Some("1 4")];

pub const MARKERS: [Marker; 7] =
    [Marker::Circle, Marker::Square, Marker::Triangle, Marker::Diamond, Marker::Cross, Marker::InvertedTriangle, Marker::Plus];

/// The `i`-th generic series style. Past seven series the colours repeat, but each round shifts
/// the dash and marker against them, so no two of the first 49 series look alike.
pub fn nth(i: usize) -> SeriesStyle {
    let n = PALETTE.len();
    let round = i / n;
    SeriesStyle { color: PALETTE[i % n], dash: DASHES[(i + round) % n], marker: MARKERS[(i + 2 * round) % n], hollow: false }
}

/// Arms in the order of their fixed styles (their `display_rank` in [`crate::arm::SPECS`]): the
/// routed arm solid blue, the baseline dashed black.
pub const ARM_ORDER: [&str; crate::arm::SPECS.len()] = {
    let specs = crate::arm::SPECS;
    let mut out = [""; crate::arm::SPECS.len()];
    let mut i = 0;
    while i < specs.len() {
        out[specs[i].display_rank] = specs[i].name;
        i += 1;
    }
    out
};

/// The fixed style of an arm (unknown arms take the styles after the known ones).
pub fn arm(name: &str, fallback_index: usize) -> SeriesStyle {
    match ARM_ORDER.iter().position(|a| *a == name) {
        Some(i) => nth(i),
        None => nth(ARM_ORDER.len() + fallback_index),
    }
}

/// `#rrggbb` of a colour.
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

pub const FONT: &str = "sans-serif";
pub const WIDTH: u32 = 960;
pub const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
pub const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// A rough text width in pixels for layout (the SVG viewer lays text out itself; this errs
/// wide so labels do not collide). `size` is a plotters font size, which its SVG backend writes
/// as `size / 1.24` pixels.
pub fn text_width(text: &str, size: u32) -> u32 {
    (text.chars().count() as f64 * size as f64 / 1.24 * 0.62).ceil() as u32
}

#[cfg(test)]
mod tests {
    use super::nth;

    #[test]
    fn series_past_the_palette_still_look_different() {
        let styles: Vec<_> = (0..21).map(nth).collect();
        for i in 0..styles.len() {
            for j in 0..i {
                let (a, b) = (styles[i], styles[j]);
                assert!(a.color != b.color || a.dash != b.dash, "series {j} and {i} look alike");
            }
        }
    }
}
