//! A task: the unit a suite hands to an episode, and the unit of held-out splits (via `family`).

use serde::{Deserialize, Serialize};

/// One task of a suite. `payload` is suite-specific (a DBBench record, an AppWorld task id,
/// a SWE-Gym instance) and is read only by the suite's environment and scorer.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Task {
    pub id: String,
    pub suite: String,
    /// The unit of held-out splits: a held-out family is never trained on.
    pub family: String,
    /// The natural-language instruction, as the suite presents it to the agent.
    pub instruction: String,
    pub payload: serde_json::Value,
}
