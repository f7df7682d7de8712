//! Complementarity: the share of base failures some rollout solves within a budget of executor
//! rollouts, for more base samples, every sibling in turn, and the router's order.

use std::fmt::Write as _;

use crate::analysis::Analysis;
use crate::chart::line::{self, LineChart, Panel, Series};
use crate::chart::{style, suite_prefix, Chart, ChartError};
use crate::report::csv::Csv;
use crate::report::html::{esc, pct};

pub(super) struct Complementarity;

impl super::Section for Complementarity {
    fn id(&self) -> &'static str {
        "complementarity"
    }

    fn charts(&self, a: &Analysis) -> Result<Vec<Chart>, ChartError> {
        Ok(vec![complementarity_chart(a)?])
    }

    fn caption(&self, chart_id: &str) -> Option<&'static str> {
        (chart_id == "complementarity").then_some(
            "Among tasks the base harness failed, the share some rollout solved within a budget of x executor rollouts: more base samples, every sibling in turn, or the router's order.",
        )
    }

    fn tables(&self, a: &Analysis) -> Vec<Csv> {
        vec![Csv::of(
            "complementarity.csv",
            a.complementarity.iter().flat_map(|c| {
                c.curves.iter().flat_map(move |s| -> Vec<ComplementarityRow> {
                    if let Some(why) = &s.not_measured {
                        vec![ComplementarityRow {
                            suite: c.suite.clone(),
                            strategy: s.strategy.clone(),
                            population: String::new(),
                            units: 0,
                            budget: None,
                            covered: None,
                            share: None,
                            ci_low: None,
                            ci_high: None,
                            not_measured: why.clone(),
                        }]
                    } else {
                        s.points
                            .iter()
                            .map(|p| ComplementarityRow {
                                suite: c.suite.clone(),
                                strategy: s.strategy.clone(),
                                population: s.population.clone(),
                                units: s.units,
                                budget: Some(p.budget),
                                covered: Some(p.covered),
                                share: Some(p.share),
                                ci_low: Some(p.ci95[0]),
                                ci_high: Some(p.ci95[1]),
                                not_measured: String::new(),
                            })
                            .collect()
                    }
                })
            }),
        )]
    }

    fn html(&self, h: &mut String, a: &Analysis) {
        complementarity_table(h, a);
    }
}

crate::report::csv::csv_row! {
    /// `complementarity.csv`: one budget of one strategy, or a strategy that was not measured.
    ComplementarityRow {
        suite: String,
        strategy: String,
        population: String,
        units: usize,
        budget: Option<usize>,
        covered: Option<usize>,
        share: Option<f64>,
        ci_low: Option<f64>,
        ci_high: Option<f64>,
        not_measured: String,
    }
}

/// Coverage of base failures against the executor-rollout budget.
fn complementarity_chart(a: &Analysis) -> Result<Chart, ChartError> {
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

/// Complementarity of the siblings.
fn complementarity_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Complementarity: failed tasks covered within x executor rollouts</h3>");
    for c in &a.complementarity {
        let max_b = c.curves.iter().map(|s| s.points.len()).max().unwrap_or(0);
        h.push_str("<table><thead><tr><th class=\"l\">strategy</th><th class=\"l\">measured on</th><th>n</th>");
        for b in 1..=max_b {
            let _ = write!(h, "<th>x={b}</th>");
        }
        h.push_str("</tr></thead><tbody>");
        for s in &c.curves {
            if let Some(why) = &s.not_measured {
                let _ = write!(
                    h,
                    "<tr><td class=\"l\">{}</td><td class=\"l\" colspan=\"{}\">not measured: {}</td></tr>",
                    esc(&s.label),
                    max_b + 2,
                    esc(why)
                );
                continue;
            }
            let _ = write!(h, "<tr><td class=\"l\">{}</td><td class=\"l wrap\">{}</td><td>{}</td>", esc(&s.label), esc(&s.population), s.units);
            for b in 0..max_b {
                match s.points.get(b) {
                    Some(p) => {
                        let _ = write!(h, "<td>{}</td>", pct(p.share));
                    }
                    None => h.push_str("<td>—</td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table>");
    }
}
