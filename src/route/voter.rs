//! The seam between the router and its voters: what a voter is asked ([`RouteQuery`]) and what
//! it must answer ([`Voter`]). The router and every voter (statistical ones, the LLM voter)
//! depend on this file; it depends on neither.

use serde::{Deserialize, Serialize};

use super::profile::BehaviorProfile;
use crate::seed::SplitMix;

/// What the router knows about a failed task.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct RouteQuery {
    pub task_id: String,
    pub family: String,
    pub signature: String,
    pub summary: String,
}

/// Why a voter sits out a decision (the decision records it).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Abstention {
    /// The endpoint failed too often in a row; the voter sits out a few decisions.
    #[error("paused after {0} failed requests in a row")]
    Paused(u32),
    /// The request to the voter's endpoint failed.
    #[error("{0}")]
    Endpoint(String),
    /// The reply holds no ranking of the candidates.
    #[error("{0}")]
    NoRanking(String),
}

pub trait Voter: Send + Sync {
    fn name(&self) -> String;
    /// Siblings, best first; must rank every sibling that has a profile. `Err` abstains from
    /// this decision, saying why (an LLM voter whose endpoint failed).
    fn rank(&self, q: &RouteQuery, profiles: &[BehaviorProfile], rng: &mut SplitMix) -> Result<Vec<String>, Abstention>;
}
