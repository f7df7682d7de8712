//! Harness spec files (TOML) and their `extends` patches.
//!
//! A spec file names a harness and either defines it whole (the base) or patches another one
//! (`extends = "base"`): scalar fields override, `system_prompt_append` appends to the system
//! prompt, `[render]` keys override one by one, `hooks` are appended and `remove_hooks` drops
//! inherited hooks by id. So a sibling file *is* its difference from base.
//!
//! ```toml
//! name = "schema-first"
//! extends = "base"
//! specialty = "Shows the table's schema card before the first decision."
//!
//! [[hooks]]
//! id = "schema-card"
//! kind = "on_init"
//! text = "{resource:schema_card}"
//! ```

use serde::{Deserialize, Serialize};

use crate::message::HookKind;

/// One hook of a harness.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// Unique within a harness; recorded with every intervention.
    pub id: String,
    pub kind: HookKind,
    /// Predicates that must all hold for the hook to fire (`!name` negates, `name:N` passes a
    /// number). Empty = always.
    #[serde(default)]
    pub when: Vec<String>,
    /// Text to inject (`on_init`, `pre_hint`, `post_step`), a template: `{resource:NAME}`,
    /// `{steps_left}`, `{max_steps}`, `{step}`, `{last_error}`, `{last_observation}`,
    /// `{question}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `before_action`: do not execute the action; show this message (a template) instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// `before_action`: apply the suite's named rewrite to the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite: Option<String>,
    /// `plan`, `reflect`, `critique`: the instruction for the extra policy call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// `critique`: if the critique's output contains this text, the action is not executed and
    /// the critique is shown to the policy instead. Default `REVISE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revise_on: Option<String>,
    /// At most this many firings per episode (unlimited if absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_fires: Option<u32>,
}

/// How the context is rendered for the policy.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RenderSpec {
    /// The first user message; `{task_prompt}` is the benchmark's own prompt.
    pub task_template: String,
    /// `full`, or `last:N` to keep only the last N policy turns (with their observations).
    pub history: String,
    /// Cut observations shown to the policy to this many characters (0 = as returned).
    pub max_observation_chars: usize,
}

impl Default for RenderSpec {
    fn default() -> Self {
        RenderSpec { task_template: "{task_prompt}".into(), history: "full".into(), max_observation_chars: 0 }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RenderPatch {
    pub task_template: Option<String>,
    pub history: Option<String>,
    pub max_observation_chars: Option<usize>,
}

/// A spec file as written.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    pub name: String,
    #[serde(default)]
    pub suite: Option<String>,
    #[serde(default)]
    pub extends: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// One line: the repair specialty of a sibling.
    #[serde(default)]
    pub specialty: Option<String>,
    #[serde(default)]
    pub system_prompt: Option<String>,
    #[serde(default)]
    pub system_prompt_append: Option<String>,
    #[serde(default)]
    pub max_steps: Option<usize>,
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    #[serde(default)]
    pub render: Option<RenderPatch>,
    #[serde(default)]
    pub hooks: Vec<HookSpec>,
    #[serde(default)]
    pub remove_hooks: Vec<String>,
}

/// A resolved harness: the base with every patch applied.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HarnessSpec {
    pub name: String,
    pub suite: String,
    /// The chain of specs this one was built from, base first.
    pub lineage: Vec<String>,
    pub description: String,
    pub specialty: Option<String>,
    pub system_prompt: String,
    pub max_steps: usize,
    /// Tool names the policy is offered (a subset of the suite's tools; empty = all).
    pub tools: Vec<String>,
    pub render: RenderSpec,
    pub hooks: Vec<HookSpec>,
}

impl HarnessSpec {
    /// The frame every episode under this harness starts from: the system prompt and the task
    /// message (`task_template` with the benchmark's prompt; other templates are filled by the
    /// engine). Replays (distillation, grammar search) start from the same frame.
    pub fn frame(&self, task_prompt: &str) -> Vec<crate::message::Message> {
        vec![
            crate::message::Message::system(self.system_prompt.clone()),
            crate::message::Message::user(self.render.task_template.replace("{task_prompt}", task_prompt), crate::message::Origin::Frame),
        ]
    }

    /// The suite's tools this harness offers (all of them when `tools` is empty).
    pub fn offered_tools(&self, all: Vec<crate::message::ToolSpec>) -> Vec<crate::message::ToolSpec> {
        if self.tools.is_empty() {
            all
        } else {
            all.into_iter().filter(|t| self.tools.contains(&t.name)).collect()
        }
    }

    pub fn is_base(&self) -> bool {
        self.lineage.len() == 1
    }
    pub fn hook(&self, id: &str) -> Option<&HookSpec> {
        self.hooks.iter().find(|h| h.id == id)
    }
}

/// An invalid spec: names the file and the field.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{file}: {field}: {message}")]
pub struct SpecError {
    pub file: String,
    pub field: String,
    pub message: String,
}

impl SpecError {
    pub fn new(file: &str, field: impl Into<String>, message: impl Into<String>) -> Self {
        SpecError { file: file.to_string(), field: field.into(), message: message.into() }
    }
}

/// Parse one spec file. TOML errors carry the line and column; unknown fields are refused.
pub fn parse_spec_file(file: &str, text: &str) -> Result<SpecFile, SpecError> {
    toml::from_str::<SpecFile>(text).map_err(|e| {
        let (line, col) = e.span().map(|s| line_col(text, s.start)).unwrap_or((0, 0));
        let msg = e.message().to_string();
        let field = msg.split('`').nth(1).map(|s| s.to_string()).unwrap_or_else(|| "(file)".into());
        SpecError::new(file, field, format!("line {line}, column {col}: {msg}"))
    })
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
    (line, col)
}

/// Apply `patch` (a file that `extends` the already-resolved `parent`).
pub fn apply_patch(parent: &HarnessSpec, patch: &SpecFile, file: &str) -> Result<HarnessSpec, SpecError> {
    let mut out = parent.clone();
    out.name = patch.name.clone();
    out.lineage.push(patch.name.clone());
    if let Some(s) = &patch.suite {
        if s != &parent.suite {
            return Err(SpecError::new(file, "suite", format!("`{s}` differs from `{}` of the harness it extends", parent.suite)));
        }
    }
    if let Some(d) = &patch.description {
        out.description = d.clone();
    }
    out.specialty = patch.specialty.clone();
    if let Some(p) = &patch.system_prompt {
        out.system_prompt = p.clone();
    }
    if let Some(a) = &patch.system_prompt_append {
        out.system_prompt.push('\n');
        out.system_prompt.push_str(a);
    }
    if let Some(m) = patch.max_steps {
        out.max_steps = m;
    }
    if let Some(t) = &patch.tools {
        out.tools = t.clone();
    }
    if let Some(r) = &patch.render {
        if let Some(v) = &r.task_template {
            out.render.task_template = v.clone();
        }
        if let Some(v) = &r.history {
            out.render.history = v.clone();
        }
        if let Some(v) = r.max_observation_chars {
            out.render.max_observation_chars = v;
        }
    }
    for (i, id) in patch.remove_hooks.iter().enumerate() {
        if !out.hooks.iter().any(|h| &h.id == id) {
            return Err(SpecError::new(file, format!("remove_hooks[{i}]"), format!("no inherited hook has id `{id}`")));
        }
        out.hooks.retain(|h| &h.id != id);
    }
    out.hooks.extend(patch.hooks.iter().cloned());
    Ok(out)
}

/// Build a base harness from a file without `extends`.
pub fn base_from_file(f: &SpecFile, file: &str) -> Result<HarnessSpec, SpecError> {
    let suite = f.suite.clone().ok_or_else(|| SpecError::new(file, "suite", "a base harness must name its suite"))?;
    let system_prompt =
        f.system_prompt.clone().ok_or_else(|| SpecError::new(file, "system_prompt", "a base harness must define its system prompt"))?;
    let mut render = RenderSpec::default();
    if let Some(r) = &f.render {
        if let Some(v) = &r.task_template {
            render.task_template = v.clone();
        }
        if let Some(v) = &r.history {
            render.history = v.clone();
        }
        if let Some(v) = r.max_observation_chars {
            render.max_observation_chars = v;
        }
    }
    let mut spec = HarnessSpec {
        name: f.name.clone(),
        suite,
        lineage: vec![f.name.clone()],
        description: f.description.clone().unwrap_or_default(),
        specialty: f.specialty.clone(),
        system_prompt,
        max_steps: f.max_steps.unwrap_or(15),
        tools: f.tools.clone().unwrap_or_default(),
        render,
        hooks: f.hooks.clone(),
    };
    if let Some(a) = &f.system_prompt_append {
        spec.system_prompt.push('\n');
        spec.system_prompt.push_str(a);
    }
    if !f.remove_hooks.is_empty() {
        return Err(SpecError::new(file, "remove_hooks", "only a spec that `extends` another can remove hooks"));
    }
    Ok(spec)
}
