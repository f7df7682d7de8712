//! Grammar search over a suite, framed by the base harness: grammar coverage (the share of tasks
//! that some action sequence of the built-in policy's grammar solves — the ceiling of what the
//! policy can learn) and the solutions warm-start demonstrations are made from.
//!
//! The search itself belongs to each suite ([`Suite::solve`], in its `grammar/search.rs`: DBBench
//! enumerates a query or mutation and a commit, optionally after a look at the table; AppWorld
//! and SWE-Gym search their own grammars against a real environment). This module gives it the
//! base harness's frame, tools and step limit, and counts the results by family.

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

/// Search the suite's grammar for a sequence that solves `task` under the base harness's frame.
/// Returns the first solution found and whether the search hit `max_paths`.
pub fn solve(suite: &dyn Suite, base: &HarnessSpec, task: &Task, max_paths: usize) -> (Option<Solution>, bool) {
    solve_with(suite, base, task, max_paths, true)
}

/// [`solve`], optionally without a first look at the data (DBBench's `inspect`):
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
