//! Experiments: one training loop for every arm, evaluation under the base harness on training
//! and held-out families, resume after a kill.

pub mod batch;
pub mod config;
pub mod distributed;
pub mod export;
pub mod external;
pub mod learner;
mod progress;
pub mod runner;
mod setup;
pub mod snapshot;

pub use crate::records::task_record_key;
pub use config::{ConfigError, ExperimentConfig, RolloutEstimate};
pub use learner::{BuiltinLearner, Learner, LearnerError};
pub use runner::{estimate, group_members, run_experiment, run_experiment_with, suite_sizes, Execution, ExperimentError, ExperimentOutcome};
