//! Locality: fixes and regressions per sibling and family on paired probe rollouts.

use std::fmt::Write as _;

use crate::analysis::Analysis;
use crate::chart::heatmap::{self, HeatCell, Heatmap};
use crate::chart::{suite_prefix, Chart, ChartError};
use crate::report::csv::Csv;
use crate::report::html::{esc, pct};

pub(super) struct Locality;

impl super::Section for Locality {
    fn id(&self) -> &'static str {
        "locality"
    }

    fn charts(&self, a: &Analysis) -> Result<Vec<Chart>, ChartError> {
        locality_charts(a)
    }

    fn caption(&self, chart_id: &str) -> Option<&'static str> {
        chart_id.starts_with("locality").then_some(
            "Fixes (base failed, sibling passed) and regressions (base passed, sibling failed) on paired probe rollouts: a sibling helps on some families and hurts on others.",
        )
    }

    fn tables(&self, a: &Analysis) -> Vec<Csv> {
        vec![Csv::of(
            "locality.csv",
            a.locality.total.iter().chain(a.locality.by_anchor.iter()).map(|c| LocalityRow {
                suite: c.suite.clone(),
                arm: c.arm.clone().unwrap_or_else(|| "all".into()),
                anchor: c.anchor.map(|x| x.to_string()).unwrap_or_else(|| "all".into()),
                sibling: c.sibling.clone(),
                family: c.family.clone(),
                fix: c.fix,
                regress: c.regress,
                both_pass: c.both_pass,
                both_fail: c.both_fail,
                profiles: c.profiles,
            }),
        )]
    }

    fn html(&self, h: &mut String, a: &Analysis) {
        locality_table(h, a);
    }
}

crate::report::csv::csv_row! {
    /// `locality.csv`: one sibling and family, over all anchors (`anchor` "all") or at one.
    LocalityRow { suite: String, arm: String, anchor: String, sibling: String, family: String, fix: u32, regress: u32, both_pass: u32, both_fail: u32, profiles: usize }
}

/// Locality heatmaps, one per suite with profiles: fixes and regressions per sibling and family.
fn locality_charts(a: &Analysis) -> Result<Vec<Chart>, ChartError> {
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

/// Locality of the rescues.
fn locality_table(h: &mut String, a: &Analysis) {
    h.push_str("<h3>Locality: fixes and regressions per sibling (all families)</h3>");
    for (suite, sibs) in &a.locality.siblings {
        let mut anchors: Vec<usize> = a.locality.by_anchor.iter().filter(|c| &c.suite == suite).filter_map(|c| c.anchor).collect();
        anchors.sort();
        anchors.dedup();
        h.push_str("<table><thead><tr><th class=\"l\">sibling</th><th>fixes</th><th>regressions</th><th>both pass</th><th>both fail</th><th>fix rate</th><th>regression rate</th>");
        for an in &anchors {
            let _ = write!(h, "<th>{}<br>+fix / −reg</th>", esc(&crate::analysis::anchor_label(*an)));
        }
        h.push_str("</tr></thead><tbody>");
        for s in sibs {
            let cells: Vec<_> = a.locality.total.iter().filter(|c| &c.suite == suite && &c.sibling == s).collect();
            let (f, r, bp, bf) =
                cells.iter().fold((0u32, 0u32, 0u32, 0u32), |t, c| (t.0 + c.fix, t.1 + c.regress, t.2 + c.both_pass, t.3 + c.both_fail));
            let rate = |x: u32, n: u32| if n > 0 { pct(x as f64 / n as f64) } else { "—".into() };
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td>{f}</td><td>{r}</td><td>{bp}</td><td>{bf}</td><td>{}</td><td>{}</td>",
                esc(s),
                rate(f, f + bf),
                rate(r, r + bp)
            );
            for an in &anchors {
                let (af, ar) = a
                    .locality
                    .by_anchor
                    .iter()
                    .filter(|c| &c.suite == suite && &c.sibling == s && c.anchor == Some(*an))
                    .fold((0u32, 0u32), |t, c| (t.0 + c.fix, t.1 + c.regress));
                let _ = write!(h, "<td>+{af} / −{ar}</td>");
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table><p class=\"note\">Per arm, anchor and family: locality.csv.</p>");
    }
}
