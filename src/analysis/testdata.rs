//! Hand-built experiment data in a temporary store, for the analyses' unit tests.

use serde_json::{json, Value};

use crate::episode::{CallRecord, Episode, EpisodeStatus, Step, TRAJECTORY_SCHEMA};
use crate::message::{AssistantTurn, Context, ToolCall};
use crate::route::BehaviorProfile;
use crate::store::{BlockingStore, EpisodeContext, NewRun};
use crate::suite::{Score, Signals};

use super::Data;

pub struct TestRun {
    _dir: tempfile::TempDir,
    pub store: BlockingStore,
    pub run_id: i64,
}

/// An episode with the given calls: (tool, argument json, observation, signals).
pub fn episode(task: &str, family: &str, harness: &str, sample: u32, success: bool, calls: Vec<(ToolCall, String, Signals)>) -> Episode {
    let steps = calls
        .into_iter()
        .enumerate()
        .map(|(i, (call, observation, signals))| Step {
            index: i,
            context: Context::default(),
            output: AssistantTurn { tool_calls: vec![call.clone()], ..Default::default() },
            calls: vec![CallRecord { proposed: call.clone(), executed: Some(call), observation, signals, duration_ms: 1.0 }],
            interventions: vec![],
            policy_ms: 1.0,
            env_ms: 1.0,
        })
        .collect();
    Episode {
        schema: TRAJECTORY_SCHEMA,
        task_id: task.into(),
        suite: "dbbench".into(),
        family: family.into(),
        harness: harness.into(),
        policy: "builtin@v1".into(),
        sample,
        seed: 7,
        status: EpisodeStatus::Completed,
        steps,
        score: Some(Score { reward: if success { 1.0 } else { 0.0 }, success, details: Value::Null }),
        infra_error: None,
        duration_ms: 2.0,
        prompt_tokens: 10,
        completion_tokens: 5,
    }
}

pub fn sql(query: &str) -> ToolCall {
    ToolCall { id: "c".into(), name: "execute_sql".into(), arguments: json!({ "query": query }) }
}

pub fn commit(answers: &[&str]) -> ToolCall {
    ToolCall { id: "c".into(), name: "commit_final_answer".into(), arguments: json!({ "answers": answers }) }
}

pub fn ok_rows() -> Signals {
    Signals { executed: true, ..Default::default() }
}

pub fn ctx(arm: &str, seed: u32, it: u32, phase: &str, split: &str) -> EpisodeContext {
    EpisodeContext::default().with_arm(arm).with_seed_index(seed).with_iteration(it).with_phase(phase).with_split(split)
}

impl TestRun {
    pub fn new() -> TestRun {
        Self::with_config(json!({
            "name": "unit",
            "suites": ["dbbench"],
            "arms": ["policy-only", "harness-s"],
            "seeds": [1, 2],
            "heldout_families": ["hf"],
            "budget": {"rescue_siblings": 2, "rescue_tries": 1},
        }))
    }

    pub fn with_config(config: Value) -> TestRun {
        let dir = tempfile::tempdir().unwrap();
        let store = BlockingStore::open(dir.path().join("t.db").to_str().unwrap()).unwrap();
        let run_id = store.create_run(&NewRun::new("experiment", "unit").config(config)).unwrap();
        TestRun { _dir: dir, store, run_id }
    }

    pub fn data(&self) -> Data<'_> {
        Data::load(&self.store, self.run_id).unwrap()
    }

    pub fn put(&self, episodes: Vec<(Episode, EpisodeContext)>) {
        self.store.insert_episodes(self.run_id, &episodes).unwrap();
    }

    /// Evaluation episodes: train tasks `t0..`, held-out tasks `h0..` (family `hf`).
    pub fn eval(&self, arm: &str, seed: u32, it: u32, split: &str, outcome: &[bool]) {
        let eps = outcome
            .iter()
            .enumerate()
            .map(|(i, &ok)| {
                let (task, fam) = if split == "heldout" { (format!("h{i}"), "hf".to_string()) } else { (format!("t{i}"), format!("f{}", i % 2)) };
                (episode(&task, &fam, "base", 0, ok, vec![]), ctx(arm, seed, it, "eval", split))
            })
            .collect();
        self.put(eps);
    }

    pub fn profile(&self, arm: &str, seed: u32, anchor: usize, iteration: u32, sibling: &str, records: &[(&str, &str, bool, bool)]) {
        let mut p = BehaviorProfile { sibling: sibling.into(), policy_version: anchor as u64, anchor, ..Default::default() };
        for (fam, sig, base, sib) in records {
            p.record(fam, sig, *base, *sib);
        }
        p.summarise();
        let body = crate::records::ProfileRecord::body(&p, arm, seed as usize, iteration as usize).unwrap();
        let key = crate::records::profile_key("dbbench", arm, seed as usize, anchor, sibling);
        self.store.put_record(self.run_id, "profile", &key, &body).unwrap();
    }

    #[allow(clippy::too_many_arguments)]
    pub fn route(&self, arm: &str, seed: u32, it: u32, anchor: usize, task: &str, aggregate: &[&str], chosen: &[&str], rescued: &[(&str, bool)]) {
        let decision = crate::route::RoutingDecision {
            query: crate::route::RouteQuery { task_id: task.into(), family: "f0".into(), signature: "wrong_answer".into(), summary: String::new() },
            anchor,
            policy_version: 1,
            rankings: Vec::new(),
            aggregate: aggregate.iter().map(|s| s.to_string()).collect(),
            chosen: chosen.iter().map(|s| s.to_string()).collect(),
            rescued: rescued.iter().map(|(s, b)| (s.to_string(), *b)).collect(),
            abstained: Vec::new(),
        };
        let body = crate::records::RouteRecord::body(&decision, arm, seed as usize, it as usize).unwrap();
        self.store.put_record(self.run_id, "route", &crate::records::task_record_key("dbbench", arm, seed, it, task), &body).unwrap();
    }
}
