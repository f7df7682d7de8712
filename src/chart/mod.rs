//! Charts, drawn once in Rust with plotters as SVG strings, for the desktop app and the reports
//! alike: the chart kinds ([`line`], [`dot`], [`heatmap`]) and what the report's sections share
//! (arm and split styles); each section draws its own charts (`crate::report::section`).
//!
//! Every chart has a title, both axis labels with units, and a legend outside the plot area.
//! Series use the Okabe–Ito colours with a distinct dash pattern and marker each (see
//! [`style`]), so they stay apart for colour-blind readers and in grey-scale print; 95% bands are
//! translucent areas. In the SVG each series' elements sit in
//! `<g class="series" data-series="NAME">`, its band in `<g class="band" ...>` and its legend
//! entry in `<g class="legend-entry" ...>`; the root `<svg>` carries `data-chart="ID"`, a
//! `<title>` and a `<desc>`. Text is plain SVG `<text>` in the generic `sans-serif` family: no
//! font files are needed to draw or to view a chart.

pub mod dot;
mod frame;
pub mod heatmap;
pub mod line;
pub mod style;

use serde::{Deserialize, Serialize};

use crate::analysis::{Analysis, TransferCurve};
use line::{LineChart, Panel, Series};

/// A drawn chart.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Chart {
    /// A stable id (`transfer`, `final-table`, `locality-dbbench`, ...), also the file stem.
    pub id: String,
    pub title: String,
    /// The SVG document.
    pub svg: String,
    /// The series drawn, by `data-series` name, in legend order.
    pub series: Vec<String>,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("drawing a chart failed: {0}")]
pub struct ChartError(pub String);

/// Human name of a split.
pub fn split_label(split: &str) -> &str {
    match split {
        "train" => "training families",
        "heldout" => "held-out families",
        other => other,
    }
}

pub fn arm_style(arms: &[String], arm: &str) -> style::SeriesStyle {
    let unknown = arms.iter().filter(|a| !style::ARM_ORDER.contains(&a.as_str())).position(|a| a == arm).unwrap_or(0);
    style::arm(arm, unknown)
}

pub fn suite_prefix(a: &Analysis, suite: &str) -> String {
    if a.suites.len() > 1 {
        format!("{suite} — ")
    } else {
        String::new()
    }
}

/// The dash of the run compared with in [`transfer_overlay`] (this run's lines are solid).
pub const OTHER_RUN_DASH: &str = "7 4";

/// Two runs' transfer curves in one chart, one panel per suite and split: each arm in its
/// colour and marker; this run solid with filled markers, the other run dashed with outlined
/// ones. No bands (each run's own transfer chart has them).
pub fn transfer_overlay(this: &Analysis, this_label: &str, other: &[TransferCurve], other_label: &str) -> Result<Chart, ChartError> {
    let mut spec = LineChart::new(
        "transfer-compare",
        "Transfer, both runs: success under the base harness during training",
        "Training iteration",
        "Base-harness success (% of tasks)",
    );
    spec.subtitle = Some(format!("Solid: {this_label}; dashed, outlined markers: {other_label}. Mean over each run's seeds"));
    let mut suites: Vec<String> = this.suites.clone();
    for c in other {
        if !suites.contains(&c.suite) {
            suites.push(c.suite.clone());
        }
    }
    let mut arms: Vec<String> = this.arms.clone();
    for c in other {
        if !arms.contains(&c.arm) {
            arms.push(c.arm.clone());
        }
    }
    for suite in &suites {
        for split in ["train", "heldout"] {
            let mut series = Vec::new();
            for arm in &arms {
                for (curves, label, is_other) in [(&this.transfer[..], this_label, false), (other, other_label, true)] {
                    let Some(c) = curves.iter().find(|c| &c.suite == suite && c.split == split && &c.arm == arm) else { continue };
                    let base = arm_style(&arms, arm);
                    series.push(Series {
                        name: format!("{arm} · {label}"),
                        label: format!("{arm} · {label}"),
                        style: if is_other { base.dashed(Some(OTHER_RUN_DASH)).hollow() } else { base.dashed(None) },
                        points: c.points.iter().map(|p| (p.iteration as f64, p.mean)).collect(),
                        band: Vec::new(),
                    });
                }
            }
            if series.is_empty() && split == "heldout" {
                continue;
            }
            let prefix = if suites.len() > 1 { format!("{suite} — ") } else { String::new() };
            spec.panels.push(Panel { title: format!("{prefix}{}", split_label(split)), series, empty_note: Some("no evaluation yet".into()) });
        }
    }
    if spec.panels.is_empty() {
        spec.panels.push(Panel { title: "no evaluation yet".into(), ..Default::default() });
    }
    line::draw(&spec)
}

/// The style of a split's points in the per-arm dot charts: the colour is the arm's (set per
/// category); training families filled circles, held-out families outlined diamonds.
pub fn split_style(split: &str) -> style::SeriesStyle {
    let s = style::nth(0).dashed(None);
    if split == "heldout" {
        s.with_marker(style::Marker::Diamond).hollow()
    } else {
        s.with_marker(style::Marker::Circle)
    }
}

/// A split's legend label in the per-arm dot charts: which marker it is.
pub fn split_marker_label(split: &str) -> &'static str {
    if split == "heldout" {
        "held-out families: outlined diamond"
    } else {
        "training families: filled circle"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dot::{DotChart, DotPanel, DotSeries};
    use heatmap::{HeatCell, Heatmap};

    fn parse(svg: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(svg).expect("well-formed SVG")
    }

    fn two_series() -> LineChart {
        let mut spec = LineChart::new("t", "A title", "Iteration (steps)", "Success (% of tasks)");
        spec.panels.push(Panel {
            title: "panel".into(),
            series: vec![
                Series {
                    name: "a&b".into(),
                    label: "solid".into(),
                    style: style::nth(0),
                    points: vec![(0.0, 0.1), (1.0, 0.2), (2.0, 0.4)],
                    band: vec![(0.0, 0.0, 0.2), (1.0, 0.1, 0.3), (2.0, 0.3, 0.5)],
                },
                Series {
                    name: "dashed".into(),
                    label: "dashed".into(),
                    style: style::nth(1),
                    points: vec![(0.0, 0.1), (2.0, 0.3)],
                    band: Vec::new(),
                },
            ],
            empty_note: None,
        });
        spec.panels.push(Panel { title: "empty".into(), series: Vec::new(), empty_note: Some("nothing yet".into()) });
        spec
    }

    #[test]
    fn series_are_grouped_and_dashes_are_real_dasharrays() {
        let c = line::draw(&two_series()).unwrap();
        assert_eq!(c.series, vec!["a&b", "dashed"]);
        let doc = parse(&c.svg);
        let series: Vec<_> = doc.descendants().filter(|n| n.attribute("class") == Some("series")).collect();
        assert_eq!(series.iter().map(|n| n.attribute("data-series").unwrap()).collect::<Vec<_>>(), vec!["a&b", "dashed"]);
        let dashed = series.iter().find(|n| n.attribute("data-series") == Some("dashed")).unwrap();
        let line = dashed.children().find(|n| n.has_tag_name("polyline")).unwrap();
        assert_eq!(line.attribute("stroke-dasharray"), style::DASHES[1]);
        // markers of a dashed series are not dashed
        let markers = dashed.children().find(|n| n.attribute("class") == Some("markers")).unwrap();
        assert!(markers.descendants().all(|n| n.attribute("stroke-dasharray").is_none()));
        let solid = series.iter().find(|n| n.attribute("data-series") == Some("a&b")).unwrap();
        assert!(solid.descendants().all(|n| n.attribute("stroke-dasharray").is_none()));
        assert_eq!(doc.descendants().filter(|n| n.attribute("class") == Some("band")).count(), 1);
        assert_eq!(doc.descendants().filter(|n| n.attribute("class") == Some("legend-entry")).count(), 2);
        let texts: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).map(str::trim).collect();
        assert!(texts.contains(&"Iteration (steps)") && texts.contains(&"Success (% of tasks)") && texts.contains(&"nothing yet"));
        assert!(!c.svg.contains("@@hs-group"));
        assert_eq!(doc.root_element().attribute("data-chart"), Some("t"));
    }

    #[test]
    fn integer_axes_label_integers_only_and_percent_never_reads_minus_zero() {
        let c = line::draw(&two_series()).unwrap();
        let doc = parse(&c.svg);
        let texts: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).map(str::trim).collect();
        assert!(texts.contains(&"0%") && texts.contains(&"100%"));
        assert!(!texts.iter().any(|t| *t == "-0%" || *t == "0.5"));
        let d = dot::draw(&DotChart {
            id: "d".into(),
            title: "d".into(),
            subtitle: None,
            x_label: "x".into(),
            y_label: "y".into(),
            x_range: (-0.1, 0.1),
            x_percent: true,
            zero_line: true,
            panels: vec![DotPanel {
                title: "p".into(),
                categories: vec!["one".into()],
                series: vec![DotSeries {
                    name: "s".into(),
                    label: "s".into(),
                    style: style::nth(0),
                    values: vec![Some((0.0, -0.05, 0.05))],
                    colors: Vec::new(),
                }],
            }],
            columns: 1,
        })
        .unwrap();
        assert!(!d.svg.contains(">\n-0\n<"), "{}", d.svg);
        parse(&d.svg);
    }

    #[test]
    fn heatmap_turns_crowded_column_labels_upright() {
        let cols: Vec<String> = (0..14).map(|i| format!("a-rather-long-sibling-{i}")).collect();
        let h = heatmap::draw(&Heatmap {
            id: "h".into(),
            title: "h".into(),
            subtitle: None,
            x_label: "Sibling harness".into(),
            y_label: "Task family".into(),
            columns: cols.clone(),
            rows: vec!["f".into()],
            cells: vec![cols.iter().map(|_| Some(HeatCell { value: 0.5, text: "+1 / −0".into() })).collect()],
            key: ("-".into(), "+".into()),
        })
        .unwrap();
        let doc = parse(&h.svg);
        let upright =
            doc.descendants().filter(|n| n.has_tag_name("text") && n.attribute("transform").is_some_and(|t| t.starts_with("rotate(270"))).count();
        assert_eq!(upright, 14 + 1, "every column label and the y label");
    }
}
