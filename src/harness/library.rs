//! The harness library: the specs shipped with each suite plus any user directory, resolved
//! through their `extends` chains and validated against the suite.

use std::collections::BTreeMap;
use std::path::Path;

use crate::harness::predicate;
use crate::harness::spec::{apply_patch, base_from_file, parse_spec_file, HarnessSpec, SpecError, SpecFile};
use crate::message::HookKind;
use crate::suite::Suite;

/// The shipped spec files of every registered suite, as (path, text).
pub fn builtin_spec_files() -> Vec<(String, String)> {
    crate::suite::registry().iter().flat_map(|s| s.harness_specs()).collect()
}

/// A resolved harness with where it came from.
#[derive(Clone, Debug)]
pub struct HarnessEntry {
    pub spec: HarnessSpec,
    pub file: String,
    /// The spec file's own text: for a sibling, exactly its difference from what it extends.
    pub source: String,
}

#[derive(Clone, Debug, Default)]
pub struct HarnessLibrary {
    /// (suite, name) -> entry
    entries: BTreeMap<(String, String), HarnessEntry>,
}

impl HarnessLibrary {
    /// The shipped specs, validated against the registered suites.
    pub fn builtin() -> Result<Self, SpecError> {
        let files: Vec<(String, String)> = builtin_spec_files();
        Self::from_files(files)
    }

    /// The shipped specs plus every `*.toml` under `dir` (sub-directories included). A user spec
    /// with the same suite and name replaces the shipped one.
    pub fn with_dir(dir: &Path) -> Result<Self, SpecError> {
        let mut files: Vec<(String, String)> = builtin_spec_files();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let rd = std::fs::read_dir(&d).map_err(|e| SpecError::new(&d.display().to_string(), "(directory)", e.to_string()))?;
            let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for p in paths {
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().map(|e| e == "toml").unwrap_or(false) {
                    let text = crate::files::read_text_limited(&p, crate::files::MAX_CONFIG_BYTES)
                        .map_err(|e| SpecError::new(&p.display().to_string(), "(file)", e.to_string()))?;
                    files.push((p.display().to_string(), text));
                }
            }
        }
        Self::from_files(files)
    }

    /// Parse, resolve and validate a set of spec files.
    pub fn from_files(files: Vec<(String, String)>) -> Result<Self, SpecError> {
        let mut parsed: Vec<(String, String, SpecFile)> = Vec::new();
        for (file, text) in files {
            let f = parse_spec_file(&file, &text)?;
            parsed.push((file, text, f));
        }
        // Suite of each file: its own, or inherited through `extends` (resolved below).
        let mut lib = HarnessLibrary::default();
        let mut remaining = parsed;
        loop {
            let before = remaining.len();
            let mut next = Vec::new();
            for (file, text, f) in remaining {
                let resolved = match &f.extends {
                    None => Some(base_from_file(&f, &file)?),
                    Some(parent) => {
                        let suite = f.suite.clone();
                        let candidates: Vec<&HarnessEntry> = lib
                            .entries
                            .values()
                            .filter(|e| &e.spec.name == parent && suite.as_ref().map(|s| s == &e.spec.suite).unwrap_or(true))
                            .collect();
                        let found = preferred_parent(&candidates, &file).map(|e| e.spec.clone());
                        match found {
                            Some(p) => Some(apply_patch(&p, &f, &file)?),
                            None => None,
                        }
                    }
                };
                match resolved {
                    Some(spec) => {
                        validate(&spec, &file)?;
                        lib.entries.insert((spec.suite.clone(), spec.name.clone()), HarnessEntry { spec, file, source: text });
                    }
                    None => next.push((file, text, f)),
                }
            }
            if next.is_empty() {
                break;
            }
            if next.len() == before {
                let (file, _, f) = &next[0];
                return Err(SpecError::new(
                    file,
                    "extends",
                    format!("no harness named `{}` to extend (or the chain is circular)", f.extends.clone().unwrap_or_default()),
                ));
            }
            remaining = next;
        }
        Ok(lib)
    }

    pub fn get(&self, suite: &str, name: &str) -> Option<&HarnessEntry> {
        self.entries.get(&(suite.to_string(), name.to_string()))
    }

    /// Harnesses of a suite: the base first, then siblings by name.
    pub fn for_suite(&self, suite: &str) -> Vec<&HarnessEntry> {
        let mut v: Vec<&HarnessEntry> = self.entries.values().filter(|e| e.spec.suite == suite).collect();
        v.sort_by_key(|e| (!e.spec.is_base(), e.spec.name.clone()));
        v
    }

    /// The siblings of `base` in a suite: harnesses whose lineage starts at `base`.
    pub fn siblings(&self, suite: &str, base: &str) -> Vec<&HarnessEntry> {
        self.for_suite(suite).into_iter().filter(|e| e.spec.lineage.len() > 1 && e.spec.lineage[0] == base).collect()
    }

    pub fn all(&self) -> impl Iterator<Item = &HarnessEntry> {
        self.entries.values()
    }
}

/// Several suites have a harness of the parent's name (every suite has a `base`) and the spec
/// names no suite: the one in the spec's own directory, else the first suite of the registry.
fn preferred_parent<'a>(candidates: &[&'a HarnessEntry], file: &str) -> Option<&'a HarnessEntry> {
    let dir = |f: &str| Path::new(f).parent().map(|p| p.to_path_buf());
    if let Some(e) =
        candidates.iter().find(|e| candidates.len() > 1 && dir(&e.file) == dir(file) && dir(file).is_some_and(|d| !d.as_os_str().is_empty()))
    {
        return Some(e);
    }
    let order = crate::suite::names();
    candidates.iter().min_by_key(|e| order.iter().position(|n| *n == e.spec.suite).unwrap_or(usize::MAX)).copied()
}

/// Check a resolved spec against its suite: known suite, tools, predicates, rewrites, and the
/// fields each hook kind needs.
pub fn validate(spec: &HarnessSpec, file: &str) -> Result<(), SpecError> {
    let suite: Box<dyn Suite> = crate::suite::by_name(&spec.suite).ok_or_else(|| {
        let known = crate::suite::names();
        SpecError::new(file, "suite", format!("unknown suite `{}` (known: {})", spec.suite, known.join(", ")))
    })?;
    if spec.max_steps == 0 || spec.max_steps > 500 {
        return Err(SpecError::new(file, "max_steps", format!("must be between 1 and 500, got {}", spec.max_steps)));
    }
    let tools: Vec<String> = suite.tools().into_iter().map(|t| t.name).collect();
    for (i, t) in spec.tools.iter().enumerate() {
        if !tools.is_empty() && !tools.contains(t) {
            return Err(SpecError::new(file, format!("tools[{i}]"), format!("unknown tool `{t}` (the suite offers: {})", tools.join(", "))));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (i, h) in spec.hooks.iter().enumerate() {
        let at = |f: &str| format!("hooks[{i}] (id `{}`).{f}", h.id);
        if h.id.trim().is_empty() {
            return Err(SpecError::new(file, format!("hooks[{i}].id"), "must not be empty"));
        }
        if !seen.insert(h.id.clone()) {
            return Err(SpecError::new(file, at("id"), "two hooks share this id"));
        }
        for (j, w) in h.when.iter().enumerate() {
            let p = predicate::parse_predicate(w).map_err(|m| SpecError::new(file, at(&format!("when[{j}]")), m.to_string()))?;
            if !predicate::known(&p.name, suite.as_ref()) {
                let mut names: Vec<&str> = predicate::GENERIC_PREDICATES.iter().map(|(n, _)| *n).collect();
                names.sort();
                return Err(SpecError::new(
                    file,
                    at(&format!("when[{j}]")),
                    format!("unknown predicate `{}` (known: {}, plus the suite's own)", p.name, names.join(", ")),
                ));
            }
        }
        match h.kind {
            HookKind::OnInit | HookKind::PreHint | HookKind::PostStep => {
                if h.text.is_none() {
                    return Err(SpecError::new(file, at("text"), format!("a `{}` hook needs `text`", h.kind.as_str())));
                }
            }
            HookKind::BeforeAction => match (&h.block, &h.rewrite) {
                (None, None) => return Err(SpecError::new(file, at("block"), "a `before_action` hook needs `block` or `rewrite`")),
                (Some(_), Some(_)) => return Err(SpecError::new(file, at("rewrite"), "give either `block` or `rewrite`, not both")),
                (None, Some(r)) if suite.rewrite(r).is_none() => {
                    return Err(SpecError::new(file, at("rewrite"), format!("suite `{}` has no rewrite named `{r}`", spec.suite)));
                }
                _ => {}
            },
            HookKind::Plan | HookKind::Reflect | HookKind::Critique => {
                if h.prompt.is_none() {
                    return Err(SpecError::new(file, at("prompt"), format!("a `{}` hook needs `prompt`", h.kind.as_str())));
                }
            }
        }
    }
    Ok(())
}
