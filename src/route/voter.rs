//! The seam between the router and its voters: what a voter is asked ([`RouteQuery`]) and what
//! it must answer ([`Voter`]). The router and every voter (statistical ones, the LLM voter)
//! depend on this file; it depends on neither.

use serde::{Deserialize, Serialize};

use super::profile::BehaviorProfile;
use crate::seed::SplitMix;

/// What the router knows about a failed task.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RouteQuery {
    pub task_id: String,
    pub family: String,
    pub signature: String,
    pub summary: String,
}

pub trait Voter: Send + Sync {
    fn name(&self) -> String;
    /// Siblings, best first; must rank every sibling that has a profile. `Err` abstains from
    /// this decision, saying why (an LLM voter whose endpoint failed).
    fn rank(&self, q: &RouteQuery, profiles: &[BehaviorProfile], rng: &mut SplitMix) -> Result<Vec<String>, String>;
}
