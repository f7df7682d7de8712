//! The seam between the one training loop and what it trains. The loop (rollouts, GRPO groups,
//! the router's rescues, distillation, evaluation, records) is the same for every arm and every
//! learner; a [`Learner`] supplies the policy to sample from and turns a batch of weighted
//! examples into the next policy version. The built-in CPU policy is one learner
//! ([`BuiltinLearner`]); an external trainer driving a served model is another.

use super::batch::{flatten, BatchMeta, TrainSequence};
use crate::grammar::model::SparseModel;
use crate::policy::builtin::BuiltinPolicy;
use crate::policy::Policy;
use crate::records::JobState;

/// Why an update did not happen: always the infrastructure's fault (the trainer, the files it
/// exchanges, the serving endpoint), never a task failure. The job stops at its last completed
/// update and resumes from there.
#[derive(Debug, thiserror::Error)]
pub enum LearnerError {
    #[error("trainer: {0}")]
    Trainer(String),
    #[error("serving: {0}")]
    Serving(String),
    #[error("{what} `{path}`: {source}")]
    Io {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// What the workers of a distributed run sample from, for a learner at its current version.
#[derive(Clone, Debug)]
pub enum WorkerPolicy {
    /// The built-in policy's weights.
    Builtin(SparseModel),
    /// A served model, by the name the endpoint of the run's `policy` section serves it under.
    Endpoint(String),
}

/// What the training loop trains.
pub trait Learner: Send + Sync {
    /// The policy this iteration's rollouts are sampled from.
    fn policy(&self) -> &dyn Policy;
    /// The version of that policy (recorded with routing decisions and profiles).
    fn version(&self) -> u64;
    /// Learn from demonstrations before the first iteration (sequences of weight 1).
    fn warm_start(&self, demonstrations: &[TrainSequence], meta: &BatchMeta) -> Result<(), LearnerError>;
    /// One update on a batch of weighted sequences (GRPO advantages, distilled rescues).
    fn update(&self, batch: &[TrainSequence], meta: &BatchMeta) -> Result<(), LearnerError>;
    /// Write the learner's state into a job checkpoint.
    fn save(&self, st: &mut JobState);
    /// Take the learner's state back from a job checkpoint.
    fn load(&self, st: &JobState) -> Result<(), LearnerError>;
    /// The current policy as a worker of a distributed run rebuilds it.
    fn for_workers(&self) -> WorkerPolicy;
    /// Whether the reply text of a demonstration (the grammar search's decision trace) means
    /// something to this learner; others learn the calls alone.
    fn reads_decision_traces(&self) -> bool {
        false
    }
}

/// Full-batch passes over the demonstrations in the built-in policy's warm start.
const WARM_START_EPOCHS: usize = 20;

/// The built-in policy as a learner: one gradient step per update at `learning_rate`; the warm
/// start with L2 decay towards zero.
pub struct BuiltinLearner {
    policy: BuiltinPolicy,
    learning_rate: f32,
    weight_decay: f32,
}

impl BuiltinLearner {
    pub fn new(policy: BuiltinPolicy, learning_rate: f32, weight_decay: f32) -> Self {
        BuiltinLearner { policy, learning_rate, weight_decay }
    }
}

impl Learner for BuiltinLearner {
    fn policy(&self) -> &dyn Policy {
        &self.policy
    }

    fn version(&self) -> u64 {
        self.policy.version()
    }

    fn warm_start(&self, demonstrations: &[TrainSequence], _meta: &BatchMeta) -> Result<(), LearnerError> {
        let examples = flatten(demonstrations);
        for _ in 0..WARM_START_EPOCHS {
            self.policy.train_decayed(&examples, self.learning_rate, self.weight_decay);
        }
        Ok(())
    }

    fn update(&self, batch: &[TrainSequence], _meta: &BatchMeta) -> Result<(), LearnerError> {
        self.policy.train(&flatten(batch), self.learning_rate);
        Ok(())
    }

    fn save(&self, st: &mut JobState) {
        st.model = Some(self.policy.snapshot());
    }

    fn load(&self, st: &JobState) -> Result<(), LearnerError> {
        if let Some(m) = &st.model {
            self.policy.restore(m);
        }
        Ok(())
    }

    fn reads_decision_traces(&self) -> bool {
        true
    }

    fn for_workers(&self) -> WorkerPolicy {
        WorkerPolicy::Builtin(self.policy.snapshot())
    }
}
