//! Deterministic seeding and hashing: every random choice the workbench makes derives from a
//! seed through these, never from std's randomised hasher, so a run repeats to the bit on any
//! machine.
//!
//! Architecture invariant: this module imports nothing of the crate.

/// FNV-1a's offset basis and prime.
pub const FNV_OFFSET: u64 = 0xcbf29ce484222325;
pub const FNV_PRIME: u64 = 0x100000001b3;

/// Continue an FNV-1a hash `h` over `bytes`.
pub fn fnv1a_update(mut h: u64, bytes: impl IntoIterator<Item = u8>) -> u64 {
    for b in bytes {
        h = (h ^ b as u64).wrapping_mul(FNV_PRIME);
    }
    h
}

/// FNV-1a of `bytes`.
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    fnv1a_update(FNV_OFFSET, bytes)
}

/// FNV-1a of a string: a stable hash for seeds.
pub fn hash_str(s: &str) -> u64 {
    fnv1a(s.bytes())
}

/// A small deterministic generator (splitmix64) for sampling: the same seed gives the same
/// choices on every machine.
#[derive(Clone, Debug)]
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// A uniform number in [0, 1) with 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Sample an index from probabilities.
    pub fn pick(&mut self, p: &[f32]) -> usize {
        let r = self.next_f32();
        let mut acc = 0.0;
        for (i, v) in p.iter().enumerate() {
            acc += v;
            if r < acc {
                return i;
            }
        }
        p.len().saturating_sub(1)
    }
}

/// One seed from several parts (seed, iteration, task, try ...), salted so that different uses
/// of the same parts do not share a stream.
pub fn mix(salt: u64, parts: &[u64]) -> u64 {
    let mut r = SplitMix(salt);
    let mut h = 0u64;
    for p in parts {
        r.0 ^= p.wrapping_add(h);
        h = r.next_u64();
    }
    h
}

/// Shuffle `v` in place in a seeded order (Fisher–Yates).
pub fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut r = SplitMix(seed);
    for i in (1..v.len()).rev() {
        let j = (r.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// `0..n` in a seeded random order.
pub fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    shuffle(&mut v, seed);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_is_deterministic() {
        let a: Vec<u64> = {
            let mut r = SplitMix(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = SplitMix(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a[0], a[1]);
    }

    #[test]
    fn fnv_matches_the_reference() {
        // FNV-1a 64 of "a" and of ""
        assert_eq!(hash_str(""), 0xcbf29ce484222325);
        assert_eq!(hash_str("a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn mixing_and_shuffling_are_stable() {
        assert_eq!(mix(1, &[2, 3]), mix(1, &[2, 3]));
        assert_ne!(mix(1, &[2, 3]), mix(2, &[2, 3]));
        let mut v: Vec<u32> = (0..10).collect();
        shuffle(&mut v, 9);
        assert_eq!(shuffled(10, 9), v.iter().map(|x| *x as usize).collect::<Vec<_>>());
    }
}
