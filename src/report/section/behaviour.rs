//! Behaviour persistence: how often behaviours the siblings scaffold appear in base-harness
//! episodes as training goes on.

use std::fmt::Write as _;

use crate::analysis::Analysis;
use crate::chart::line::{self, LineChart, Panel, Series};
use crate::chart::{arm_style, suite_prefix, Chart, ChartError};
use crate::report::csv::Csv;
use crate::report::html::{esc, pct, pts};

pub(super) struct Behaviour;

impl super::Section for Behaviour {
    fn id(&self) -> &'static str {
        "behaviour"
    }

    fn charts(&self, a: &Analysis) -> Result<Vec<Chart>, ChartError> {
        behaviour_charts(a)
    }

    fn caption(&self, chart_id: &str) -> Option<&'static str> {
        chart_id.starts_with("behaviour").then_some(
            "How often behaviours the siblings scaffold appear in base-harness episodes as training goes on, per arm: the attribution question.",
        )
    }

    fn tables(&self, a: &Analysis) -> Vec<Csv> {
        vec![Csv::of(
            "behaviour.csv",
            a.behaviour.iter().flat_map(|b| {
                b.rows.iter().map(move |r| BehaviourRow {
                    suite: r.suite.clone(),
                    phase: b.phase.clone(),
                    arm: r.arm.clone(),
                    iteration: r.iteration,
                    tag: r.tag.clone(),
                    episodes: r.episodes,
                    with_tag: r.with_tag,
                    share: r.share,
                    ci_low: r.ci95[0],
                    ci_high: r.ci95[1],
                })
            }),
        )]
    }

    fn html(&self, h: &mut String, a: &Analysis) {
        behaviour_table(h, a);
    }
}

crate::report::csv::csv_row! {
    /// `behaviour.csv`: one behaviour's share of one arm's episodes at one iteration.
    BehaviourRow { suite: String, phase: String, arm: String, iteration: u32, tag: String, episodes: usize, with_tag: usize, share: f64, ci_low: f64, ci_high: f64 }
}

/// Tagged behaviours under the base harness over training, one panel per tag.
fn behaviour_charts(a: &Analysis) -> Result<Vec<Chart>, ChartError> {
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

/// Behaviour persistence.
fn behaviour_table(h: &mut String, a: &Analysis) {
    for b in &a.behaviour {
        let _ =
            write!(h, "<h3>Behaviour persistence — {} ({} episodes{})</h3>", esc(&b.suite), esc(&b.phase), if b.sampled { ", sampled" } else { "" });
        h.push_str("<table><thead><tr><th class=\"l\">behaviour</th><th class=\"l\">arm</th><th>first iteration</th><th>last iteration</th><th>change (pts)</th></tr></thead><tbody>");
        for (tag, _, meaning) in &b.tags {
            for arm in &a.arms {
                let rows: Vec<_> = b.rows.iter().filter(|r| &r.tag == tag && &r.arm == arm).collect();
                let (Some(first), Some(last)) = (rows.first(), rows.last()) else { continue };
                let _ = write!(
                    h,
                    "<tr><td class=\"l\" title=\"{}\">{}</td><td class=\"l\">{}</td><td>{} (it {})</td><td>{} (it {})</td><td>{}</td></tr>",
                    esc(meaning),
                    esc(tag),
                    esc(arm),
                    pct(first.share),
                    first.iteration,
                    pct(last.share),
                    last.iteration,
                    pts(last.share - first.share)
                );
            }
        }
        h.push_str("</tbody></table>");
        h.push_str("<ul class=\"note\">");
        for (tag, _, meaning) in &b.tags {
            let _ = write!(h, "<li><b>{}</b>: {}</li>", esc(tag), esc(meaning));
        }
        h.push_str("</ul>");
    }
}
