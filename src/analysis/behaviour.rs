//! Behaviour persistence — the attribution question: do the behaviours the siblings teach show up
//! under the base harness as training goes on? Each suite offers a [`BehaviourTagger`] that reads tags
//! off a trajectory (the policy's own actions and what the environment returned); the analysis
//! counts, per arm and iteration, the share of base-harness episodes showing each tag.
//!
//! Source: the `eval` episodes (base harness, every evaluation); when the run has none yet, the
//! `train` episodes (base-harness training tries). Trajectories are read per (arm, iteration)
//! cell, over seeds, without their contexts ([`TrajectoryView`]); when a cell has more than
//! [`MAX_PER_CELL`] episodes, an evenly spaced sample of that many (in insertion order) is
//! tagged instead, and the result says so (`sampled`, and a note).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::read::{self, TrajectoryQuery};
use super::AnalysisError;
use super::Data;
use crate::stats::wilson;
use crate::store::EpisodeRow;
use crate::suite::BehaviourTagger;

/// The most trajectories tagged per (suite, arm, iteration): enough for a share within about
/// ±4 points (95%), and it keeps the report of a 100,000-episode run within seconds.
pub const MAX_PER_CELL: usize = 600;

/// The tagger of a suite, if it has one (each suite supplies its own: `Suite::behaviour`).
pub fn tagger(suite: &str) -> Option<BehaviourTagger> {
    crate::suite::by_name(suite)?.behaviour()
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct BehaviourRow {
    pub suite: String,
    pub arm: String,
    pub iteration: u32,
    pub tag: String,
    /// Episodes tagged.
    pub episodes: usize,
    pub with_tag: usize,
    pub share: f64,
    /// Wilson 95% interval.
    pub ci95: [f64; 2],
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct BehaviourPersistence {
    pub suite: String,
    /// The phase the trajectories come from (`eval`, or `train` before any evaluation).
    pub phase: String,
    /// (tag, short label, meaning).
    pub tags: Vec<(String, String, String)>,
    pub rows: Vec<BehaviourRow>,
    /// Base-harness episodes of that phase, and how many were tagged.
    pub episodes_total: usize,
    pub episodes_tagged: usize,
    /// Whether some cell was sampled (at most [`MAX_PER_CELL`] per arm and iteration).
    pub sampled: bool,
}

/// A cell to tag: (arm, iteration) and the sampled episode ids, if sampled.
type Job<'a> = (&'a (String, u32), Option<Vec<i64>>);
/// Per tag, the episodes showing it; and the episodes tagged.
type Tally = (Vec<usize>, usize);

pub(crate) fn persistence(data: &Data, notes: &mut Vec<String>) -> Result<Vec<BehaviourPersistence>, AnalysisError> {
    let mut out = Vec::new();
    for suite in &data.suites {
        let Some(tagger) = tagger(suite) else {
            notes.push(format!("No behaviour tagger for suite `{suite}`: behaviour persistence is not measured there."));
            continue;
        };
        let keep = |r: &&EpisodeRow| {
            &r.suite == suite && r.harness == data.base_harness && r.context.arm.is_some() && r.context.iteration.is_some() && super::counts(r)
        };
        let mut phase = "eval";
        let train_rows;
        let mut rows: Vec<&EpisodeRow> = data.phase(phase).filter(keep).collect();
        if rows.is_empty() {
            // no evaluation yet: the base-harness training tries (not loaded with the rest)
            phase = "train";
            train_rows = read::rows(data.store, data.run.id, &["train"])?;
            rows = train_rows.iter().filter(keep).collect();
        }
        if rows.is_empty() {
            continue;
        }
        // (arm, iteration) -> rows
        let mut cells: BTreeMap<(String, u32), Vec<&EpisodeRow>> = BTreeMap::new();
        for r in &rows {
            cells.entry((r.context.arm.clone().unwrap_or_default(), r.context.iteration.unwrap_or(0))).or_default().push(r);
        }
        let jobs: Vec<Job> = cells
            .iter()
            .map(|(key, cell)| {
                let sample = (cell.len() > MAX_PER_CELL).then(|| {
                    let step = cell.len() as f64 / MAX_PER_CELL as f64;
                    (0..MAX_PER_CELL).map(|i| cell[((i as f64) * step) as usize].id).collect()
                });
                (key, sample)
            })
            .collect();
        let sampled = jobs.iter().any(|(_, s)| s.is_some());
        // read and tag cells on a few threads: parsing trajectories is most of the work
        let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).clamp(1, 4);
        let tag_cell = |(key, sample): &Job| -> Result<Tally, AnalysisError> {
            let query = TrajectoryQuery {
                run_id: data.run.id,
                suite,
                phase,
                harness: &data.base_harness,
                arm: &key.0,
                iteration: key.1,
                ids: sample.as_deref(),
            };
            let mut counts = vec![0usize; tagger.tags.len()];
            let mut n = 0usize;
            for t in read::trajectories(data.store, &query)?.iter().filter(|t| t.counts()) {
                for (c, flag) in counts.iter_mut().zip((tagger.tag)(&t.calls().collect::<Vec<_>>())) {
                    *c += usize::from(flag);
                }
                n += 1;
            }
            Ok((counts, n))
        };
        let tagged_cells: Vec<Result<Tally, AnalysisError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let jobs = &jobs;
                    let tag_cell = &tag_cell;
                    scope.spawn(move || jobs.iter().enumerate().filter(|(i, _)| i % workers == w).map(|(i, j)| (i, tag_cell(j))).collect::<Vec<_>>())
                })
                .collect();
            let mut all: Vec<(usize, Result<Tally, AnalysisError>)> =
                handles.into_iter().flat_map(|h| h.join().expect("a tagging thread panicked")).collect();
            all.sort_by_key(|(i, _)| *i);
            all.into_iter().map(|(_, r)| r).collect()
        });
        let mut tagged = 0usize;
        let mut result = Vec::new();
        for ((key, _), res) in jobs.iter().zip(tagged_cells) {
            let (counts, n) = res?;
            let (arm, iteration) = key;
            tagged += n;
            for (i, (tag, _, _)) in tagger.tags.iter().enumerate() {
                result.push(BehaviourRow {
                    suite: suite.clone(),
                    arm: arm.clone(),
                    iteration: *iteration,
                    tag: tag.to_string(),
                    episodes: n,
                    with_tag: counts[i],
                    share: if n > 0 { counts[i] as f64 / n as f64 } else { 0.0 },
                    ci95: wilson(counts[i], n),
                });
            }
        }
        let arm_pos = |a: &str| data.arms.iter().position(|x| x == a).unwrap_or(usize::MAX);
        result.sort_by_key(|r| (tagger.tags.iter().position(|t| t.0 == r.tag), arm_pos(&r.arm), r.iteration));
        if sampled {
            notes.push(format!("Behaviour persistence ({suite}): cells with more than {MAX_PER_CELL} episodes were sampled evenly; {tagged} of {} trajectories were tagged.", rows.len()));
        }
        if phase == "train" {
            notes.push(format!("Behaviour persistence ({suite}): no evaluation yet, so the base-harness training tries are tagged."));
        }
        out.push(BehaviourPersistence {
            suite: suite.clone(),
            phase: phase.into(),
            tags: tagger.tags.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())).collect(),
            rows: result,
            episodes_total: rows.len(),
            episodes_tagged: tagged,
            sampled,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::*;

    fn tags_of(suite: &str, e: &crate::episode::Episode) -> Vec<bool> {
        let t = super::read::TrajectoryView::from_episode(e);
        (tagger(suite).expect("a tagger").tag)(&t.calls().collect::<Vec<_>>())
    }
    use crate::suite::Signals;

    fn err() -> Signals {
        Signals { executed: true, error_kind: Some("unknown_column".into()), ..Default::default() }
    }

    #[test]
    fn dbbench_tags_read_the_trajectory() {
        let e = episode(
            "a",
            "f0",
            "base",
            0,
            true,
            vec![
                (sql("select  *  from t"), "[(1,)]".into(), ok_rows()),
                (sql("SELECT SUM(CAST(REPLACE(`x`, ',', '') AS REAL)) FROM `t`"), "[(3.0,)]".into(), ok_rows()),
                (commit(&["3"]), "".into(), Signals::default()),
            ],
        );
        assert_eq!(tags_of("dbbench", &e), vec![true, true, true, true]);
        let e = episode(
            "a",
            "f0",
            "base",
            0,
            false,
            vec![
                (sql("SELECT x FROM t WHERE castle = 1"), "1054 (42S22): Unknown column".into(), err()),
                (commit(&["3"]), "".into(), Signals::default()),
            ],
        );
        assert_eq!(tags_of("dbbench", &e), vec![false, false, false, false]);
        let e = episode(
            "a",
            "f0",
            "base",
            0,
            false,
            vec![(sql("REPLACE INTO t VALUES (1)"), "[]".into(), Signals { executed: true, empty_result: true, ..Default::default() })],
        );
        assert!(!tags_of("dbbench", &e)[2]);
    }

    #[test]
    fn appworld_tags_read_the_trajectory() {
        let cell = |c: &str| crate::message::ToolCall { id: "c".into(), name: "execute_python".into(), arguments: serde_json::json!({ "code": c }) };
        let ran = Signals { executed: true, ..Default::default() };
        let e = episode("a_1", "f", "base", 0, true, vec![
            (cell("print(apis.api_docs.show_app_descriptions())"), "[{'name': 'notes'}]".into(), ran.clone()),
            (cell("tok = apis.notes.login(username='a', password='b')['access_token']"), "Execution successful.".into(), ran.clone()),
            (cell("r, page = [], 0\nwhile True:\n    b = apis.notes.show_notes(access_token=tok, page_index=page)\n    if not b:\n        break\n    r += b\n    page += 1\nprint(r)"), "[{'note_id': 1}]".into(), ran.clone()),
            (cell("apis.supervisor.complete_task(answer='x')"), "Execution successful.".into(), ran.clone()),
        ]);
        assert_eq!(tags_of("appworld", &e), vec![true, true, true, true]);
        let failed = Signals { executed: true, error_kind: Some("unauthorized".into()), ..Default::default() };
        let e = episode(
            "a_1",
            "f",
            "base",
            0,
            false,
            vec![
                (cell("print(apis.notes.show_notes(access_token='x'))"), "Execution failed. Traceback: ...".into(), failed),
                (cell("apis.supervisor.complete_task()"), "Execution successful.".into(), ran),
            ],
        );
        assert_eq!(tags_of("appworld", &e), vec![false, false, false, false]);
    }

    #[test]
    fn swegym_tags_read_the_trajectory() {
        use crate::message::ToolCall;
        let bash = |c: &str| ToolCall { id: "c".into(), name: "execute_bash".into(), arguments: serde_json::json!({"command": c}) };
        let ed = |cmd: &str| ToolCall {
            id: "c".into(),
            name: "str_replace_editor".into(),
            arguments: serde_json::json!({"command": cmd, "path": "/testbed/a.py", "old_str": "x", "new_str": "y"}),
        };
        let fin = ToolCall { id: "c".into(), name: "finish".into(), arguments: serde_json::json!({}) };
        let ran = || Signals { executed: true, ..Default::default() };
        let e = episode(
            "a",
            "f0",
            "base",
            0,
            true,
            vec![
                (bash("python3 - <<'EOF'\nf(1)\nEOF"), "1".into(), ran()),
                (ed("view"), "".into(), Signals::default()),
                (ed("str_replace"), "".into(), ran()),
                (bash("python3 -m unittest"), "OK".into(), ran()),
                (fin.clone(), "".into(), Signals::default()),
            ],
        );
        assert_eq!(tags_of("swegym", &e), vec![true, true, true]);
        let e = episode(
            "a",
            "f0",
            "base",
            0,
            false,
            vec![
                (ed("str_replace"), "".into(), ran()),
                (bash("python3 -m unittest"), "FAILED".into(), ran()),
                (ed("str_replace"), "".into(), ran()),
                (fin, "".into(), Signals::default()),
            ],
        );
        assert_eq!(tags_of("swegym", &e), vec![false, false, false]);
    }

    #[test]
    fn shares_per_arm_and_iteration() {
        let t = TestRun::new();
        let good = || {
            episode(
                "a",
                "f0",
                "base",
                0,
                true,
                vec![(sql("SELECT * FROM t"), "[(1,)]".into(), ok_rows()), (commit(&["1"]), "".into(), Signals::default())],
            )
        };
        let bad = || episode("b", "f0", "base", 0, false, vec![(commit(&["1"]), "".into(), Signals::default())]);
        t.put(vec![
            (good(), ctx("harness-s", 0, 0, "eval", "train")),
            (bad(), ctx("harness-s", 0, 0, "eval", "train")),
            (good(), ctx("harness-s", 1, 0, "eval", "train")),
            (good(), ctx("harness-s", 0, 2, "eval", "train")),
            (bad(), ctx("harness-s", 0, 2, "train", "train")),
        ]);
        let mut notes = vec![];
        let b = persistence(&t.data(), &mut notes).unwrap();
        assert_eq!(b[0].phase, "eval");
        assert_eq!(b[0].episodes_total, 4);
        let r = b[0].rows.iter().find(|r| r.tag == "inspects_first" && r.iteration == 0).unwrap();
        assert_eq!((r.episodes, r.with_tag), (3, 2));
        let r = b[0].rows.iter().find(|r| r.tag == "checks_before_commit" && r.iteration == 2).unwrap();
        assert_eq!((r.episodes, r.with_tag), (1, 1));
        assert!(!b[0].sampled);
    }
}
