//! Router quality: hit@k of the router's order against a random order and an oracle.

use std::fmt::Write as _;

use crate::analysis::{Analysis, ROUTED_ARM};
use crate::chart::line::{self, LineChart, Panel, Series};
use crate::chart::{style, suite_prefix, Chart, ChartError};
use crate::report::csv::Csv;
use crate::report::html::{esc, pct};

pub(super) struct Router;

impl super::Section for Router {
    fn id(&self) -> &'static str {
        "router"
    }

    fn charts(&self, a: &Analysis) -> Result<Vec<Chart>, ChartError> {
        Ok(vec![router_chart(a)?])
    }

    fn caption(&self, chart_id: &str) -> Option<&'static str> {
        (chart_id == "router").then_some(
            "hit@k: the share of routed tasks that one of the first k siblings rescues — for the router's order, a uniformly random order (exact expectation) and an oracle.",
        )
    }

    fn tables(&self, a: &Analysis) -> Vec<Csv> {
        vec![Csv::of(
            "router_quality.csv",
            a.router.iter().flat_map(|q| {
                (0..q.pool).map(move |k| RouterRow {
                    suite: q.suite.clone(),
                    arm: q.arm.clone(),
                    anchor: q.anchor.map(|x| x.to_string()).unwrap_or_else(|| "all".into()),
                    tasks: q.tasks,
                    probe_verified: q.source.probe,
                    record_only: q.source.record,
                    k: k + 1,
                    routed: q.routed[k],
                    routed_ci_low: q.routed_ci95[k][0],
                    routed_ci_high: q.routed_ci95[k][1],
                    random: q.random[k],
                    oracle: q.oracle[k],
                })
            }),
        )]
    }

    fn html(&self, h: &mut String, a: &Analysis) {
        router_table(h, a);
    }
}

crate::report::csv::csv_row! {
    /// `router_quality.csv`: hit@k at one anchor (or over all, `anchor` "all").
    RouterRow {
        suite: String,
        arm: String,
        anchor: String,
        tasks: usize,
        probe_verified: usize,
        record_only: usize,
        k: usize,
        routed: f64,
        routed_ci_low: f64,
        routed_ci_high: f64,
        random: f64,
        oracle: f64,
    }
}

/// Router hit@k against random and oracle, one panel per anchor.
fn router_chart(a: &Analysis) -> Result<Chart, ChartError> {
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

/// The router's hit@k.
fn router_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Router quality: hit@k</h3>");
    if a.router.is_empty() {
        let _ = write!(h, "<p class=\"note\">No {ROUTED_ARM} routing decision recorded yet.</p>");
    } else {
        let k = a.router.iter().map(|q| q.pool).max().unwrap_or(0);
        h.push_str("<table><thead><tr><th class=\"l\">anchor</th><th>tasks (probe-verified)</th><th class=\"l\">order</th>");
        for i in 1..=k {
            let _ = write!(h, "<th>k={i}</th>");
        }
        h.push_str("</tr></thead><tbody>");
        for q in &a.router {
            let anchor = q.anchor.map(|x| x.to_string()).unwrap_or_else(|| "all".into());
            for (name, v) in [("router", &q.routed), ("random", &q.random), ("oracle", &q.oracle)] {
                let _ = write!(h, "<tr><td class=\"l\">{}</td><td>{} ({})</td><td class=\"l\">{name}</td>", esc(&anchor), q.tasks, q.source.probe);
                for x in v {
                    let _ = write!(h, "<td>{}</td>", pct(*x));
                }
                h.push_str("</tr>");
            }
        }
        h.push_str("</tbody></table><p class=\"note\">Which siblings rescue a task: probe rollouts of every sibling at the same anchor where the task was probed, else the routing record's flags for the siblings tried (so random and oracle are lower bounds on those tasks).</p>");
    }
}
