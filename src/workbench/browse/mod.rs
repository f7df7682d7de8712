//! Read-side commands: suites and tasks, harnesses with their profiles, experiments, results,
//! episodes and rescues, report export. One file per resource: `datasets.rs`, `harnesses.rs`,
//! `runs.rs`, `episodes.rs`, `exports.rs`; this one holds what they share.

mod datasets;
mod episodes;
mod exports;
mod harnesses;
mod runs;

pub use datasets::{suite_row, task_row};
pub use harnesses::harness_rows;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::reports::report_error;
use super::{api, commands, line_diff, CommandError, Workbench};
use crate::analysis::{Headlines, ProfileRecord};
use crate::harness::HarnessLibrary;
use crate::report::ReportBundle;
use crate::route::BehaviorProfile;
use crate::store::{EpisodeFilter, EpisodeRow, RunRow, RunStatus, KIND_EXPERIMENT};
use crate::suite::{self, Suite};
use crate::task::Task;

fn suite_named(name: &str) -> Result<Box<dyn Suite>, CommandError> {
    suite::by_name(name).ok_or_else(|| {
        let known = suite::names();
        CommandError::NotFound(format!("no suite `{name}` (suites: {})", known.join(", ")))
    })
}
