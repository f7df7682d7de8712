//! Fault injection for crash tests: with `HARNESS_S_FAULT=<point>:<n>` in its environment, the
//! process kills itself with SIGKILL — exactly what `kill -9` from outside would do — the n-th
//! time it reaches `point`. The points sit where a crash is most interesting: `rollout` (an
//! episode finished, not yet stored), `update` (the policy changed in memory, not yet
//! checkpointed), `evaluation` (evaluation episodes run, not yet stored), `store-write` (inside
//! a store transaction, before its commit) and `checkpoint` (before a job's checkpoint is
//! written).
//!
//! Without the variable a point costs one relaxed atomic load.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable that arms a fault.
pub const ENV_FAULT: &str = "HARNESS_S_FAULT";

/// The points a fault can be armed at.
pub const POINTS: &[&str] = &["rollout", "update", "evaluation", "store-write", "checkpoint"];

struct Armed {
    point: String,
    at: u64,
    seen: AtomicU64,
}

fn armed() -> Option<&'static Armed> {
    static ARMED: OnceLock<Option<Armed>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            let v = std::env::var(ENV_FAULT).ok()?;
            let (point, n) = v.split_once(':')?;
            Some(Armed { point: point.trim().to_string(), at: n.trim().parse().ok()?, seen: AtomicU64::new(0) })
        })
        .as_ref()
}

/// Reached `point`: die here if a fault is armed for this occurrence of it.
pub fn point(name: &str) {
    let Some(a) = armed() else { return };
    if a.point != name {
        return;
    }
    if a.seen.fetch_add(1, Ordering::SeqCst) + 1 == a.at {
        // SAFETY: raise(3) sends SIGKILL to this process; nothing runs after it.
        unsafe {
            libc::raise(libc::SIGKILL);
        }
    }
}
