//! Charts, drawn once in Rust with plotters as SVG strings, for the desktop app and the reports
//! alike. [`charts`] makes one chart per analysis of an [`Analysis`]; the chart kinds
//! ([`line`], [`dot`], [`heatmap`]) can be used on their own.
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

use crate::analysis::{Analysis, TransferCurve, BASELINE_ARM, ROUTED_ARM};
use dot::{DotChart, DotPanel, DotSeries};
use heatmap::{HeatCell, Heatmap};
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

fn arm_style(arms: &[String], arm: &str) -> style::SeriesStyle {
    let unknown = arms.iter().filter(|a| !style::ARM_ORDER.contains(&a.as_str())).position(|a| a == arm).unwrap_or(0);
    style::arm(arm, unknown)
}

fn suite_prefix(a: &Analysis, suite: &str) -> String {
    if a.suites.len() > 1 {
        format!("{suite} — ")
    } else {
        String::new()
    }
}

/// Transfer curves: one panel per suite and split, one line per arm with its band.
pub fn transfer(a: &Analysis) -> Result<Chart, ChartError> {
    let mut spec = LineChart::new(
        "transfer",
        "Transfer: success under the base harness during training",
        "Training iteration",
        "Base-harness success (% of tasks)",
    );
    let seeds = a.transfer.iter().flat_map(|c| c.points.iter().map(|p| p.seeds)).max().unwrap_or(0);
    spec.subtitle = Some(if seeds > 1 {
        format!("Mean over {seeds} seeds; shaded: 95% t-interval over seeds")
    } else {
        "One seed: no interval over seeds".into()
    });
    for suite in &a.suites {
        for split in ["train", "heldout"] {
            let curves: Vec<_> = a.transfer.iter().filter(|c| &c.suite == suite && c.split == split).collect();
            if curves.is_empty() && split == "heldout" {
                continue;
            }
            let series = curves
                .iter()
                .map(|c| Series {
                    name: c.arm.clone(),
                    label: c.arm.clone(),
                    style: arm_style(&a.arms, &c.arm),
                    points: c.points.iter().map(|p| (p.iteration as f64, p.mean)).collect(),
                    band: if c.points.iter().any(|p| p.seeds > 1) {
                        c.points.iter().map(|p| (p.iteration as f64, p.ci95[0], p.ci95[1])).collect()
                    } else {
                        Vec::new()
                    },
                })
                .collect();
            spec.panels.push(Panel {
                title: format!("{}{}", suite_prefix(a, suite), split_label(split)),
                series,
                empty_note: Some("no evaluation yet".into()),
            });
        }
    }
    if spec.panels.is_empty() {
        spec.panels.push(Panel { title: "no evaluation yet".into(), ..Default::default() });
    }
    line::draw(&spec)
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
fn split_style(split: &str) -> style::SeriesStyle {
    let s = style::nth(0).dashed(None);
    if split == "heldout" {
        s.with_marker(style::Marker::Diamond).hollow()
    } else {
        s.with_marker(style::Marker::Circle)
    }
}

/// A split's legend label in the per-arm dot charts: which marker it is.
fn split_marker_label(split: &str) -> &'static str {
    if split == "heldout" {
        "held-out families: outlined diamond"
    } else {
        "training families: filled circle"
    }
}

/// Final success per arm with its bootstrap interval, one series per split; each arm in its
/// colour, the split told by the marker.
pub fn final_success(a: &Analysis) -> Result<Chart, ChartError> {
    let mut panels = Vec::new();
    let mut one_seed = false;
    for suite in &a.suites {
        let rows: Vec<_> = a.final_table.rows.iter().filter(|r| &r.suite == suite).collect();
        let mut arms: Vec<String> = a.arms.iter().filter(|arm| rows.iter().any(|r| &r.arm == *arm)).cloned().collect();
        for r in &rows {
            if !arms.contains(&r.arm) {
                arms.push(r.arm.clone());
            }
        }
        one_seed |= rows.iter().any(|r| r.seeds.len() < 2);
        let colors: Vec<_> = arms.iter().map(|arm| arm_style(&a.arms, arm).color).collect();
        let series = ["train", "heldout"]
            .iter()
            .filter(|s| rows.iter().any(|r| r.split == **s))
            .map(|split| DotSeries {
                name: split.to_string(),
                label: split_marker_label(split).to_string(),
                style: split_style(split),
                values: arms
                    .iter()
                    .map(|arm| {
                        rows.iter().find(|r| &r.arm == arm && r.split == *split).map(|r| {
                            // one seed cannot give an interval
                            if r.seeds.len() < 2 {
                                (r.success, r.success, r.success)
                            } else {
                                (r.success, r.ci95[0], r.ci95[1])
                            }
                        })
                    })
                    .collect(),
                colors: colors.clone(),
            })
            .collect();
        let it = a.final_table.iterations.get(suite).copied().unwrap_or(0);
        panels.push(DotPanel { title: format!("{}iteration {it}", suite_prefix(a, suite)), categories: arms, series });
    }
    let subtitle = if one_seed {
        "Per task: mean over seeds; one seed: no interval (whiskers need two or more seeds)"
    } else {
        "Per task: mean over seeds; whiskers: 95% bootstrap interval over tasks"
    };
    dot::draw(&DotChart {
        id: "final-table".into(),
        title: "Final success under the base harness".into(),
        subtitle: Some(subtitle.into()),
        x_label: "Base-harness success (% of tasks)".into(),
        y_label: "Arm".into(),
        x_range: (0.0, 1.0),
        x_percent: true,
        zero_line: false,
        panels,
        columns: 1,
    })
}

/// Paired differences against policy-only on the same tasks.
pub fn final_deltas(a: &Analysis) -> Result<Chart, ChartError> {
    let mut panels = Vec::new();
    let mut one_seed = false;
    let mut lo: f64 = -0.1;
    let mut hi: f64 = 0.1;
    for suite in &a.suites {
        let rows: Vec<_> = a.final_table.rows.iter().filter(|r| &r.suite == suite && r.delta.is_some()).collect();
        let mut arms: Vec<String> = Vec::new();
        for arm in a.arms.iter().chain(rows.iter().map(|r| &r.arm)) {
            if rows.iter().any(|r| &r.arm == arm) && !arms.contains(arm) {
                arms.push(arm.clone());
            }
        }
        let colors: Vec<_> = arms.iter().map(|arm| arm_style(&a.arms, arm).color).collect();
        let series: Vec<DotSeries> = ["train", "heldout"]
            .iter()
            .filter(|s| rows.iter().any(|r| r.split == **s))
            .map(|split| DotSeries {
                name: split.to_string(),
                label: split_marker_label(split).to_string(),
                style: split_style(split),
                values: arms
                    .iter()
                    .map(|arm| {
                        rows.iter().find(|r| &r.arm == arm && r.split == *split).and_then(|r| r.delta.as_ref()).map(|d| {
                            // one seed cannot give an interval
                            if d.seeds < 2 {
                                one_seed = true;
                                (d.mean, d.mean, d.mean)
                            } else {
                                (d.mean, d.ci95[0], d.ci95[1])
                            }
                        })
                    })
                    .collect(),
                colors: colors.clone(),
            })
            .collect();
        for s in &series {
            for (_, l, h) in s.values.iter().flatten() {
                lo = lo.min(*l);
                hi = hi.max(*h);
            }
        }
        panels.push(DotPanel { title: format!("{}{} minus {BASELINE_ARM}", suite_prefix(a, suite), "arm"), categories: arms, series });
    }
    let m = lo.abs().max(hi.abs()).min(1.0) * 1.1;
    dot::draw(&DotChart {
        id: "final-deltas".into(),
        title: format!("Paired difference against {BASELINE_ARM} on the same tasks"),
        subtitle: Some(if one_seed {
            "Right of the zero line: the arm solves more tasks under the base harness; one seed: no interval".into()
        } else {
            "Right of the zero line: the arm solves more tasks under the base harness; whiskers: paired 95% bootstrap interval".into()
        }),
        x_label: "Difference in success (percentage points)".into(),
        y_label: "Arm".into(),
        x_range: (-m, m),
        x_percent: true,
        zero_line: true,
        panels,
        columns: 1,
    })
}

/// Locality heatmaps, one per suite with profiles: fixes and regressions per sibling and family.
pub fn locality(a: &Analysis) -> Result<Vec<Chart>, ChartError> {
    let mut out = Vec::new();
    for (suite, siblings) in &a.locality.siblings {
        let families = a.locality.families.get(suite).cloned().unwrap_or_default();
        let cells: Vec<Vec<Option<HeatCell>>> = families
            .iter()
            .map(|fam| {
                siblings
                    .iter()
                    .map(|sib| {
                        a.locality.total.iter().find(|c| &c.suite == suite && &c.sibling == sib && &c.family == fam).map(|c| {
                            let paired = (c.fix + c.regress + c.both_pass + c.both_fail).max(1) as f64;
                            HeatCell {
                                value: ((c.fix as f64 - c.regress as f64) / paired * 2.0).clamp(-1.0, 1.0),
                                text: format!("+{} / −{}", c.fix, c.regress),
                            }
                        })
                    })
                    .collect()
            })
            .collect();
        let profiles: usize = a.locality.total.iter().filter(|c| &c.suite == suite).map(|c| c.profiles).max().unwrap_or(0);
        out.push(heatmap::draw(&Heatmap {
            id: format!("locality-{suite}"),
            title: format!("{}Locality: where each sibling fixes and breaks base", suite_prefix(a, suite)),
            subtitle: Some(format!(
                "Cell: +fixes / −regressions vs base on paired probe rollouts, summed over anchors and seeds (up to {profiles} profiles per cell)"
            )),
            x_label: "Sibling harness".into(),
            y_label: "Task family".into(),
            columns: siblings.clone(),
            rows: families,
            cells,
            key: ("net regressions".into(), "net fixes".into()),
        })?);
    }
    Ok(out)
}

/// Coverage of base failures against the executor-rollout budget.
pub fn complementarity(a: &Analysis) -> Result<Chart, ChartError> {
    let mut spec = LineChart::new(
        "complementarity",
        "Complementarity: failed tasks covered as the rollout budget grows",
        "Executor rollouts per failed task",
        "Failed tasks covered (%)",
    );
    let mut missing = Vec::new();
    for c in &a.complementarity {
        let series = c
            .curves
            .iter()
            .enumerate()
            .filter(|(_, s)| s.not_measured.is_none())
            .map(|(i, s)| Series {
                name: s.strategy.clone(),
                label: format!("{} (n={})", s.label, s.units),
                style: style::nth([3usize, 5, 0][i.min(2)]),
                points: s.points.iter().map(|p| (p.budget as f64, p.share)).collect(),
                band: s.points.iter().map(|p| (p.budget as f64, p.ci95[0], p.ci95[1])).collect(),
            })
            .collect();
        for s in c.curves.iter().filter(|s| s.not_measured.is_some()) {
            missing.push(format!("{}: not measured", s.label));
        }
        spec.panels.push(Panel {
            title: format!("{}{} probe failures, {} siblings", suite_prefix(a, &c.suite), c.base_failed_probe_tasks, c.siblings.len()),
            series,
            empty_note: Some("no failed task to cover yet".into()),
        });
    }
    let base = "Each curve on its own failed tasks (n in the legend; see the table); shaded: 95% Wilson interval";
    spec.subtitle = Some(if missing.is_empty() { base.into() } else { format!("{base}. {}", missing.join("; ")) });
    spec.columns = 1;
    if spec.panels.is_empty() {
        spec.panels.push(Panel { title: "no data".into(), ..Default::default() });
    }
    line::draw(&spec)
}

/// Router hit@k against random and oracle, one panel per anchor.
pub fn router(a: &Analysis) -> Result<Chart, ChartError> {
    let mut spec = LineChart::new(
        "router",
        "Router quality: hit@k of routed, random and oracle choices",
        "k (siblings tried in order)",
        "Routed tasks rescued within k (%)",
    );
    for q in &a.router {
        let xs = |v: &[f64]| -> Vec<(f64, f64)> { v.iter().enumerate().map(|(i, y)| ((i + 1) as f64, *y)).collect() };
        let anchor = q.anchor.map(|x| format!("anchor {x}")).unwrap_or_else(|| "all anchors".into());
        spec.panels.push(Panel {
            title: format!("{}{anchor}: {} tasks ({} probe-verified)", suite_prefix(a, &q.suite), q.tasks, q.source.probe),
            series: vec![
                Series {
                    name: "routed".into(),
                    label: format!("{ROUTED_ARM} router"),
                    style: style::nth(0),
                    points: xs(&q.routed),
                    band: q.routed_ci95.iter().enumerate().map(|(i, c)| ((i + 1) as f64, c[0], c[1])).collect(),
                },
                Series {
                    name: "random".into(),
                    label: "uniform random order (exact)".into(),
                    style: style::nth(2),
                    points: xs(&q.random),
                    band: Vec::new(),
                },
                Series {
                    name: "oracle".into(),
                    label: "oracle (any sibling rescues)".into(),
                    style: style::nth(1),
                    points: xs(&q.oracle),
                    band: Vec::new(),
                },
            ],
            empty_note: None,
        });
    }
    spec.subtitle = Some("Shaded: 95% Wilson interval of the routed hit rate".into());
    if spec.panels.is_empty() {
        spec.panels.push(Panel {
            title: "no routing decision yet".into(),
            empty_note: Some(format!("no {ROUTED_ARM} routing decision recorded")),
            ..Default::default()
        });
    }
    line::draw(&spec)
}

/// Sibling utility per anchor (routed arm, mean over seeds), one line per sibling.
pub fn utilities(a: &Analysis) -> Result<Chart, ChartError> {
    let mut spec = LineChart::new(
        "sibling-utility",
        "Nonstationarity: sibling utility at each re-anchor",
        "Anchor (profile re-measurement)",
        "Fix rate among base failures (%)",
    );
    spec.subtitle = Some(format!("{ROUTED_ARM}, mean over seeds of each sibling's probe fix rate"));
    for suite in &a.suites {
        let pool = a.locality.siblings.get(suite).cloned().unwrap_or_default();
        let series: Vec<Series> = pool
            .iter()
            .enumerate()
            .map(|(i, sib)| {
                let mut by_anchor: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
                for u in a.nonstationarity.utilities.iter().filter(|u| &u.suite == suite && u.arm == ROUTED_ARM && &u.sibling == sib) {
                    if let Some(x) = u.utility {
                        by_anchor.entry(u.anchor).or_default().push(x);
                    }
                }
                Series {
                    name: sib.clone(),
                    label: sib.clone(),
                    style: style::nth(i),
                    points: by_anchor.iter().map(|(k, v)| (*k as f64, crate::stats::mean(v))).collect(),
                    band: Vec::new(),
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        spec.panels.push(Panel {
            title: format!("{}siblings", suite_prefix(a, suite)),
            series,
            empty_note: Some(format!("no {ROUTED_ARM} profile yet")),
        });
    }
    spec.columns = 1;
    line::draw(&spec)
}

/// Spearman's rho between consecutive anchors, per arm.
pub fn rank_correlation(a: &Analysis) -> Result<Chart, ChartError> {
    let mut spec = LineChart::new(
        "rank-correlation",
        "Nonstationarity: do sibling rankings persist across re-anchors?",
        "Anchor (compared with the one before)",
        "Spearman rank correlation ρ",
    );
    spec.y_range = (-1.0, 1.0);
    spec.y_percent = false;
    spec.zero_line = true;
    spec.subtitle = Some("1: same ranking; 0: unrelated; shaded: 95% t-interval over seeds".into());
    for suite in &a.suites {
        let mut arms: Vec<String> = Vec::new();
        for r in a.nonstationarity.mean.iter().filter(|r| &r.suite == suite) {
            if !arms.contains(&r.arm) {
                arms.push(r.arm.clone());
            }
        }
        let series = arms
            .iter()
            .map(|arm| {
                let rows: Vec<_> = a.nonstationarity.mean.iter().filter(|r| &r.suite == suite && &r.arm == arm && r.rho.is_some()).collect();
                Series {
                    name: arm.clone(),
                    label: arm.clone(),
                    style: arm_style(&a.arms, arm),
                    points: rows.iter().map(|r| (r.to_anchor as f64, r.rho.unwrap_or(0.0))).collect(),
                    band: if rows.iter().any(|r| r.n > 1) {
                        rows.iter().map(|r| (r.to_anchor as f64, r.ci95.map(|c| c[0]).unwrap_or(0.0), r.ci95.map(|c| c[1]).unwrap_or(0.0))).collect()
                    } else {
                        Vec::new()
                    },
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        spec.panels.push(Panel {
            title: format!("{}consecutive anchors", suite_prefix(a, suite)),
            series,
            empty_note: Some("needs two anchors with three or more measured siblings".into()),
        });
    }
    spec.columns = 1;
    line::draw(&spec)
}

/// Tagged behaviours under the base harness over training, one panel per tag.
pub fn behaviour(a: &Analysis) -> Result<Vec<Chart>, ChartError> {
    let mut out = Vec::new();
    for b in &a.behaviour {
        let mut spec = LineChart::new(
            &format!("behaviour-{}", b.suite),
            &format!("{}Behaviour persistence under the base harness", suite_prefix(a, &b.suite)),
            "Training iteration",
            "Episodes showing the behaviour (%)",
        );
        let arms: Vec<String> = a.arms.iter().filter(|arm| b.rows.iter().any(|r| &r.arm == *arm)).cloned().collect();
        let bands = arms.len() <= 3;
        spec.subtitle = Some(format!(
            "From {} {} trajectories{}{}",
            b.episodes_tagged,
            b.phase,
            if b.sampled { " (sampled)" } else { "" },
            if bands { "; shaded: 95% Wilson interval" } else { "" }
        ));
        for (tag, label, _) in &b.tags {
            let series = arms
                .iter()
                .map(|arm| {
                    let rows: Vec<_> = b.rows.iter().filter(|r| &r.tag == tag && &r.arm == arm).collect();
                    Series {
                        name: arm.clone(),
                        label: arm.clone(),
                        style: arm_style(&a.arms, arm),
                        points: rows.iter().map(|r| (r.iteration as f64, r.share)).collect(),
                        band: if bands { rows.iter().map(|r| (r.iteration as f64, r.ci95[0], r.ci95[1])).collect() } else { Vec::new() },
                    }
                })
                .collect();
            spec.panels.push(Panel { title: format!("{tag} ({label})"), series, empty_note: None });
        }
        spec.panel_height = 300;
        out.push(line::draw(&spec)?);
    }
    Ok(out)
}

/// Rank-one inference against base-only at the same rollout count, one panel per split.
pub fn rank_one(a: &Analysis) -> Result<Chart, ChartError> {
    let mut panels = Vec::new();
    for suite in &a.suites {
        for split in ["train", "heldout"] {
            let rows: Vec<_> = a.rank_one.rows.iter().filter(|r| &r.suite == suite && r.split == split).collect();
            if rows.is_empty() {
                continue;
            }
            panels.push(DotPanel {
                title: format!("{}{}", suite_prefix(a, suite), split_label(split)),
                categories: rows.iter().map(|r| r.arm.clone()).collect(),
                series: vec![
                    DotSeries {
                        name: "base-only".into(),
                        label: "base only (two base tries)".into(),
                        style: style::nth(1),
                        values: rows.iter().map(|r| Some((r.base_only, r.base_only_ci95[0], r.base_only_ci95[1]))).collect(),
                        colors: Vec::new(),
                    },
                    DotSeries {
                        name: "rank-one".into(),
                        label: "base try, then the rank-one sibling".into(),
                        style: style::nth(0),
                        values: rows.iter().map(|r| Some((r.routed, r.routed_ci95[0], r.routed_ci95[1]))).collect(),
                        colors: Vec::new(),
                    },
                ],
            });
        }
    }
    if panels.is_empty() {
        panels
            .push(DotPanel { title: "not measured yet (runs after the last iteration)".into(), categories: vec!["—".into()], series: Vec::new() });
    }
    dot::draw(&DotChart {
        id: "rank-one".into(),
        title: "Rank-one inference at a matched rollout count".into(),
        subtitle: Some("Same executor rollouts per task; whiskers: 95% t-interval over seeds".into()),
        x_label: "Success (% of tasks)".into(),
        y_label: "Arm".into(),
        x_range: (0.0, 1.0),
        x_percent: true,
        zero_line: false,
        panels,
        columns: 2,
    })
}

/// Every chart of an analysis, in report order.
pub fn charts(a: &Analysis) -> Result<Vec<Chart>, ChartError> {
    let mut out = vec![transfer(a)?, final_success(a)?, final_deltas(a)?];
    out.extend(locality(a)?);
    out.push(complementarity(a)?);
    out.push(router(a)?);
    out.push(utilities(a)?);
    out.push(rank_correlation(a)?);
    out.extend(behaviour(a)?);
    out.push(rank_one(a)?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
