//! The workbench command set: every view of the app and of `harness-s serve` is a command here,
//! taking JSON arguments and returning JSON (shapes in `docs/api.md`). The desktop shell and the
//! HTTP server are thin adapters that forward a command name and its arguments to
//! [`Workbench::call`] and forward [`Workbench::subscribe`]'s events; nothing here knows of
//! either.

pub mod api;
mod args;
mod browse;
pub mod commands;
pub use browse::{harness_rows, suite_row, task_row};
pub use jobs::cluster_status;
mod diff;
mod jobs;
mod reports;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::store::{BlockingStore, StoreError};

pub use args::Args;
pub use diff::{line_diff, DiffLine};

/// The demo experiment the first run offers (the same file `experiments/demo.toml` the CLI runs).
pub const DEMO_CONFIG: &str = include_str!("../../experiments/demo.toml");

/// The workspace directory of a store: beside the SQLite file (imported datasets and saved
/// experiment files go there); the working directory for a database URL.
pub fn workspace_for(db: &str) -> PathBuf {
    if db.contains("://") {
        return PathBuf::from(".");
    }
    let p = Path::new(db.strip_prefix("sqlite:").unwrap_or(db));
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Why a command failed; adapters map the kinds onto their own error forms (HTTP status codes).
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum CommandError {
    /// A missing or malformed argument, or input that does not parse.
    #[error("{0}")]
    BadArguments(String),
    /// The command, or the object it names, does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The command would replace something that exists (a saved file) without being told to.
    #[error("{0}")]
    Conflict(String),
    /// Anything else: the store, the file system, a failed analysis.
    #[error("{0}")]
    Internal(String),
}

impl From<StoreError> for CommandError {
    fn from(e: StoreError) -> Self {
        CommandError::Internal(e.to_string())
    }
}

impl CommandError {
    /// The kind a shell reports with the message (and maps to an HTTP status).
    pub fn kind(&self) -> &'static str {
        match self {
            CommandError::BadArguments(_) => "bad_arguments",
            CommandError::NotFound(_) => "not_found",
            CommandError::Conflict(_) => "conflict",
            CommandError::Internal(_) => "internal",
        }
    }

    /// What a shell sends back for a failed command.
    pub fn body(&self) -> api::ErrorBody {
        api::ErrorBody { error: self.to_string(), kind: self.kind().to_string() }
    }
}

pub type CommandResult = Result<Value, CommandError>;

/// The longest file or folder name file systems take (`NAME_MAX`).
const MAX_NAME_BYTES: usize = 255;
/// The longest path taken relative to the workspace (well under `PATH_MAX`).
const MAX_PATH_BYTES: usize = 1024;

/// Where a command may write: `rel` (its argument `arg`) inside the workspace's `folder`, never
/// outside the workspace. An absolute path, a `..` and a path that an existing symbolic link
/// (a folder on the way, or the file itself) takes outside the workspace are refused. Every
/// command that writes a file takes the path it writes from here.
pub(crate) fn confined_path(workspace: &Path, folder: &str, command: &str, arg: &str, rel: &str) -> Result<PathBuf, CommandError> {
    let expected = format!("relative to the workspace's {folder} folder (no absolute path, no `..`)");
    if rel.trim().is_empty() {
        return Err(CommandError::BadArguments(format!("{command}: {arg} is empty; give a path {expected}")));
    }
    // what no file system takes is the caller's mistake, said as such (not an internal error)
    if rel.contains('\0') {
        return Err(CommandError::BadArguments(format!("{command}: {arg} contains a NUL byte; give a path {expected}")));
    }
    if rel.len() > MAX_PATH_BYTES || rel.split('/').any(|part| part.len() > MAX_NAME_BYTES) {
        return Err(CommandError::BadArguments(format!(
            "{command}: {arg} is too long: at most {MAX_PATH_BYTES} bytes, and {MAX_NAME_BYTES} per file or folder name"
        )));
    }
    let p = Path::new(rel);
    if !p.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(CommandError::BadArguments(format!("{command}: {arg} `{rel}` must be {expected}")));
    }
    std::fs::create_dir_all(workspace).map_err(|e| CommandError::Internal(format!("creating the workspace {}: {e}", workspace.display())))?;
    let root = workspace.canonicalize().map_err(|e| CommandError::Internal(format!("the workspace {}: {e}", workspace.display())))?;
    let mut at = workspace.to_path_buf();
    for c in Path::new(folder).components().chain(p.components()) {
        at.push(c);
        // A link (even a dangling one) must resolve inside; what does not exist yet is created
        // as a plain folder or file below what does.
        if std::fs::symlink_metadata(&at).is_ok() && !at.canonicalize().is_ok_and(|real| real.starts_with(&root)) {
            return Err(CommandError::BadArguments(format!(
                "{command}: {arg} `{rel}` leads outside the workspace through {} (a symbolic link); give a path {expected} that stays inside it",
                at.display()
            )));
        }
    }
    Ok(workspace.join(folder).join(p))
}

type Listener = Box<dyn Fn(&Value) + Send + Sync>;

/// Fan-out of events to every subscriber (the desktop window, each SSE stream).
#[derive(Default)]
pub(crate) struct Hub {
    next: Mutex<u64>,
    listeners: Mutex<Vec<(u64, Listener)>>,
}

impl Hub {
    pub(crate) fn publish(&self, event: &Value) {
        let ls = self.listeners.lock().unwrap_or_else(|p| p.into_inner());
        for (_, l) in ls.iter() {
            l(event);
        }
    }
}

/// A subscription; dropping it unsubscribes.
pub struct Subscription {
    hub: Arc<Hub>,
    id: u64,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.hub.listeners.lock().unwrap_or_else(|p| p.into_inner()).retain(|(i, _)| *i != self.id);
    }
}

/// One workspace: a run store and a directory for imported datasets and saved experiment files.
pub struct Workbench {
    store: Arc<BlockingStore>,
    workspace: PathBuf,
    hub: Arc<Hub>,
    jobs: jobs::Jobs,
    /// Reports of finished runs, by (run, compared run): they cannot change any more.
    reports: reports::Reports,
    /// Finished runs' headline numbers, for the lists of runs.
    headlines: Mutex<HashMap<i64, crate::analysis::Headlines>>,
    /// Finished runs' pilots for sizing, by (run, suite): they cannot change any more.
    pilots: Mutex<HashMap<(i64, String), Option<crate::analysis::power::Pilot>>>,
}

impl Workbench {
    /// Open the store at `db` (a file path or a database URL) with `workspace` for imported
    /// datasets and saved experiment files (created when needed).
    pub fn open(db: &str, workspace: &Path) -> Result<Workbench, CommandError> {
        let store = BlockingStore::open(db).map_err(|e| CommandError::Internal(format!("opening the store {db}: {e}")))?;
        let hub = Arc::new(Hub::default());
        let store = Arc::new(store);
        let jobs = jobs::Jobs::new(store.clone(), hub.clone());
        let reports = reports::Reports::new(store.clone());
        // A run that finishes here is about to be looked at: its report is made meanwhile.
        let warm = reports.clone();
        hub.listeners.lock().unwrap_or_else(|p| p.into_inner()).push((
            0,
            Box::new(move |e: &Value| {
                if e["event"] == "run_finished" && e["status"] == "finished" {
                    if let Some(id) = e["run_id"].as_i64() {
                        warm.warm(id);
                    }
                }
            }),
        ));
        Ok(Workbench {
            store,
            workspace: workspace.to_path_buf(),
            hub,
            jobs,
            reports,
            headlines: Mutex::new(HashMap::new()),
            pilots: Mutex::new(HashMap::new()),
        })
    }

    pub fn store(&self) -> &BlockingStore {
        &self.store
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Receive every event (progress, run started/finished) as JSON.
    pub fn subscribe(&self, listener: impl Fn(&Value) + Send + Sync + 'static) -> Subscription {
        let id = {
            let mut n = self.hub.next.lock().unwrap_or_else(|p| p.into_inner());
            *n += 1;
            *n
        };
        self.hub.listeners.lock().unwrap_or_else(|p| p.into_inner()).push((id, Box::new(listener)));
        Subscription { hub: self.hub.clone(), id }
    }

    /// Every command's name, for adapters that route by name and for `404` messages.
    pub const COMMANDS: &'static [&'static str] = commands::COMMANDS;

    /// Run one command. Blocking: adapters on an async runtime call it from a blocking thread.
    pub fn call(&self, command: &str, args: Value) -> CommandResult {
        commands::dispatch(self, command, args)
    }

    /// The experiment runs this workbench is running now.
    pub fn running(&self) -> Vec<i64> {
        self.jobs.running()
    }

    /// Stop every running experiment cleanly (the window closes, the server shuts down) and wait
    /// for them, so each is left resumable; then close the store, merging an SQLite store's
    /// write-ahead log. The workbench answers no further commands that need the store.
    pub fn shutdown(&self) {
        self.jobs.cancel_all_and_wait();
        self.store.close();
    }

    /// Delete a run and everything recorded for it (episodes, records, state) in one
    /// transaction. A run running here, or marked `running` in the store (running in another
    /// process, or killed before finishing), is refused: cancel it first, or for a killed run
    /// `harness-s store delete-run ID --force`.
    fn run_delete(&self, id: i64) -> Result<api::RunDeleted, CommandError> {
        if self.store.run(id)?.is_none() {
            return Err(CommandError::NotFound(format!("no run {id}")));
        }
        self.jobs.forget(id)?;
        let deleted = self.store.delete_run(id, false).map_err(|e| match e {
            StoreError::RunRunning { .. } => CommandError::Conflict(format!(
                "run {id} is marked running: it is running in another process, or was killed before finishing (resume it and cancel it, or delete it with `harness-s store delete-run {id} --force`)"
            )),
            StoreError::NotFound { .. } => CommandError::NotFound(format!("no run {id}")),
            other => other.into(),
        })?;
        self.reports.forget(id);
        self.headlines.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
        Ok(api::RunDeleted { run_id: id, episodes: deleted.episodes, records: deleted.records, states: deleted.states })
    }

    fn workspace_info(&self) -> Result<api::Workspace, CommandError> {
        let mut demos: Vec<crate::store::RunRow> =
            self.store.runs()?.into_iter().filter(|r| r.kind == crate::store::KIND_EXPERIMENT && r.name == "demo").collect();
        demos.sort_by_key(|r| std::cmp::Reverse(r.id));
        let newest = demos.first();
        let finished = demos.iter().find(|r| r.status == crate::store::RunStatus::Finished).map(|r| r.id);
        Ok(api::Workspace {
            db: self.store.location().to_string(),
            workspace_dir: self.workspace.display().to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            // The newest demo run whatever its state, so a reopened window follows a running demo.
            demo_run_id: newest.map(|r| r.id),
            demo_status: newest.map(|r| r.status.as_str().to_string()),
            demo_finished_run_id: finished,
            running: self.jobs.running(),
        })
    }
}
