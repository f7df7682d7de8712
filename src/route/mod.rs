//! Routing failed tasks to sibling harnesses: behaviour profiles and voters.

pub mod profile;
pub mod router;

pub use profile::{failure_signature, failure_summary, BehaviorProfile, Counts};
pub use router::{borda, RouteQuery, Router, RoutingDecision, Voter, VOTERS};
