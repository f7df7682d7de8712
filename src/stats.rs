//! Statistics for experiment summaries and the analyses: means, seeded percentile bootstraps
//! over tasks, t-intervals over seeds, Wilson intervals for shares, Spearman's rho, and the exact
//! hit probability of a uniformly random order.
//!
//! Architecture invariant: this module imports nothing of the crate but [`crate::seed`].

use std::collections::BTreeMap;

use crate::seed::SplitMix;

/// Bootstrap resamples behind every interval over tasks.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// The fixed bootstrap seed: the same data always gives the same interval (and the same one the
/// experiment summary reports for its held-out delta).
pub const BOOTSTRAP_SEED: u64 = 0xb007;

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

/// Sample standard deviation (n - 1); 0 for fewer than two values.
pub fn sd(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// Two-sided 97.5% quantile of Student's t with `df` degrees of freedom.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => TABLE[d - 1],
        d => 1.96 + 2.4 / d as f64,
    }
}

/// Mean and 95% t-interval of `xs` (values from independent seeds), clipped to `[lo, hi]`.
/// With one value the interval is the point itself.
pub fn t_interval(xs: &[f64], clip: (f64, f64)) -> (f64, [f64; 2]) {
    let m = mean(xs);
    if xs.len() < 2 {
        return (m, [m, m]);
    }
    let half = t_975(xs.len() - 1) * sd(xs) / (xs.len() as f64).sqrt();
    (m, [(m - half).max(clip.0), (m + half).min(clip.1)])
}

/// Mean and percentile-bootstrap 95% interval of the mean (elements resampled).
pub fn bootstrap(xs: &[f64]) -> (f64, [f64; 2]) {
    if xs.is_empty() {
        return (0.0, [0.0, 0.0]);
    }
    let (lo, hi) = bootstrap_ci(xs, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED);
    (mean(xs), [lo, hi])
}

/// z quantiles of the power analysis: two-sided 5% (0.975) and 80% power (0.80).
pub const Z_975: f64 = 1.959_963_984_540_054;
pub const Z_80: f64 = 0.841_621_233_572_914_3;

/// The minimum detectable effect of a paired design whose per-task differences have standard
/// deviation `sd` over `tasks` tasks: the true mean difference a two-sided 5% test over those
/// tasks detects with 80% power, (z₀.₉₇₅ + z₀.₈₀) · sd / √tasks. Sizing a design: tasks
/// needed for an effect `e` are ((z₀.₉₇₅ + z₀.₈₀) · sd / e)² ([`tasks_for_effect`]). `None`
/// below two tasks, and when no task's difference differed from another's (a spread of zero says
/// nothing about the variance of outcomes that are 0 or 1).
pub fn minimum_detectable_effect(sd: f64, tasks: usize) -> Option<f64> {
    (tasks >= 2 && sd > 0.0).then(|| (Z_975 + Z_80) * sd / (tasks as f64).sqrt())
}

/// The tasks a paired design with per-task standard deviation `sd` needs to detect `effect`
/// (two-sided 5%, 80% power); see [`minimum_detectable_effect`].
pub fn tasks_for_effect(sd: f64, effect: f64) -> usize {
    if effect <= 0.0 {
        return usize::MAX;
    }
    (((Z_975 + Z_80) * sd / effect).powi(2)).ceil().max(2.0) as usize
}

/// The spread of a paired difference split by where it comes from, estimated from a pilot run:
/// `between`, the variance of the true per-task differences, and `within`, the variance of one
/// seed's difference around its task's mean. A design of `s` seeds per task then has per-task
/// differences of variance `between + within / s`, so more seeds shrink only the second part and
/// more tasks divide the whole ([`PairedSpread::mde`]). Estimated by one-way random-effects
/// ANOVA over tasks: `within` is the pooled variance of the seeds of tasks with two or more,
/// `between` the variance of the task means less `within` × the mean of 1/seeds (never below 0).
/// A pilot of one seed cannot separate them: `within` is 0 there and seeds are then assumed not
/// to help, which errs towards asking for more tasks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairedSpread {
    pub between: f64,
    pub within: f64,
    /// The pilot's paired tasks, and its seeds per task on average.
    pub tasks: usize,
    pub seeds: f64,
}

impl PairedSpread {
    /// The spread of `a − b` over the tasks and seeds both have; `None` below two tasks or when
    /// no difference varied.
    pub fn of<K: Ord>(a: &BTreeMap<K, BTreeMap<u32, f64>>, b: &BTreeMap<K, BTreeMap<u32, f64>>) -> Option<PairedSpread> {
        let mut means = Vec::new();
        let (mut ss_within, mut df_within, mut inv_seeds, mut n_seeds) = (0.0, 0usize, 0.0, 0usize);
        for pairs in seed_differences(a, b) {
            let d: Vec<f64> = pairs.iter().map(|(_, x)| *x).collect();
            let m = mean(&d);
            ss_within += d.iter().map(|x| (x - m).powi(2)).sum::<f64>();
            df_within += d.len() - 1;
            inv_seeds += 1.0 / d.len() as f64;
            n_seeds += d.len();
            means.push(m);
        }
        if means.len() < 2 {
            return None;
        }
        let within = if df_within > 0 { ss_within / df_within as f64 } else { 0.0 };
        let of_means = sd(&means).powi(2);
        let between = (of_means - within * inv_seeds / means.len() as f64).max(0.0);
        (between + within > 0.0).then_some(PairedSpread { between, within, tasks: means.len(), seeds: n_seeds as f64 / means.len() as f64 })
    }

    /// The standard deviation of a task's difference averaged over `seeds` seeds.
    pub fn task_sd(&self, seeds: usize) -> f64 {
        (self.between + self.within / seeds.max(1) as f64).sqrt()
    }

    /// The minimum detectable effect of a design of `tasks` × `seeds` ([`minimum_detectable_effect`]).
    pub fn mde(&self, tasks: usize, seeds: usize) -> Option<f64> {
        minimum_detectable_effect(self.task_sd(seeds), tasks)
    }

    /// The tasks a design of `seeds` seeds needs to detect `effect` ([`tasks_for_effect`]).
    pub fn tasks_for(&self, effect: f64, seeds: usize) -> usize {
        tasks_for_effect(self.task_sd(seeds), effect)
    }

    /// The seeds a design of `tasks` tasks needs to detect `effect`, or `None` when no number of
    /// seeds will (the tasks' own differences alone hide it).
    pub fn seeds_for(&self, effect: f64, tasks: usize) -> Option<usize> {
        if effect <= 0.0 || tasks < 2 {
            return None;
        }
        // task_sd(s)² must be at most (effect · √tasks / (z + z))²
        let room = (effect * (tasks as f64).sqrt() / (Z_975 + Z_80)).powi(2) - self.between;
        if room <= 0.0 {
            return None;
        }
        Some(((self.within / room).ceil() as usize).max(1))
    }
}

/// A paired difference of two arms over tasks: its mean, percentile-bootstrap 95% interval, the
/// tasks and seeds it pairs, and the standard deviation of its per-task differences (what its
/// minimum detectable effect and the sizes of later designs are computed from).
#[derive(Clone, Debug, PartialEq)]
pub struct Paired {
    pub mean: f64,
    pub ci95: [f64; 2],
    pub tasks: usize,
    pub seeds: usize,
    pub task_sd: f64,
}

impl Paired {
    /// The effect this design detects with 80% power (two-sided 5%): see
    /// [`minimum_detectable_effect`].
    pub fn mde(&self) -> Option<f64> {
        minimum_detectable_effect(self.task_sd, self.tasks)
    }
}

/// Per task both arms have, each shared seed's difference a − b (in seed order); tasks that share
/// no seed are left out. What [`paired`] and [`PairedSpread::of`] both start from.
fn seed_differences<'a, K: Ord>(
    a: &'a BTreeMap<K, BTreeMap<u32, f64>>,
    b: &'a BTreeMap<K, BTreeMap<u32, f64>>,
) -> impl Iterator<Item = Vec<(u32, f64)>> + 'a {
    a.iter().filter_map(move |(task, sa)| {
        let sb = b.get(task)?;
        let d: Vec<(u32, f64)> = sa.iter().filter_map(|(seed, x)| sb.get(seed).map(|y| (*seed, x - y))).collect();
        (!d.is_empty()).then_some(d)
    })
}

/// Two arms' outcomes paired on the tasks and seeds both have: per task, the mean over shared
/// seeds of (a − b); then the mean over tasks with a [`bootstrap`] interval. Tasks are keyed by
/// whatever names them (a task id, or (suite, task) when suites are pooled). The one statement
/// of the paired delta, for the analyses and the run summary alike; `None` when nothing pairs.
pub fn paired<K: Ord>(a: &BTreeMap<K, BTreeMap<u32, f64>>, b: &BTreeMap<K, BTreeMap<u32, f64>>) -> Option<Paired> {
    let mut diffs = Vec::new();
    let mut seeds = std::collections::BTreeSet::new();
    for pairs in seed_differences(a, b) {
        seeds.extend(pairs.iter().map(|(s, _)| *s));
        diffs.push(mean(&pairs.iter().map(|(_, d)| *d).collect::<Vec<f64>>()));
    }
    if diffs.is_empty() {
        return None;
    }
    let (m, ci95) = bootstrap(&diffs);
    Some(Paired { mean: m, ci95, tasks: diffs.len(), seeds: seeds.len(), task_sd: sd(&diffs) })
}

/// Wilson score 95% interval of a share `k / n`.
pub fn wilson(k: usize, n: usize) -> [f64; 2] {
    if n == 0 {
        return [0.0, 0.0];
    }
    let z = 1.959_963_984_540_054_f64;
    let n = n as f64;
    let p = k as f64 / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / denom;
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

/// Ranks 1..=n with ties given their average rank.
pub fn ranks(xs: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&a, &b| xs[a].partial_cmp(&xs[b]).unwrap_or(std::cmp::Ordering::Equal));
    let mut r = vec![0.0; xs.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && xs[idx[j + 1]] == xs[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for k in i..=j {
            r[idx[k]] = avg;
        }
        i = j + 1;
    }
    r
}

/// Pearson correlation; `None` when either side is constant or there are fewer than two pairs.
pub fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    let (ma, mb) = (mean(a), mean(b));
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    if va <= 1e-15 || vb <= 1e-15 {
        return None;
    }
    Some((cov / (va * vb).sqrt()).clamp(-1.0, 1.0))
}

/// Spearman's rank correlation (Pearson on average ranks, so ties are handled).
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    pearson(&ranks(a), &ranks(b))
}

/// `C(n, k)` as a float (exact for the small pools used here).
pub fn choose(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    let mut c = 1.0;
    for i in 0..k {
        c = c * (n - i) as f64 / (i + 1) as f64;
    }
    c
}

/// The probability that the first `k` of a uniformly random order of `pool` siblings include at
/// least one of the `good` ones: `1 - C(pool - good, k) / C(pool, k)`.
pub fn random_hit_at(k: usize, good: usize, pool: usize) -> f64 {
    if pool == 0 || good == 0 || k == 0 {
        return 0.0;
    }
    let k = k.min(pool);
    1.0 - choose(pool - good.min(pool), k) / choose(pool, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_interval_of_one_seed_is_the_point() {
        assert_eq!(t_interval(&[0.4], (0.0, 1.0)), (0.4, [0.4, 0.4]));
        let (m, [lo, hi]) = t_interval(&[0.2, 0.4], (0.0, 1.0));
        assert!((m - 0.3).abs() < 1e-12);
        // sd = 0.1414, se = 0.1, t(1) = 12.706 -> clipped
        assert_eq!((lo, hi), (0.0, 1.0));
        let (_, [lo, hi]) = t_interval(&[0.30, 0.32, 0.31, 0.29, 0.33], (0.0, 1.0));
        assert!(lo > 0.28 && hi < 0.34 && lo < 0.31 && hi > 0.31);
    }

    #[test]
    fn spearman_handles_ties_and_constants() {
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]), Some(1.0));
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[3.0, 2.0, 1.0]), None);
        assert_eq!(ranks(&[0.5, 0.1, 0.5, 0.9]), vec![2.5, 1.0, 2.5, 4.0]);
        let r = spearman(&[0.1, 0.5, 0.5, 0.9], &[0.2, 0.4, 0.6, 0.8]).unwrap();
        assert!(r > 0.9 && r < 1.0, "{r}");
    }

    #[test]
    fn random_hit_is_exact() {
        // 1 good of 4, pick 1: 1/4; pick 2: 1 - C(3,2)/C(4,2) = 1 - 3/6
        assert!((random_hit_at(1, 1, 4) - 0.25).abs() < 1e-12);
        assert!((random_hit_at(2, 1, 4) - 0.5).abs() < 1e-12);
        assert!((random_hit_at(4, 1, 4) - 1.0).abs() < 1e-12);
        assert!((random_hit_at(2, 2, 4) - (1.0 - 1.0 / 6.0)).abs() < 1e-12);
        assert_eq!(random_hit_at(3, 0, 4), 0.0);
    }

    #[test]
    fn wilson_brackets_the_share() {
        let [lo, hi] = wilson(3, 10);
        assert!(lo < 0.3 && 0.3 < hi && lo > 0.0 && hi < 1.0);
        assert_eq!(wilson(0, 0), [0.0, 0.0]);
    }

    #[test]
    fn paired_differences_use_only_shared_tasks_and_seeds() {
        let m = |rows: &[(&str, &[(u32, f64)])]| -> BTreeMap<String, BTreeMap<u32, f64>> {
            rows.iter().map(|(t, s)| (t.to_string(), s.iter().copied().collect())).collect()
        };
        // t1: seeds 1 and 2 pair (diffs 1, 0 -> 0.5); t2: only seed 1 pairs (diff -1); t3: the baseline never ran it
        let a = m(&[("t1", &[(1, 1.0), (2, 1.0)]), ("t2", &[(1, 0.0), (3, 1.0)]), ("t3", &[(1, 1.0)])]);
        let b = m(&[("t1", &[(1, 0.0), (2, 1.0)]), ("t2", &[(1, 1.0)])]);
        let p = paired(&a, &b).unwrap();
        assert_eq!((p.tasks, p.seeds), (2, 2));
        assert!((p.mean - (-0.25)).abs() < 1e-12, "{p:?}");
        assert!(p.ci95[0] <= p.mean && p.mean <= p.ci95[1]);
        assert_eq!(paired(&a, &m(&[("t9", &[(1, 1.0)])])), None, "nothing pairs");
    }

    #[test]
    fn bootstrap_brackets_the_mean() {
        let xs: Vec<f64> = (0..100).map(|i| if i % 4 == 0 { 1.0 } else { 0.0 }).collect();
        let (lo, hi) = bootstrap_ci(&xs, 1000, 3);
        assert!(lo < 0.25 && 0.25 < hi, "{lo} {hi}");
        assert!(hi - lo < 0.25);
        assert_eq!(bootstrap_ci(&xs, 1000, 3), (lo, hi));
    }

    /// The power analysis checked by simulation: experiments of 120 tasks × 5 seeds whose true
    /// paired effect is the minimum detectable effect the population's spread gives. The 95%
    /// intervals must cover the true effect about 95% of the time, and exclude zero (detect it)
    /// about 80% of the time; the MDE computed from each experiment's own sample must be close
    /// to the population's.
    #[test]
    fn intervals_cover_and_the_minimum_detectable_effect_is_detected_80_percent_of_the_time() {
        let (tasks, seeds, sims) = (120usize, 5u32, 400usize);
        let mut rng = crate::seed::SplitMix(0x005e_ed0f_90e4);
        let mut uniform = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        // a task's success chance under the baseline varies by task; the arm adds `effect`
        let draw = |effect: f64, uniform: &mut dyn FnMut() -> f64| -> Vec<f64> {
            (0..tasks)
                .map(|_| {
                    let p = 0.15 + 0.6 * uniform();
                    let q = (p + effect).clamp(0.0, 1.0);
                    let d: Vec<f64> = (0..seeds).map(|_| f64::from(u8::from(uniform() < q)) - f64::from(u8::from(uniform() < p))).collect();
                    mean(&d)
                })
                .collect()
        };
        // the population's per-task spread, from one large draw without effect
        let big: Vec<f64> = (0..40).flat_map(|_| draw(0.0, &mut uniform)).collect();
        let mde = minimum_detectable_effect(sd(&big), tasks).unwrap();
        assert!((0.05..0.15).contains(&mde), "MDE {mde}");
        let (mut covered, mut detected, mut mdes) = (0usize, 0usize, Vec::new());
        for i in 0..sims {
            let diffs = draw(mde, &mut uniform);
            let (lo, hi) = bootstrap_ci(&diffs, 1000, i as u64);
            // the true mean difference: `mde` less what clamping at 1 takes off (none here)
            covered += usize::from(lo <= mde && mde <= hi);
            detected += usize::from(lo > 0.0);
            mdes.push(minimum_detectable_effect(sd(&diffs), tasks).unwrap());
        }
        let coverage = covered as f64 / sims as f64;
        let power = detected as f64 / sims as f64;
        eprintln!("MDE {mde:.4}: coverage {coverage:.3}, power {power:.3}, mean sample MDE {:.4} over {sims} experiments", mean(&mdes));
        assert!((0.92..=0.98).contains(&coverage), "coverage {coverage}");
        assert!((0.73..=0.87).contains(&power), "power at the MDE {power}");
        assert!((mean(&mdes) / mde - 1.0).abs() < 0.05, "the sample MDE {} against the population's {mde}", mean(&mdes));
        // sizing: the tasks needed for the MDE are the tasks it came from
        let need = tasks_for_effect(sd(&big), mde);
        assert!((tasks - 1..=tasks + 1).contains(&need), "{need}");
    }

    /// Planning from a pilot: a population whose tasks differ in their true effect (between) and
    /// whose seeds add noise (within). A pilot of 1,000 tasks × 3 seeds estimates both parts; the
    /// design it plans (80 tasks × 5 seeds) must then detect its planned MDE about 80% of the
    /// time in 300 simulated experiments of that design.
    #[test]
    fn a_pilot_s_spread_plans_a_design_of_other_tasks_and_seeds_that_has_80_percent_power() {
        type Outcomes = BTreeMap<usize, BTreeMap<u32, f64>>;
        let mut rng = crate::seed::SplitMix(0x0091_1075);
        let mut uniform = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        // task t: baseline chance p, the arm's chance p + effect + h (h: this task's own effect)
        let draw = |tasks: usize, seeds: u32, effect: f64, uniform: &mut dyn FnMut() -> f64| {
            let (mut a, mut b) = (Outcomes::new(), Outcomes::new());
            for t in 0..tasks {
                let p = 0.3 + 0.4 * uniform();
                let q = (p + effect + 0.5 * (uniform() - 0.5)).clamp(0.0, 1.0);
                for s in 0..seeds {
                    a.entry(t).or_default().insert(s, f64::from(u8::from(uniform() < q)));
                    b.entry(t).or_default().insert(s, f64::from(u8::from(uniform() < p)));
                }
            }
            (a, b)
        };
        let (a, b) = draw(1000, 3, 0.0, &mut uniform);
        let spread = PairedSpread::of(&a, &b).unwrap();
        // the truth: between = var(h) = 0.5² / 12 = 0.021; within = E[q(1−q) + p(1−p)] = 0.45
        // (the standard errors of the estimates are about 0.008 and 0.008 at this size)
        assert!((spread.between - 0.021).abs() < 0.02, "{spread:?}");
        assert!((spread.within - 0.45).abs() < 0.03, "{spread:?}");
        assert_eq!((spread.tasks, spread.seeds), (1000, 3.0));
        let (tasks, seeds, sims) = (80usize, 5u32, 300usize);
        let mde = spread.mde(tasks, seeds as usize).unwrap();
        let mut detected = 0usize;
        for _ in 0..sims {
            let (a, b) = draw(tasks, seeds, mde, &mut uniform);
            let p = paired(&a, &b).unwrap();
            assert_eq!((p.tasks, p.seeds), (tasks, seeds as usize));
            detected += usize::from(p.ci95[0] > 0.0);
        }
        let power = detected as f64 / sims as f64;
        eprintln!("planned MDE {mde:.4} for {tasks} tasks × {seeds} seeds from {spread:?}: power {power:.3} over {sims} experiments");
        assert!((0.72..=0.88).contains(&power), "power at the planned MDE {power}");
        // sizing agrees with itself: the tasks and seeds for that effect are this design's
        assert!((tasks - 1..=tasks + 1).contains(&spread.tasks_for(mde, seeds as usize)));
        assert_eq!(spread.seeds_for(mde, tasks), Some(seeds as usize));
        // an effect smaller than the tasks' own spread allows is out of reach of seeds alone
        assert_eq!(spread.seeds_for(0.01, tasks), None);
        // a one-seed pilot cannot split the spread: seeds are assumed not to help
        let one = |m: &BTreeMap<usize, BTreeMap<u32, f64>>| {
            m.iter().map(|(t, s)| (*t, s.iter().take(1).map(|(k, v)| (*k, *v)).collect())).collect::<BTreeMap<usize, BTreeMap<u32, f64>>>()
        };
        let single = PairedSpread::of(&one(&a), &one(&b)).unwrap();
        assert_eq!(single.within, 0.0);
        assert_eq!(single.task_sd(1), single.task_sd(10));
    }
}
