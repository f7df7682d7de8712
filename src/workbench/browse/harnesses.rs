//! Harnesses with their behaviour profiles, and the runs those profiles can come from.

use super::*;

/// The harnesses of `suite` in `lib` as the `harnesses` command (and `harness-s harnesses --json`)
/// lists them, each with its measured profile when `profiles` has one.
pub fn harness_rows(lib: &HarnessLibrary, suite: &str, profiles: &BTreeMap<String, api::Profile>) -> Vec<api::Harness> {
    let entries = lib.for_suite(suite);
    let render = |spec: &crate::harness::HarnessSpec| {
        // Compare resolved specs without their names and lineage, so the diff shows behaviour.
        let mut v = serde_json::to_value(spec).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            for k in ["name", "lineage", "description", "specialty"] {
                o.remove(k);
            }
        }
        toml::to_string_pretty(&v).unwrap_or_default()
    };
    let base = entries.iter().find(|e| e.spec.lineage.len() <= 1);
    let base_text = base.map(|b| render(&b.spec)).unwrap_or_default();
    let mut out = Vec::new();
    for e in &entries {
        let is_base = e.spec.lineage.len() <= 1;
        let diff: Vec<api::DiffLine> = if is_base {
            Vec::new()
        } else {
            line_diff(&base_text, &render(&e.spec)).into_iter().map(|l| api::DiffLine { op: l.op.to_string(), line: l.line }).collect()
        };
        out.push(api::Harness {
            name: e.spec.name.clone(),
            description: e.spec.description.clone(),
            specialty: e.spec.specialty.clone(),
            base: is_base,
            extends: if e.spec.lineage.len() >= 2 { Some(e.spec.lineage[e.spec.lineage.len() - 2].clone()) } else { None },
            file: e.file.clone(),
            spec: e.source.clone(),
            diff,
            hooks: e.spec.hooks.iter().map(|h| api::HookRef { id: h.id.clone(), kind: h.kind.as_str().to_string() }).collect(),
            profile: profiles.get(&e.spec.name).cloned(),
        });
    }
    out
}

/// One run's measured profiles of a suite's siblings.
struct ProfileSource {
    run: RunRow,
    arm: String,
    profiles: BTreeMap<String, BehaviorProfile>,
}

impl ProfileSource {
    /// Paired probe outcomes behind the profiles (base against sibling, every sibling).
    fn pairs(&self) -> u64 {
        self.profiles.values().map(|p| u64::from(p.total.total())).sum()
    }

    fn api_profiles(&self) -> BTreeMap<String, api::Profile> {
        self.profiles
            .iter()
            .map(|(sib, p)| {
                let buckets = p
                    .by_bucket
                    .iter()
                    .map(|(k, c)| {
                        let (family, signature) = k.split_once('|').unwrap_or((k.as_str(), ""));
                        api::ProfileBucket { family: family.to_string(), signature: signature.to_string(), counts: *c }
                    })
                    .collect();
                let profile = api::Profile {
                    counts: p.total,
                    run_id: self.run.id,
                    arm: self.arm.clone(),
                    anchor: p.anchor,
                    policy_version: p.policy_version,
                    buckets,
                    evidence: p.evidence.clone(),
                };
                (sib.clone(), profile)
            })
            .collect()
    }
}

/// The run whose profiles stand by default: the most probe evidence (a small or cancelled run
/// does not replace a large one), the newest among equals.
fn default_source(sources: &[ProfileSource]) -> Option<&ProfileSource> {
    sources.iter().max_by_key(|src| (src.pairs(), src.run.id))
}

impl Workbench {
    /// The suite's harnesses, each sibling with its behaviour profile from one experiment run:
    /// `run` when given, else the run with the most probe evidence ([`Workbench::profile_sources`]).
    pub(in crate::workbench) fn harnesses(&self, a: commands::HarnessesArgs) -> Result<Vec<api::Harness>, CommandError> {
        let s = suite_named(a.suite.as_str())?;
        let lib = HarnessLibrary::builtin().map_err(|e| CommandError::Internal(e.to_string()))?;
        let sources = self.profile_sources(s.name())?;
        let chosen =
            match a.run {
                Some(id) => Some(sources.iter().find(|src| src.run.id == id).ok_or_else(|| {
                    CommandError::NotFound(format!("run {id} measured no behaviour profiles for {} (see `profile_runs`)", s.name()))
                })?),
                None => default_source(&sources),
            };
        let profiles = chosen.map(ProfileSource::api_profiles).unwrap_or_default();
        Ok(harness_rows(&lib, s.name(), &profiles))
    }

    /// Every experiment run that measured profiles of `suite`'s siblings, with how much probe
    /// evidence each holds; `default` marks the one `harnesses` shows when no run is named.
    pub(in crate::workbench) fn profile_runs(&self, a: commands::SuiteArgs) -> Result<Vec<api::ProfileRun>, CommandError> {
        let s = suite_named(a.suite.as_str())?;
        let sources = self.profile_sources(s.name())?;
        let default_id = default_source(&sources).map(|src| src.run.id);
        let rows: Vec<api::ProfileRun> = sources
            .iter()
            .map(|src| api::ProfileRun {
                run_id: src.run.id,
                name: src.run.name.clone(),
                status: src.run.status.as_str().to_string(),
                arm: src.arm.clone(),
                anchor: src.profiles.values().map(|p| p.anchor).max().unwrap_or(0),
                siblings: src.profiles.len(),
                pairs: src.pairs(),
                default: Some(src.run.id) == default_id,
            })
            .collect();
        Ok(rows)
    }

    /// Every experiment run, newest first, that measured profiles of `suite`'s siblings: from
    /// each, the harness-s arm (else the first arm found), first seed, each sibling's last anchor.
    fn profile_sources(&self, suite: &str) -> Result<Vec<ProfileSource>, CommandError> {
        let mut runs: Vec<RunRow> = self.store.runs()?.into_iter().filter(|r| r.kind == KIND_EXPERIMENT).collect();
        runs.sort_by_key(|r| std::cmp::Reverse(r.id));
        let mut out = Vec::new();
        for r in runs {
            let recs = self.store.records_with_prefix(r.id, "profile", &format!("{suite}/"))?;
            if recs.is_empty() {
                continue;
            }
            // Read with the same record type the analyses use.
            let recs: Vec<ProfileRecord> = recs.into_iter().filter_map(|(_, v)| serde_json::from_value(v).ok()).collect();
            let arm = if recs.iter().any(|p| p.arm == crate::analysis::ROUTED_ARM) {
                crate::analysis::ROUTED_ARM.to_string()
            } else {
                recs.first().map(|p| p.arm.clone()).unwrap_or_default()
            };
            let Some(seed) = recs.iter().filter(|p| p.arm == arm).map(|p| p.seed_index).min() else { continue };
            let mut best: BTreeMap<String, BehaviorProfile> = BTreeMap::new();
            for p in recs.into_iter().filter(|p| p.arm == arm && p.seed_index == seed).map(|p| p.profile) {
                match best.get(&p.sibling) {
                    Some(e) if p.anchor < e.anchor => {}
                    _ => {
                        best.insert(p.sibling.clone(), p);
                    }
                }
            }
            out.push(ProfileSource { run: r, arm, profiles: best });
        }
        Ok(out)
    }
}
