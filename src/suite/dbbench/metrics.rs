//! DBBench metrics as AgentBench reports them: accuracy per select type, `SELECT_accuracy` over
//! every non-mutation type, `INSERT_accuracy`, `UPDATE_accuracy`, `DELETE_accuracy`, and
//! `overall_cat_accuracy`, the mean of those category accuracies over the categories present.
//!
//! Episodes without a score (infrastructure errors) are excluded and counted under `excluded`;
//! episodes that never committed carry a failing score and count as wrong. A type or category
//! with no episodes has accuracy `null` (AgentBench prints a warning and reports 0).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::record::{record_of, QueryType};
use crate::suite::OutcomeForMetrics;

fn query_type(o: &OutcomeForMetrics<'_>) -> Option<QueryType> {
    if let Some(t) = o.score.and_then(|s| s.details.get("type")).and_then(|t| t.as_str()).and_then(QueryType::parse) {
        return Some(t);
    }
    if let Some(t) = o.task.payload.get("type").and_then(|t| t.get(0)).and_then(|t| t.as_str()).and_then(QueryType::parse) {
        return Some(t);
    }
    record_of(o.task).ok().map(|r| r.query_type)
}

/// Compute the metrics object.
pub fn metrics(outcomes: &[OutcomeForMetrics<'_>]) -> Value {
    let mut by_type: BTreeMap<QueryType, (usize, usize)> = BTreeMap::new();
    let mut by_cat: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    let mut excluded = 0usize;
    let mut unknown = 0usize;
    for o in outcomes {
        let Some(score) = o.score else {
            excluded += 1;
            continue;
        };
        let Some(t) = query_type(o) else {
            unknown += 1;
            continue;
        };
        let ok = score.success as usize;
        let e = by_type.entry(t).or_default();
        e.0 += 1;
        e.1 += ok;
        let c = by_cat.entry(t.category()).or_default();
        c.0 += 1;
        c.1 += ok;
    }
    let acc = |x: Option<&(usize, usize)>| match x {
        Some(&(n, k)) if n > 0 => json!(k as f64 / n as f64),
        _ => Value::Null,
    };
    let mut out = Map::new();
    for t in QueryType::ALL.iter().filter(|t| !t.is_mutation()) {
        out.insert(format!("{}_accuracy", t.as_str()), acc(by_type.get(t)));
    }
    let cats = ["SELECT", "INSERT", "UPDATE", "DELETE"];
    let mut present = Vec::new();
    for c in cats {
        let a = acc(by_cat.get(c));
        if let Some(v) = a.as_f64() {
            present.push(v);
        }
        out.insert(format!("{c}_accuracy"), a);
    }
    out.insert(
        "overall_cat_accuracy".into(),
        if present.is_empty() { Value::Null } else { json!(present.iter().sum::<f64>() / present.len() as f64) },
    );
    let mut counts = Map::new();
    for (t, (n, k)) in &by_type {
        counts.insert(t.as_str().into(), json!({"total": n, "correct": k}));
    }
    out.insert("counts".into(), Value::Object(counts));
    let mut cat_counts = Map::new();
    for (c, (n, k)) in &by_cat {
        cat_counts.insert((*c).into(), json!({"total": n, "correct": k}));
    }
    out.insert("category_counts".into(), Value::Object(cat_counts));
    out.insert("scored".into(), json!(by_type.values().map(|x| x.0).sum::<usize>()));
    out.insert("excluded".into(), json!(excluded));
    if unknown > 0 {
        out.insert("unknown_type".into(), json!(unknown));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Score;
    use crate::task::Task;

    fn task(t: &str) -> Task {
        Task { id: "x".into(), suite: "dbbench".into(), family: t.into(), instruction: String::new(), payload: json!({"type": [t]}) }
    }

    #[test]
    fn categories_and_overall() {
        let tasks = [task("counting"), task("ranking"), task("INSERT"), task("INSERT"), task("other")];
        let ok = Score { reward: 1.0, success: true, details: json!({}) };
        let bad = Score { reward: 0.0, success: false, details: json!({}) };
        let scores = [Some(&ok), Some(&bad), Some(&ok), Some(&bad), None];
        let outcomes: Vec<OutcomeForMetrics<'_>> = tasks.iter().zip(scores).map(|(task, score)| OutcomeForMetrics { task, score }).collect();
        let m = metrics(&outcomes);
        assert_eq!(m["counting_accuracy"], json!(1.0));
        assert_eq!(m["ranking_accuracy"], json!(0.0));
        assert_eq!(m["other_accuracy"], Value::Null);
        assert_eq!(m["SELECT_accuracy"], json!(0.5));
        assert_eq!(m["INSERT_accuracy"], json!(0.5));
        assert_eq!(m["UPDATE_accuracy"], Value::Null);
        assert_eq!(m["overall_cat_accuracy"], json!(0.5));
        assert_eq!(m["excluded"], json!(1));
        assert_eq!(m["counts"]["INSERT"], json!({"total": 2, "correct": 1}));
    }
}
