//! Routing failed tasks to sibling harnesses: behaviour profiles and voters.

pub mod llm;
pub mod profile;
pub mod router;
pub mod voter;

pub use llm::{LlmVoter, LlmVoterConfig};
pub use profile::{failure_signature, failure_summary, BehaviorProfile, Counts};
pub use router::{borda, Abstention, RouteQuery, Router, RoutingDecision, Voter, VOTERS};
