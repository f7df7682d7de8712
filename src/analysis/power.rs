//! Sizing a run before it starts: the spread of the headline difference (the routed arm against
//! the baseline) measured in a finished pilot run on the same suite, split into its per-task and
//! per-seed parts ([`PairedSpread`]), and what a design of so many tasks and seeds can detect
//! with it. `docs/power.md` gives the method.

use serde::{Deserialize, Serialize};

use super::{final_table, AnalysisError, Data, BASELINE_ARM, ROUTED_ARM};
use crate::stats::PairedSpread;
use crate::store::BlockingStore;

/// A finished run's spread of routed − baseline on one suite, at its last evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct Pilot {
    pub run_id: i64,
    pub name: String,
    pub suite: String,
    /// `heldout` when the run had held-out families, else `train`.
    pub split: String,
    pub iteration: u32,
    pub spread: PairedSpread,
}

/// The pilot run `run_id` gives for `suite`, or `None` when it did not evaluate both arms there
/// (or no difference varied).
pub fn pilot(store: &BlockingStore, run_id: i64, suite: &str) -> Result<Option<Pilot>, AnalysisError> {
    let data = Data::load_phases(store, run_id, &["eval"], false)?;
    let Some((iteration, outcomes)) = final_table::last_outcomes(&data, suite) else { return Ok(None) };
    for split in ["heldout", "train"] {
        let key = |arm: &str| (arm.to_string(), split.to_string());
        let (Some(a), Some(b)) = (outcomes.get(&key(ROUTED_ARM)), outcomes.get(&key(BASELINE_ARM))) else { continue };
        if let Some(spread) = PairedSpread::of(a, b) {
            let (run_id, name) = (data.run.id, data.run.name.clone());
            return Ok(Some(Pilot { run_id, name, suite: suite.into(), split: split.into(), iteration, spread }));
        }
    }
    Ok(None)
}

/// What a design of `tasks` × `seeds` on one suite can detect, planned from a pilot.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct SuitePower {
    pub suite: String,
    /// The split the headline compares on: `heldout` when the design has held-out families.
    pub split: String,
    /// The design: tasks per evaluation of that split, and seeds.
    pub tasks: usize,
    pub seeds: usize,
    /// The pilot run the spread comes from; `null` when no finished run on this suite has one.
    pub pilot_run: Option<i64>,
    pub pilot_name: Option<String>,
    pub pilot_split: Option<String>,
    /// The pilot's paired tasks and its mean seeds per task.
    pub pilot_tasks: Option<usize>,
    pub pilot_seeds: Option<f64>,
    /// Variance of the true per-task differences, and of one seed's around its task's mean.
    pub between: Option<f64>,
    pub within: Option<f64>,
    /// The difference (as a share, 0.05 = 5 points) this design detects with 80% power at
    /// two-sided 5%.
    pub mde: Option<f64>,
    /// The effect asked about, and the tasks (at these seeds) and seeds (at these tasks) it
    /// needs; `seeds_needed` is `null` when no number of seeds reaches it.
    pub effect: Option<f64>,
    pub tasks_needed: Option<usize>,
    pub seeds_needed: Option<usize>,
    /// The plan in one sentence.
    pub sentence: String,
}

/// The plan for one suite of a design of `tasks` × `seeds` on `split`, from `pilot` (if any),
/// with the sizes `effect` (a share) needs.
pub fn plan(suite: &str, split: &str, tasks: usize, seeds: usize, pilot: Option<&Pilot>, effect: Option<f64>) -> SuitePower {
    let effect = effect.filter(|e| e.is_finite() && *e > 0.0);
    let split_words = |s: &str| if s == "heldout" { "held-out" } else { "training-family" };
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let design = format!("{} × {}", plural(tasks, &format!("{} task", split_words(split))), plural(seeds, "seed"));
    let mut out = SuitePower {
        suite: suite.into(),
        split: split.into(),
        tasks,
        seeds,
        pilot_run: None,
        pilot_name: None,
        pilot_split: None,
        pilot_tasks: None,
        pilot_seeds: None,
        between: None,
        within: None,
        mde: None,
        effect,
        tasks_needed: None,
        seeds_needed: None,
        sentence: String::new(),
    };
    let Some(p) = pilot else {
        out.sentence = format!(
            "{suite}: no finished run on this suite evaluated {ROUTED_ARM} and {BASELINE_ARM} yet, so the spread of their difference is unknown; a short run of this file (fewer iterations) gives one."
        );
        return out;
    };
    let s = &p.spread;
    out.pilot_run = Some(p.run_id);
    out.pilot_name = Some(p.name.clone());
    out.pilot_split = Some(p.split.clone());
    out.pilot_tasks = Some(s.tasks);
    out.pilot_seeds = Some(s.seeds);
    out.between = Some(s.between);
    out.within = Some(s.within);
    out.mde = s.mde(tasks, seeds);
    let pts = |x: f64| format!("{:.1} pts", 100.0 * x);
    let mut sentence = match out.mde {
        Some(m) => format!("{suite}: {design} detects differences of {} or more", pts(m)),
        None => format!("{suite}: {design} is too small for any difference to be detectable"),
    };
    sentence.push_str(&format!(
        " (80% power, two-sided 5%; spread from run #{} \u{201c}{}\u{201d}, {ROUTED_ARM} − {BASELINE_ARM} on {} {} tasks)",
        p.run_id,
        p.name,
        s.tasks,
        split_words(&p.split)
    ));
    if let Some(e) = effect {
        let need = s.tasks_for(e, seeds);
        out.tasks_needed = Some(need);
        out.seeds_needed = s.seeds_for(e, tasks);
        sentence.push_str(&format!(". For {}: {} at {}", pts(e), plural(need, "task"), plural(seeds, "seed")));
        match out.seeds_needed {
            Some(k) => sentence.push_str(&format!(", or {} at {tasks} tasks", plural(k, "seed"))),
            None => sentence.push_str(&format!("; no number of seeds reaches it at {tasks} tasks")),
        }
    }
    sentence.push('.');
    out.sentence = sentence;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pilot(between: f64, within: f64) -> Pilot {
        let spread = PairedSpread { between, within, tasks: 36, seeds: 3.0 };
        Pilot { run_id: 7, name: "demo".into(), suite: "dbbench".into(), split: "heldout".into(), iteration: 8, spread }
    }

    #[test]
    fn a_plan_states_the_design_s_detectable_effect_and_the_sizes_an_effect_needs() {
        let p = pilot(0.01, 0.3);
        let plan = plan("dbbench", "heldout", 36, 3, Some(&p), Some(0.10));
        let mde = plan.mde.unwrap();
        assert!((mde - 2.8016 * (0.01f64 + 0.1).sqrt() / 6.0).abs() < 1e-3, "{mde}");
        assert_eq!(plan.tasks_needed, Some(p.spread.tasks_for(0.10, 3)));
        assert!(plan.tasks_needed.unwrap() > 36 && plan.seeds_needed.unwrap() > 3, "{plan:?}");
        assert!(plan.sentence.starts_with("dbbench: 36 held-out tasks × 3 seeds detects differences of 15.5 pts or more"), "{}", plan.sentence);
        assert!(
            plan.sentence.contains("run #7 \u{201c}demo\u{201d}")
                && plan.sentence.contains("For 10.0 pts: 87 tasks at 3 seeds, or 9 seeds at 36 tasks."),
            "{}",
            plan.sentence
        );
        // an effect below what the tasks' own differences allow at 36 tasks: seeds do not reach it
        let small = super::plan("dbbench", "heldout", 36, 3, Some(&p), Some(0.02));
        assert_eq!(small.seeds_needed, None);
        assert!(small.sentence.contains("no number of seeds reaches it at 36 tasks"), "{}", small.sentence);
        // without a pilot it says what would give one
        let none = super::plan("swegym", "heldout", 10, 3, None, Some(0.05));
        assert_eq!((none.mde, none.tasks_needed), (None, None));
        assert!(none.sentence.contains("no finished run on this suite"), "{}", none.sentence);
    }
}
