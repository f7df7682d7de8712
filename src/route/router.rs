//! The router: several voters rank the siblings for a failed task; Borda aggregation picks the
//! top k.
//!
//! Statistical voters read the behaviour profiles' counts for the task's bucket
//! (`family|signature`) with back-off to the family and to the sibling's overall rate. An LLM
//! voter fits the same [`Voter`] interface: it is given the profiles' evidence lines and the
//! failure summary, and answers a JSON ranking.

use serde::{Deserialize, Serialize};

use super::profile::{BehaviorProfile, Counts};
use crate::seed::SplitMix;

pub const VOTERS: &[&str] = &["posterior", "thompson", "ucb"];

pub use super::voter::{Abstention, RouteQuery, Voter};

/// Rescue-rate estimate with back-off: bucket counts shrunk toward the family rate, itself
/// shrunk toward the sibling's overall rate.
fn shrunk(p: &BehaviorProfile, q: &RouteQuery) -> (f64, f64, f64) {
    let zero = Counts::default();
    let overall = &p.total;
    let fam = p.by_family.get(&q.family).unwrap_or(&zero);
    let bucket = p.by_bucket.get(&format!("{}|{}", q.family, q.signature)).unwrap_or(&zero);
    let rate = |c: &Counts, prior: f64, strength: f64| (c.fix as f64 + strength * prior) / (c.base_failures() as f64 + strength);
    let p0 = rate(overall, 0.5, 2.0);
    let p1 = rate(fam, p0, 2.0);
    let p2 = rate(bucket, p1, 2.0);
    // pseudo-counts for a Beta posterior around p2
    let n = bucket.base_failures() as f64 + 2.0;
    (p2, p2 * n, (1.0 - p2) * n)
}

pub struct PosteriorVoter;
pub struct ThompsonVoter;
pub struct UcbVoter {
    pub c: f64,
}

/// Best first; equal scores are ordered by a hash of (task, sibling), so ties do not always
/// favour the same names.
fn order_for(task: &str, mut scored: Vec<(f64, String)>) -> Vec<String> {
    let tie = |s: &str| crate::seed::hash_str(&format!("{task}/{s}"));
    scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(tie(&a.1).cmp(&tie(&b.1))));
    scored.into_iter().map(|(_, s)| s).collect()
}

impl Voter for PosteriorVoter {
    fn name(&self) -> String {
        "posterior".into()
    }
    fn rank(&self, q: &RouteQuery, profiles: &[BehaviorProfile], _rng: &mut SplitMix) -> Result<Vec<String>, Abstention> {
        Ok(order_for(&q.task_id, profiles.iter().map(|p| (shrunk(p, q).0, p.sibling.clone())).collect()))
    }
}

/// A Beta(a, b) sample from gamma samples (Marsaglia–Tsang), deterministic given the generator.
fn beta(rng: &mut SplitMix, a: f64, b: f64) -> f64 {
    let x = gamma(rng, a);
    let y = gamma(rng, b);
    if x + y == 0.0 {
        0.5
    } else {
        x / (x + y)
    }
}

fn normal(rng: &mut SplitMix) -> f64 {
    let u1 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * (u1.max(1e-300)).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn gamma(rng: &mut SplitMix, a: f64) -> f64 {
    if a < 1.0 {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        return gamma(rng, a + 1.0) * u.max(1e-300).powf(1.0 / a);
    }
    let d = a - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        if u.max(1e-300).ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

impl Voter for ThompsonVoter {
    fn name(&self) -> String {
        "thompson".into()
    }
    fn rank(&self, q: &RouteQuery, profiles: &[BehaviorProfile], rng: &mut SplitMix) -> Result<Vec<String>, Abstention> {
        Ok(order_for(
            &q.task_id,
            profiles
                .iter()
                .map(|p| {
                    let (_, a, b) = shrunk(p, q);
                    (beta(rng, a.max(0.05), b.max(0.05)), p.sibling.clone())
                })
                .collect(),
        ))
    }
}

impl Voter for UcbVoter {
    fn name(&self) -> String {
        "ucb".into()
    }
    fn rank(&self, q: &RouteQuery, profiles: &[BehaviorProfile], _rng: &mut SplitMix) -> Result<Vec<String>, Abstention> {
        let total: f64 = profiles.iter().map(|p| p.by_family.get(&q.family).map(|c| c.base_failures()).unwrap_or(0) as f64).sum();
        Ok(order_for(
            &q.task_id,
            profiles
                .iter()
                .map(|p| {
                    let n = p.by_family.get(&q.family).map(|c| c.base_failures()).unwrap_or(0) as f64;
                    let bonus = self.c * ((total + 1.0).ln() / (n + 1.0)).sqrt();
                    (shrunk(p, q).0 + bonus, p.sibling.clone())
                })
                .collect(),
        ))
    }
}

/// Borda count: a sibling ranked r-th (0-based) of S by a voter gets S - r points.
pub fn borda(rankings: &[Vec<String>]) -> Vec<String> {
    let mut points: std::collections::BTreeMap<String, usize> = Default::default();
    for r in rankings {
        let s = r.len();
        for (i, name) in r.iter().enumerate() {
            *points.entry(name.clone()).or_default() += s - i;
        }
    }
    let mut v: Vec<(usize, String)> = points.into_iter().map(|(k, p)| (p, k)).collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    v.into_iter().map(|(_, k)| k).collect()
}

/// Everything about one routing decision, stored for the inspector and the router analyses.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[ts(rename = "RouteDecision")]
pub struct RoutingDecision {
    pub query: RouteQuery,
    pub anchor: usize,
    pub policy_version: u64,
    /// Each voter's ranking.
    pub rankings: Vec<(String, Vec<String>)>,
    /// The aggregated ranking.
    pub aggregate: Vec<String>,
    /// The siblings tried.
    pub chosen: Vec<String>,
    /// Per chosen sibling: did any of its tries rescue the task.
    pub rescued: Vec<(String, bool)>,
    /// Voters that abstained from this decision, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub abstained: Vec<(String, String)>,
}

pub struct Router {
    pub voters: Vec<Box<dyn Voter>>,
}

impl Router {
    /// Statistical voters by name (unknown names are skipped; configs are checked earlier).
    pub fn from_names(names: &[String], ucb_c: f64) -> Router {
        let voters: Vec<Box<dyn Voter>> = names
            .iter()
            .filter_map(|n| -> Option<Box<dyn Voter>> {
                match n.as_str() {
                    "posterior" => Some(Box::new(PosteriorVoter)),
                    "thompson" => Some(Box::new(ThompsonVoter)),
                    "ucb" => Some(Box::new(UcbVoter { c: ucb_c })),
                    _ => None,
                }
            })
            .collect();
        Router { voters }
    }

    /// The statistical voters named in `names` plus one LLM voter per entry of `llm`.
    pub fn with_llm(names: &[String], ucb_c: f64, llm: &[super::llm::LlmVoterConfig]) -> Result<Router, super::llm::LlmVoterError> {
        let mut r = Self::from_names(names, ucb_c);
        for c in llm {
            r.voters.push(Box::new(super::llm::LlmVoter::new(c)?));
        }
        Ok(r)
    }

    /// Rank the siblings for a failed task and choose the top `k`.
    pub fn route(&self, q: &RouteQuery, profiles: &[BehaviorProfile], k: usize, rng: &mut SplitMix) -> RoutingDecision {
        let mut rankings: Vec<(String, Vec<String>)> = Vec::new();
        let mut abstained = Vec::new();
        for v in &self.voters {
            match v.rank(q, profiles, rng) {
                Ok(r) => rankings.push((v.name(), r)),
                Err(e) => {
                    tracing::debug!(voter = %v.name(), task = %q.task_id, "voter abstained: {e}");
                    abstained.push((v.name(), e.to_string()));
                }
            }
        }
        let mut aggregate = borda(&rankings.iter().map(|r| r.1.clone()).collect::<Vec<_>>());
        // every voter abstained: keep the profiles' order rather than choose nothing
        if aggregate.is_empty() {
            aggregate = profiles.iter().map(|p| p.sibling.clone()).collect();
        }
        let chosen = aggregate.iter().take(k).cloned().collect();
        RoutingDecision {
            query: q.clone(),
            anchor: profiles.first().map(|p| p.anchor).unwrap_or(0),
            policy_version: profiles.first().map(|p| p.policy_version).unwrap_or(0),
            rankings,
            aggregate,
            chosen,
            rescued: Vec::new(),
            abstained,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(name: &str, fix: u32, fail: u32) -> BehaviorProfile {
        let mut p = BehaviorProfile { sibling: name.into(), ..Default::default() };
        for _ in 0..fix {
            p.record("sum", "wrong_answer", false, true);
        }
        for _ in 0..fail {
            p.record("sum", "wrong_answer", false, false);
        }
        p
    }

    #[test]
    fn borda_sums_points() {
        let r =
            borda(&[vec!["a".into(), "b".into(), "c".into()], vec!["b".into(), "a".into(), "c".into()], vec!["b".into(), "c".into(), "a".into()]]);
        assert_eq!(r, vec!["b", "a", "c"]);
    }

    #[test]
    fn posterior_prefers_the_sibling_that_fixes_the_bucket() {
        let ps = vec![profile("weak", 1, 9), profile("strong", 8, 2)];
        let q = RouteQuery { task_id: "t".into(), family: "sum".into(), signature: "wrong_answer".into(), summary: String::new() };
        let mut rng = SplitMix(1);
        assert_eq!(PosteriorVoter.rank(&q, &ps, &mut rng).unwrap()[0], "strong");
        let wins = (0..200).filter(|_| ThompsonVoter.rank(&q, &ps, &mut rng).unwrap()[0] == "strong").count();
        assert!(wins > 150, "thompson picked strong {wins}/200");
        let d = Router::from_names(&["posterior".into(), "thompson".into(), "ucb".into()], 1.0).route(&q, &ps, 1, &mut rng);
        assert_eq!(d.chosen, vec!["strong"]);
        assert_eq!(d.rankings.len(), 3);
    }

    #[test]
    fn ucb_explores_unmeasured_siblings() {
        let ps = vec![profile("measured", 3, 7), profile("unmeasured", 0, 0)];
        let q = RouteQuery { task_id: "t".into(), family: "sum".into(), signature: "wrong_answer".into(), summary: String::new() };
        let r = UcbVoter { c: 2.0 }.rank(&q, &ps, &mut SplitMix(0)).unwrap();
        assert_eq!(r[0], "unmeasured");
    }
}
