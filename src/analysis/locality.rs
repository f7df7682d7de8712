//! Locality: each sibling fixes some tasks and breaks others. Sibling × family counts of paired
//! outcomes against base (fix, regress, both pass, both fail), summed from the `profile` records
//! over seeds — per arm and anchor, and in total.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::route::Counts;

use super::Data;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct LocalityCell {
    pub suite: String,
    /// `None` in the totals (summed over every arm and anchor).
    pub arm: Option<String>,
    pub anchor: Option<usize>,
    pub sibling: String,
    pub family: String,
    pub fix: u32,
    pub regress: u32,
    pub both_pass: u32,
    pub both_fail: u32,
    /// Profiles (arm × seed × anchor) summed into this cell.
    pub profiles: usize,
}

impl LocalityCell {
    /// Fix rate among base failures, if there were any.
    pub fn fix_rate(&self) -> Option<f64> {
        let f = self.fix + self.both_fail;
        (f > 0).then(|| self.fix as f64 / f as f64)
    }
    /// Regression rate among base passes, if there were any.
    pub fn regress_rate(&self) -> Option<f64> {
        let p = self.regress + self.both_pass;
        (p > 0).then(|| self.regress as f64 / p as f64)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Locality {
    /// Per suite, the sibling pool in its fixed order.
    pub siblings: BTreeMap<String, Vec<String>>,
    /// Per suite, the families measured.
    pub families: BTreeMap<String, Vec<String>>,
    /// Per (arm, anchor, sibling, family), summed over seeds.
    pub by_anchor: Vec<LocalityCell>,
    /// Per (sibling, family), summed over arms, anchors and seeds.
    pub total: Vec<LocalityCell>,
}

fn add(c: &mut LocalityCell, n: &Counts) {
    c.fix += n.fix;
    c.regress += n.regress;
    c.both_pass += n.both_pass;
    c.both_fail += n.both_fail;
    c.profiles += 1;
}

pub(crate) fn locality(data: &Data) -> Locality {
    let mut out = Locality::default();
    type Key = (String, Option<String>, Option<usize>, String, String);
    let mut by_anchor: BTreeMap<Key, LocalityCell> = BTreeMap::new();
    let mut total: BTreeMap<Key, LocalityCell> = BTreeMap::new();
    for p in &data.profiles {
        for (family, counts) in &p.profile.by_family {
            for (map, arm, anchor) in [(&mut by_anchor, Some(p.arm.clone()), Some(p.profile.anchor)), (&mut total, None, None)] {
                let key = (p.suite.clone(), arm.clone(), anchor, p.profile.sibling.clone(), family.clone());
                let cell = map.entry(key).or_insert_with(|| LocalityCell {
                    suite: p.suite.clone(),
                    arm,
                    anchor,
                    sibling: p.profile.sibling.clone(),
                    family: family.clone(),
                    fix: 0,
                    regress: 0,
                    both_pass: 0,
                    both_fail: 0,
                    profiles: 0,
                });
                add(cell, counts);
            }
        }
    }
    for suite in &data.suites {
        let pool = data.sibling_pool(suite);
        if pool.is_empty() {
            continue;
        }
        let mut fams: Vec<String> = total.keys().filter(|k| &k.0 == suite).map(|k| k.4.clone()).collect();
        fams.sort();
        fams.dedup();
        out.siblings.insert(suite.clone(), pool);
        out.families.insert(suite.clone(), fams);
    }
    let order = |cells: BTreeMap<Key, LocalityCell>, out: &Locality| -> Vec<LocalityCell> {
        let mut v: Vec<LocalityCell> = cells.into_values().collect();
        v.sort_by_key(|c| {
            let pool = out.siblings.get(&c.suite);
            (
                data.suites.iter().position(|s| s == &c.suite).unwrap_or(usize::MAX),
                data.arms.iter().position(|a| Some(a) == c.arm.as_ref()).unwrap_or(usize::MAX),
                c.anchor,
                pool.and_then(|p| p.iter().position(|s| s == &c.sibling)).unwrap_or(usize::MAX),
                c.family.clone(),
            )
        });
        v
    };
    out.by_anchor = order(by_anchor, &out);
    out.total = order(total, &out);
    out
}

#[cfg(test)]
mod tests {
    use super::super::testdata::*;
    use super::*;

    #[test]
    fn sums_fixes_and_regressions_per_sibling_and_family() {
        let t = TestRun::new();
        t.profile("harness-s", 0, 0, 0, "schema-first", &[("f0", "x", false, true), ("f0", "x", true, false), ("f1", "y", false, false)]);
        t.profile("harness-s", 1, 0, 0, "schema-first", &[("f0", "x", false, true)]);
        t.profile("harness-s", 0, 1, 2, "schema-first", &[("f0", "x", true, true)]);
        t.profile("harness-s", 0, 0, 0, "quote-guard", &[("f1", "y", false, true)]);
        let l = locality(&t.data());
        assert_eq!(l.siblings["dbbench"], vec!["schema-first", "quote-guard"]);
        let tot = l.total.iter().find(|c| c.sibling == "schema-first" && c.family == "f0").unwrap();
        assert_eq!((tot.fix, tot.regress, tot.both_pass, tot.profiles), (2, 1, 1, 3));
        let a0 = l.by_anchor.iter().find(|c| c.sibling == "schema-first" && c.family == "f0" && c.anchor == Some(0)).unwrap();
        assert_eq!((a0.fix, a0.regress, a0.profiles), (2, 1, 2));
        assert_eq!(tot.fix_rate(), Some(1.0));
        assert_eq!(tot.regress_rate(), Some(0.5));
    }
}
