//! A log-linear scorer over hashed features: `score(c) = Σ w[f]` for the features `f` of a
//! candidate, softmax over the candidates of one decision.

use serde::{Deserialize, Serialize};

/// Number of weight slots (2^18); features are hashed into them.
pub const DIM_BITS: u32 = 18;
pub const DIM: usize = 1 << DIM_BITS;

/// A feature: its hashed slot and value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Feature {
    pub slot: u32,
    pub value: f32,
}

/// FNV-1a over the parts of a feature name, so `feat(&["op", "sum"])` is stable across runs.
pub fn slot(parts: &[&str]) -> u32 {
    let mut h = crate::seed::FNV_OFFSET;
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h = crate::seed::fnv1a_update(h, [0x1f]);
        }
        h = crate::seed::fnv1a_update(h, p.bytes());
    }
    // finalise (splitmix64) so that names differing only in their last bytes spread over the
    // whole table instead of sharing their top bits
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58476d1ce4e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d049bb133111eb);
    h ^= h >> 31;
    (h >> (64 - DIM_BITS)) as u32
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinearModel {
    /// Learned weights.
    pub weights: Vec<f32>,
    /// Number of updates applied: the policy version.
    pub version: u64,
}

impl Default for LinearModel {
    fn default() -> Self {
        LinearModel { weights: vec![0.0; DIM], version: 0 }
    }
}

impl LinearModel {
    pub fn score(&self, feats: &[Feature]) -> f32 {
        feats.iter().map(|f| self.weights[f.slot as usize] * f.value).sum()
    }

    /// Softmax probabilities of the candidates at temperature `t` (t <= 0 means greedy).
    pub fn probs(&self, cands: &[Vec<Feature>], prior: &[f32], t: f32) -> Vec<f32> {
        let scores: Vec<f32> = cands.iter().zip(prior).map(|(c, p)| self.score(c) + p).collect();
        softmax(&scores, t)
    }

    /// Add `scale * (φ(target) - E_p[φ])` to the weights: the gradient of `log p(target)`.
    pub fn add_log_prob_gradient(&mut self, cands: &[Vec<Feature>], prior: &[f32], target: usize, scale: f32) {
        let p = self.probs(cands, prior, 1.0);
        for f in &cands[target] {
            self.weights[f.slot as usize] += scale * f.value;
        }
        for (c, pc) in cands.iter().zip(&p) {
            if *pc < 1e-6 {
                continue;
            }
            for f in c {
                self.weights[f.slot as usize] -= scale * pc * f.value;
            }
        }
    }

    /// Compact form for checkpoints: only the non-zero weights.
    pub fn sparse(&self) -> SparseModel {
        let entries = self.weights.iter().enumerate().filter(|(_, w)| **w != 0.0).map(|(i, w)| (i as u32, *w)).collect();
        SparseModel { version: self.version, entries }
    }

    pub fn from_sparse(s: &SparseModel) -> Self {
        let mut m = LinearModel { version: s.version, ..Default::default() };
        for (i, w) in &s.entries {
            if (*i as usize) < DIM {
                m.weights[*i as usize] = *w;
            }
        }
        m
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SparseModel {
    pub version: u64,
    pub entries: Vec<(u32, f32)>,
}

pub fn softmax(scores: &[f32], t: f32) -> Vec<f32> {
    if scores.is_empty() {
        return Vec::new();
    }
    if t <= 0.0 {
        let best = scores.iter().enumerate().fold(0, |b, (i, s)| if *s > scores[b] { i } else { b });
        return (0..scores.len()).map(|i| if i == best { 1.0 } else { 0.0 }).collect();
    }
    let m = scores.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = scores.iter().map(|s| ((s - m) / t).exp()).collect();
    let z: f32 = e.iter().sum();
    e.iter().map(|v| v / z).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_raises_target_probability() {
        let mut m = LinearModel::default();
        let cands = vec![vec![Feature { slot: slot(&["a"]), value: 1.0 }], vec![Feature { slot: slot(&["b"]), value: 1.0 }]];
        let prior = vec![0.0, 0.0];
        let before = m.probs(&cands, &prior, 1.0)[1];
        m.add_log_prob_gradient(&cands, &prior, 1, 0.5);
        let after = m.probs(&cands, &prior, 1.0)[1];
        assert!((before - 0.5).abs() < 1e-6);
        assert!(after > 0.6, "{after}");
    }

    #[test]
    fn sparse_round_trip() {
        let mut m = LinearModel::default();
        m.weights[5] = 0.25;
        m.version = 3;
        let back = LinearModel::from_sparse(&m.sparse());
        assert_eq!(back.weights[5], 0.25);
        assert_eq!(back.version, 3);
    }
}
