//! Small statistics used by experiment summaries and reports: means, a seeded paired bootstrap.

use crate::seed::SplitMix;

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// Percentile bootstrap 95% interval of the mean of `xs` (resampling its elements), seeded.
pub fn bootstrap_ci(xs: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let mut rng = SplitMix(seed);
    let n = xs.len();
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let mut s = 0.0;
            for _ in 0..n {
                s += xs[(rng.next_u64() % n as u64) as usize];
            }
            s / n as f64
        })
        .collect();
    means.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let lo = means[((resamples as f64) * 0.025) as usize];
    let hi = means[(((resamples as f64) * 0.975) as usize).min(resamples - 1)];
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_brackets_the_mean() {
        let xs: Vec<f64> = (0..100).map(|i| if i % 4 == 0 { 1.0 } else { 0.0 }).collect();
        let (lo, hi) = bootstrap_ci(&xs, 1000, 3);
        assert!(lo < 0.25 && 0.25 < hi, "{lo} {hi}");
        assert!(hi - lo < 0.25);
        assert_eq!(bootstrap_ci(&xs, 1000, 3), (lo, hi));
    }
}
