//! A synthetic experiment written straight into a store, shaped like the runner's output
//! (episodes of every phase, `route` and `profile` records, job checkpoints): for benchmarking the
//! report on a large run, and for looking at a report with lively numbers without training
//! anything. Its numbers come from a simple made-up model, not from any policy; the run's config
//! says `"synthetic": true` and every report of it says so in its summary.

use serde_json::{json, Value};

use crate::episode::{CallRecord, Episode, EpisodeStatus, Step, TRAJECTORY_SCHEMA};
use crate::message::{AssistantTurn, Context, Message, Origin, Role, ToolCall, ToolSpec};
use crate::route::BehaviorProfile;
use crate::seed::hash_str;
use crate::seed::SplitMix;
use crate::store::{BlockingStore, EpisodeContext, NewRun, RunStatus, StoreError};
use crate::suite::{Score, Signals};

/// The shape of a synthetic experiment.
#[derive(Clone, Debug)]
pub struct Synthetic {
    pub name: String,
    pub arms: Vec<String>,
    pub seeds: Vec<u64>,
    pub iterations: u32,
    pub eval_every: u32,
    pub reanchor_every: u32,
    /// Training tasks, and the evaluated subset of them.
    pub train_tasks: usize,
    pub eval_train_tasks: usize,
    pub heldout_tasks: usize,
    pub batch_tasks: usize,
    pub base_tries: usize,
    pub rescue_siblings: usize,
    pub rescue_tries: usize,
    pub probe_tasks: usize,
    pub siblings: Vec<String>,
    /// Stop after this many iterations, leaving the run `running` (as a killed run is).
    pub stop_after: Option<u32>,
    /// Episodes written per transaction.
    pub batch: usize,
}

impl Default for Synthetic {
    fn default() -> Self {
        Synthetic {
            name: "synthetic".into(),
            arms: ["policy-only", "harness-s", "random-rescue", "base-resample", "keep-scaffold", "all-siblings"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            seeds: vec![1, 2, 3],
            iterations: 10,
            eval_every: 2,
            reanchor_every: 4,
            train_tasks: 360,
            eval_train_tasks: 120,
            heldout_tasks: 80,
            batch_tasks: 32,
            base_tries: 4,
            rescue_siblings: 2,
            rescue_tries: 2,
            probe_tasks: 40,
            siblings: ["schema-first", "error-explainer", "quote-guard", "value-probe", "answer-check", "plan-then-act", "loop-monitor"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            stop_after: None,
            batch: 2000,
        }
    }
}

/// What [`write_synthetic`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticRun {
    pub run_id: i64,
    pub episodes: usize,
}

const TRAIN_FAMILIES: &[&str] =
    &["lookup", "counting", "comparison", "ranking", "aggregation-SUM", "aggregation-MIN", "aggregation-MAX", "INSERT", "UPDATE"];
const HELDOUT_FAMILIES: &[&str] = &["aggregation-AVG", "DELETE"];

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn unit(r: &mut SplitMix) -> f64 {
    r.next_f64()
}

fn mix(parts: &[u64]) -> u64 {
    crate::seed::mix(0x5e7_7e71c, parts)
}

use crate::seed::shuffled;

struct Task {
    id: String,
    family: &'static str,
    difficulty: f64,
}

fn arm_gain(arm: &str) -> (f64, f64) {
    // (gain per iteration on training families, share of it that transfers to held-out ones)
    match arm {
        "harness-s" => (0.20, 0.75),
        "keep-scaffold" => (0.13, 0.35),
        "random-rescue" => (0.15, 0.5),
        "all-siblings" => (0.16, 0.55),
        "base-resample" => (0.14, 0.45),
        _ => (0.11, 0.4),
    }
}

/// Sibling `j`'s effect on family `f` at iteration `it` (drifting slowly).
fn sibling_effect(j: usize, family: &str, it: u32) -> f64 {
    let h = hash_str(&format!("{j}/{family}"));
    let base = ((h % 1000) as f64 / 1000.0) * 3.2 - 1.4;
    let drift = ((it as f64) * 0.35 + (h >> 20 & 7) as f64).sin() * 0.9;
    base + drift
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "execute_sql".into(),
            description: "Execute an SQL query on the table.".into(),
            parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
        },
        ToolSpec {
            name: "commit_final_answer".into(),
            description: "Commit the final answer.".into(),
            parameters: json!({"type": "object", "properties": {"answers": {"type": "array", "items": {"type": "string"}}}, "required": ["answers"]}),
        },
    ]
}

/// A two-to-four step DBBench-like trajectory showing the behaviours with the given odds.
fn trajectory(task: &Task, success: bool, p_tag: f64, r: &mut SplitMix) -> Vec<Step> {
    let table = format!("Table {}", task.family);
    let mut calls: Vec<(String, String, Signals)> = Vec::new();
    if unit(r) < p_tag {
        calls.push((
            format!("SELECT * FROM `{table}` LIMIT 5"),
            "[('Westbrook', '34', '45'), ('Bramley', '34', '46')]".into(),
            Signals { executed: true, ..Default::default() },
        ));
    }
    let quote = unit(r) < p_tag;
    let cast = unit(r) < p_tag * 0.8;
    let col = if quote { "`GF`".to_string() } else { "GF".to_string() };
    let expr = if cast { format!("SUM(CAST(REPLACE({col}, ',', '') AS REAL))") } else { format!("SUM({col})") };
    let from = if quote { format!("`{table}`") } else { table.clone() };
    if !quote && unit(r) < 0.4 {
        calls.push((
            format!("SELECT {expr} FROM {from}"),
            "1064 (42000): You have an error in your SQL syntax".into(),
            Signals { executed: true, error_kind: Some("syntax".into()), ..Default::default() },
        ));
    }
    let check = unit(r) < p_tag;
    calls.push((
        format!("SELECT {expr} FROM {from} WHERE P = '34'"),
        if check || success { "[(1234.0,)]".into() } else { "[]".into() },
        Signals { executed: true, empty_result: !(check || success), ..Default::default() },
    ));
    let mut messages = vec![
        Message::system("You are an agent that answers questions about a database table using SQL. Use execute_sql to run queries and commit_final_answer to answer."),
        Message::user(format!("{} The name of this table is {table}, and the headers of this table are Team,P,GF,Stadium.", task.id), Origin::Frame),
    ];
    let mut steps = Vec::new();
    let n = calls.len();
    for (i, (q, obs, sig)) in calls.into_iter().enumerate() {
        let call = ToolCall { id: format!("call_{i}"), name: "execute_sql".into(), arguments: json!({"query": q}) };
        steps.push(Step {
            index: i,
            context: Context { messages: messages.clone(), tools: tools() },
            output: AssistantTurn {
                content: String::new(),
                tool_calls: vec![call.clone()],
                raw: String::new(),
                prompt_tokens: 300 + 40 * i as u32,
                completion_tokens: 24,
                logprobs: None,
            },
            calls: vec![CallRecord {
                proposed: call.clone(),
                executed: Some(call.clone()),
                observation: obs.clone(),
                signals: sig,
                duration_ms: 0.4,
            }],
            interventions: Vec::new(),
            policy_ms: 2.0,
            env_ms: 0.4,
        });
        messages.push(Message { role: Role::Assistant, content: String::new(), tool_calls: vec![call], tool_call_id: None, origin: Origin::Policy });
        messages.push(Message {
            role: Role::Tool,
            content: obs,
            tool_calls: Vec::new(),
            tool_call_id: Some(format!("call_{i}")),
            origin: Origin::Environment,
        });
    }
    let commit =
        ToolCall { id: format!("call_{n}"), name: "commit_final_answer".into(), arguments: json!({"answers": [if success { "1234" } else { "0" }]}) };
    steps.push(Step {
        index: n,
        context: Context { messages, tools: tools() },
        output: AssistantTurn {
            content: String::new(),
            tool_calls: vec![commit.clone()],
            raw: String::new(),
            prompt_tokens: 400,
            completion_tokens: 12,
            logprobs: None,
        },
        calls: vec![CallRecord {
            proposed: commit.clone(),
            executed: Some(commit),
            observation: String::new(),
            signals: Signals { submitted: true, ..Default::default() },
            duration_ms: 0.1,
        }],
        interventions: Vec::new(),
        policy_ms: 2.0,
        env_ms: 0.1,
    });
    steps
}

struct Writer<'a> {
    store: &'a BlockingStore,
    run_id: i64,
    pending: Vec<(Episode, EpisodeContext)>,
    batch: usize,
    written: usize,
}

impl Writer<'_> {
    fn push(&mut self, e: Episode, c: EpisodeContext) -> Result<(), StoreError> {
        self.pending.push((e, c));
        if self.pending.len() >= self.batch {
            self.flush()?;
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        if !self.pending.is_empty() {
            self.store.insert_episodes(self.run_id, &self.pending)?;
            self.written += self.pending.len();
            self.pending.clear();
        }
        Ok(())
    }
}

/// Write a synthetic experiment into `store`.
pub fn write_synthetic(store: &BlockingStore, s: &Synthetic) -> Result<SyntheticRun, StoreError> {
    let config = json!({
        "name": s.name, "synthetic": true, "suites": ["dbbench"], "heldout_families": HELDOUT_FAMILIES,
        "arms": s.arms, "seeds": s.seeds, "iterations": s.iterations, "eval_every": s.eval_every, "reanchor_every": s.reanchor_every,
        "policy": {"backend": "builtin"},
        "budget": {"batch_tasks": s.batch_tasks, "base_tries": s.base_tries, "rescue_siblings": s.rescue_siblings, "rescue_tries": s.rescue_tries, "probe_tasks": s.probe_tasks},
        "harness": {"base": "base", "siblings": s.siblings},
        "eval": {"train_tasks": s.eval_train_tasks},
    });
    let run_id = store.create_run(&NewRun::new("experiment", s.name.clone()).suite("dbbench").policy("builtin").config(config))?;
    let task = |i: usize, fams: &'static [&'static str], prefix: &str| -> Task {
        let family = fams[i % fams.len()];
        let id = format!("{prefix}-{family}-{i:04}");
        let h = hash_str(&id);
        Task { difficulty: (h % 10_000) as f64 / 10_000.0 * 4.0 - 1.0, id, family }
    };
    let train: Vec<Task> = (0..s.train_tasks).map(|i| task(i, TRAIN_FAMILIES, "syn")).collect();
    let heldout: Vec<Task> = (0..s.heldout_tasks).map(|i| task(i, HELDOUT_FAMILIES, "syn-h")).collect();
    let mut w = Writer { store, run_id, pending: Vec::new(), batch: s.batch.max(1), written: 0 };
    let last = s.stop_after.unwrap_or(s.iterations).min(s.iterations);
    let n_sib = s.siblings.len();
    for (si, &seed) in s.seeds.iter().enumerate() {
        for arm in &s.arms {
            let (gain, transfer) = arm_gain(arm);
            let seed_noise = ((mix(&[seed, 0x5eed]) % 1000) as f64 / 1000.0 - 0.5) * 0.3;
            let skill = |it: u32, heldout: bool| -0.9 + seed_noise + gain * it as f64 * if heldout { transfer } else { 1.0 };
            let p_tag = |it: u32| {
                sigmoid(
                    -1.6 + it as f64
                        * if arm == "harness-s" {
                            0.32
                        } else if arm == "keep-scaffold" {
                            0.08
                        } else {
                            0.12
                        },
                )
            };
            let ctx = |it: u32, phase: &str, split: &str| {
                EpisodeContext::default().with_arm(arm.clone()).with_seed_index(si as u32).with_iteration(it).with_phase(phase).with_split(split)
            };
            let mut rng = SplitMix(mix(&[seed, hash_str(arm)]));
            let episode = |t: &Task, harness: &str, sample: u32, success: bool, r: &mut SplitMix, p: f64| Episode {
                schema: TRAJECTORY_SCHEMA,
                task_id: t.id.clone(),
                suite: "dbbench".into(),
                family: t.family.into(),
                harness: harness.into(),
                policy: "builtin@synthetic".into(),
                sample,
                seed,
                status: EpisodeStatus::Completed,
                steps: trajectory(t, success, p, r),
                score: Some(Score { reward: if success { 1.0 } else { 0.0 }, success, details: Value::Null }),
                infra_error: None,
                duration_ms: 12.0,
                prompt_tokens: 1200,
                completion_tokens: 60,
            };
            let routed = arm == "harness-s" || arm == "keep-scaffold";
            let probe_set: Vec<&Task> = shuffled(train.len(), mix(&[seed, 0x970be])).into_iter().take(s.probe_tasks).map(|i| &train[i]).collect();
            let mut anchor = 0usize;
            let measure = |w: &mut Writer, it: u32, anchor: usize, rng: &mut SplitMix| -> Result<(), StoreError> {
                let mut profiles: Vec<BehaviorProfile> = s
                    .siblings
                    .iter()
                    .map(|n| BehaviorProfile { sibling: n.clone(), policy_version: it as u64, anchor, ..Default::default() })
                    .collect();
                for t in &probe_set {
                    let pb = sigmoid(skill(it, false) - t.difficulty);
                    let base_ok = unit(rng) < pb;
                    w.push(episode(t, "base", 0, base_ok, rng, p_tag(it)), ctx(it, "probe", "train"))?;
                    for (j, sib) in s.siblings.iter().enumerate() {
                        let ok = unit(rng) < sigmoid(skill(it, false) - t.difficulty + sibling_effect(j, t.family, it));
                        profiles[j].record(t.family, if base_ok { "pass" } else { "wrong_answer" }, base_ok, ok);
                        w.push(episode(t, sib, 0, ok, rng, p_tag(it)), ctx(it, "probe", "train"))?;
                    }
                }
                for p in &mut profiles {
                    p.summarise();
                    let body = crate::records::ProfileRecord::body(p, arm, si, it as usize).unwrap_or_default();
                    store.put_record(run_id, "profile", &crate::records::profile_key("dbbench", arm, si, anchor, &p.sibling), &body)?;
                }
                Ok(())
            };
            let evaluate = |w: &mut Writer, it: u32, rng: &mut SplitMix| -> Result<(), StoreError> {
                for (split, tasks) in [("train", &train[..s.eval_train_tasks.min(train.len())]), ("heldout", &heldout[..])] {
                    for t in tasks {
                        let ok = unit(rng) < sigmoid(skill(it, split == "heldout") - t.difficulty);
                        w.push(episode(t, "base", 0, ok, rng, p_tag(it)), ctx(it, "eval", split))?;
                    }
                }
                Ok(())
            };
            if routed {
                measure(&mut w, 0, 0, &mut rng)?;
            }
            evaluate(&mut w, 0, &mut rng)?;
            for it in 1..=last {
                for b in shuffled(train.len(), mix(&[seed, it as u64, 0xba7c4])).into_iter().take(s.batch_tasks) {
                    let t = &train[b];
                    let p = sigmoid(skill(it - 1, false) - t.difficulty);
                    let tries: Vec<bool> = (0..s.base_tries).map(|_| unit(&mut rng) < p).collect();
                    for (k, ok) in tries.iter().enumerate() {
                        w.push(episode(t, "base", k as u32, *ok, &mut rng, p_tag(it - 1)), ctx(it, "train", "train"))?;
                    }
                    if tries.iter().any(|x| *x) || arm == "policy-only" {
                        continue;
                    }
                    let extra = s.rescue_siblings * s.rescue_tries;
                    if arm == "base-resample" {
                        for k in 0..extra {
                            let ok = unit(&mut rng) < p;
                            w.push(episode(t, "base", (s.base_tries + k) as u32, ok, &mut rng, p_tag(it - 1)), ctx(it, "resample", "train"))?;
                        }
                        continue;
                    }
                    // which siblings, in which order
                    let mut order: Vec<usize> = (0..n_sib).collect();
                    let aggregate: Vec<String> = if routed {
                        let anchor_it = anchor as u32 * s.reanchor_every;
                        order.sort_by(|&a, &b| {
                            let ea = sibling_effect(a, t.family, anchor_it) + unit(&mut rng) * 0.8;
                            let eb = sibling_effect(b, t.family, anchor_it) + unit(&mut rng) * 0.8;
                            eb.partial_cmp(&ea).unwrap_or(std::cmp::Ordering::Equal)
                        });
                        order.iter().map(|&j| s.siblings[j].clone()).collect()
                    } else {
                        for i in (1..order.len()).rev() {
                            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                            order.swap(i, j);
                        }
                        Vec::new()
                    };
                    let plan: Vec<(usize, usize)> = if arm == "all-siblings" {
                        (0..extra).map(|i| (order[i % n_sib], 1)).collect()
                    } else {
                        order.iter().take(s.rescue_siblings).map(|&j| (j, s.rescue_tries)).collect()
                    };
                    let mut rescued = Vec::new();
                    let mut k = 0u32;
                    for (j, tries) in plan {
                        let mut any = false;
                        for _ in 0..tries {
                            let ok = unit(&mut rng) < sigmoid(skill(it - 1, false) - t.difficulty + sibling_effect(j, t.family, it));
                            any |= ok;
                            w.push(episode(t, &s.siblings[j], 100 + k, ok, &mut rng, p_tag(it - 1)), ctx(it, "rescue", "train"))?;
                            k += 1;
                        }
                        rescued.push((s.siblings[j].clone(), any));
                    }
                    let decision = crate::route::RoutingDecision {
                        query: crate::route::RouteQuery {
                            task_id: t.id.clone(),
                            family: t.family.to_string(),
                            signature: "wrong_answer".into(),
                            summary: String::new(),
                        },
                        anchor,
                        policy_version: it as u64,
                        rankings: Vec::new(),
                        aggregate: aggregate.clone(),
                        chosen: rescued.iter().map(|r| r.0.clone()).collect(),
                        rescued: rescued.clone(),
                        abstained: Vec::new(),
                    };
                    let body = crate::records::RouteRecord::body(&decision, arm, si, it as usize).unwrap_or_default();
                    store.put_record(run_id, "route", &crate::records::task_record_key("dbbench", arm, si, it, &t.id), &body)?;
                }
                if routed && it % s.reanchor_every == 0 && it < s.iterations {
                    anchor += 1;
                    measure(&mut w, it, anchor, &mut rng)?;
                }
                if it % s.eval_every == 0 || it == s.iterations {
                    evaluate(&mut w, it, &mut rng)?;
                }
            }
            let finished = last == s.iterations;
            let mut rank_one = Vec::new();
            if finished {
                if !routed {
                    measure(&mut w, s.iterations, 99, &mut rng)?;
                }
                for (split, tasks) in [("train", &train[..s.eval_train_tasks.min(train.len())]), ("heldout", &heldout[..])] {
                    let (mut r_ok, mut b_ok, mut r_roll) = (0usize, 0usize, 0u64);
                    for t in tasks {
                        let p = sigmoid(skill(s.iterations, split == "heldout") - t.difficulty);
                        let first = unit(&mut rng) < p;
                        r_roll += 1;
                        if first {
                            r_ok += 1;
                            b_ok += 1;
                            continue;
                        }
                        let j = (0..n_sib)
                            .max_by(|&a, &b| {
                                sibling_effect(a, t.family, s.iterations)
                                    .partial_cmp(&sibling_effect(b, t.family, s.iterations))
                                    .unwrap_or(std::cmp::Ordering::Equal)
                            })
                            .unwrap_or(0);
                        let ok = unit(&mut rng)
                            < sigmoid(skill(s.iterations, split == "heldout") - t.difficulty + 0.6 * sibling_effect(j, t.family, s.iterations));
                        r_roll += 1;
                        r_ok += usize::from(ok);
                        w.push(episode(t, &s.siblings[j], 1, ok, &mut rng, p_tag(s.iterations)), ctx(s.iterations, "rank1", split))?;
                        b_ok += usize::from(unit(&mut rng) < p);
                    }
                    let n = tasks.len().max(1) as f64;
                    rank_one.push(json!({"split": split, "routed": r_ok as f64 / n, "base_only": b_ok as f64 / n, "rollouts_routed": r_roll, "rollouts_base_only": 2 * tasks.len()}));
                }
            }
            store.set_state(
                run_id,
                &crate::records::job_key("dbbench", arm, si),
                &json!({"suite": "dbbench", "arm": arm, "seed_index": si, "seed": seed, "iterations_done": last, "started": true, "finished": finished, "rank_one": rank_one}),
            )?;
        }
    }
    w.flush()?;
    if s.stop_after.is_none_or(|n| n >= s.iterations) {
        store.finish_run(run_id, RunStatus::Finished, &json!({"synthetic": true}))?;
    }
    Ok(SyntheticRun { run_id, episodes: w.written })
}
