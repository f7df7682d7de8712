//! `harness-s`: the command-line face of the workbench. CLI definition and glue only; the work
//! is done by the core library.

mod serve;

/// `println!` for a command's output: when the reader has gone (`harness-s tasks ... | head`)
/// the process ends as other Unix tools do (status 141, SIGPIPE's), after its usual clean-up,
/// instead of panicking on the closed pipe.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::output_failed(e);
        }
    }};
}

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _, Result};
use clap::{Parser, Subcommand};

use harness_s::eval::{run_eval, EvalConfig};
use harness_s::events::{Event, EventSink};
use harness_s::harness::HarnessLibrary;
use harness_s::policy::openai::{OpenAiConfig, OpenAiPolicy};
use harness_s::policy::Policy;
use harness_s::store::BlockingStore;
use harness_s::suite::{self, Suite};
use harness_s::task::Task;

#[derive(Parser)]
#[command(name = "harness-s", version, about = "Harness-S Workbench: learn from sibling harnesses, evaluate under the base harness")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Run a model's code (AppWorld cells, SWE-Gym commands) even where bubblewrap is missing,
    /// with only process-level limits. Without bubblewrap the workbench otherwise refuses.
    #[arg(long, global = true)]
    unsafe_no_sandbox: bool,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
enum Command {
    /// List the suites the workbench knows.
    Suites {
        #[arg(long)]
        json: bool,
    },
    /// List a suite's tasks (bundled, or from a dataset file).
    Tasks {
        #[arg(long)]
        suite: String,
        #[arg(long)]
        family: Option<String>,
        /// A dataset file in the benchmark's official format instead of the bundled set.
        #[arg(long)]
        file: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// List harnesses, or show one resolved spec and its difference from base.
    Harnesses {
        #[arg(long)]
        suite: Option<String>,
        #[arg(long)]
        show: Option<String>,
        /// Extra directory of harness spec files.
        #[arg(long)]
        dir: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Run every record's gold answer through the executor and scorer.
    VerifyDataset {
        #[arg(long)]
        suite: String,
        /// The dataset file (default: the bundled set).
        file: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Evaluate a policy on a suite under one harness; every trajectory goes to the store.
    Eval(EvalArgs),
    /// The built-in policy's grammar coverage: the share of tasks some action sequence of its
    /// grammar solves (its ceiling).
    Coverage {
        #[arg(long)]
        suite: String,
        #[arg(long)]
        file: Option<PathBuf>,
        #[arg(long)]
        family: Option<String>,
        /// Decision paths tried per first action.
        #[arg(long, default_value_t = 20000)]
        max_paths: usize,
        #[arg(long)]
        json: bool,
    },
    /// Run experiments (policy-only versus sibling-trained arms).
    Experiment {
        #[command(subcommand)]
        command: ExperimentCommand,
    },
    /// Write an experiment's report: one self-contained HTML file, report.json, one CSV per
    /// table and every chart as SVG.
    Report {
        /// The experiment run id, or `latest`.
        experiment: String,
        /// The run store (SQLite file path, or a postgres:// URL).
        #[arg(long, env = "HARNESS_S_DB", default_value = "harness-s.db")]
        db: String,
        /// Another experiment run (id or `latest`) to put side by side.
        #[arg(long)]
        compare: Option<String>,
        /// Output directory (created if missing).
        #[arg(long)]
        out: PathBuf,
    },
    /// Write an experiment's training examples (every update's batch) and evaluation trajectories
    /// for training elsewhere: openai-chat (JSONL; TRL, OpenAI fine-tuning), sharegpt
    /// (LLaMA-Factory, axolotl), verl-sft (parquet with a `messages` column; needs pyarrow).
    Export {
        /// The experiment run id, or `latest`.
        run: String,
        #[arg(long, value_parser = ["openai-chat", "sharegpt", "verl-sft"])]
        format: String,
        /// Output directory (created if missing).
        #[arg(long)]
        out: PathBuf,
        #[arg(long)]
        arm: Option<String>,
        /// A seed of the experiment (its value, as in the experiment file).
        #[arg(long)]
        seed: Option<u64>,
        /// train: training examples and training-family evaluations; heldout: held-out evaluations.
        #[arg(long, value_parser = ["train", "heldout"])]
        split: Option<String>,
        /// Comma-separated sources: rollout, rescue-distilled, warm-start, evaluation.
        #[arg(long)]
        source: Option<String>,
        /// The run store (SQLite file path, or a postgres:// URL).
        #[arg(long, env = "HARNESS_S_DB", default_value = "harness-s.db")]
        db: String,
    },
    /// Inspect a run store.
    Store {
        #[command(subcommand)]
        command: StoreCommand,
    },
    /// Serve the workbench UI and its command set over HTTP on 127.0.0.1 (for a workbench on a
    /// remote GPU box: reach it through an SSH tunnel). Prints the URL with its access token.
    Serve {
        /// Port on 127.0.0.1 (0 = any free port; the URL printed names it).
        #[arg(long, default_value_t = 8765)]
        port: u16,
        /// The run store (SQLite file path, or a postgres:// URL).
        #[arg(long, env = "HARNESS_S_DB", default_value = "harness-s.db")]
        db: String,
        /// The built UI directory (default: ui/dist).
        #[arg(long)]
        ui: Option<PathBuf>,
    },
    /// Run the episodes of distributed experiments: claim episode jobs of any running
    /// experiment from a Postgres store, run them (suite environments, sandbox, policy
    /// endpoints) and write the episodes back. Stops on SIGTERM or Ctrl-C after the episodes in
    /// hand.
    Worker {
        /// The run store: a postgres:// URL the coordinator (`experiment run --distributed`) uses too.
        #[arg(long, env = "HARNESS_S_DB")]
        db: String,
        /// Episodes at once (default: the number of CPUs).
        #[arg(long)]
        slots: Option<usize>,
        /// The worker's name in `experiment status` (default: <host>-<pid>).
        #[arg(long)]
        name: Option<String>,
        /// Seconds a claimed job stays this worker's without a heartbeat; a killed worker's jobs
        /// are claimed again after it.
        #[arg(long, default_value_t = 30)]
        lease_s: u64,
        /// Exit (status 0) after this many seconds with nothing to claim, for batch schedulers.
        #[arg(long)]
        exit_after_idle: Option<u64>,
        /// Print what the worker did as one JSON object when it stops.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum StoreCommand {
    /// How big the store is and where its bytes go: runs, episodes, bytes on disk (every file of
    /// the database), bytes per episode, the write-ahead log as found, each table and index.
    Info {
        /// The run store (SQLite file path, or a postgres:// URL).
        #[arg(long, env = "HARNESS_S_DB", default_value = "harness-s.db")]
        db: String,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Print one stored episode (its whole trajectory) as JSON: how tools outside the workbench
    /// read a trajectory, which the store keeps compressed.
    Episode {
        id: i64,
        /// The run store (SQLite file path, or a postgres:// URL).
        #[arg(long, env = "HARNESS_S_DB", default_value = "harness-s.db")]
        db: String,
    },
    /// Delete a run and everything recorded for it (episodes with their trajectories, records,
    /// state), in one transaction. A run marked running is refused unless --force.
    DeleteRun {
        /// The run id.
        id: i64,
        /// The run store (SQLite file path, or a postgres:// URL).
        #[arg(long, env = "HARNESS_S_DB", default_value = "harness-s.db")]
        db: String,
        /// Delete without asking (needed when the input is not a terminal).
        #[arg(long)]
        yes: bool,
        /// Delete a run marked running: one killed before finishing (stop it first if it runs).
        #[arg(long)]
        force: bool,
    },
    /// Convert the trajectories a v1 store holds as JSON text to the compressed form (a store
    /// opened by this release keeps reading them in place until then), and give the space back.
    /// Resumable: an interrupted conversion keeps what it converted.
    Compact {
        /// The run store (SQLite file path, or a postgres:// URL).
        #[arg(long, env = "HARNESS_S_DB", default_value = "harness-s.db")]
        db: String,
    },
}

#[derive(Subcommand)]
enum ExperimentCommand {
    /// Run (or resume) the experiment a TOML file describes.
    Run {
        config: PathBuf,
        #[arg(long, env = "HARNESS_S_DB", default_value = "harness-s.db")]
        db: String,
        /// Print one JSON object with the results last.
        #[arg(long)]
        json: bool,
        /// Coordinate only: queue the episodes in the store (Postgres) for `harness-s worker`
        /// processes to run. The numbers are those of a run in one process.
        #[arg(long)]
        distributed: bool,
    },
    /// Running experiments, their queued episodes, and the workers of distributed runs.
    Status {
        #[arg(long, env = "HARNESS_S_DB", default_value = "harness-s.db")]
        db: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args)]
struct EvalArgs {
    #[arg(long)]
    suite: String,
    #[arg(long, default_value = "base")]
    harness: String,
    /// Policy back-end: `openai` (any OpenAI-compatible endpoint).
    #[arg(long, default_value = "openai")]
    policy: String,
    /// Base URL of the endpoint, e.g. http://127.0.0.1:8000/v1
    #[arg(long)]
    base_url: Option<String>,
    #[arg(long)]
    model: Option<String>,
    /// Name of the environment variable holding the API key.
    #[arg(long, default_value = "OPENAI_API_KEY")]
    api_key_env: String,
    /// Task ids (comma-separated) or a file with one id per line.
    #[arg(long)]
    tasks: Option<String>,
    /// Only tasks of this family.
    #[arg(long)]
    family: Option<String>,
    /// A dataset file in the benchmark's format instead of the bundled set.
    #[arg(long)]
    file: Option<PathBuf>,
    /// At most this many tasks (after filtering).
    #[arg(long)]
    limit: Option<usize>,
    /// Tries per task.
    #[arg(long, default_value_t = 1)]
    samples: u32,
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    #[arg(long, default_value_t = 0.0)]
    temperature: f32,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Request timeout in seconds.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    #[arg(long, default_value_t = 4)]
    max_retries: u32,
    /// Tool calling: native, text, or auto.
    #[arg(long, default_value = "auto")]
    tool_mode: String,
    /// Extra directory of harness spec files.
    #[arg(long)]
    harness_dir: Option<PathBuf>,
    /// The run store (SQLite file path, or a postgres:// URL).
    #[arg(long, env = "HARNESS_S_DB", default_value = "harness-s.db")]
    db: String,
    #[arg(long)]
    json: bool,
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("HARNESS_S_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(|| LogWriter { cleared: false })
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = Cli::parse();
    harness_s::sandbox::allow_unsandboxed(cli.unsafe_no_sandbox);
    // scratch folders of workbench processes that were killed go now
    harness_s::sandbox::scratch::sweep_stale();
    install_signal_handler();
    let result = dispatch(cli);
    harness_s::sandbox::scratch::remove_root();
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// Standard output failed mid-command: a closed pipe ends the process quietly, anything else
/// is reported.
fn output_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        quit(141);
    }
    eprintln!("error: writing the output: {e}");
    quit(1);
}

/// End the process at once with `code` (no destructors run): remove the scratch folders and
/// merge the SQLite stores' write-ahead logs first.
fn quit(code: i32) -> ! {
    harness_s::sandbox::scratch::remove_root();
    harness_s::store::merge_wal_on_exit();
    std::process::exit(code);
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Suites { json } => cmd_suites(json),
        Command::Tasks { suite, family, file, json } => cmd_tasks(&suite, family.as_deref(), file.as_deref(), json),
        Command::Harnesses { suite, show, dir, json } => cmd_harnesses(suite.as_deref(), show.as_deref(), dir.as_deref(), json),
        Command::VerifyDataset { suite, file, json } => cmd_verify(&suite, file.as_deref(), json),
        Command::Eval(args) => cmd_eval(args),
        Command::Coverage { suite, file, family, max_paths, json } => cmd_coverage(&suite, file.as_deref(), family.as_deref(), max_paths, json),
        Command::Experiment { command: ExperimentCommand::Run { config, db, json, distributed } } => {
            cmd_experiment_run(&config, &db, json, distributed)
        }
        Command::Experiment { command: ExperimentCommand::Status { db, json } } => cmd_experiment_status(&db, json),
        Command::Worker { db, slots, name, lease_s, exit_after_idle, json } => cmd_worker(&db, slots, name, lease_s, exit_after_idle, json),
        Command::Report { experiment, db, compare, out } => cmd_report(&experiment, &db, compare.as_deref(), &out),
        Command::Export { run, format, out, arm, seed, split, source, db } => {
            cmd_export(&run, &format, out, arm, seed, split, source.as_deref(), &db)
        }
        Command::Store { command: StoreCommand::Info { db, json } } => cmd_store_info(&db, json),
        Command::Store { command: StoreCommand::Compact { db } } => cmd_store_compact(&db),
        Command::Store { command: StoreCommand::DeleteRun { id, db, yes, force } } => cmd_store_delete_run(&db, id, yes, force),
        Command::Store { command: StoreCommand::Episode { id, db } } => cmd_store_episode(&db, id),
        // serve says itself what stopping means (whether experiments were running)
        Command::Serve { port, db, ui } => serve::serve(port, &db, ui.as_deref(), cancel_on_ctrl_c_quietly()),
    }
}

fn find_suite(name: &str) -> Result<Box<dyn Suite>> {
    suite::by_name(name).ok_or_else(|| {
        let known = suite::names();
        anyhow!("unknown suite `{name}` (known: {})", known.join(", "))
    })
}

fn load_tasks(s: &dyn Suite, file: Option<&std::path::Path>) -> Result<Vec<Task>> {
    Ok(match file {
        Some(f) => s.load_file(f)?,
        None => s.bundled_tasks()?,
    })
}

fn library(dir: Option<&std::path::Path>) -> Result<HarnessLibrary> {
    Ok(match dir {
        Some(d) => HarnessLibrary::with_dir(d)?,
        None => HarnessLibrary::builtin()?,
    })
}

/// `--json` prints what the workbench's `suites` command returns (without a workspace's datasets).
fn cmd_suites(json: bool) -> Result<()> {
    let mut rows = Vec::new();
    for s in suite::registry() {
        rows.push(harness_s::workbench::suite_row(s.as_ref(), Vec::new())?);
    }
    if json {
        out!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        for r in rows {
            out!("{:<10} {:>5} tasks  {}", r.name, r.tasks, r.description);
        }
    }
    Ok(())
}

fn cmd_tasks(suite_name: &str, family: Option<&str>, file: Option<&std::path::Path>, json: bool) -> Result<()> {
    let s = find_suite(suite_name)?;
    let tasks: Vec<Task> = load_tasks(s.as_ref(), file)?.into_iter().filter(|t| family.map(|f| t.family == f).unwrap_or(true)).collect();
    if json {
        let rows: Vec<_> = tasks.iter().map(harness_s::workbench::task_row).collect();
        out!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    let mut families: std::collections::BTreeMap<&str, usize> = Default::default();
    for t in &tasks {
        *families.entry(t.family.as_str()).or_default() += 1;
        out!("{:<28} {:<16} {}", printable(&t.id), printable(&t.family), one_line(&t.instruction, 90));
    }
    let fam: Vec<String> = families.iter().map(|(f, n)| format!("{} {n}", printable(f))).collect();
    eprintln!("{} tasks in {} families: {}", tasks.len(), families.len(), fam.join(", "));
    Ok(())
}

/// `s` safe to print on a terminal: a dataset's text may hold escape sequences (which could
/// rewrite the screen or the window title), so every control character is shown as `\u{..}`.
fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn one_line(s: &str, n: usize) -> String {
    let s = printable(&s.replace('\n', " "));
    if s.chars().count() > n {
        format!("{}…", s.chars().take(n).collect::<String>())
    } else {
        s
    }
}

fn cmd_harnesses(suite_name: Option<&str>, show: Option<&str>, dir: Option<&std::path::Path>, json: bool) -> Result<()> {
    let lib = library(dir)?;
    if let Some(name) = show {
        let matches: Vec<_> = lib.all().filter(|e| e.spec.name == name && suite_name.map(|s| s == e.spec.suite).unwrap_or(true)).collect();
        let e = match matches.as_slice() {
            [] => bail!("no harness named `{name}`"),
            [one] => *one,
            _ => bail!("several suites have a harness named `{name}`: pass --suite"),
        };
        if json {
            out!("{}", serde_json::to_string_pretty(&serde_json::json!({"spec": e.spec, "file": e.file, "source": e.source}))?);
            return Ok(());
        }
        out!("# {} ({}), from {}", e.spec.name, e.spec.suite, e.file);
        if let Some(sp) = &e.spec.specialty {
            out!("specialty: {sp}");
        }
        out!("lineage: {}", e.spec.lineage.join(" -> "));
        out!("max_steps: {}   tools: {}   history: {}", e.spec.max_steps, e.spec.tools.join(", "), e.spec.render.history);
        if e.spec.is_base() {
            out!("\nsystem prompt:\n{}\n", e.spec.system_prompt.trim());
        } else {
            out!("\ndifference from {} (the spec file itself):\n{}", e.spec.lineage[e.spec.lineage.len() - 2], e.source.trim());
        }
        out!("\nhooks:");
        for h in &e.spec.hooks {
            let when = if h.when.is_empty() { "always".to_string() } else { h.when.join(" & ") };
            out!("  {:<24} {:<14} when {}", h.id, h.kind.as_str(), when);
        }
        return Ok(());
    }
    let entries: Vec<_> = lib.all().filter(|e| suite_name.map(|s| s == e.spec.suite).unwrap_or(true)).collect();
    if json {
        // What the workbench's `harnesses` command returns, per suite (profiles live in a store).
        let mut by_suite = serde_json::Map::new();
        for s in suite::names().into_iter().filter(|s| suite_name.is_none_or(|n| n == *s)) {
            let rows = harness_s::workbench::harness_rows(&lib, s, &Default::default());
            by_suite.insert(s.to_string(), serde_json::to_value(rows)?);
        }
        out!("{}", serde_json::to_string_pretty(&by_suite)?);
        return Ok(());
    }
    for e in entries {
        let kind = if e.spec.is_base() { "base".to_string() } else { format!("extends {}", e.spec.lineage[e.spec.lineage.len() - 2]) };
        out!("{:<9} {:<16} {:<14} {}", e.spec.suite, e.spec.name, kind, e.spec.specialty.clone().unwrap_or_else(|| e.spec.description.clone()));
    }
    Ok(())
}

fn cmd_verify(suite_name: &str, file: Option<&std::path::Path>, json: bool) -> Result<()> {
    let s = find_suite(suite_name)?;
    let tasks = load_tasks(s.as_ref(), file)?;
    let report = s.verify(&tasks);
    if json {
        let mut v = serde_json::to_value(&report)?;
        if report.disagreements.is_empty() {
            if let Some(o) = v.as_object_mut() {
                o.remove("disagreements");
            }
        }
        out!("{}", serde_json::to_string(&v)?);
    } else {
        out!("{}: {}/{} records agree", report.suite, report.agree, report.total);
        for (g, c) in &report.groups {
            out!("  {:<18} {:>4}/{:<4}", g, c.agree, c.total);
        }
        for d in &report.disagreements {
            out!("  disagrees: {} ({}): {}", d.task_id, d.group, d.reason);
        }
        for d in &report.skipped {
            out!("  skipped: {} ({}): {}", d.task_id, d.group, d.reason);
        }
    }
    Ok(())
}

/// Standard error for log lines. On a terminal it first clears the line a progress bar may be
/// drawing on, so a warning starts on a clean line instead of running into the bar.
struct LogWriter {
    cleared: bool,
}

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use std::io::IsTerminal;
        let mut err = std::io::stderr().lock();
        if !self.cleared {
            self.cleared = true;
            if err.is_terminal() {
                err.write_all(b"\r\x1b[K")?;
            }
        }
        err.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Progress on stderr: one line redrawn in place on a terminal; elsewhere (a log file, CI) a line
/// at most every [`ProgressPrinter::LOG_EVERY`], and the last one, so a long run does not print
/// one line per episode.
struct ProgressPrinter {
    terminal: bool,
    /// When a line was last written off a terminal.
    last_logged: Mutex<Option<Instant>>,
}

impl ProgressPrinter {
    const LOG_EVERY: Duration = Duration::from_secs(10);

    fn new() -> ProgressPrinter {
        ProgressPrinter { terminal: std::io::IsTerminal::is_terminal(&std::io::stderr()), last_logged: Mutex::new(None) }
    }

    /// Whether a line is due off a terminal (`last` lines always are).
    fn log_due(&self, last: bool) -> bool {
        let mut at = self.last_logged.lock().unwrap_or_else(|p| p.into_inner());
        let due = last || at.is_none_or(|t| t.elapsed() >= Self::LOG_EVERY);
        if due {
            *at = Some(Instant::now());
        }
        due
    }
}

impl EventSink for ProgressPrinter {
    fn emit(&self, event: Event) {
        match event {
            Event::Progress { label, done, total, success_rate, eta_s, .. } => {
                let width = 30;
                let filled = (done * width).checked_div(total).unwrap_or(width);
                let eta = eta_s.map(|s| format!("eta {:.0}s", s)).unwrap_or_default();
                let bar =
                    format!("{label:<14} [{}{}] {done}/{total}  success {:.3}  {eta}", "#".repeat(filled), ".".repeat(width - filled), success_rate);
                if self.terminal {
                    eprint!("\r\x1b[K{bar}");
                    let _ = std::io::stderr().flush();
                    if done == total {
                        eprintln!();
                    }
                } else if self.log_due(done == total) {
                    eprintln!("{bar}");
                }
            }
            // what a job is doing now and the episodes so far: on a terminal on the same line,
            // elsewhere within the same rate as the progress lines
            Event::Phase { arm, seed, label, episodes, eta_s, .. } => {
                let planned = match episodes.expected {
                    Some(e) => format!("~{e}"),
                    None if episodes.min == episodes.max => episodes.max.to_string(),
                    None => format!("{}-{}", episodes.min, episodes.max),
                };
                let eta = eta_s.map(|s| format!("  eta {:.0}s", s)).unwrap_or_default();
                let line = format!("{arm} seed {seed}: {label}  episodes {}/{planned}{eta}", episodes.done);
                if self.terminal {
                    eprint!("\r\x1b[K{line}");
                    let _ = std::io::stderr().flush();
                } else if self.log_due(false) {
                    eprintln!("{line}");
                }
            }
            Event::Message { text, .. } => eprintln!("{text}"),
            _ => {}
        }
    }
}

fn select_tasks(all: Vec<Task>, ids: Option<&str>, family: Option<&str>, limit: Option<usize>) -> Result<Vec<Task>> {
    let mut tasks = all;
    if let Some(spec) = ids {
        let wanted: Vec<String> = if std::path::Path::new(spec).is_file() {
            harness_s::files::read_text_limited(std::path::Path::new(spec), harness_s::files::MAX_DATASET_BYTES)
                .with_context(|| format!("reading task list {spec}"))?
                .lines()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .collect()
        } else {
            spec.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
        };
        for w in &wanted {
            if !tasks.iter().any(|t| &t.id == w) {
                bail!("--tasks: no task with id `{w}`");
            }
        }
        tasks.retain(|t| wanted.contains(&t.id));
    }
    if let Some(f) = family {
        tasks.retain(|t| t.family == f);
    }
    if let Some(n) = limit {
        tasks.truncate(n);
    }
    if tasks.is_empty() {
        bail!("no tasks selected");
    }
    Ok(tasks)
}

fn cmd_eval(a: EvalArgs) -> Result<()> {
    let s = find_suite(&a.suite)?;
    // every back-end of `eval` is a model whose code is untrusted
    suite::require_containment(s.as_ref())?;
    if a.samples == 0 || a.samples > 10_000 {
        bail!("--samples: between 1 and 10000 tries per task, got {}", a.samples);
    }
    if a.concurrency > 1_024 {
        bail!("--concurrency: at most 1024 episodes at once, got {}", a.concurrency);
    }
    let lib = library(a.harness_dir.as_deref())?;
    let entry = lib.get(&a.suite, &a.harness).ok_or_else(|| {
        let names: Vec<_> = lib.for_suite(&a.suite).iter().map(|e| e.spec.name.clone()).collect();
        anyhow!("--harness: suite `{}` has no harness `{}` (known: {})", a.suite, a.harness, names.join(", "))
    })?;
    let tasks = select_tasks(load_tasks(s.as_ref(), a.file.as_deref())?, a.tasks.as_deref(), a.family.as_deref(), a.limit)?;
    let (policy, policy_config): (Box<dyn Policy>, serde_json::Value) = match a.policy.as_str() {
        "openai" => {
            let base_url = a.base_url.clone().ok_or_else(|| anyhow!("--policy openai needs --base-url"))?;
            let model = a.model.clone().ok_or_else(|| anyhow!("--policy openai needs --model"))?;
            let tool_mode = match a.tool_mode.as_str() {
                "native" => harness_s::policy::openai::ToolMode::Native,
                "text" => harness_s::policy::openai::ToolMode::Text,
                "auto" => harness_s::policy::openai::ToolMode::Auto,
                other => bail!("--tool-mode: `{other}` is not one of native, text, auto"),
            };
            let cfg = OpenAiConfig {
                base_url,
                model,
                api_key_env: Some(a.api_key_env.clone()),
                timeout: std::time::Duration::from_secs(a.timeout),
                max_retries: a.max_retries,
                concurrency: a.concurrency.max(1),
                tool_mode,
                ..OpenAiConfig::default()
            };
            let json = serde_json::to_value(&cfg)?;
            (Box::new(OpenAiPolicy::new(cfg).map_err(|e| anyhow!("{e}"))?), json)
        }
        other => bail!("--policy: `{other}` is not a known back-end (known: openai)"),
    };
    let store = BlockingStore::open(&a.db).with_context(|| format!("opening the store {}", a.db))?;
    let cfg = EvalConfig {
        suite: a.suite.clone(),
        harness: a.harness.clone(),
        policy: policy.name(),
        samples: a.samples.max(1),
        concurrency: a.concurrency.max(1),
        temperature: a.temperature,
        seed: a.seed,
        dataset: a.file.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "bundled".into()),
        task_ids: tasks.iter().map(|t| t.id.clone()).collect(),
        policy_config,
    };
    let cancel = cancel_on_ctrl_c();
    let sink = ProgressPrinter::new();
    let summary = run_eval(&cfg, s.as_ref(), &entry.spec, &tasks, policy.as_ref(), &store, &sink, &cancel)?;
    if a.json {
        out!("{}", serde_json::to_string(&summary)?);
    } else {
        out!("run {}: {} episodes ({} infrastructure errors) in {:.1}s", summary.run_id, summary.episodes, summary.infra_errors, summary.wall_s);
        out!("success rate {:.3}", summary.success_rate);
        if let Some(m) = summary.metrics.as_object() {
            for (k, v) in m {
                out!("  {k:<28} {v}");
            }
        }
        out!("trajectories stored in {}", a.db);
    }
    Ok(())
}

/// Set by the first Ctrl-C (or SIGTERM) where a command stops gracefully.
static CANCEL: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
/// A command that stops gracefully on the first signal is running.
static GRACEFUL: AtomicBool = AtomicBool::new(false);
/// That command reports its own stopping (the handler prints nothing on the first signal).
static QUIET: AtomicBool = AtomicBool::new(false);

/// Ctrl-C and SIGTERM, for every command: where the command stops gracefully
/// ([`cancel_on_ctrl_c`]) the first signal asks it to; otherwise, or on a second signal, the
/// scratch folders are removed and the process exits (its sandboxed children die with it).
fn install_signal_handler() {
    let cancel = CANCEL.get_or_init(|| Arc::new(AtomicBool::new(false))).clone();
    let _ = ctrlc::set_handler(move || {
        if GRACEFUL.load(Ordering::SeqCst) && !cancel.swap(true, Ordering::SeqCst) {
            if !QUIET.load(Ordering::SeqCst) {
                eprintln!("\nstopping after the work in flight; run the same command again to resume (Ctrl-C again quits at once)");
            }
            return;
        }
        quit(130);
    });
}

fn cancel_on_ctrl_c_quietly() -> Arc<AtomicBool> {
    QUIET.store(true, Ordering::SeqCst);
    cancel_on_ctrl_c()
}

fn cancel_on_ctrl_c() -> Arc<AtomicBool> {
    GRACEFUL.store(true, Ordering::SeqCst);
    CANCEL.get_or_init(|| Arc::new(AtomicBool::new(false))).clone()
}

fn cmd_experiment_run(config: &std::path::Path, db: &str, json: bool, distributed: bool) -> Result<()> {
    let cfg = harness_s::experiment::ExperimentConfig::load(config)?;
    let store = BlockingStore::open(db).with_context(|| format!("opening the store {db}"))?;
    let cancel = cancel_on_ctrl_c();
    let sink = ProgressPrinter::new();
    let execution = if distributed { harness_s::experiment::Execution::Distributed } else { harness_s::experiment::Execution::Local };
    let out = harness_s::experiment::run_experiment_with(&cfg, &store, &sink, &cancel, execution)?;
    eprintln!();
    if !out.finished {
        eprintln!("experiment run {} stopped before the end; run the same command to resume", out.run_id);
    }
    eprintln!("{:<16} {:>8} {:>8} {:>10}", "arm", "train", "heldout", "rollouts");
    for (arm, splits) in &out.arms {
        let g = |k: &str| splits.get(k).map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into());
        eprintln!("{:<16} {:>8} {:>8} {:>10}", arm, g("train"), g("heldout"), out.executor_rollouts.get(arm).copied().unwrap_or(0));
    }
    // the deltas are on held-out tasks when the run holds families out, else on training tasks
    let split = if cfg.heldout_families.is_empty() { "training" } else { "held-out" };
    for d in out.heldout_delta.iter().chain(out.deltas.iter().filter(|d| d.baseline != "policy-only")) {
        eprintln!("{} - {} on {split} tasks: {:+.3} (95% CI {:+.3} .. {:+.3}, {} tasks)", d.arm, d.baseline, d.mean, d.ci95[0], d.ci95[1], d.tasks);
    }
    eprintln!("run {} in {} ({:.1}s)", out.run_id, db, out.wall_s);
    if json {
        let arms: serde_json::Map<String, serde_json::Value> =
            out.arms.iter().map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or_default())).collect();
        let v = serde_json::json!({
            "arms": arms,
            "heldout_delta": out.heldout_delta,
            "executor_rollouts": out.executor_rollouts,
            "deltas": out.deltas,
            "rank_one": out.rank_one,
            "run_id": out.run_id,
            "finished": out.finished,
        });
        out!("{}", serde_json::to_string(&v)?);
    }
    Ok(())
}

fn cmd_worker(db: &str, slots: Option<usize>, name: Option<String>, lease_s: u64, exit_after_idle: Option<u64>, json: bool) -> Result<()> {
    use harness_s::experiment::distributed::{hostname, run_worker, WorkerOptions};
    let slots = slots.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    // a connection per slot, one for the heartbeat, one spare: no more than the worker uses
    let store = BlockingStore::open_with_connections(db, slots as u32 + 2).with_context(|| format!("opening the store {db}"))?;
    let opts = WorkerOptions {
        name: name.unwrap_or_else(|| format!("{}-{}", hostname(), std::process::id())),
        slots,
        lease: std::time::Duration::from_secs(lease_s.max(1)),
        exit_after_idle: exit_after_idle.map(std::time::Duration::from_secs),
    };
    let stop = cancel_on_ctrl_c();
    eprintln!("worker {} ({} slots) on {}", opts.name, opts.slots, store.location());
    let report = run_worker(&store, &opts, &stop)?;
    eprintln!(
        "worker {}: {} episodes done, {} failed, {} results refused (lease passed)",
        report.name, report.jobs_done, report.jobs_failed, report.results_refused
    );
    if json {
        out!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}

fn cmd_experiment_status(db: &str, json: bool) -> Result<()> {
    let store = open_existing_store(db)?;
    let status = harness_s::workbench::cluster_status(&store)?;
    if json {
        out!("{}", serde_json::to_string(&status)?);
        return Ok(());
    }
    if status.running.is_empty() {
        out!("no experiment is running in {}", store.location());
    }
    for r in &status.running {
        let queue = match &r.queue {
            Some(q) => format!(" · jobs queued {} running {} done {} failed {}", q.queued, q.running, q.done, q.failed),
            None => String::new(),
        };
        out!("run {} {} · {} episodes stored{queue}", r.run_id, r.name, r.episodes);
    }
    if status.backend == "postgres" {
        if status.workers.is_empty() {
            out!("no workers have registered");
        } else {
            out!("{:<28} {:<20} {:>5} {:>9} {:>16}", "worker", "host", "slots", "jobs done", "last heartbeat");
            for w in &status.workers {
                let beat = match &w.stopped_at {
                    Some(t) => format!("stopped {t}"),
                    None => format!("{:.1} s ago", w.since_heartbeat_ms as f64 / 1000.0),
                };
                out!("{:<28} {:<20} {:>5} {:>9} {:>16}", w.name, w.host, w.slots, w.jobs_done, beat);
            }
        }
    }
    Ok(())
}

fn cmd_store_info(db: &str, json: bool) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let info = rt.block_on(harness_s::store::StoreInfo::of(db)).with_context(|| format!("measuring the store {db}"))?;
    if json {
        out!("{}", serde_json::to_string(&info)?);
        return Ok(());
    }
    let mb = |b: u64| b as f64 / 1e6;
    out!("{} ({}): {} runs, {} episodes", info.location, info.backend, info.runs, info.episodes);
    match info.bytes_per_episode {
        Some(b) => out!("{:.1} MB on disk, {:.0} bytes per episode", mb(info.bytes), b),
        None => out!("{:.1} MB on disk", mb(info.bytes)),
    }
    let width = info.files.iter().map(|f| f.path.len()).chain(info.parts.iter().map(|p| p.name.len())).max().unwrap_or(0);
    for f in &info.files {
        out!("  {:<width$} {:>10.2} MB", f.path, mb(f.bytes));
    }
    if info.wal_bytes > 0 {
        out!("  the write-ahead log was not merged on the last exit; it is now");
    }
    if info.v1_episodes > 0 {
        out!("{} episodes hold the v1 store's JSON trajectories; `harness-s store compact` converts them", info.v1_episodes);
    }
    out!("tables and indexes:");
    for p in &info.parts {
        out!("  {:<width$} {:>10.2} MB", p.name, mb(p.bytes));
    }
    Ok(())
}

/// Open a store a command only reads: a missing SQLite file is an error, not a new empty store.
fn open_existing_store(db: &str) -> Result<BlockingStore> {
    if !db.contains("://") && !db.starts_with("sqlite:") && !std::path::Path::new(db).exists() {
        bail!("no run store at {db} (pass --db FILE or set HARNESS_S_DB)");
    }
    BlockingStore::open(db).with_context(|| format!("opening the store {db}"))
}

fn cmd_store_episode(db: &str, id: i64) -> Result<()> {
    let store = open_existing_store(db)?;
    let episode = store.episode(id).with_context(|| format!("reading episode {id} of {db}"))?;
    let Some(episode) = episode else { bail!("the store {db} has no episode {id}") };
    out!("{}", serde_json::to_string(&episode)?);
    Ok(())
}

fn cmd_store_delete_run(db: &str, id: i64, yes: bool, force: bool) -> Result<()> {
    let store = open_existing_store(db)?;
    let Some(run) = store.run(id).with_context(|| format!("reading run {id} of {db}"))? else { bail!("the store {db} has no run {id}") };
    let episodes = store.count_episodes(&harness_s::store::EpisodeFilter::run(id))?;
    let what = format!("run {id} `{}` ({} {}, {episodes} episodes)", run.name, run.kind, run.status);
    if !yes {
        if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            bail!("not deleting {what}: pass --yes to delete without being asked");
        }
        eprint!("Delete {what} and everything recorded for it? [y/N] ");
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            bail!("not deleted");
        }
    }
    let d = store.delete_run(id, force).with_context(|| format!("deleting run {id} of {db}"))?;
    out!("deleted run {id}: {} episodes, {} records, {} state entries", d.episodes, d.records, d.states);
    Ok(())
}

fn cmd_store_compact(db: &str) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let before = rt.block_on(harness_s::store::StoreInfo::of(db)).with_context(|| format!("measuring the store {db}"))?;
    let store = rt.block_on(harness_s::store::Store::open(db)).with_context(|| format!("opening the store {db}"))?;
    let mut shown = 0;
    let converted = rt.block_on(store.compact(|done, total| {
        // a line per tenth of the way
        if done * 10 / total.max(1) > shown || done == total {
            shown = done * 10 / total.max(1);
            eprintln!("converted {done} of {total} episodes");
        }
    }));
    rt.block_on(store.close());
    let converted = converted.with_context(|| format!("converting the store {db}"))?;
    let after = rt.block_on(harness_s::store::StoreInfo::of(db)).with_context(|| format!("measuring the store {db}"))?;
    let mb = |b: u64| b as f64 / 1e6;
    out!("{db}: {converted} episodes converted; {:.1} MB -> {:.1} MB on disk", mb(before.bytes), mb(after.bytes));
    Ok(())
}

fn cmd_report(experiment: &str, db: &str, compare: Option<&str>, out: &std::path::Path) -> Result<()> {
    let store = open_existing_store(db)?;
    let paths = harness_s::report::write_report(&store, experiment, compare, out)?;
    if paths.status != "finished" {
        eprintln!("note: run {} is {}: the report is provisional and marked as such", paths.run_id, paths.status);
    }
    eprintln!("wrote report.html, report.json, {} CSV files and {} charts in {}", paths.csv.len(), paths.charts.len(), paths.dir.display());
    out!("{}", paths.html.display());
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn cmd_export(
    run: &str,
    format: &str,
    out: PathBuf,
    arm: Option<String>,
    seed: Option<u64>,
    split: Option<String>,
    source: Option<&str>,
    db: &str,
) -> Result<()> {
    use harness_s::experiment::batch::Source;
    use harness_s::experiment::export::{export, ExportFormat, ExportRequest};
    let store = open_existing_store(db)?;
    let run_id = match run {
        "latest" => store.latest_run(Some("experiment"))?.map(|r| r.id).ok_or_else(|| anyhow!("no experiment run in {db}"))?,
        id => id.parse::<i64>().map_err(|_| anyhow!("RUN: `{id}` is not a run id or `latest`"))?,
    };
    let sources = match source {
        None => None,
        Some(list) => Some(
            list.split(',')
                .map(|s| {
                    let s = s.trim();
                    Source::parse(s).ok_or_else(|| {
                        anyhow!("--source: `{s}` (allowed: {})", Source::ALL.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", "))
                    })
                })
                .collect::<Result<Vec<_>>>()?,
        ),
    };
    let format = ExportFormat::parse(format).ok_or_else(|| anyhow!("--format: `{format}` (allowed: {})", ExportFormat::NAMES.join(", ")))?;
    let summary = export(&store, &ExportRequest { run_id, format, out, arm, seed, split, sources })?;
    let counts: Vec<String> = summary.conversations.iter().map(|(k, v)| format!("{v} {k}")).collect();
    eprintln!("exported run {run_id}: {} conversations ({})", summary.conversations.values().sum::<usize>(), counts.join(", "));
    for f in &summary.files {
        out!("{f}");
    }
    Ok(())
}

fn cmd_coverage(suite_name: &str, file: Option<&std::path::Path>, family: Option<&str>, max_paths: usize, json: bool) -> Result<()> {
    let s = find_suite(suite_name)?;
    if s.grammar().is_none() {
        bail!("suite `{}` has no grammar for the built-in policy, so there is nothing to cover", s.name());
    }
    let tasks: Vec<Task> = load_tasks(s.as_ref(), file)?.into_iter().filter(|t| family.map(|f| t.family == f).unwrap_or(true)).collect();
    let lib = library(None)?;
    let base = &lib.get(suite_name, "base").ok_or_else(|| anyhow!("no base harness for {suite_name}"))?.spec;
    let c = harness_s::search::coverage(s.as_ref(), base, &tasks, max_paths);
    if json {
        out!("{}", serde_json::to_string(&c)?);
    } else {
        out!("grammar coverage: {}/{} tasks ({:.1}%)", c.covered, c.total, 100.0 * c.share());
        for (f, (cov, tot)) in &c.families {
            out!("  {f:<18} {cov:>4}/{tot:<4}");
        }
        if c.truncated > 0 {
            out!("  ({} tasks hit the path limit; raise --max-paths)", c.truncated);
        }
    }
    Ok(())
}
