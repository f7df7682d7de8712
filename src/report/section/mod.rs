//! The report's sections, in one list ([`SECTIONS`]) that the charts, the CSV tables, the HTML
//! report and the app's Results view all read.
//!
//! A section is one file here: the charts it draws (with their captions), its CSV tables (rows
//! declared with `csv_row!`) and its HTML tables. Its numbers come from the analysis
//! ([`Analysis`]'s typed fields); a new section that needs numbers of its own computes them in
//! [`Section::numbers`] from the data every analysis reads, and finds them again under
//! `Analysis::sections[id]`. Adding a section is then one new file and one entry in
//! [`SECTIONS`].

mod behaviour;
mod complementarity;
mod locality;
mod nonstationarity;
mod outcome;
mod rank_one;
mod router;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::analysis::{Analysis, AnalysisError, Data};
use crate::chart::{Chart, ChartError};

use super::csv::Csv;

/// One section of the report.
pub(crate) trait Section: Sync {
    /// A stable id: the key of its own numbers in `report.json`'s `sections`.
    fn id(&self) -> &'static str;

    /// Numbers of its own beyond the analysis's typed fields, kept in `report.json` under
    /// `sections.<id>`; none by default.
    fn numbers(&self, _data: &Data) -> Result<Option<Value>, AnalysisError> {
        Ok(None)
    }

    /// Its charts, in report order; each chart's id is stable (the SVG's file stem and anchor).
    fn charts(&self, a: &Analysis) -> Result<Vec<Chart>, ChartError>;

    /// The caption under its chart `chart_id`, or `None` when the chart is not one of its own.
    fn caption(&self, chart_id: &str) -> Option<&'static str>;

    /// Its CSV tables, one file each.
    fn tables(&self, a: &Analysis) -> Vec<Csv>;

    /// Its tables in the HTML report, under the report's "Tables" heading.
    fn html(&self, h: &mut String, a: &Analysis);
}

/// Every section, in report order.
pub(crate) static SECTIONS: &[&dyn Section] = &[
    &outcome::Outcome,
    &locality::Locality,
    &complementarity::Complementarity,
    &router::Router,
    &nonstationarity::Nonstationarity,
    &behaviour::Behaviour,
    &rank_one::RankOne,
];

/// Every section's own numbers, by section id (sections without any are left out).
pub(crate) fn numbers(data: &Data) -> Result<BTreeMap<String, Value>, AnalysisError> {
    numbers_of(SECTIONS, data)
}

/// Every chart of an analysis, in report order.
pub fn charts(a: &Analysis) -> Result<Vec<Chart>, ChartError> {
    charts_of(SECTIONS, a)
}

/// The caption under chart `chart_id`: its section's.
pub fn caption(chart_id: &str) -> &'static str {
    SECTIONS.iter().find_map(|s| s.caption(chart_id)).unwrap_or("")
}

/// Every section's CSV tables, in report order.
pub(crate) fn tables(a: &Analysis) -> Vec<Csv> {
    tables_of(SECTIONS, a)
}

/// Every section's HTML tables, in report order.
pub(crate) fn html(h: &mut String, a: &Analysis) {
    for s in SECTIONS {
        s.html(h, a);
    }
}

fn numbers_of(sections: &[&dyn Section], data: &Data) -> Result<BTreeMap<String, Value>, AnalysisError> {
    let mut out = BTreeMap::new();
    for s in sections {
        if let Some(v) = s.numbers(data)? {
            out.insert(s.id().to_string(), v);
        }
    }
    Ok(out)
}

fn charts_of(sections: &[&dyn Section], a: &Analysis) -> Result<Vec<Chart>, ChartError> {
    let mut out = Vec::new();
    for s in sections {
        out.extend(s.charts(a)?);
    }
    Ok(out)
}

fn tables_of(sections: &[&dyn Section], a: &Analysis) -> Vec<Csv> {
    sections.iter().flat_map(|s| s.tables(a)).collect()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::analysis::testdata::TestRun;
    use crate::chart::line::{self, LineChart, Panel, Series};
    use crate::chart::style;

    /// A section added the way the module doc says: numbers of its own, a chart, a CSV table
    /// and an HTML table, all from this one item.
    struct EvaluatedTasks;

    crate::report::csv::csv_row! {
        EvaluatedTasksRow { arm: String, tasks: usize }
    }

    impl EvaluatedTasks {
        fn read(a: &Analysis) -> BTreeMap<String, usize> {
            serde_json::from_value(a.sections["evaluated_tasks"].clone()).unwrap()
        }
    }

    impl Section for EvaluatedTasks {
        fn id(&self) -> &'static str {
            "evaluated_tasks"
        }
        fn numbers(&self, data: &Data) -> Result<Option<Value>, AnalysisError> {
            let mut per_arm: BTreeMap<String, usize> = BTreeMap::new();
            for r in data.phase("eval") {
                *per_arm.entry(r.context.arm.clone().unwrap_or_default()).or_default() += 1;
            }
            Ok(Some(serde_json::to_value(per_arm).unwrap()))
        }
        fn charts(&self, a: &Analysis) -> Result<Vec<Chart>, ChartError> {
            let mut spec = LineChart::new("evaluated-tasks", "Evaluated tasks", "Arm", "Episodes");
            let points = Self::read(a).values().enumerate().map(|(i, n)| (i as f64, *n as f64)).collect();
            spec.panels.push(Panel {
                title: "all".into(),
                series: vec![Series { name: "n".into(), label: "episodes".into(), style: style::nth(0), points, band: vec![] }],
                empty_note: None,
            });
            Ok(vec![line::draw(&spec)?])
        }
        fn caption(&self, chart_id: &str) -> Option<&'static str> {
            (chart_id == "evaluated-tasks").then_some("Evaluation episodes per arm.")
        }
        fn tables(&self, a: &Analysis) -> Vec<Csv> {
            vec![Csv::of("evaluated_tasks.csv", Self::read(a).into_iter().map(|(arm, tasks)| EvaluatedTasksRow { arm, tasks }))]
        }
        fn html(&self, h: &mut String, a: &Analysis) {
            for (arm, n) in Self::read(a) {
                let _ = write!(h, "<p>{arm}: {n}</p>");
            }
        }
    }

    #[test]
    fn a_section_with_numbers_of_its_own_is_one_item_in_the_list() {
        let t = TestRun::new();
        t.eval("policy-only", 0, 1, "train", &[true, false, true]);
        t.eval("harness-s", 0, 1, "train", &[true, true]);
        let data = t.data();
        let mut a = crate::analysis::analyse_data(&data).unwrap();
        let list: &[&dyn Section] = &[&outcome::Outcome, &EvaluatedTasks];
        a.sections = numbers_of(list, &data).unwrap();
        assert_eq!(a.sections["evaluated_tasks"], serde_json::json!({"harness-s": 2, "policy-only": 3}));
        // report.json carries them, and reads them back
        let back: Analysis = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        assert_eq!(back.sections, a.sections);

        let charts = charts_of(list, &a).unwrap();
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["transfer", "final-table", "final-deltas", "evaluated-tasks"]);
        assert!(charts[3].svg.contains("data-chart=\"evaluated-tasks\""));
        assert_eq!(list.iter().find_map(|s| s.caption("evaluated-tasks")), Some("Evaluation episodes per arm."));

        let tables = tables_of(list, &a);
        let last = tables.last().unwrap();
        assert_eq!(last.file, "evaluated_tasks.csv");
        assert_eq!(last.render(), "arm,tasks\r\nharness-s,2\r\npolicy-only,3\r\n");
        let mut h = String::new();
        list[1].html(&mut h, &a);
        assert_eq!(h, "<p>harness-s: 2</p><p>policy-only: 3</p>");
    }

    #[test]
    fn without_numbers_of_their_own_report_json_has_no_sections_key() {
        let t = TestRun::new();
        t.eval("policy-only", 0, 1, "train", &[true]);
        let data = t.data();
        let mut a = crate::analysis::analyse_data(&data).unwrap();
        a.sections = numbers(&data).unwrap();
        assert!(a.sections.is_empty());
        assert!(!serde_json::to_string(&a).unwrap().contains("\"sections\""));
    }

    #[test]
    fn every_chart_has_a_caption_and_ids_are_unique() {
        let t = TestRun::new();
        t.eval("policy-only", 0, 1, "train", &[true, false]);
        t.eval("harness-s", 0, 1, "train", &[true, true]);
        let a = crate::analysis::analyse_data(&t.data()).unwrap();
        let charts = charts(&a).unwrap();
        let mut ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        for id in &ids {
            assert!(!caption(id).is_empty(), "chart {id} has no caption");
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), charts.len());
        let mut ids: Vec<&str> = SECTIONS.iter().map(|s| s.id()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), SECTIONS.len());
    }
}
