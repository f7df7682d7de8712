//! An event sink that cancels a run after a number of progress events, as Ctrl-C or a kill
//! would stop it. Include it from a test file with
//! ```ignore
//! #[path = "support/kill_after.rs"]
//! mod kill_after;
//! use kill_after::KillAfter;
//! ```

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use harness_s::events::{Event, EventSink};

pub struct KillAfter<'a> {
    pub n: usize,
    pub seen: AtomicUsize,
    pub cancel: &'a AtomicBool,
}

impl EventSink for KillAfter<'_> {
    fn emit(&self, e: Event) {
        if let Event::Progress { .. } = e {
            if self.seen.fetch_add(1, Ordering::SeqCst) + 1 >= self.n {
                self.cancel.store(true, Ordering::SeqCst);
            }
        }
    }
}
