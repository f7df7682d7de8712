//! Rank-one inference: a base try, then the router's rank-one sibling on failure, against two
//! base tries at the same executor-rollout count.

use std::fmt::Write as _;

use crate::analysis::Analysis;
use crate::chart::dot::{self, DotChart, DotPanel, DotSeries};
use crate::chart::{split_label, style, suite_prefix, Chart, ChartError};
use crate::report::csv::Csv;
use crate::report::html::{ci_pts, esc, pct, pts, seed_ci};

pub(super) struct RankOne;

impl super::Section for RankOne {
    fn id(&self) -> &'static str {
        "rank_one"
    }

    fn charts(&self, a: &Analysis) -> Result<Vec<Chart>, ChartError> {
        Ok(vec![rank_one_chart(a)?])
    }

    fn caption(&self, chart_id: &str) -> Option<&'static str> {
        (chart_id == "rank-one").then_some(
            "At inference: a base try, then the router's rank-one sibling on failure, against two base tries — the same executor rollouts.",
        )
    }

    fn tables(&self, a: &Analysis) -> Vec<Csv> {
        vec![Csv::of(
            "rank_one.csv",
            a.rank_one.rows.iter().map(|r| RankOneRow {
                suite: r.suite.clone(),
                arm: r.arm.clone(),
                split: r.split.clone(),
                seeds: r.seeds,
                routed: r.routed,
                routed_ci_low: r.routed_ci95[0],
                routed_ci_high: r.routed_ci95[1],
                base_only: r.base_only,
                base_only_ci_low: r.base_only_ci95[0],
                base_only_ci_high: r.base_only_ci95[1],
                gain: r.gain,
                gain_ci_low: r.gain_ci95[0],
                gain_ci_high: r.gain_ci95[1],
                rollouts_routed: r.rollouts_routed,
                rollouts_base_only: r.rollouts_base_only,
                sibling_tries: r.sibling_tries,
                sibling_rescues: r.sibling_rescues,
            }),
        )]
    }

    fn html(&self, h: &mut String, a: &Analysis) {
        rank_one_table(h, a);
    }
}

crate::report::csv::csv_row! {
    /// `rank_one.csv`: one arm and split.
    RankOneRow {
        suite: String,
        arm: String,
        split: String,
        seeds: usize,
        routed: f64,
        routed_ci_low: f64,
        routed_ci_high: f64,
        base_only: f64,
        base_only_ci_low: f64,
        base_only_ci_high: f64,
        gain: f64,
        gain_ci_low: f64,
        gain_ci_high: f64,
        rollouts_routed: u64,
        rollouts_base_only: u64,
        sibling_tries: usize,
        sibling_rescues: usize,
    }
}

/// Rank-one inference against base-only at the same rollout count, one panel per split.
fn rank_one_chart(a: &Analysis) -> Result<Chart, ChartError> {
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

/// Rank-one inference.
fn rank_one_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Rank-one inference at a matched rollout count</h3>");
    if a.rank_one.rows.is_empty() {
        let _ = write!(
            h,
            "<p class=\"note\">Not measured yet: rank-one inference runs after a job's last iteration ({} job(s) still pending).</p>",
            a.rank_one.jobs_pending
        );
    } else {
        h.push_str("<table><thead><tr><th class=\"l\">arm</th><th class=\"l\">split</th><th>base only</th><th>base, then rank-one sibling</th><th>gain (pts)</th><th>95% CI (pts)</th><th>rollouts (base only / routed)</th><th>sibling tries / rescues</th><th>seeds</th></tr></thead><tbody>");
        for r in &a.rank_one.rows {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} / {}</td><td>{} / {}</td><td>{}</td></tr>",
                esc(&r.arm),
                esc(split_label(&r.split)),
                pct(r.base_only),
                pct(r.routed),
                pts(r.gain),
                seed_ci(r.gain_ci95, r.seeds, ci_pts),
                r.rollouts_base_only,
                r.rollouts_routed,
                r.sibling_tries,
                r.sibling_rescues,
                r.seeds
            );
        }
        let _ = write!(h, "</tbody></table><p class=\"note\">Source: {}.</p>", esc(&a.rank_one.source));
    }
}
