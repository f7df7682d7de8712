//! Grammar coverage: the share of tasks that some action sequence of the built-in policy's
//! grammar solves — the ceiling of what the policy can learn.
//!
//! For each task, every decision path of the grammar is enumerated for the first action from
//! the base context, and again after an inspection of the table (the grammar's `inspect` action,
//! whose real observation is appended); each query is executed for real and every answer the
//! grammar could then commit is scored by the suite's scorer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::harness::HarnessSpec;
use crate::suite::{SearchFrame, Solution, Suite};
use crate::task::Task;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Coverage {
    pub total: usize,
    pub covered: usize,
    /// family -> (covered, total)
    pub families: BTreeMap<String, (usize, usize)>,
    /// Tasks whose enumeration was cut at the path limit.
    pub truncated: usize,
}

impl Coverage {
    pub fn share(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.covered as f64 / self.total as f64
        }
    }
}

/// Does some grammar sequence solve `task`? Returns (solved, truncated).
pub fn task_covered(suite: &dyn Suite, base: &HarnessSpec, task: &Task, max_paths: usize) -> (bool, bool) {
    let (s, t) = solve(suite, base, task, max_paths);
    (s.is_some(), t)
}

/// Search the grammar for a sequence that solves `task` under the base harness's frame:
/// one query (or mutation) then a commit, optionally after inspecting the table first.
/// Returns the first solution found and whether the search hit `max_paths`.
pub fn solve(suite: &dyn Suite, base: &HarnessSpec, task: &Task, max_paths: usize) -> (Option<Solution>, bool) {
    solve_with(suite, base, task, max_paths, true)
}

/// [`solve`], optionally without the DBBench grammar's first look at the table (`inspect`):
/// warm-start demonstrations are direct question -> SQL -> answer solutions, as in a text-to-SQL
/// corpus, so looking at the data first is something the policy must learn.
pub fn solve_with(suite: &dyn Suite, base: &HarnessSpec, task: &Task, max_paths: usize, inspect: bool) -> (Option<Solution>, bool) {
    let frame_of = |prompt: &str| base.frame(prompt);
    let frame = SearchFrame { frame: &frame_of, tools: base.offered_tools(suite.tools()), max_steps: base.max_steps };
    suite.solve(task, &frame, max_paths, inspect)
}

pub fn coverage(suite: &dyn Suite, base: &HarnessSpec, tasks: &[Task], max_paths: usize) -> Coverage {
    let mut c = Coverage::default();
    for t in tasks {
        let (ok, trunc) = task_covered(suite, base, t, max_paths);
        c.total += 1;
        let e = c.families.entry(t.family.clone()).or_default();
        e.1 += 1;
        if ok {
            c.covered += 1;
            e.0 += 1;
        }
        if trunc {
            c.truncated += 1;
        }
    }
    c
}
