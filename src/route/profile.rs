//! Harness Behavior Profiles: per sibling, where it fixes and where it breaks base, measured
//! with paired rollouts of one policy version.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::episode::{Episode, EpisodeStatus};

/// Paired outcome counts of sibling versus base on the same task (also the `harnesses` API's
/// shape, so the UI's type is generated from this one).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Counts {
    /// Base failed, sibling passed.
    pub fix: u32,
    /// Base passed, sibling failed.
    pub regress: u32,
    pub both_pass: u32,
    pub both_fail: u32,
}

impl Counts {
    pub fn add(&mut self, base: bool, sibling: bool) {
        match (base, sibling) {
            (false, true) => self.fix += 1,
            (true, false) => self.regress += 1,
            (true, true) => self.both_pass += 1,
            (false, false) => self.both_fail += 1,
        }
    }
    /// Base failures seen.
    pub fn base_failures(&self) -> u32 {
        self.fix + self.both_fail
    }
    pub fn total(&self) -> u32 {
        self.fix + self.regress + self.both_pass + self.both_fail
    }
}

/// One sibling's profile at one anchor.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct BehaviorProfile {
    pub sibling: String,
    /// The sibling's repair specialty, in its spec's words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub specialty: String,
    /// The policy version the paired rollouts were made with.
    pub policy_version: u64,
    pub anchor: usize,
    pub total: Counts,
    pub by_family: BTreeMap<String, Counts>,
    pub by_signature: BTreeMap<String, Counts>,
    /// Keyed `family|signature`.
    pub by_bucket: BTreeMap<String, Counts>,
    /// Short evidence lines an LLM voter (or a person) can read.
    pub evidence: Vec<String>,
}

impl BehaviorProfile {
    pub fn record(&mut self, family: &str, signature: &str, base: bool, sibling: bool) {
        self.total.add(base, sibling);
        self.by_family.entry(family.to_string()).or_default().add(base, sibling);
        self.by_signature.entry(signature.to_string()).or_default().add(base, sibling);
        self.by_bucket.entry(format!("{family}|{signature}")).or_default().add(base, sibling);
    }

    /// Fill `evidence` from the counts.
    pub fn summarise(&mut self) {
        let mut lines = vec![format!(
            "{}: fixed {} of {} base failures, broke {} of {} base passes overall",
            self.sibling,
            self.total.fix,
            self.total.base_failures(),
            self.total.regress,
            self.total.regress + self.total.both_pass
        )];
        let mut buckets: Vec<(&String, &Counts)> = self.by_bucket.iter().filter(|(_, c)| c.fix > 0 || c.regress > 0).collect();
        buckets.sort_by_key(|(_, c)| std::cmp::Reverse(c.fix + c.regress));
        for (k, c) in buckets.into_iter().take(6) {
            let (fam, sig) = k.split_once('|').unwrap_or((k.as_str(), ""));
            lines.push(format!("on {fam} failures of kind {sig}: fixed {} of {}, broke {}", c.fix, c.base_failures(), c.regress));
        }
        self.evidence = lines;
    }
}

/// The failure signature of a failed base trajectory: what went wrong, from the trajectory
/// itself (error kinds, loops, no query, an empty last result, a wrong answer).
pub fn failure_signature(ep: &Episode) -> String {
    if ep.success() {
        return "pass".into();
    }
    if ep.status == EpisodeStatus::InfraError {
        return "infra".into();
    }
    let calls: Vec<_> = ep.steps.iter().flat_map(|s| s.calls.iter()).collect();
    let executed: Vec<_> = calls.iter().filter(|c| c.signals.executed).collect();
    let mut keys = std::collections::HashMap::new();
    let mut repeated = false;
    for c in &calls {
        let k = format!("{}|{}", c.proposed.name, c.proposed.arguments);
        let n = keys.entry(k).or_insert(0);
        *n += 1;
        if *n >= 2 {
            repeated = true;
        }
    }
    if ep.status == EpisodeStatus::TaskLimitReached {
        return if repeated { "loop".into() } else { "round_limit".into() };
    }
    if executed.is_empty() {
        return "no_query".into();
    }
    let kinds: Vec<&str> = executed.iter().filter_map(|c| c.signals.error_kind.as_deref()).collect();
    let last = executed.last();
    if let Some(l) = last {
        if let Some(k) = &l.signals.error_kind {
            return format!("{k}_error");
        }
        if l.signals.empty_result {
            return "empty_result".into();
        }
    }
    if kinds.contains(&"unknown_column") {
        return "unknown_column_error".into();
    }
    if kinds.contains(&"syntax") {
        return "syntax_error".into();
    }
    "wrong_answer".into()
}

/// A one-paragraph summary of a failed trajectory, for routing records and LLM voters.
pub fn failure_summary(ep: &Episode) -> String {
    let mut parts = vec![format!("task {} ({}), {} steps, signature {}", ep.task_id, ep.family, ep.steps.len(), failure_signature(ep))];
    for s in ep.steps.iter().take(6) {
        for c in &s.calls {
            let arg = c.proposed.arguments.to_string();
            let obs: String = c.observation.chars().take(80).collect();
            parts.push(format!("{}({}) -> {}", c.proposed.name, arg.chars().take(100).collect::<String>(), obs));
        }
    }
    parts.join("\n")
}
