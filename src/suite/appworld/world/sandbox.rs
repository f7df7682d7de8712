//! The per-episode Python runner of the bundled world.
//!
//! Each episode has its own runner of [`DRIVER`] — forked by its world server's fork server
//! ([`super::forkserver`]), or a `python3 -I` subprocess of its own where that cannot run; code
//! cells share one namespace, as in AppWorld. Each `apis.<app>.<api>(**kwargs)` comes back to the workbench as a JSON line and is
//! answered from the episode's [`World`]. A cell that runs past the time limit gets its process
//! killed with everything it started (a fresh one starts for the next cell; the apps' state lives
//! in the workbench and is kept). The runner lives in the workbench's sandbox ([`crate::sandbox`]: no host files, no
//! network, its own PID namespace, kernel limits), and as a first line unsafe code (imports
//! outside a small allow-list such as os, subprocess or socket; `open`, `eval`, `exec`,
//! `getattr`, `__import__`; private and dunder attributes) is refused before it runs.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::apps::World;
use super::forkserver::ForkSlot;
pub use super::python::RunnerError;
use super::python::{contained_python, DRIVER};
use crate::sandbox::Lifeline;

/// A cell whose process ended while it ran (its own code ended it).
const RUNNER_ENDED: &str = "Execution failed. Traceback:\nSystemError: the Python process ended unexpectedly.";
/// A cell sent to a runner that an earlier cell's code ended after that cell had finished.
const RUNNER_GONE: &str = "Execution failed. Traceback:\nSystemError: the Python process of the earlier cells has ended (code of an earlier cell ended it); this cell did not run. Variables from earlier cells are lost; the apps keep their state. The next cell runs in a fresh process.";

/// Printed output longer than this is cut.
pub const MAX_OUTPUT_CHARS: usize = 20_000;

struct Process {
    runner: Runner,
    writer: Box<dyn Write + Send>,
    lines: Receiver<String>,
}

enum Runner {
    /// A process (and sandbox) of its own.
    Own {
        child: Child,
        /// Dropped with the process: everything in its sandbox is killed.
        _lifeline: Option<Lifeline>,
    },
    /// A child of the world server's fork server.
    Forked(Arc<ForkSlot>),
}

impl Process {
    /// A runner from the fork server when there is one, else a process of its own.
    fn start(python: &str, driver: &str, forks: Option<&Arc<ForkSlot>>) -> Result<Process, RunnerError> {
        if let Some(slot) = forks {
            if let Some(stream) = slot.spawn() {
                let reader = stream.try_clone().map_err(RunnerError::os("a second handle on the runner's socket"))?;
                return Ok(Process { runner: Runner::Forked(slot.clone()), writer: Box::new(stream), lines: read_lines(reader)? });
            }
        }
        let (mut cmd, lifeline) = contained_python(python, &["-I", "-c", driver])?;
        // contained children lead their own process group: a Ctrl-C meant for the workbench does
        // not reach them, and they die with it
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        // the runner lives for the episode, longer than the thread that asks for it
        let mut child = crate::sandbox::spawn_long_lived(cmd).map_err(RunnerError::os(format!("cannot start `{python}`")))?;
        let piped = |what: &str| RunnerError::Os { what: format!("the runner's {what}"), error: "not piped".into() };
        let stdin = child.stdin.take().ok_or_else(|| piped("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| piped("stdout"))?;
        let lines = read_lines(stdout)?;
        Ok(Process { runner: Runner::Own { child, _lifeline: lifeline }, writer: Box::new(stdin), lines })
    }

    fn kill(&mut self) {
        match &mut self.runner {
            // in a sandbox, killing bwrap takes down the sandbox's PID namespace with everything a
            // cell may have started; without one, the runner's process group goes
            Runner::Own { child, .. } => crate::sandbox::end(child),
            // the fork server kills the runner and everything it started
            Runner::Forked(slot) => slot.sweep(),
        }
    }
}

/// The longest line kept from a runner. The driver's own messages stay far below it (a cell's
/// output and traceback are cut to 100,000 characters each); a longer line can only come from
/// code past the cell filter writing to the channel itself, and is cut here, before the
/// workbench holds it, so that no cell can make the workbench buffer more than this.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// The runner's output, line by line, on a channel (a thread reads it, so a cell can time out).
/// A line longer than [`MAX_LINE_BYTES`] is cut there and the rest of it dropped.
fn read_lines(output: impl std::io::Read + Send + 'static) -> Result<Receiver<String>, RunnerError> {
    let (tx, lines) = mpsc::channel();
    std::thread::Builder::new()
        .name("appworld-python".into())
        .spawn(move || {
            let mut reader = BufReader::new(output);
            while let Ok(Some(line)) = read_bounded_line(&mut reader, MAX_LINE_BYTES) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        })
        .map_err(RunnerError::os("a thread to read the runner"))?;
    Ok(lines)
}

/// The next line of `reader` without its newline, at most `max` bytes of it (the rest of a
/// longer line is read and dropped); `None` at the end.
fn read_bounded_line(reader: &mut impl BufRead, max: usize) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let mut buf = Vec::new();
    let n = reader.by_ref().take(max as u64).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    } else if n == max {
        loop {
            let available = reader.fill_buf()?;
            if available.is_empty() {
                break;
            }
            match memchr::memchr(b'\n', available) {
                Some(i) => {
                    reader.consume(i + 1);
                    break;
                }
                None => {
                    let len = available.len();
                    reader.consume(len);
                }
            }
        }
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One episode's runner.
pub struct Sandbox {
    python: String,
    /// The runner program ([`DRIVER`] unless a test gives another).
    driver: String,
    time_limit: Duration,
    process: Option<Process>,
    forks: Option<Arc<ForkSlot>>,
}

/// How one cell ended.
#[derive(Clone, Debug, PartialEq)]
pub struct CellResult {
    /// The observation, as AppWorld words it.
    pub output: String,
    pub failed: bool,
    pub timed_out: bool,
}

impl Sandbox {
    pub fn new(python: &str, time_limit: Duration) -> Sandbox {
        Sandbox { python: python.to_string(), driver: DRIVER.to_string(), time_limit, process: None, forks: None }
    }

    /// Run `driver` instead of [`DRIVER`].
    pub fn with_driver(mut self, driver: &str) -> Sandbox {
        self.driver = driver.to_string();
        self
    }

    /// Take runners from `forks` (one fork server per world server) instead of starting one.
    pub fn with_fork_server(mut self, forks: Arc<ForkSlot>) -> Sandbox {
        self.forks = Some(forks);
        self
    }

    /// Run one code cell against `world`. `Err` means no runner could be started (Python
    /// missing, no sandbox): an infrastructure error.
    pub fn execute(&mut self, code: &str, world: &mut World) -> Result<CellResult, RunnerError> {
        if self.process.is_none() {
            self.process = Some(Process::start(&self.python, &self.driver, self.forks.as_ref())?);
        }
        let p = self.process.as_mut().expect("started above");
        let request = json!({"code": code}).to_string();
        if writeln!(p.writer, "{request}").and_then(|_| p.writer.flush()).is_err() {
            // The runner started, ran the earlier cells and is gone: only code in it runs
            // there, so the agent's code ended it (a thread it left behind, a signal it sent).
            // A failed cell, like any crash of its own code; the next cell gets a fresh runner.
            self.process = None;
            return Ok(CellResult { output: RUNNER_GONE.into(), failed: true, timed_out: false });
        }
        let deadline = Instant::now() + self.time_limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match p.lines.recv_timeout(left) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => {
                    self.process = None; // killed on drop
                    let secs = self.time_limit.as_secs_f64();
                    return Ok(CellResult {
                        output: format!("Execution failed. Traceback:\nTimeoutError: the code did not finish within {secs} seconds and was stopped. Variables from earlier cells are lost; the apps keep their state."),
                        failed: true,
                        timed_out: true,
                    });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.process = None;
                    return Ok(CellResult { output: RUNNER_ENDED.into(), failed: true, timed_out: false });
                }
            };
            let Ok(msg) = serde_json::from_str::<Value>(&line) else { continue };
            match msg["op"].as_str() {
                Some("call") => {
                    let args = msg["kwargs"].as_object().cloned().unwrap_or_default();
                    let reply = match world.call(msg["app"].as_str().unwrap_or(""), msg["api"].as_str().unwrap_or(""), &args) {
                        Ok(result) => json!({"ok": true, "result": result}),
                        Err(e) => json!({"ok": false, "error": e.exception_text()}),
                    };
                    if writeln!(p.writer, "{reply}").and_then(|_| p.writer.flush()).is_err() {
                        self.process = None;
                        return Ok(CellResult { output: RUNNER_ENDED.into(), failed: true, timed_out: false });
                    }
                }
                Some("done") => {
                    let printed = cut(msg["output"].as_str().unwrap_or(""));
                    return Ok(match msg["error"].as_str() {
                        Some(tb) => {
                            CellResult { output: format!("{printed}Execution failed. Traceback:\n{}", tb.trim_end()), failed: true, timed_out: false }
                        }
                        None if printed.trim().is_empty() => CellResult { output: "Execution successful.".into(), failed: false, timed_out: false },
                        None => CellResult { output: printed.trim_end_matches('\n').to_string(), failed: false, timed_out: false },
                    });
                }
                _ => {}
            }
        }
    }
}

fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_OUTPUT_CHARS {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(MAX_OUTPUT_CHARS).collect();
        t.push_str("\n[output truncated]\n");
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_past_the_bound_are_cut_and_the_next_line_is_whole() {
        let mut input = vec![b'x'; 10_000];
        input.extend_from_slice(b"\nnext\nlast");
        let mut r = BufReader::with_capacity(64, &input[..]);
        assert_eq!(read_bounded_line(&mut r, 100).unwrap().unwrap().len(), 100);
        assert_eq!(read_bounded_line(&mut r, 100).unwrap().unwrap(), "next");
        assert_eq!(read_bounded_line(&mut r, 100).unwrap().unwrap(), "last");
        assert_eq!(read_bounded_line(&mut r, 100).unwrap(), None);
    }
}
