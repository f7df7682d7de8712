//! What a run sets up from its configuration before any episode: each suite's tasks, its
//! training and held-out split, the base harness and the sibling pool; the policy endpoint.
//! The coordinator and every worker of a distributed run set them up the same way.

use crate::harness::{HarnessLibrary, HarnessSpec};
use crate::policy::openai::{OpenAiConfig, OpenAiPolicy};
use crate::records::Arm;
use crate::suite::Suite;
use crate::task::Task;

use super::config::{ExperimentConfig, SuiteSize};

/// Why a suite, its harnesses or the policy endpoint could not be set up from the file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetupError {
    #[error("unknown suite `{0}`")]
    UnknownSuite(String),
    #[error(transparent)]
    Tasks(#[from] crate::suite::LoadError),
    #[error("suite `{0}` has no tasks")]
    NoTasks(String),
    #[error("heldout_families: suite `{suite}` has no family `{family}` (families: {families})")]
    UnknownFamily { suite: String, family: String, families: String },
    #[error("every family is held out: nothing left to train on")]
    NothingToTrain,
    #[error("harness.{key}: suite `{suite}` has no harness `{name}`")]
    UnknownHarness { key: &'static str, suite: String, name: String },
    #[error("harness.siblings: no siblings of `{base}` for suite `{suite}`")]
    NoSiblings { base: String, suite: String },
    #[error(transparent)]
    Harnesses(#[from] crate::harness::SpecError),
    #[error("policy: {0}")]
    Policy(#[from] crate::policy::openai::OpenAiSetupError),
}

pub(crate) struct SuiteSetup {
    pub suite: Box<dyn Suite>,
    pub tasks: Vec<Task>,
    pub train: Vec<usize>,
    pub heldout: Vec<usize>,
    pub base: HarnessSpec,
    pub siblings: Vec<HarnessSpec>,
}

impl SuiteSetup {
    /// What the rollout estimate needs to know of the suite as set up.
    pub fn size(&self) -> SuiteSize {
        SuiteSize {
            train_tasks: self.train.len(),
            heldout_tasks: self.heldout.len(),
            siblings: self.siblings.len(),
            runs_agent_code: self.suite.runs_agent_code(),
        }
    }

    /// The harness named `name`: the base or one of the siblings.
    pub fn harness(&self, name: &str) -> Option<&HarnessSpec> {
        std::iter::once(&self.base).chain(&self.siblings).find(|h| h.name == name)
    }
}

pub(crate) fn setup_suite(cfg: &ExperimentConfig, name: &str, lib: &HarnessLibrary) -> Result<SuiteSetup, SetupError> {
    let suite = crate::suite::by_name(name).ok_or_else(|| SetupError::UnknownSuite(name.to_string()))?;
    let tasks = match cfg.datasets.get(name) {
        Some(path) => suite.load_file(std::path::Path::new(path))?,
        None => suite.bundled_tasks()?,
    };
    if tasks.is_empty() {
        return Err(SetupError::NoTasks(name.to_string()));
    }
    // with several suites, each held-out family belongs to one of them (checked by the caller)
    let families: std::collections::BTreeSet<&str> = tasks.iter().map(|t| t.family.as_str()).collect();
    for h in cfg.heldout_families.iter().filter(|_| cfg.suites.len() == 1) {
        if !families.contains(h.as_str()) {
            let families = families.iter().cloned().collect::<Vec<_>>().join(", ");
            return Err(SetupError::UnknownFamily { suite: name.to_string(), family: h.clone(), families });
        }
    }
    let (heldout, train): (Vec<usize>, Vec<usize>) = (0..tasks.len()).partition(|&i| cfg.heldout_families.contains(&tasks[i].family));
    if train.is_empty() {
        return Err(SetupError::NothingToTrain);
    }
    let train = training_pool(train, cfg.budget.train_pool);
    let base_name = cfg.harness.base.clone().unwrap_or_else(|| "base".into());
    let unknown = |key, harness: &str| SetupError::UnknownHarness { key, suite: name.to_string(), name: harness.to_string() };
    let base = lib.get(name, &base_name).ok_or_else(|| unknown("base", &base_name))?.spec.clone();
    let siblings: Vec<HarnessSpec> = if cfg.harness.siblings.is_empty() {
        lib.siblings(name, &base_name).into_iter().map(|e| e.spec.clone()).collect()
    } else {
        let mut v = Vec::new();
        for s in &cfg.harness.siblings {
            let e = lib.get(name, s).ok_or_else(|| unknown("siblings", s))?;
            v.push(e.spec.clone());
        }
        v
    };
    let needs_siblings = cfg.arms.iter().filter_map(|a| Arm::parse(a)).any(Arm::uses_siblings);
    if siblings.is_empty() && needs_siblings {
        return Err(SetupError::NoSiblings { base: base_name, suite: name.to_string() });
    }
    Ok(SuiteSetup { suite, tasks, train, heldout, base, siblings })
}

/// `pool` of the training tasks, the same for every seed and arm (in task order); all of them
/// when `pool` is 0 or covers them.
fn training_pool(mut train: Vec<usize>, pool: usize) -> Vec<usize> {
    if pool > 0 && pool < train.len() {
        crate::seed::shuffle(&mut train, crate::seed::mix(0x7a1b, &[0x9001]));
        train.truncate(pool);
        train.sort_unstable();
    }
    train
}

/// The shipped harnesses, and those of `harness.dir` when the file names one.
pub(crate) fn harness_library(cfg: &ExperimentConfig) -> Result<HarnessLibrary, SetupError> {
    Ok(match &cfg.harness.dir {
        Some(d) => HarnessLibrary::with_dir(std::path::Path::new(d))?,
        None => HarnessLibrary::builtin()?,
    })
}

/// The endpoint an `openai` policy samples from (its model name switches with each update).
pub(crate) fn endpoint_policy(p: &super::config::PolicyConfig) -> Result<OpenAiPolicy, SetupError> {
    let mut c = OpenAiConfig::new(p.base_url.clone().unwrap_or_default(), p.model.clone().unwrap_or_default());
    c.api_key_env = p.api_key_env.clone();
    c.base_urls = p.base_urls.clone();
    c.max_tokens = p.max_tokens;
    if let Some(t) = p.timeout_s {
        c.timeout = std::time::Duration::from_secs(t);
    }
    Ok(OpenAiPolicy::new(c)?)
}
