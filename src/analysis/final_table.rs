//! The final table: suite × arm × split at the last evaluated iteration, success with a
//! bootstrap 95% interval over tasks, and the paired difference against `policy-only` on the same
//! tasks with its paired bootstrap interval.
//!
//! "The last evaluated iteration" is, per suite, the last iteration that *every* job (arm ×
//! seed) that has evaluated at all has evaluated: for a finished run that is the final
//! iteration; for an unfinished one it keeps every arm at the same point of training, so the
//! comparison stays fair. Per task, success is first averaged over seeds; the interval then
//! resamples tasks.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::transfer::split_rank;
use super::{Data, BASELINE_ARM, ROUTED_ARM};
use crate::stats::bootstrap;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct PairedDelta {
    pub arm: String,
    pub baseline: String,
    /// Mean over tasks of (arm − baseline), each task's difference averaged over the seeds both
    /// arms evaluated it with.
    pub mean: f64,
    /// Paired percentile bootstrap over tasks.
    pub ci95: [f64; 2],
    pub tasks: usize,
    pub seeds: usize,
    /// The minimum detectable effect of this comparison: the true difference its size (these
    /// tasks, each averaged over these seeds) detects with 80% power at two-sided 5%
    /// ([`crate::stats::minimum_detectable_effect`]); `None` below two tasks.
    #[serde(default)]
    pub mde: Option<f64>,
}

impl PairedDelta {
    pub fn covers_zero(&self) -> bool {
        self.ci95[0] <= 0.0 && self.ci95[1] >= 0.0
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct FinalRow {
    pub suite: String,
    pub arm: String,
    pub split: String,
    pub iteration: u32,
    pub seeds: Vec<u32>,
    pub tasks: usize,
    /// Mean over tasks of the per-task success averaged over seeds.
    pub success: f64,
    pub ci95: [f64; 2],
    /// Against [`BASELINE_ARM`] (absent for the baseline itself, or when it is not in the run).
    pub delta: Option<PairedDelta>,
    /// Per task id: success averaged over seeds.
    pub per_task: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct FinalTable {
    pub baseline: String,
    /// Per suite: the iteration the table is at.
    pub iterations: BTreeMap<String, u32>,
    pub rows: Vec<FinalRow>,
    /// The routed arm against every other arm, paired on the same tasks and seeds: does routing
    /// beat the controls that spend the same budget (random siblings, more base tries, ...)?
    #[serde(default)]
    pub routed_vs: Vec<RoutedDelta>,
}

/// [`ROUTED_ARM`] minus one other arm on one suite and split, at the table's iteration.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct RoutedDelta {
    pub suite: String,
    pub split: String,
    pub delta: PairedDelta,
}

/// The result the report leads with.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Headline {
    pub suite: String,
    pub split: String,
    pub iteration: u32,
    pub delta: PairedDelta,
    pub covers_zero: bool,
    /// Success of the arm and of the baseline on that split (each over its own tasks).
    pub arm_success: f64,
    pub baseline_success: Option<f64>,
    /// What it means, in one plain sentence.
    pub sentence: String,
}

/// The routed arm against the baseline over the tasks of every suite at once, for a run of
/// more than one suite: each suite at its own table iteration, every task weighing the same.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Pooled {
    pub split: String,
    pub suites: Vec<String>,
    pub delta: PairedDelta,
    pub covers_zero: bool,
    /// Success of the arm and of the baseline over the pooled tasks.
    pub arm_success: f64,
    pub baseline_success: f64,
    pub sentence: String,
}

/// (arm, split) -> task -> seed -> (successes, episodes).
type Counts = BTreeMap<(String, String), BTreeMap<String, BTreeMap<u32, (f64, f64)>>>;

/// (task, seed) -> mean success, for one (suite, arm, split, iteration).
pub(crate) type Outcomes = BTreeMap<String, BTreeMap<u32, f64>>;

/// (arm, split) -> [`Outcomes`].
pub(crate) type OutcomesByArm = BTreeMap<(String, String), Outcomes>;

/// One suite's evaluation outcomes at the last iteration every job that evaluated reached: that
/// iteration, and per (arm, split) each task's success per seed. `None` when nothing evaluated.
pub(crate) fn last_outcomes(data: &Data, suite: &str) -> Option<(u32, OutcomesByArm)> {
    // last eval iteration per job
    let mut last: BTreeMap<(String, u32), u32> = BTreeMap::new();
    for r in data.phase("eval").filter(|r| r.suite == suite) {
        let (Some(arm), Some(seed), Some(it)) = (r.context.arm.clone(), r.context.seed_index, r.context.iteration) else { continue };
        let e = last.entry((arm, seed)).or_insert(it);
        *e = (*e).max(it);
    }
    let &iteration = last.values().min()?;
    // (arm, split) -> task -> seed -> (successes, n)
    let mut acc: Counts = BTreeMap::new();
    for r in data.phase("eval").filter(|r| r.suite == suite && r.context.iteration == Some(iteration)) {
        let (Some(arm), Some(seed)) = (r.context.arm.clone(), r.context.seed_index) else { continue };
        let split = r.context.split.clone().unwrap_or_else(|| "train".into());
        let c = acc.entry((arm, split)).or_default().entry(r.task_id.clone()).or_default().entry(seed).or_default();
        c.0 += f64::from(u8::from(r.success));
        c.1 += 1.0;
    }
    let outcomes = acc
        .into_iter()
        .map(|(k, tasks)| (k, tasks.into_iter().map(|(t, seeds)| (t, seeds.into_iter().map(|(s, (k, n))| (s, k / n)).collect())).collect()))
        .collect();
    Some((iteration, outcomes))
}

pub(crate) fn table(data: &Data) -> FinalTable {
    let mut table = FinalTable { baseline: BASELINE_ARM.into(), ..Default::default() };
    for suite in &data.suites {
        let Some((iteration, outcomes)) = last_outcomes(data, suite) else { continue };
        table.iterations.insert(suite.clone(), iteration);
        let mut keys: Vec<&(String, String)> = outcomes.keys().collect();
        keys.sort_by_key(|(arm, split)| (split_rank(split), data.arms.iter().position(|a| a == arm).unwrap_or(usize::MAX), arm.clone()));
        for (arm, split) in &keys {
            if arm == ROUTED_ARM {
                continue;
            }
            let (Some(routed), Some(other)) = (outcomes.get(&(ROUTED_ARM.to_string(), split.clone())), outcomes.get(&(arm.clone(), split.clone())))
            else {
                continue;
            };
            if let Some(delta) = paired(ROUTED_ARM, arm, routed, other) {
                table.routed_vs.push(RoutedDelta { suite: suite.clone(), split: split.clone(), delta });
            }
        }
        for key in keys {
            let (arm, split) = key;
            let o = &outcomes[key];
            let per_task: BTreeMap<String, f64> = o.iter().map(|(t, s)| (t.clone(), mean_of(s.values()))).collect();
            let vals: Vec<f64> = per_task.values().copied().collect();
            let (success, ci95) = bootstrap(&vals);
            let seeds: BTreeSet<u32> = o.values().flat_map(|s| s.keys().copied()).collect();
            let delta = if arm != BASELINE_ARM {
                outcomes.get(&(BASELINE_ARM.to_string(), split.clone())).and_then(|b| paired(arm, BASELINE_ARM, o, b))
            } else {
                None
            };
            table.rows.push(FinalRow {
                suite: suite.clone(),
                arm: arm.clone(),
                split: split.clone(),
                iteration,
                seeds: seeds.into_iter().collect(),
                tasks: per_task.len(),
                success,
                ci95,
                delta,
                per_task,
            });
        }
    }
    table
}

fn mean_of<'a>(xs: impl Iterator<Item = &'a f64>) -> f64 {
    let v: Vec<f64> = xs.copied().collect();
    crate::stats::mean(&v)
}

/// The paired difference of two arms on the tasks (and seeds) both evaluated
/// ([`crate::stats::paired`]).
fn paired(arm: &str, baseline: &str, a: &Outcomes, b: &Outcomes) -> Option<PairedDelta> {
    crate::stats::paired(a, b).map(|p| PairedDelta {
        arm: arm.into(),
        baseline: baseline.into(),
        mean: p.mean,
        ci95: p.ci95,
        tasks: p.tasks,
        seeds: p.seeds,
        mde: p.mde(),
    })
}

/// The paired difference of two per-task success maps (e.g. the same arm in two experiments),
/// over the tasks both have.
pub fn paired_maps(arm: &str, baseline: &str, a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> Option<PairedDelta> {
    let diffs: Vec<f64> = a.iter().filter_map(|(t, x)| b.get(t).map(|y| x - y)).collect();
    if diffs.is_empty() {
        return None;
    }
    let (mean, ci95) = bootstrap(&diffs);
    let mde = crate::stats::minimum_detectable_effect(crate::stats::sd(&diffs), diffs.len());
    Some(PairedDelta { arm: arm.into(), baseline: baseline.into(), mean, ci95, tasks: diffs.len(), seeds: 0, mde })
}

fn pp(x: f64) -> String {
    format!("{:+.1}", 100.0 * x)
}

/// What a paired difference's size can detect, as a clause: "this run could detect differences
/// of 8.1 points or more (80% power, two-sided 5%)".
pub fn mde_clause(d: &PairedDelta) -> Option<String> {
    d.mde.map(|m| format!("this run could detect differences of {:.1} points or more (80% power, two-sided 5%)", 100.0 * m))
}

/// One plain sentence for a paired difference, honest when the interval covers zero, with the
/// smallest difference the run's size could detect.
pub fn sentence(d: &PairedDelta, split: &str) -> String {
    let on = if split == "heldout" { "held-out families (never trained on)" } else { "the training families" };
    let n = format!("{} tasks, {} seed{}", d.tasks, d.seeds, if d.seeds == 1 { "" } else { "s" });
    let ci = format!("95% CI {} to {} points", pp(d.ci95[0]), pp(d.ci95[1]));
    if d.seeds == 1 {
        return format!(
            "On {on}, {} differs from {} by {} percentage points under the base harness ({n}); one seed cannot give a seed interval, so this run cannot tell whether the difference would hold for another seed.",
            d.arm, d.baseline, pp(d.mean)
        );
    }
    let detect = mde_clause(d).map(|c| format!(" At this size {c}.")).unwrap_or_default();
    if d.covers_zero() {
        format!(
            "On {on}, {} differs from {} by {} percentage points under the base harness, but the interval ({ci}; {n}) includes zero: this run cannot tell the two apart.{detect}",
            d.arm, d.baseline, pp(d.mean)
        )
    } else if d.mean > 0.0 {
        format!(
            "On {on}, {} solves {} percentage points more tasks than {} under the base harness ({ci}; {n}); the interval excludes zero, so the gain is unlikely to be chance at this sample size.{detect}",
            d.arm, pp(d.mean).trim_start_matches('+'), d.baseline
        )
    } else {
        format!(
            "On {on}, {} solves {} percentage points fewer tasks than {} under the base harness ({ci}; {n}); the interval excludes zero, so it is worse here.{detect}",
            d.arm, pp(-d.mean).trim_start_matches('+'), d.baseline
        )
    }
}

pub(crate) fn headlines(t: &FinalTable) -> Vec<Headline> {
    let mut out = Vec::new();
    let suites: Vec<&String> = t.iterations.keys().collect();
    for suite in suites {
        let find = |split: &str| t.rows.iter().find(|r| &r.suite == suite && r.arm == ROUTED_ARM && r.split == split && r.delta.is_some());
        let Some(row) = find("heldout").or_else(|| find("train")) else { continue };
        let d = row.delta.clone().expect("filtered on delta");
        let baseline_success = t.rows.iter().find(|r| &r.suite == suite && r.arm == BASELINE_ARM && r.split == row.split).map(|r| r.success);
        out.push(Headline {
            arm_success: row.success,
            baseline_success,
            suite: suite.clone(),
            split: row.split.clone(),
            iteration: row.iteration,
            covers_zero: d.covers_zero(),
            sentence: sentence(&d, &row.split),
            delta: d,
        });
    }
    out
}

/// The pooled difference over suites (held-out families where at least two suites have them,
/// else the training families); `None` for a run of one suite.
pub(crate) fn pooled(t: &FinalTable) -> Option<Pooled> {
    for split in ["heldout", "train"] {
        let rows = |arm: &'static str| t.rows.iter().filter(move |r| r.arm == arm && r.split == split);
        let suites: Vec<String> = rows(ROUTED_ARM).map(|r| r.suite.clone()).filter(|s| rows(BASELINE_ARM).any(|b| &b.suite == s)).collect();
        if suites.len() < 2 {
            continue;
        }
        let merged = |arm: &'static str| -> BTreeMap<String, f64> {
            rows(arm).filter(|r| suites.contains(&r.suite)).flat_map(|r| r.per_task.iter().map(|(k, v)| (format!("{}/{k}", r.suite), *v))).collect()
        };
        let (a, b) = (merged(ROUTED_ARM), merged(BASELINE_ARM));
        let Some(mut delta) = paired_maps(ROUTED_ARM, BASELINE_ARM, &a, &b) else { continue };
        delta.seeds = rows(ROUTED_ARM).map(|r| r.seeds.len()).max().unwrap_or(0);
        let mean = |m: &BTreeMap<String, f64>| crate::stats::mean(&m.values().copied().collect::<Vec<f64>>());
        return Some(Pooled {
            split: split.to_string(),
            covers_zero: delta.covers_zero(),
            arm_success: mean(&a),
            baseline_success: mean(&b),
            sentence: format!("Pooled over {} (every task weighs the same): {}", suites.join(", "), sentence(&delta, split)),
            suites,
            delta,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::*;

    #[test]
    fn final_table_pairs_tasks_and_uses_the_common_iteration() {
        let t = TestRun::new();
        for seed in 0..2 {
            t.eval("policy-only", seed, 0, "heldout", &[false, false, false, false]);
            t.eval("harness-s", seed, 0, "heldout", &[false, false, false, false]);
            t.eval("policy-only", seed, 2, "heldout", &[true, false, false, false]);
            t.eval("harness-s", seed, 2, "heldout", &[true, true, true, false]);
        }
        // harness-s seed 0 went further; the table stays at iteration 2
        t.eval("harness-s", 0, 4, "heldout", &[true, true, true, true]);
        let table = table(&t.data());
        assert_eq!(table.iterations["dbbench"], 2);
        let hs = table.rows.iter().find(|r| r.arm == "harness-s").unwrap();
        assert_eq!((hs.tasks, hs.seeds.len()), (4, 2));
        assert!((hs.success - 0.75).abs() < 1e-12);
        let d = hs.delta.as_ref().unwrap();
        assert!((d.mean - 0.5).abs() < 1e-12);
        assert!(d.ci95[0] <= 0.5 && d.ci95[1] >= 0.5);
        assert_eq!(d.tasks, 4);
        let h = headlines(&table);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].split, "heldout");
        assert!(h[0].sentence.contains("harness-s"), "{}", h[0].sentence);
        let po = table.rows.iter().find(|r| r.arm == "policy-only").unwrap();
        assert!(po.delta.is_none());
        // the routed arm against every other arm: here only policy-only, the same pairing
        assert_eq!(table.routed_vs.len(), 1);
        assert_eq!((table.routed_vs[0].split.as_str(), table.routed_vs[0].delta.baseline.as_str()), ("heldout", "policy-only"));
        assert_eq!(&table.routed_vs[0].delta, d);
    }

    #[test]
    fn suites_pool_their_tasks() {
        let row = |suite: &str, arm: &str, tasks: &[(&str, f64)]| FinalRow {
            suite: suite.into(),
            arm: arm.into(),
            split: "heldout".into(),
            iteration: 2,
            seeds: vec![0, 1],
            tasks: tasks.len(),
            success: 0.0,
            ci95: [0.0, 0.0],
            delta: None,
            per_task: tasks.iter().map(|(t, v)| (t.to_string(), *v)).collect(),
        };
        let mut t = FinalTable {
            rows: vec![
                row("dbbench", "harness-s", &[("h0", 1.0), ("h1", 1.0)]),
                row("dbbench", "policy-only", &[("h0", 0.0), ("h1", 1.0)]),
                // the same task id in another suite is another task
                row("swegym", "harness-s", &[("h0", 0.0)]),
                row("swegym", "policy-only", &[("h0", 0.0)]),
            ],
            ..Default::default()
        };
        let p = pooled(&t).expect("two suites pool");
        assert_eq!((p.split.as_str(), p.suites.clone()), ("heldout", vec!["dbbench".to_string(), "swegym".to_string()]));
        assert_eq!((p.delta.tasks, p.delta.seeds), (3, 2));
        assert!((p.delta.mean - 1.0 / 3.0).abs() < 1e-12);
        assert!((p.arm_success - 2.0 / 3.0).abs() < 1e-12 && (p.baseline_success - 1.0 / 3.0).abs() < 1e-12);
        assert!(p.sentence.starts_with("Pooled over dbbench, swegym"), "{}", p.sentence);
        t.rows.truncate(2);
        assert!(pooled(&t).is_none(), "one suite has nothing to pool");
    }

    #[test]
    fn the_routed_arm_is_paired_with_every_control() {
        let t = TestRun::new();
        for seed in 0..2 {
            t.eval("policy-only", seed, 2, "heldout", &[true, false, false, false]);
            t.eval("harness-s", seed, 2, "heldout", &[true, true, true, false]);
            t.eval("random-rescue", seed, 2, "heldout", &[true, true, false, false]);
            t.eval("base-resample", seed, 2, "heldout", &[true, false, false, true]);
        }
        let table = table(&t.data());
        let by: BTreeMap<&str, &PairedDelta> = table.routed_vs.iter().map(|r| (r.delta.baseline.as_str(), &r.delta)).collect();
        assert_eq!(by.len(), 3, "{:?}", table.routed_vs);
        assert!(by.values().all(|d| d.arm == "harness-s"));
        assert!((by["random-rescue"].mean - 0.25).abs() < 1e-12);
        assert!((by["base-resample"].mean - 0.25).abs() < 1e-12);
        assert!((by["policy-only"].mean - 0.5).abs() < 1e-12);
    }

    #[test]
    fn the_sentence_is_honest_about_zero() {
        let d = PairedDelta {
            arm: "harness-s".into(),
            baseline: "policy-only".into(),
            mean: 0.02,
            ci95: [-0.03, 0.07],
            tasks: 80,
            seeds: 2,
            mde: Some(0.07),
        };
        let s = sentence(&d, "heldout");
        assert!(s.contains("includes zero") && s.contains("cannot tell"), "{s}");
        assert!(s.ends_with("At this size this run could detect differences of 7.0 points or more (80% power, two-sided 5%)."), "{s}");
        let d = PairedDelta { ci95: [0.01, 0.05], ..d };
        assert!(sentence(&d, "heldout").contains("2.0 percentage points more"));
        // one seed: no interval is quoted, whatever the bootstrap over tasks gave
        let one = PairedDelta { ci95: [0.0, 0.0], mean: 0.0, seeds: 1, ..d };
        let s = sentence(&one, "heldout");
        assert!(!s.contains("95% CI") && s.contains("one seed cannot give a seed interval"), "{s}");
        assert!(!s.contains("could detect"), "no power claim without an interval: {s}");
    }
}
