//! Live progress of a running experiment, sent as events: the run's episodes against the plan
//! (the rollout estimate), the seconds left measured from episodes per second, the phase each
//! (suite, arm, seed) job is in, and each evaluation as it is recorded. Side effects only: the
//! training loop reads nothing back from here, so a run's numbers are the same with any sink.
//!
//! The seconds left: the warm start's demonstration searches produce no episodes and come first
//! (a demo spends its first half searching), so episodes per second of the run's wall time would
//! overstate the time left several times over. Instead the jobs' thread time is split into
//! searching and the rest; the rest over the episodes gives seconds per episode, the searches
//! give seconds per search, and what is left of both is shared by the jobs that can still run
//! side by side.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::events::{EpisodeCount, Event, EventSink};
use crate::records::EvalPoint;

/// Seconds of finished episodes measured before an ETA is given.
pub const ETA_AFTER_S: f64 = 3.0;
/// The least time between two events sent as episodes finish, and between two sent for a job
/// switching back and forth between the same phases (a phase reached for the first time in an
/// iteration is sent at once).
const TICK: Duration = Duration::from_millis(250);

/// What a run plans, for its progress.
pub(crate) struct Plan {
    /// Episodes already stored (a resumed run).
    pub done: u64,
    /// Episodes at the end, fewest and most.
    pub episodes: (u64, u64),
    /// (suite, arm, seed) jobs, and how many run side by side.
    pub jobs: usize,
    pub workers: usize,
    /// Demonstration searches (one per suite and seed), and the seconds one is assumed to take
    /// until one has been measured.
    pub searches: usize,
    pub seconds_per_search: f64,
}

/// Thread time of some activity: finished spans, and the spans under way.
#[derive(Default)]
struct Clock {
    done_ns: AtomicU64,
    active: AtomicU64,
    /// Sum of the start times (ns since the run's start) of the spans under way.
    starts_ns: AtomicU64,
}

impl Clock {
    fn start(&self, t0: Instant) -> u64 {
        let at = t0.elapsed().as_nanos() as u64;
        self.starts_ns.fetch_add(at, Ordering::SeqCst);
        self.active.fetch_add(1, Ordering::SeqCst);
        at
    }

    fn stop(&self, t0: Instant, started: u64) {
        let now = t0.elapsed().as_nanos() as u64;
        self.done_ns.fetch_add(now.saturating_sub(started), Ordering::SeqCst);
        self.starts_ns.fetch_sub(started, Ordering::SeqCst);
        self.active.fetch_sub(1, Ordering::SeqCst);
    }

    /// Seconds of finished spans and of spans under way (their time so far).
    fn seconds(&self, t0: Instant) -> (f64, f64) {
        let now = t0.elapsed().as_nanos() as u64;
        let ongoing = (self.active.load(Ordering::SeqCst) * now).saturating_sub(self.starts_ns.load(Ordering::SeqCst));
        (self.done_ns.load(Ordering::SeqCst) as f64 / 1e9, ongoing as f64 / 1e9)
    }
}

/// The run's side: episodes, the plan, the rate, and the one lock every progress event is sent
/// under (so the episode counts the events carry never go backwards).
pub(crate) struct RunProgress<'a> {
    run_id: i64,
    sink: &'a dyn EventSink,
    /// Episodes of the run: stored, or run and to be stored with their iteration.
    episodes: AtomicU64,
    /// Planned episodes, fewest and most.
    min: u64,
    max: u64,
    t0: Instant,
    jobs: usize,
    workers: usize,
    jobs_ended: AtomicU64,
    /// Thread time in jobs, and in demonstration searches (with the wait for another job's).
    job_time: Clock,
    search_time: Clock,
    /// Searches planned, those done (by their key: searched, or found stored), those searched here.
    searches: usize,
    searches_done: Mutex<std::collections::BTreeSet<String>>,
    searched: AtomicU64,
    seconds_per_search: f64,
    /// Training tasks rolled out in this session, and those whose base tries all failed: the
    /// share of the rescue budget to expect.
    tasks: AtomicU64,
    all_fail: AtomicU64,
    /// When the first episode of this session finished, and the count it made.
    first: OnceLock<(Instant, u64)>,
    /// When the last event went out and the count it carried.
    sent: Mutex<(Instant, u64)>,
}

impl<'a> RunProgress<'a> {
    pub(crate) fn new(run_id: i64, sink: &'a dyn EventSink, plan: Plan) -> Self {
        RunProgress {
            run_id,
            sink,
            episodes: AtomicU64::new(plan.done),
            min: plan.episodes.0,
            max: plan.episodes.1.max(plan.episodes.0),
            t0: Instant::now(),
            jobs: plan.jobs,
            workers: plan.workers.max(1),
            jobs_ended: AtomicU64::new(0),
            job_time: Clock::default(),
            search_time: Clock::default(),
            searches: plan.searches,
            searches_done: Mutex::default(),
            searched: AtomicU64::new(0),
            seconds_per_search: plan.seconds_per_search,
            tasks: AtomicU64::new(0),
            all_fail: AtomicU64::new(0),
            first: OnceLock::new(),
            sent: Mutex::new((Instant::now(), 0)),
        }
    }

    /// Episodes a resumed job dropped (those of the iteration a kill interrupted).
    pub(crate) fn dropped(&self, n: u64) {
        let _ = self.episodes.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |d| Some(d.saturating_sub(n)));
    }

    fn episode(&self) {
        let d = self.episodes.fetch_add(1, Ordering::SeqCst) + 1;
        self.first.get_or_init(|| (Instant::now(), d));
    }

    /// The episodes now, against the plan.
    pub(crate) fn count(&self) -> EpisodeCount {
        let done = self.episodes.load(Ordering::SeqCst);
        let (tasks, all_fail) = (self.tasks.load(Ordering::SeqCst), self.all_fail.load(Ordering::SeqCst));
        let expected = (tasks > 0).then(|| {
            let share = all_fail as f64 / tasks as f64;
            let e = self.min + ((self.max - self.min) as f64 * share).round() as u64;
            e.min(self.max).max(done)
        });
        EpisodeCount { done, min: self.min, max: self.max, expected }
    }

    /// Seconds left: the episodes still expected (the most planned, until tasks have shown how
    /// many need a rescue) at the seconds per episode measured so far, and the demonstration
    /// searches still to come, shared by the jobs that can run side by side. `None` before
    /// [`ETA_AFTER_S`] seconds of episodes, and never from zero progress.
    pub(crate) fn eta_s(&self, c: &EpisodeCount) -> Option<f64> {
        let (first, d0) = *self.first.get()?;
        let measured = c.done.saturating_sub(d0);
        if first.elapsed().as_secs_f64() < ETA_AFTER_S || measured == 0 {
            return None;
        }
        let (jobs_done, jobs_now) = self.job_time.seconds(self.t0);
        let (search_done, search_now) = self.search_time.seconds(self.t0);
        let episode_time = (jobs_done + jobs_now - search_done - search_now).max(0.0);
        // the first episode of this session came after the episodes counted before it
        let per_episode = episode_time / (c.done.saturating_sub(d0.saturating_sub(1))).max(1) as f64;
        let searched = self.searched.load(Ordering::SeqCst);
        let per_search = if searched > 0 { search_done / searched as f64 } else { self.seconds_per_search };
        let searches_done = self.searches_done.lock().unwrap_or_else(|p| p.into_inner()).len();
        let searches_left = self.searches.saturating_sub(searches_done) as f64;
        let search_left = (searches_left * per_search - search_now).max(0.0);
        let episodes_left = c.expected.unwrap_or(c.max).saturating_sub(c.done) as f64;
        let side_by_side = self.workers.min(self.jobs.saturating_sub(self.jobs_ended.load(Ordering::SeqCst) as usize)).max(1);
        Some((episodes_left * per_episode + search_left) / side_by_side as f64)
    }

    /// Send `phase` of `job`: now, or (`urgent` false) only when the last event is older than
    /// [`TICK`] and nobody else is sending.
    fn send(&self, job: &JobProgress, urgent: bool) {
        let mut sent = match if urgent { Ok(self.sent.lock().unwrap_or_else(|p| p.into_inner())) } else { self.sent.try_lock() } {
            Ok(s) => s,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        if !urgent && sent.0.elapsed() < TICK {
            return;
        }
        let mut episodes = self.count();
        // another job's event may have carried a count read later than this one
        episodes.done = episodes.done.max(sent.1);
        let eta_s = self.eta_s(&episodes);
        let now = job.now.borrow();
        self.sink.emit(Event::Phase {
            run_id: self.run_id,
            suite: job.suite.clone(),
            arm: job.arm.clone(),
            seed: job.seed,
            phase: now.phase.to_string(),
            iteration: now.iteration,
            iterations: job.iterations,
            label: job.label(now.phase, now.iteration),
            step: now.step,
            steps: now.steps,
            episodes,
            eta_s,
        });
        *sent = (Instant::now(), episodes.done);
    }
}

/// Where one job stands.
struct Now {
    phase: &'static str,
    iteration: usize,
    step: usize,
    steps: usize,
    /// Phases sent in the current iteration, and when this job last sent one.
    sent: Vec<&'static str>,
    sent_at: Option<Instant>,
}

/// One (suite, arm, seed) job's side: its phase, its episodes, its evaluations.
pub(crate) struct JobProgress<'r, 'a> {
    run: &'r RunProgress<'a>,
    suite: String,
    arm: String,
    seed: u64,
    iterations: usize,
    /// What the arm does with all-fail tasks, in words (`rescues`, `resamples`).
    rescue_word: &'static str,
    now: RefCell<Now>,
    /// When the job started, on the run's job clock.
    started: u64,
}

impl Drop for JobProgress<'_, '_> {
    fn drop(&mut self) {
        self.run.job_time.stop(self.run.t0, self.started);
        self.run.jobs_ended.fetch_add(1, Ordering::SeqCst);
    }
}

impl<'r, 'a> JobProgress<'r, 'a> {
    pub(crate) fn new(run: &'r RunProgress<'a>, suite: &str, arm: &str, seed: u64, iterations: usize, rescue_word: &'static str) -> Self {
        JobProgress {
            run,
            suite: suite.to_string(),
            arm: arm.to_string(),
            seed,
            iterations,
            rescue_word,
            // no phase yet: the first `enter` is sent, whichever it is
            now: RefCell::new(Now { phase: "", iteration: 0, step: 0, steps: 0, sent: Vec::new(), sent_at: None }),
            started: run.job_time.start(run.t0),
        }
    }

    /// The job starts getting its seed's demonstrations (searching, or waiting for the job
    /// that searches them); returns the start to give [`Self::demonstrations_end`].
    pub(crate) fn demonstrations_start(&self) -> u64 {
        self.run.search_time.start(self.run.t0)
    }

    /// The job has the demonstrations stored under `key`: `searched` by it, or stored by another
    /// job (or an earlier session).
    pub(crate) fn demonstrations_end(&self, started: u64, key: &str, searched: bool) {
        self.run.search_time.stop(self.run.t0, started);
        if searched {
            self.run.searched.fetch_add(1, Ordering::SeqCst);
        }
        self.run.searches_done.lock().unwrap_or_else(|p| p.into_inner()).insert(key.to_string());
    }

    /// The phase in words.
    fn label(&self, phase: &str, iteration: usize) -> String {
        let what = match phase {
            "demonstrations" => "warm-start demonstrations",
            "probing" => "probing siblings",
            "rescues" => self.rescue_word,
            "rank_one" => "rank-one inference",
            "evaluation" if iteration == 0 => "first evaluation",
            other => other,
        };
        if iteration == 0 || phase == "finished" {
            what.to_string()
        } else {
            format!("iteration {iteration} of {}: {what}", self.iterations)
        }
    }

    /// The job starts `phase` of `iteration`, of `steps` steps. Sent at once the first time in
    /// an iteration; a job going back and forth (rollouts, rescues, rollouts, ...) is sent at
    /// most every [`TICK`].
    pub(crate) fn enter(&self, phase: &'static str, iteration: usize, steps: usize) {
        let urgent = {
            let mut n = self.now.borrow_mut();
            if n.iteration != iteration {
                n.sent.clear();
            }
            if n.phase == phase && n.iteration == iteration {
                n.steps = steps;
                return;
            }
            (n.phase, n.iteration, n.step, n.steps) = (phase, iteration, 0, steps);
            let first = !n.sent.contains(&phase);
            let due = n.sent_at.is_none_or(|t| t.elapsed() >= TICK);
            if !(first || due) {
                return;
            }
            if first {
                n.sent.push(phase);
            }
            n.sent_at = Some(Instant::now());
            true
        };
        self.run.send(self, urgent);
    }

    /// Step `step` of the current phase.
    pub(crate) fn step(&self, step: usize) {
        self.now.borrow_mut().step = step;
    }

    /// Step `step` of the current phase, sent at once (a demonstration found).
    pub(crate) fn step_now(&self, step: usize) {
        self.step(step);
        self.now.borrow_mut().sent_at = Some(Instant::now());
        self.run.send(self, true);
    }

    /// An episode the store keeps finished.
    pub(crate) fn episode(&self) {
        self.run.episode();
        self.run.send(self, false);
    }

    /// A training task's base tries are done; `all_fail` when none succeeded.
    pub(crate) fn task(&self, all_fail: bool) {
        self.run.tasks.fetch_add(1, Ordering::SeqCst);
        if all_fail {
            self.run.all_fail.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Evaluation points recorded.
    pub(crate) fn evaluations(&self, points: &[EvalPoint]) {
        for p in points {
            self.run.sink.emit(Event::Evaluation {
                run_id: self.run.run_id,
                suite: self.suite.clone(),
                arm: self.arm.clone(),
                seed: self.seed,
                iteration: p.iteration,
                split: p.split.clone(),
                success: p.success,
                tasks: p.tasks,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::VecSink;

    fn plan(done: u64, min: u64, max: u64) -> Plan {
        Plan { done, episodes: (min, max), jobs: 4, workers: 2, searches: 2, seconds_per_search: 10.0 }
    }

    #[test]
    fn no_eta_before_a_few_seconds_of_episodes_nor_from_none() {
        let sink = VecSink::default();
        let run = RunProgress::new(1, &sink, plan(0, 100, 300));
        assert_eq!(run.eta_s(&run.count()), None, "no episode yet");
        let job = JobProgress::new(&run, "dbbench", "harness-s", 1, 4, "rescues");
        job.enter("rollouts", 1, 10);
        job.episode();
        assert_eq!(run.eta_s(&run.count()), None, "one episode, no measured time");
        let c = run.count();
        assert_eq!((c.done, c.min, c.max, c.expected), (1, 100, 300, None));
        // half the tasks needed a rescue: half the rescue budget expected
        job.task(true);
        job.task(false);
        assert_eq!(run.count().expected, Some(200));
        let events = sink.0.lock().unwrap();
        let Event::Phase { label, .. } = &events[0] else { panic!("{events:?}") };
        assert_eq!(label, "iteration 1 of 4: rollouts");
    }

    #[test]
    fn the_eta_leaves_the_searches_out_of_the_seconds_per_episode() {
        let sink = VecSink::default();
        let run = RunProgress::new(1, &sink, plan(0, 100, 300));
        // 20 s of job time (two jobs for 10 s), 10 of them one search, ten episodes since the
        // first (counted second): one second an episode; one search (10 s) still to come
        run.first.set((Instant::now() - Duration::from_secs(10), 2)).unwrap();
        run.job_time.done_ns.store(20_000_000_000, Ordering::SeqCst);
        run.search_time.done_ns.store(10_000_000_000, Ordering::SeqCst);
        run.searched.store(1, Ordering::SeqCst);
        run.searches_done.lock().unwrap().insert("demos/dbbench/1".into());
        let c = EpisodeCount { done: 11, min: 100, max: 300, expected: Some(200) };
        let eta = run.eta_s(&c).unwrap();
        assert!((eta - (189.0 + 10.0) / 2.0).abs() < 0.5, "{eta}");
        // before any task has shown its share of rescues, toward the most planned
        let eta = run.eta_s(&EpisodeCount { expected: None, ..c }).unwrap();
        assert!((eta - (289.0 + 10.0) / 2.0).abs() < 0.5, "{eta}");
        // the last job alone: nothing runs beside it
        run.jobs_ended.store(3, Ordering::SeqCst);
        run.searches_done.lock().unwrap().insert("demos/dbbench/2".into());
        let eta = run.eta_s(&c).unwrap();
        assert!((eta - 189.0).abs() < 0.5, "{eta}");
    }

    #[test]
    fn counts_sent_never_go_backwards_and_phases_are_sent_once_per_iteration() {
        let sink = VecSink::default();
        let run = RunProgress::new(1, &sink, plan(50, 100, 100));
        let job = JobProgress::new(&run, "dbbench", "policy-only", 3, 2, "rescues");
        job.enter("rollouts", 1, 4);
        job.enter("rescues", 1, 4);
        job.enter("rollouts", 1, 4); // back within the tick: not sent
        job.enter("update", 1, 0);
        run.dropped(10);
        job.enter("evaluation", 1, 0);
        let events = sink.0.lock().unwrap();
        let phases: Vec<(&str, u64)> = events
            .iter()
            .map(|e| match e {
                Event::Phase { phase, episodes, .. } => (phase.as_str(), episodes.done),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(phases, vec![("rollouts", 50), ("rescues", 50), ("update", 50), ("evaluation", 50)]);
    }
}
