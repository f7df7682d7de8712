//! Two experiments side by side: their final tables and, per suite × arm × split, the
//! difference (this run minus the other), paired over the tasks both evaluated; the settings in
//! which their configurations differ; and the other run's transfer curves, to draw over this
//! run's.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::analysis::final_table::paired_maps;
use crate::analysis::{Analysis, FinalTable, Headline, PairedDelta, RunInfo, TransferCurve};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct CompareRow {
    pub suite: String,
    pub arm: String,
    pub split: String,
    pub this: Option<f64>,
    pub this_ci95: Option<[f64; 2]>,
    /// Seeds behind this run's number (0 when it has none).
    #[serde(default)]
    pub this_seeds: usize,
    pub other: Option<f64>,
    pub other_ci95: Option<[f64; 2]>,
    /// Seeds behind the other run's number (0 when it has none).
    #[serde(default)]
    pub other_seeds: usize,
    /// The iteration of this run's number (its final table's), and of the other run's.
    #[serde(default)]
    pub this_iteration: Option<u32>,
    #[serde(default)]
    pub other_iteration: Option<u32>,
    /// this − other (each the mean over its own tasks and seeds; not paired).
    pub difference: Option<f64>,
    /// this − other over the tasks both evaluated (per task: mean over seeds), with a paired
    /// bootstrap interval over those tasks; its `seeds` is the smaller of the two runs' seed
    /// counts.
    pub paired: Option<PairedDelta>,
}

/// One setting in which the two runs' configurations differ.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct ConfigDifference {
    /// The configuration key (`seeds`, `iterations`, `budget.batch_tasks`, `dataset.dbbench`, ...).
    pub key: String,
    /// What to call it in a sentence (`seeds`, `batch tasks`, `dbbench dataset`, ...).
    pub label: String,
    /// This run's value, and the other run's, as short text.
    pub this: String,
    pub other: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Comparison {
    pub this_run: i64,
    pub other_run: RunInfo,
    pub other_final_table: FinalTable,
    pub other_headline: Vec<Headline>,
    pub other_dataset_md5: Vec<(String, Option<String>)>,
    pub rows: Vec<CompareRow>,
    /// The settings in which the configurations differ (the name aside), most telling first:
    /// seeds, iterations, budgets, suites, datasets, held-out families, policy, then the rest.
    /// Empty: the same configuration except the name.
    #[serde(default)]
    pub differences: Vec<ConfigDifference>,
    /// The other run's transfer curves.
    #[serde(default)]
    pub other_transfer: Vec<TransferCurve>,
    /// What makes the two runs' numbers hard to compare, in sentences: suites only one run
    /// has, final tables at different iterations, arms only one run has. Empty: nothing.
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl Comparison {
    /// "Differs: seeds 3 vs 1; iterations 6 vs 2", or "Same configuration except the name".
    pub fn differences_sentence(&self) -> String {
        if self.differences.is_empty() {
            return "Same configuration except the name.".into();
        }
        let parts: Vec<String> = self.differences.iter().map(|d| format!("{} {} vs {}", d.label, d.this, d.other)).collect();
        format!("Differs: {}.", parts.join("; "))
    }
}

/// The seeds of a configuration, as text.
fn seeds_text(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array).map(|a| a.iter().map(text).collect()).unwrap_or_default()
}

/// A configuration value as short text.
fn text(v: &Value) -> String {
    match v {
        Value::Null => "none".into(),
        Value::String(s) if s.is_empty() => "\"\"".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            // f32 settings come back with float noise (0.05000000074505806)
            (None, Some(f)) => format!("{}", (f * 1e6).round() / 1e6),
            _ => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
        Value::Array(a) if a.is_empty() => "none".into(),
        Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join(", "),
        Value::Object(o) if o.is_empty() => "none".into(),
        Value::Object(_) => serde_json::to_string(v).unwrap_or_default(),
    }
}

/// Every leaf of a configuration object as `(dotted key, value)`; arrays are leaves.
fn leaves(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(o) if !o.is_empty() => {
            for (k, x) in o {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                leaves(&key, x, out);
            }
        }
        _ => out.push((prefix.to_string(), v.clone())),
    }
}

/// The place of a key in the list of differences: the settings that change the numbers most
/// plainly first.
fn rank(key: &str) -> usize {
    const ORDER: [&str; 9] = ["seeds", "iterations", "budget", "suites", "datasets", "dataset", "heldout_families", "policy", "arms"];
    let head = key.split('.').next().unwrap_or(key);
    ORDER.iter().position(|k| *k == head).unwrap_or(ORDER.len())
}

/// What to call a key in a sentence.
fn label(key: &str) -> String {
    match key {
        "seeds" | "iterations" | "suites" | "arms" => key.into(),
        "heldout_families" => "held-out families".into(),
        "eval_every" => "evaluation every".into(),
        "reanchor_every" => "re-anchor every".into(),
        k => {
            if let Some(suite) = k.strip_prefix("datasets.") {
                return format!("{suite} dataset file");
            }
            if let Some(suite) = k.strip_prefix("dataset.") {
                return format!("{suite} dataset");
            }
            let (head, rest) = k.split_once('.').unwrap_or(("", k));
            let rest = rest.replace(['_', '.'], " ");
            match head {
                "budget" => rest,
                "policy" => format!("policy {rest}"),
                "" => rest,
                h => format!("{h} {rest}"),
            }
        }
    }
}

/// The settings in which two stored configurations differ. The name, the worker count (it
/// changes the speed, not the numbers) and secrets are left out; the datasets are compared by
/// their files and by the hash of the tasks the runs used.
pub fn config_differences(this: &Analysis, other: &Analysis) -> Vec<ConfigDifference> {
    let (a, b) = (&this.provenance.config, &other.provenance.config);
    let mut la = Vec::new();
    let mut lb = Vec::new();
    leaves("", a, &mut la);
    leaves("", b, &mut lb);
    let skip = |k: &str| k == "name" || k == "workers" || k.ends_with("api_key_env");
    let mut keys: Vec<String> = Vec::new();
    for (k, _) in la.iter().chain(lb.iter()) {
        if !skip(k) && !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    let get = |l: &[(String, Value)], k: &str| l.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone());
    let mut out: Vec<ConfigDifference> = Vec::new();
    for k in &keys {
        let (va, vb) = (get(&la, k), get(&lb, k));
        // an absent setting and an empty one say the same
        let norm = |v: Option<Value>| match v {
            None | Some(Value::Null) => Value::Null,
            Some(Value::Array(a)) if a.is_empty() => Value::Null,
            Some(Value::Object(o)) if o.is_empty() => Value::Null,
            Some(v) => v,
        };
        let (va, vb) = (norm(va), norm(vb));
        if va == vb {
            continue;
        }
        let (ta, tb) = if k == "seeds" {
            let (sa, sb) = (seeds_text(Some(&va)), seeds_text(Some(&vb)));
            if sa.len() != sb.len() {
                (sa.len().to_string(), sb.len().to_string())
            } else {
                (format!("[{}]", sa.join(", ")), format!("[{}]", sb.join(", ")))
            }
        } else {
            (text(&va), text(&vb))
        };
        out.push(ConfigDifference { key: k.clone(), label: label(k), this: ta, other: tb });
    }
    // the tasks themselves: a dataset that hashes differently is a different dataset
    for d in &this.provenance.dataset {
        let Some(o) = other.provenance.dataset.iter().find(|o| o.suite == d.suite) else { continue };
        let same_file = d.md5.is_some() && d.md5 == o.md5;
        if !same_file && (d.md5.is_some() || o.md5.is_some()) {
            let short = |m: &Option<String>| m.as_deref().map(|m| format!("md5 {}…", &m[..m.len().min(8)])).unwrap_or_else(|| "not hashed".into());
            out.push(ConfigDifference {
                key: format!("dataset.{}", d.suite),
                label: label(&format!("dataset.{}", d.suite)),
                this: short(&d.md5),
                other: short(&o.md5),
            });
        } else if same_file && d.used_ids_md5 != o.used_ids_md5 {
            out.push(ConfigDifference {
                key: format!("dataset.{}.evaluated", d.suite),
                label: format!("{} tasks evaluated", d.suite),
                this: d.used_tasks.to_string(),
                other: o.used_tasks.to_string(),
            });
        }
    }
    out.sort_by_key(|d| rank(&d.key));
    out
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
                (Some(a), Some(b)) => paired_maps(&format!("run {}", this.run.id), &format!("run {}", other.run.id), &a.per_task, &b.per_task)
                    .map(|d| PairedDelta { seeds: a.seeds.len().min(b.seeds.len()), ..d }),
                _ => None,
            };
            CompareRow {
                difference: match (&a, &b) {
                    (Some(a), Some(b)) => Some(a.success - b.success),
                    _ => None,
                },
                this: a.as_ref().map(|r| r.success),
                this_ci95: a.as_ref().map(|r| r.ci95),
                this_seeds: a.as_ref().map(|r| r.seeds.len()).unwrap_or(0),
                this_iteration: a.as_ref().map(|r| r.iteration),
                other_iteration: b.as_ref().map(|r| r.iteration),
                other: b.as_ref().map(|r| r.success),
                other_ci95: b.as_ref().map(|r| r.ci95),
                other_seeds: b.as_ref().map(|r| r.seeds.len()).unwrap_or(0),
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
        differences: config_differences(this, other),
        other_transfer: other.transfer.clone(),
        warnings: warnings(this, other),
    }
}

/// What makes two runs' numbers hard to compare, in sentences (see [`Comparison::warnings`]).
fn warnings(this: &Analysis, other: &Analysis) -> Vec<String> {
    let (a, b) = (format!("run {}", this.run.id), format!("run {}", other.run.id));
    let list = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
    let mut out = Vec::new();
    let shared: Vec<&String> = this.suites.iter().filter(|s| other.suites.contains(s)).collect();
    if shared.is_empty() {
        out.push(format!(
            "The runs share no suite ({a}: {}; {b}: {}): no task is in both, so nothing here is paired and the differences compare different benchmarks.",
            list(&this.suites.iter().collect::<Vec<_>>()),
            list(&other.suites.iter().collect::<Vec<_>>())
        ));
    } else {
        for (run, mine, theirs) in [(&a, &this.suites, &other.suites), (&b, &other.suites, &this.suites)] {
            let only: Vec<&String> = mine.iter().filter(|s| !theirs.contains(s)).collect();
            if !only.is_empty() {
                out.push(format!("Only {run} has {}: those rows have nothing to compare with.", list(&only)));
            }
        }
    }
    for suite in &shared {
        let (x, y) = (this.final_table.iterations.get(*suite), other.final_table.iterations.get(*suite));
        if let (Some(x), Some(y)) = (x, y) {
            if x != y {
                out.push(format!(
                    "{suite}: {a}'s final table is at iteration {x} and {b}'s at iteration {y}, so each difference also compares {} training.",
                    if x < y { format!("{} fewer iterations of", y - x) } else { format!("{} more iterations of", x - y) }
                ));
            }
        }
    }
    let arms = |an: &Analysis, suite: &String| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for r in an.final_table.rows.iter().filter(|r| &r.suite == suite) {
            if !v.contains(&r.arm) {
                v.push(r.arm.clone());
            }
        }
        v
    };
    for suite in &shared {
        let (mine, theirs) = (arms(this, suite), arms(other, suite));
        for (run, x, y) in [(&a, &mine, &theirs), (&b, &theirs, &mine)] {
            let only: Vec<&String> = x.iter().filter(|arm| !y.contains(arm)).collect();
            if !only.is_empty() && !y.is_empty() {
                out.push(format!("{suite}: only {run} has {}: no difference for {}.", list(&only), if only.len() > 1 { "them" } else { "it" }));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn runs_on_different_suites_are_said_to_share_nothing() {
        let t = crate::analysis::testdata::TestRun::new();
        t.eval("policy-only", 0, 1, "train", &[true, false]);
        t.eval("harness-s", 0, 1, "train", &[true, true]);
        let this = crate::analysis::analyse(&t.store, t.run_id).unwrap();
        let mut other = this.clone();
        other.run.id += 1;
        other.suites = vec!["swegym".into()];
        for r in &mut other.final_table.rows {
            r.suite = "swegym".into();
        }
        other.final_table.iterations = [("swegym".to_string(), 1)].into();
        let c = compare(&this, &other);
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(c.warnings[0].starts_with(&format!("The runs share no suite (run {}: dbbench; run {}: swegym)", this.run.id, other.run.id)));
        assert!(c.rows.iter().all(|r| r.paired.is_none() && r.difference.is_none()));
        // a suite only one of them has, beside one they share
        other.suites = vec!["dbbench".into(), "swegym".into()];
        let c = compare(&this, &other);
        assert!(c.warnings.contains(&format!("Only run {} has swegym: those rows have nothing to compare with.", other.run.id)), "{:?}", c.warnings);
    }

    #[test]
    fn configuration_values_read_short() {
        assert_eq!(text(&json!(0.05000000074505806)), "0.05");
        assert_eq!(text(&json!(0.3)), "0.3");
        assert_eq!(text(&json!(1.0)), "1");
        assert_eq!(text(&json!(8)), "8");
        assert_eq!(text(&json!(["a", "b"])), "a, b");
        assert_eq!(text(&json!(null)), "none");
        assert_eq!(label("budget.batch_tasks"), "batch tasks");
        assert_eq!(label("policy.learning_rate"), "policy learning rate");
        assert_eq!(label("heldout_families"), "held-out families");
        assert_eq!(label("datasets.dbbench"), "dbbench dataset file");
    }
}
