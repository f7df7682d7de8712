//! Nonstationarity: each sibling's utility re-measured at every anchor, and how far the ranking
//! of siblings drifts between consecutive anchors.

use std::fmt::Write as _;

use crate::analysis::{Analysis, ROUTED_ARM};
use crate::chart::line::{self, LineChart, Panel, Series};
use crate::chart::{arm_style, style, suite_prefix, Chart, ChartError};
use crate::report::csv::Csv;
use crate::report::html::esc;

pub(super) struct Nonstationarity;

impl super::Section for Nonstationarity {
    fn id(&self) -> &'static str {
        "nonstationarity"
    }

    fn charts(&self, a: &Analysis) -> Result<Vec<Chart>, ChartError> {
        Ok(vec![utilities_chart(a)?, rank_correlation_chart(a)?])
    }

    fn caption(&self, chart_id: &str) -> Option<&'static str> {
        match chart_id {
            "sibling-utility" => Some("Each sibling's fix rate among base failures on the probe set, re-measured at every anchor with the current policy."),
            "rank-correlation" => Some("Spearman correlation of the siblings' utilities between consecutive anchors: below 1, the ranking of siblings drifted as the policy learned."),
            _ => None,
        }
    }

    fn tables(&self, a: &Analysis) -> Vec<Csv> {
        let ns = &a.nonstationarity;
        vec![
            Csv::of(
                "nonstationarity.csv",
                ns.per_seed.iter().chain(ns.mean.iter()).map(|r| RankCorrelationRow {
                    suite: r.suite.clone(),
                    arm: r.arm.clone(),
                    seed_index: r.seed_index.map(|s| s.to_string()).unwrap_or_else(|| "mean".into()),
                    from_anchor: r.from_anchor,
                    to_anchor: r.to_anchor,
                    rho: r.rho,
                    ci_low: r.ci95.map(|c| c[0]),
                    ci_high: r.ci95.map(|c| c[1]),
                    n: r.n,
                }),
            ),
            Csv::of(
                "sibling_utility.csv",
                ns.utilities.iter().map(|u| UtilityRow {
                    suite: u.suite.clone(),
                    arm: u.arm.clone(),
                    seed_index: u.seed_index,
                    anchor: u.anchor,
                    iteration: u.iteration,
                    sibling: u.sibling.clone(),
                    utility: u.utility,
                    base_failures: u.base_failures,
                    policy_version: u.policy_version,
                }),
            ),
        ]
    }

    fn html(&self, h: &mut String, a: &Analysis) {
        nonstationarity_table(h, a);
    }
}

crate::report::csv::csv_row! {
    /// `nonstationarity.csv`: Spearman's rho between two anchors, per seed or their mean
    /// (`seed_index` "mean").
    RankCorrelationRow { suite: String, arm: String, seed_index: String, from_anchor: usize, to_anchor: usize, rho: Option<f64>, ci_low: Option<f64>, ci_high: Option<f64>, n: usize }
}

crate::report::csv::csv_row! {
    /// `sibling_utility.csv`: one sibling's utility at one anchor of one job.
    UtilityRow { suite: String, arm: String, seed_index: u32, anchor: usize, iteration: u32, sibling: String, utility: Option<f64>, base_failures: u32, policy_version: u64 }
}

/// Sibling utility per anchor (routed arm, mean over seeds), one line per sibling.
fn utilities_chart(a: &Analysis) -> Result<Chart, ChartError> {
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
fn rank_correlation_chart(a: &Analysis) -> Result<Chart, ChartError> {
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

/// Nonstationarity of the profiles.
fn nonstationarity_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Nonstationarity: rank correlation between consecutive anchors</h3>");
    if a.nonstationarity.mean.is_empty() {
        h.push_str("<p class=\"note\">Needs at least two anchors of the same job.</p>");
    } else {
        h.push_str("<table><thead><tr><th class=\"l\">arm</th><th>anchors</th><th>mean ρ</th><th>95% CI</th><th>seeds</th></tr></thead><tbody>");
        for r in &a.nonstationarity.mean {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td>{} → {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.arm),
                r.from_anchor,
                r.to_anchor,
                r.rho.map(|x| format!("{x:.2}")).unwrap_or_else(|| "undefined".into()),
                r.ci95.map(|c| format!("{:.2} to {:.2}", c[0], c[1])).unwrap_or_default(),
                r.n
            );
        }
        for r in &a.nonstationarity.overall {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{} (all pairs)</td><td>—</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.arm),
                r.rho.map(|x| format!("{x:.2}")).unwrap_or_else(|| "undefined".into()),
                r.ci95.map(|c| format!("{:.2} to {:.2}", c[0], c[1])).unwrap_or_default(),
                r.n
            );
        }
        h.push_str("</tbody></table>");
    }
}
