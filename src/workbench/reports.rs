//! Results pages: a run's report (the whole analysis with its charts), and a finished run's kept
//! once computed. A finished run's report cannot change, so it is computed once per workbench:
//! a request that finds it being computed waits for that work instead of repeating it, and the
//! newest finished run's report is computed in the background before it is asked for (when the
//! list of experiments is read, and when a run finishes here), so its page opens at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{api, CommandError};
use crate::report::{ReportBundle, ReportError};
use crate::store::{BlockingStore, RunStatus};

/// (run, compared run).
type Key = (i64, Option<i64>);
/// A finished run's report, once computed; its lock is held while it is being computed.
type Slot = Arc<Mutex<Option<Arc<api::Report>>>>;

pub(super) fn report_error(e: ReportError) -> CommandError {
    match e {
        ReportError::NoExperiment { .. } | ReportError::NotAnExperiment { .. } => CommandError::NotFound(e.to_string()),
        ReportError::BadSelector(_) => CommandError::BadArguments(e.to_string()),
        // a link in the output folder, refused by `files::create`: the folder's content is the
        // caller's to fix, not an internal error
        ReportError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::InvalidInput => CommandError::Conflict(e.to_string()),
        other => CommandError::Internal(other.to_string()),
    }
}

/// The report of run `id` (beside `other`) as the `results` and `compare` commands send it.
fn compute(store: &BlockingStore, id: i64, other: Option<i64>) -> Result<api::Report, CommandError> {
    let other_s = other.map(|o| o.to_string());
    let b = ReportBundle::build(store, &id.to_string(), other_s.as_deref()).map_err(report_error)?;
    let report = b.json(true);
    let other_run = report.comparison.as_ref().map(|c| c.other_run.clone());
    Ok(api::Report { report, other: other_run })
}

fn finished(store: &BlockingStore, id: i64) -> bool {
    store.run(id).ok().flatten().is_some_and(|r| r.status == RunStatus::Finished)
}

/// Finished runs' reports by (run, compared run).
#[derive(Clone)]
pub(super) struct Reports {
    store: Arc<BlockingStore>,
    slots: Arc<Mutex<HashMap<Key, Slot>>>,
}

impl Reports {
    pub(super) fn new(store: Arc<BlockingStore>) -> Reports {
        Reports { store, slots: Arc::new(Mutex::new(HashMap::new())) }
    }

    fn slot(&self, key: Key) -> Slot {
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).entry(key).or_default().clone()
    }

    /// The report of run `id` (beside `other`): kept when both runs are finished, computed each
    /// time otherwise (an unfinished run's numbers still move).
    pub(super) fn get(&self, id: i64, other: Option<i64>) -> Result<api::Report, CommandError> {
        if !(finished(&self.store, id) && other.is_none_or(|o| finished(&self.store, o))) {
            return compute(&self.store, id, other);
        }
        let slot = self.slot((id, other));
        let mut kept = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = kept.as_ref() {
            return Ok((**v).clone());
        }
        let v = compute(&self.store, id, other)?;
        *kept = Some(Arc::new(v.clone()));
        Ok(v)
    }

    /// Compute finished run `id`'s report in the background, unless it is kept or on its way.
    pub(super) fn warm(&self, id: i64) {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            if slots.contains_key(&(id, None)) {
                return;
            }
            slots.entry((id, None)).or_default().clone()
        };
        let store = self.store.clone();
        let spawned = std::thread::Builder::new().name(format!("report of run {id}")).spawn(move || {
            let mut kept = slot.lock().unwrap_or_else(|p| p.into_inner());
            if kept.is_none() && finished(&store, id) {
                match compute(&store, id, None) {
                    Ok(v) => *kept = Some(Arc::new(v)),
                    Err(e) => tracing::debug!("run {id}: no report yet ({e})"),
                }
            }
        });
        if let Err(e) = spawned {
            tracing::warn!("run {id}: cannot compute its report in the background: {e}");
        }
    }

    /// Drop every report of run `id` (it was deleted).
    pub(super) fn forget(&self, id: i64) {
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).retain(|(run, other), _| *run != id && *other != Some(id));
    }
}
