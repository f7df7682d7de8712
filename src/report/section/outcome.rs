//! The outcome: base-harness success during training (the transfer curves) and at the final
//! table's iteration, each arm against policy-only and the routed arm against every other arm.

use std::fmt::Write as _;

use crate::analysis::{Analysis, FinalRow, RoutedDelta, BASELINE_ARM, ROUTED_ARM};
use crate::chart::dot::{self, DotChart, DotPanel, DotSeries};
use crate::chart::line::{self, LineChart, Panel, Series};
use crate::chart::{arm_style, split_label, split_marker_label, split_style, suite_prefix, Chart, ChartError};
use crate::report::csv::Csv;
use crate::report::html::{ci, ci_pts, esc, final_table_html, mde_pts, pts, seed_ci, MDE_TITLE};

pub(super) struct Outcome;

impl super::Section for Outcome {
    fn id(&self) -> &'static str {
        "outcome"
    }

    fn charts(&self, a: &Analysis) -> Result<Vec<Chart>, ChartError> {
        Ok(vec![transfer_chart(a)?, final_success_chart(a)?, final_deltas_chart(a)?])
    }

    fn caption(&self, chart_id: &str) -> Option<&'static str> {
        match chart_id {
            "transfer" => Some("Base-harness success at each evaluation, per arm, on the training families and on held-out families never trained on. Evaluation is always under the base harness."),
            "final-table" => Some("Success at the final table's iteration; each task's success is averaged over seeds, the interval resamples tasks."),
            "final-deltas" => Some("Each arm minus policy-only on the same tasks (paired); an interval crossing zero means this run cannot tell the arm from policy-only."),
            _ => None,
        }
    }

    fn tables(&self, a: &Analysis) -> Vec<Csv> {
        vec![
            Csv::of(
                "routed_vs_arms.csv",
                a.final_table.routed_vs.iter().map(|r| RoutedVsRow {
                    suite: r.suite.clone(),
                    split: r.split.clone(),
                    arm: r.delta.arm.clone(),
                    against: r.delta.baseline.clone(),
                    delta: r.delta.mean,
                    delta_ci_low: r.delta.ci95[0],
                    delta_ci_high: r.delta.ci95[1],
                    tasks: r.delta.tasks,
                    seeds: r.delta.seeds,
                    mde: r.delta.mde,
                }),
            ),
            Csv::of(
                "final_table.csv",
                a.final_table.rows.iter().map(|r| {
                    let d = r.delta.as_ref();
                    FinalTableRow {
                        suite: r.suite.clone(),
                        arm: r.arm.clone(),
                        split: r.split.clone(),
                        iteration: r.iteration,
                        seeds: r.seeds.len(),
                        tasks: r.tasks,
                        success: r.success,
                        ci_low: r.ci95[0],
                        ci_high: r.ci95[1],
                        baseline: d.map(|d| d.baseline.clone()).unwrap_or_default(),
                        delta: d.map(|d| d.mean),
                        delta_ci_low: d.map(|d| d.ci95[0]),
                        delta_ci_high: d.map(|d| d.ci95[1]),
                        delta_tasks: d.map(|d| d.tasks),
                        delta_mde: d.and_then(|d| d.mde),
                    }
                }),
            ),
            Csv::of(
                "transfer_curves.csv",
                a.transfer.iter().flat_map(|c| {
                    c.points.iter().map(move |p| TransferRow {
                        suite: c.suite.clone(),
                        arm: c.arm.clone(),
                        split: c.split.clone(),
                        iteration: p.iteration,
                        seeds: p.seeds,
                        mean: p.mean,
                        ci_low: p.ci95[0],
                        ci_high: p.ci95[1],
                    })
                }),
            ),
            Csv::of(
                "transfer_per_seed.csv",
                a.transfer.iter().flat_map(|c| {
                    c.points.iter().flat_map(move |p| {
                        p.per_seed.iter().map(move |s| TransferSeedRow {
                            suite: c.suite.clone(),
                            arm: c.arm.clone(),
                            split: c.split.clone(),
                            iteration: p.iteration,
                            seed_index: s.seed_index,
                            success: s.success,
                            tasks: s.tasks,
                        })
                    })
                }),
            ),
        ]
    }

    fn html(&self, h: &mut String, a: &Analysis) {
        final_tables(h, a);
        transfer_table(h, a);
    }
}

crate::report::csv::csv_row! {
    /// `routed_vs_arms.csv`: the routed arm against one other arm.
    RoutedVsRow { suite: String, split: String, arm: String, against: String, delta: f64, delta_ci_low: f64, delta_ci_high: f64, tasks: usize, seeds: usize, mde: Option<f64> }
}

crate::report::csv::csv_row! {
    /// `final_table.csv`: one arm and split at the final table's iteration.
    FinalTableRow {
        suite: String,
        arm: String,
        split: String,
        iteration: u32,
        seeds: usize,
        tasks: usize,
        success: f64,
        ci_low: f64,
        ci_high: f64,
        baseline: String,
        delta: Option<f64>,
        delta_ci_low: Option<f64>,
        delta_ci_high: Option<f64>,
        delta_tasks: Option<usize>,
        delta_mde: Option<f64>,
    }
}

crate::report::csv::csv_row! {
    /// `transfer_curves.csv`: one point of a transfer curve.
    TransferRow { suite: String, arm: String, split: String, iteration: u32, seeds: usize, mean: f64, ci_low: f64, ci_high: f64 }
}

crate::report::csv::csv_row! {
    /// `transfer_per_seed.csv`: one seed's success at one point of a transfer curve.
    TransferSeedRow { suite: String, arm: String, split: String, iteration: u32, seed_index: u32, success: f64, tasks: usize }
}

/// Transfer curves: one panel per suite and split, one line per arm with its band.
fn transfer_chart(a: &Analysis) -> Result<Chart, ChartError> {
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

/// Final success per arm with its bootstrap interval, one series per split; each arm in its
/// colour, the split told by the marker.
fn final_success_chart(a: &Analysis) -> Result<Chart, ChartError> {
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
fn final_deltas_chart(a: &Analysis) -> Result<Chart, ChartError> {
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

/// The final tables and the routed arm against every other arm.
fn final_tables(h: &mut String, a: &Analysis) {
    for suite in &a.suites {
        let rows: Vec<&FinalRow> = a.final_table.rows.iter().filter(|r| &r.suite == suite).collect();
        let it = a.final_table.iterations.get(suite).map(|i| format!(" at iteration {i}")).unwrap_or_default();
        let _ = write!(h, "<h3 id=\"final-table-{}\">Final table — {}{it}</h3>", esc(suite), esc(suite));
        if rows.is_empty() {
            h.push_str("<p class=\"note\">No evaluation yet.</p>");
        } else {
            final_table_html(&rows, h);
        }
        let routed: Vec<&RoutedDelta> = a.final_table.routed_vs.iter().filter(|r| &r.suite == suite).collect();
        if !routed.is_empty() {
            let _ = write!(h, "<h3 id=\"routed-vs-{}\">{ROUTED_ARM} against every other arm — {}</h3>", esc(suite), esc(suite));
            routed_vs_html(&routed, h);
        }
    }
}

/// Transfer curves as a table.
fn transfer_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Transfer curves (success %, 95% band over seeds)</h3>");
    let mut its: Vec<u32> = a.transfer.iter().flat_map(|c| c.points.iter().map(|p| p.iteration)).collect();
    its.sort();
    its.dedup();
    if a.transfer.is_empty() {
        h.push_str("<p class=\"note\">No evaluation yet.</p>");
    } else {
        h.push_str("<table><thead><tr><th class=\"l\">suite</th><th class=\"l\">arm</th><th class=\"l\">split</th>");
        for i in &its {
            let _ = write!(h, "<th>it {i}</th>");
        }
        h.push_str("</tr></thead><tbody>");
        for c in &a.transfer {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>",
                esc(&c.suite),
                esc(&c.arm),
                esc(split_label(&c.split))
            );
            for i in &its {
                match c.points.iter().find(|p| p.iteration == *i) {
                    Some(p) if p.seeds > 1 => {
                        let _ = write!(h, "<td>{:.1} <span class=\"note\">({})</span></td>", 100.0 * p.mean, ci(p.ci95));
                    }
                    Some(p) => {
                        let _ = write!(h, "<td>{:.1}</td>", 100.0 * p.mean);
                    }
                    None => h.push_str("<td>—</td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table>");
    }
}

/// The routed arm minus each other arm, paired: the same budget spent on routed siblings against
/// random siblings, more base tries, or nothing.
fn routed_vs_html(rows: &[&RoutedDelta], out: &mut String) {
    let _ = write!(
        out,
        "<table><thead><tr><th class=\"l\">split</th><th class=\"l\">against</th><th>Δ (pts)</th><th>95% CI (pts)</th><th title=\"{MDE_TITLE}\">detectable Δ (pts)</th><th>tasks</th><th>seeds</th><th class=\"l\">reading</th></tr></thead><tbody>"
    );
    for r in rows {
        let d = &r.delta;
        let reading = if d.seeds < 2 {
            "one seed: cannot tell".to_string()
        } else if d.ci95[0] > 0.0 {
            format!("{} ahead", d.arm)
        } else if d.ci95[1] < 0.0 {
            format!("{} behind", d.arm)
        } else {
            "cannot tell apart".to_string()
        };
        let _ = write!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(split_label(&r.split)),
            esc(&d.baseline),
            pts(d.mean),
            seed_ci(d.ci95, d.seeds, ci_pts),
            mde_pts(d),
            d.tasks,
            d.seeds,
            esc(&reading)
        );
    }
    out.push_str("</tbody></table><p class=\"note\">Paired on the same tasks and seeds at the final table's iteration; the interval is a paired bootstrap over tasks.</p>");
}
