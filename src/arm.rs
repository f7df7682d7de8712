//! The experiment arms, each declared once ([`SPECS`]): its name, what it does with a task on
//! which every base try failed (its [`Rescue`]), how its rescues are distilled, its place in the
//! charts and its one-line description. The runner, the rollout estimate, the chart style and the
//! UI's arm list all read this table, so an arm that reuses a rescue strategy is one enum variant
//! and one entry here, and a new strategy that picks siblings is one more [`Rescue`] variant with
//! its choice ([`Rescue::siblings`]) and its cost ([`Rescue::tries_per_task`]), here too.

/// An experiment arm: what a job does with a task on which every base try failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arm {
    /// Nothing: plain GRPO under the base harness.
    PolicyOnly,
    /// The router picks siblings from behaviour profiles; rescues are distilled into the base
    /// context.
    HarnessS,
    /// Siblings picked at random, distilled the same way.
    RandomRescue,
    /// The same number of extra tries under the base harness.
    BaseResample,
    /// As harness-s, but the rescues are trained in the sibling's context (scaffold kept).
    KeepScaffold,
    /// The same budget spread over every sibling in turn.
    AllSiblings,
}

/// What an arm spends its rescue budget (k siblings × m tries per all-fail task) on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rescue {
    /// Nothing: all-fail groups give no gradient.
    Nothing,
    /// The router's top k siblings, m tries each (behaviour profiles are measured for it).
    Routed,
    /// k siblings drawn at random, m tries each.
    Random,
    /// k·m tries spread over every sibling in turn.
    EverySibling,
    /// k·m more tries under the base harness, joined to the task's GRPO group.
    BaseTries,
}

impl Rescue {
    /// Executor rollouts it spends on one all-fail task, given `k` siblings × `m` tries and a
    /// pool of `siblings` (what the rollout estimate counts).
    pub fn tries_per_task(self, k: usize, m: usize, siblings: usize) -> usize {
        match self {
            Rescue::Nothing => 0,
            Rescue::BaseTries => k * m,
            Rescue::EverySibling if siblings > 0 => k * m,
            Rescue::EverySibling => 0,
            Rescue::Routed | Rescue::Random => k.min(siblings) * m,
        }
    }

    /// Which siblings of `pool` an all-fail task tries and how often (`k` siblings × `m`
    /// tries), drawing from `rng`; `route` is asked for the router's choice of `k` (routed arms
    /// only). Arms that try no sibling get nothing.
    pub fn siblings(
        self,
        pool: &[String],
        k: usize,
        m: usize,
        rng: &mut crate::seed::SplitMix,
        route: impl FnOnce(&mut crate::seed::SplitMix) -> Vec<String>,
    ) -> Vec<(String, usize)> {
        match self {
            Rescue::Routed => route(rng).into_iter().map(|s| (s, m)).collect(),
            Rescue::Random => {
                let mut names = pool.to_vec();
                crate::seed::shuffle(&mut names, rng.next_u64());
                names.into_iter().take(k).map(|s| (s, m)).collect()
            }
            Rescue::EverySibling => {
                let start = (rng.next_u64() % pool.len().max(1) as u64) as usize;
                let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
                for i in 0..k * m {
                    *counts.entry(pool[(start + i) % pool.len()].clone()).or_default() += 1;
                }
                counts.into_iter().collect()
            }
            Rescue::Nothing | Rescue::BaseTries => Vec::new(),
        }
    }
}

/// One arm, declared once.
#[derive(Clone, Copy, Debug)]
pub struct ArmSpec {
    pub arm: Arm,
    /// Its name in experiment files, the store and reports.
    pub name: &'static str,
    pub rescue: Rescue,
    /// Its rescues are trained in the sibling's context (the scaffold kept) whatever
    /// `distill.mode` says.
    pub keeps_scaffold: bool,
    /// Its place in the charts and tables (its fixed colour, dash and marker follow it).
    pub display_rank: usize,
    /// What it does with an all-fail task, in a line.
    pub description: &'static str,
}

/// Every arm, in the order experiment files list them.
pub const SPECS: &[ArmSpec] = &[
    ArmSpec {
        arm: Arm::PolicyOnly,
        name: "policy-only",
        rescue: Rescue::Nothing,
        keeps_scaffold: false,
        display_rank: 1,
        description: "GRPO under the base harness; all-fail groups give nothing",
    },
    ArmSpec {
        arm: Arm::HarnessS,
        name: "harness-s",
        rescue: Rescue::Routed,
        keeps_scaffold: false,
        display_rank: 0,
        description: "routed sibling rescues, distilled into base context",
    },
    ArmSpec {
        arm: Arm::RandomRescue,
        name: "random-rescue",
        rescue: Rescue::Random,
        keeps_scaffold: false,
        display_rank: 2,
        description: "k random siblings instead of the router's",
    },
    ArmSpec {
        arm: Arm::BaseResample,
        name: "base-resample",
        rescue: Rescue::BaseTries,
        keeps_scaffold: false,
        display_rank: 3,
        description: "the rescue budget spent on extra base tries",
    },
    ArmSpec {
        arm: Arm::KeepScaffold,
        name: "keep-scaffold",
        rescue: Rescue::Routed,
        keeps_scaffold: true,
        display_rank: 4,
        description: "distil with the sibling's context kept",
    },
    ArmSpec {
        arm: Arm::AllSiblings,
        name: "all-siblings",
        rescue: Rescue::EverySibling,
        keeps_scaffold: false,
        display_rank: 5,
        description: "no router, every sibling, budget-matched",
    },
];

impl Arm {
    /// Every arm, in the order experiment files list them.
    pub const ALL: [Arm; SPECS.len()] = {
        let mut all = [Arm::PolicyOnly; SPECS.len()];
        let mut i = 0;
        while i < SPECS.len() {
            all[i] = SPECS[i].arm;
            i += 1;
        }
        all
    };

    /// Its declaration in [`SPECS`].
    pub const fn spec(self) -> &'static ArmSpec {
        let mut i = 0;
        while i < SPECS.len() {
            if SPECS[i].arm as u8 == self as u8 {
                return &SPECS[i];
            }
            i += 1;
        }
        panic!("every arm is declared in SPECS")
    }

    /// Its name in experiment files, the store and reports.
    pub const fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// What the arm does with a task on which every base try failed, in a line.
    pub const fn description(self) -> &'static str {
        self.spec().description
    }

    pub const fn rescue(self) -> Rescue {
        self.spec().rescue
    }

    pub fn parse(s: &str) -> Option<Arm> {
        Arm::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// The names of every arm, for messages.
    pub fn names() -> Vec<&'static str> {
        Arm::ALL.iter().map(|a| a.as_str()).collect()
    }

    /// The arms in display order (charts, tables, legends).
    pub fn display_order() -> Vec<Arm> {
        let mut v = Arm::ALL.to_vec();
        v.sort_by_key(|a| a.spec().display_rank);
        v
    }

    /// Routed arms consult the router (and so measure behaviour profiles).
    pub fn routed(self) -> bool {
        self.rescue() == Rescue::Routed
    }

    /// Arms that run sibling harnesses at all.
    pub fn uses_siblings(self) -> bool {
        !matches!(self.rescue(), Rescue::Nothing | Rescue::BaseTries)
    }
}

impl std::fmt::Display for Arm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_arm_is_declared_once_with_its_own_name_and_rank() {
        let names: std::collections::BTreeSet<_> = SPECS.iter().map(|s| s.name).collect();
        let ranks: std::collections::BTreeSet<_> = SPECS.iter().map(|s| s.display_rank).collect();
        assert_eq!((names.len(), ranks.len()), (SPECS.len(), SPECS.len()));
        for a in Arm::ALL {
            assert_eq!(Arm::parse(a.as_str()), Some(a));
        }
        assert_eq!(Arm::display_order()[0], Arm::HarnessS, "the routed arm comes first in charts");
    }
}
