//! AppWorld's metrics, computed by the workbench: TGC (task goal completion, the share of tasks
//! that succeed) and SGC (scenario goal completion, the share of scenarios — the task id before
//! `_` — whose tasks all succeed), overall and per family.
//!
//! Episodes without a score (infrastructure errors) are excluded and counted under `excluded`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::suite::OutcomeForMetrics;

/// The scenario of a task id: the part before the first `_` (`82e2fac_1` -> `82e2fac`).
pub fn scenario_of(task_id: &str) -> &str {
    task_id.split_once('_').map(|(s, _)| s).unwrap_or(task_id)
}

/// (TGC, SGC) over (task id, success) pairs; `None` when there are none.
pub fn tgc_sgc<'a>(results: impl IntoIterator<Item = (&'a str, bool)>) -> Option<(f64, f64, usize, usize)> {
    let mut n = 0usize;
    let mut ok = 0usize;
    let mut scenarios: BTreeMap<&str, bool> = BTreeMap::new();
    for (id, success) in results {
        n += 1;
        ok += usize::from(success);
        let e = scenarios.entry(scenario_of(id)).or_insert(true);
        *e = *e && success;
    }
    if n == 0 {
        return None;
    }
    let s_ok = scenarios.values().filter(|v| **v).count();
    Some((ok as f64 / n as f64, s_ok as f64 / scenarios.len() as f64, n, scenarios.len()))
}

pub fn metrics(outcomes: &[OutcomeForMetrics<'_>]) -> Value {
    let mut excluded = 0usize;
    let mut all = Vec::new();
    let mut by_family: BTreeMap<&str, Vec<(&str, bool)>> = BTreeMap::new();
    for o in outcomes {
        let Some(s) = o.score else {
            excluded += 1;
            continue;
        };
        all.push((o.task.id.as_str(), s.success));
        by_family.entry(o.task.family.as_str()).or_default().push((o.task.id.as_str(), s.success));
    }
    let pair = |v: &[(&str, bool)]| match tgc_sgc(v.iter().copied()) {
        Some((t, s, n, k)) => json!({"tgc": t, "sgc": s, "tasks": n, "scenarios": k}),
        None => json!({"tgc": null, "sgc": null, "tasks": 0, "scenarios": 0}),
    };
    let mut out = Map::new();
    let overall = pair(&all);
    for k in ["tgc", "sgc", "tasks", "scenarios"] {
        out.insert(k.into(), overall[k].clone());
    }
    out.insert("families".into(), Value::Object(by_family.iter().map(|(f, v)| (f.to_string(), pair(v))).collect()));
    out.insert("excluded".into(), json!(excluded));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tgc_and_sgc_arithmetic() {
        // scenario a: 3/3, b: 2/3, c: 0/1 -> TGC 5/7, SGC 1/3
        let r = [("a_1", true), ("a_2", true), ("a_3", true), ("b_1", true), ("b_2", false), ("b_3", true), ("c_1", false)];
        let (t, s, n, k) = tgc_sgc(r.iter().copied()).unwrap();
        assert!((t - 5.0 / 7.0).abs() < 1e-12);
        assert!((s - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!((n, k), (7, 3));
        assert_eq!(scenario_of("82e2fac_1"), "82e2fac");
        assert!(tgc_sgc(std::iter::empty()).is_none());
    }
}
