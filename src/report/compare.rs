//! Two experiments side by side: their final tables and, per suite × arm × split, the
//! difference (this run minus the other), paired over the tasks both evaluated.

use serde::{Deserialize, Serialize};

use crate::analysis::final_table::paired_maps;
use crate::analysis::{Analysis, FinalTable, Headline, PairedDelta, RunInfo};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct CompareRow {
    pub suite: String,
    pub arm: String,
    pub split: String,
    pub this: Option<f64>,
    pub this_ci95: Option<[f64; 2]>,
    pub other: Option<f64>,
    pub other_ci95: Option<[f64; 2]>,
    /// this − other (each the mean over its own tasks).
    pub difference: Option<f64>,
    /// this − other over the tasks both evaluated (per task: mean over seeds), with a paired
    /// bootstrap interval.
    pub paired: Option<PairedDelta>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Comparison {
    pub this_run: i64,
    pub other_run: RunInfo,
    pub other_final_table: FinalTable,
    pub other_headline: Vec<Headline>,
    pub other_dataset_md5: Vec<(String, Option<String>)>,
    pub rows: Vec<CompareRow>,
}

pub fn compare(this: &Analysis, other: &Analysis) -> Comparison {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for r in this.final_table.rows.iter().chain(other.final_table.rows.iter()) {
        let k = (r.suite.clone(), r.arm.clone(), r.split.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let rows = keys
        .into_iter()
        .map(|(suite, arm, split)| {
            let find = |a: &Analysis| a.final_table.rows.iter().find(|r| r.suite == suite && r.arm == arm && r.split == split).cloned();
            let (a, b) = (find(this), find(other));
            let paired = match (&a, &b) {
                (Some(a), Some(b)) => paired_maps(&format!("run {}", this.run.id), &format!("run {}", other.run.id), &a.per_task, &b.per_task),
                _ => None,
            };
            CompareRow {
                difference: match (&a, &b) {
                    (Some(a), Some(b)) => Some(a.success - b.success),
                    _ => None,
                },
                this: a.as_ref().map(|r| r.success),
                this_ci95: a.as_ref().map(|r| r.ci95),
                other: b.as_ref().map(|r| r.success),
                other_ci95: b.as_ref().map(|r| r.ci95),
                paired,
                suite,
                arm,
                split,
            }
        })
        .collect();
    Comparison {
        this_run: this.run.id,
        other_run: other.run.clone(),
        other_final_table: other.final_table.clone(),
        other_headline: other.headline.clone(),
        other_dataset_md5: other.provenance.dataset.iter().map(|d| (d.suite.clone(), d.md5.clone())).collect(),
        rows,
    }
}
