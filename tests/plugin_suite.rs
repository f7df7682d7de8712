//! Adding a suite is one folder plus one registry line. This test is that folder, from outside
//! the crate: a tiny word-picking suite (tasks, environment, scorer, harness specs, behaviour
//! tags and a grammar for the built-in policy) registered with `suite::register`, then run
//! through the harness library, the grammar search and a whole experiment, every arm's numbers
//! stored and analysed like a built-in suite's.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use harness_s::events::NullSink;
use harness_s::experiment::{run_experiment, ExperimentConfig};
use harness_s::grammar::kit::{decide_into, f, turn, Built, Chooser, Decision, Dfs};
use harness_s::grammar::Grammar;
use harness_s::message::{CallKind, Context, Role, ToolSpec};
use harness_s::store::BlockingStore;
use harness_s::suite::{
    self, Action, BehaviourTagger, CallRecord, EnvError, Environment, LoadError, OutcomeForMetrics, Score, SearchFrame, Signals, Solution,
    StepOutcome, Suite, VerifyReport,
};
use harness_s::task::Task;

const WORDS: &[&str] = &["amber", "birch", "cedar", "delta", "ember", "fjord", "gale", "heron", "iris", "juniper", "kestrel", "lumen"];
/// family -> the position it asks for, and how the instruction says it
const FAMILIES: &[(&str, usize, &str)] = &[("first", 0, "the first"), ("last", 2, "the last"), ("middle", 1, "the middle")];

struct Words;

fn tasks() -> Vec<Task> {
    let mut out = Vec::new();
    for (family, pos, says) in FAMILIES {
        for i in 0..12 {
            let words: Vec<&str> = (0..3).map(|k| WORDS[(i * 5 + k * 7 + pos) % WORDS.len()]).collect();
            out.push(Task {
                id: format!("{family}-{i}"),
                suite: "words".into(),
                family: family.to_string(),
                instruction: format!("Of the words '{}', '{}' and '{}', answer with {says} one.", words[0], words[1], words[2]),
                payload: serde_json::json!({"answer": words[*pos]}),
            });
        }
    }
    out
}

struct WordsEnv {
    task: Task,
}

impl Environment for WordsEnv {
    fn task_prompt(&self) -> String {
        self.task.instruction.clone()
    }
    fn step(&mut self, action: &Action) -> Result<StepOutcome, EnvError> {
        if action.name != "answer" {
            return Ok(StepOutcome {
                observation: format!("unknown tool {}", action.name),
                done: false,
                signals: Signals { error_kind: Some("tool".into()), ..Default::default() },
            });
        }
        Ok(StepOutcome { observation: "answered".into(), done: true, signals: Signals { executed: true, submitted: true, ..Default::default() } })
    }
    fn score(&mut self, submitted: Option<&Action>) -> Result<Score, EnvError> {
        let said = submitted.and_then(|a| a.arguments.get("word")).and_then(|w| w.as_str()).unwrap_or("");
        let ok = said == self.task.payload["answer"].as_str().unwrap_or("-");
        Ok(Score { reward: if ok { 1.0 } else { 0.0 }, success: ok, details: serde_json::json!({"said": said}) })
    }
    fn resource(&self, _name: &str) -> Option<String> {
        None
    }
}

/// The quoted words of the task prompt, in order.
fn quoted(ctx: &Context) -> (Vec<String>, String) {
    let prompt = ctx.messages.iter().find(|m| m.role == Role::User).map(|m| m.content.clone()).unwrap_or_default();
    let words = prompt.split('\'').skip(1).step_by(2).map(str::to_string).collect();
    let cue = ["first", "last", "middle"].iter().find(|c| prompt.contains(*c)).copied().unwrap_or("none");
    (words, cue.to_string())
}

struct WordsGrammar;

impl Grammar for WordsGrammar {
    fn build(&self, ctx: &Context, ch: &mut dyn Chooser) -> Option<Built> {
        let (words, cue) = quoted(ctx);
        let hinted = ctx.messages.iter().any(|m| m.content.contains("Count the words"));
        let mut d = Decision { slot: "word", labels: vec![], options: vec![], prior: vec![] };
        for (i, w) in words.iter().enumerate() {
            let pos = i.to_string();
            let mut features = vec![f(&["word", "pos", &pos]), f(&["word", "cue", &cue, "pos", &pos])];
            if hinted {
                features.push(f(&["word", "hinted", &pos]));
            }
            d.push(w.clone(), features, 0.0);
        }
        let mut decisions = Vec::new();
        let i = decide_into(&mut decisions, d, ch)?;
        Some(Built { tool: "answer".into(), arguments: serde_json::json!({"word": words[i]}), decisions })
    }
    fn note(&self, _ctx: &Context, _kind: CallKind) -> String {
        "OK".into()
    }
}

fn tag(calls: &[&CallRecord]) -> Vec<bool> {
    vec![calls.iter().any(|c| c.proposed.name == "answer")]
}

impl Suite for Words {
    fn name(&self) -> &'static str {
        "words"
    }
    fn description(&self) -> &'static str {
        "Pick the word the instruction names (a plug-in suite defined in a test)."
    }
    fn bundled_tasks(&self) -> Result<Vec<Task>, LoadError> {
        Ok(tasks())
    }
    fn load_file(&self, path: &Path) -> Result<Vec<Task>, LoadError> {
        Err(LoadError { file: path.display().to_string(), line: 0, message: "this suite has no file format".into() })
    }
    fn tools(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "answer".into(),
            description: "Answer with one word.".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}),
        }]
    }
    fn max_rounds(&self) -> usize {
        3
    }
    fn submit_tool(&self) -> &'static str {
        "answer"
    }
    fn make_env(&self, task: &Task) -> Result<Box<dyn Environment>, EnvError> {
        Ok(Box::new(WordsEnv { task: task.clone() }))
    }
    fn metrics(&self, outcomes: &[OutcomeForMetrics<'_>]) -> serde_json::Value {
        let ok = outcomes.iter().filter(|o| o.score.is_some_and(|s| s.success)).count();
        serde_json::json!({"success": ok as f64 / outcomes.len().max(1) as f64})
    }
    fn verify(&self, tasks: &[Task]) -> VerifyReport {
        let mut r = VerifyReport { suite: "words".into(), ..Default::default() };
        for t in tasks {
            r.record(&t.id, &t.family, Ok(()));
        }
        r
    }
    fn no_tool_call_message(&self) -> &'static str {
        "Answer with the `answer` tool."
    }
    fn grammar(&self) -> Option<Arc<dyn Grammar>> {
        Some(Arc::new(WordsGrammar))
    }
    /// Every word, in order: the one that scores is the solution.
    fn solve(&self, task: &Task, frame: &SearchFrame<'_>, max_paths: usize, _inspect: bool) -> (Option<Solution>, bool) {
        let Ok(mut env) = self.make_env(task) else { return (None, false) };
        let ctx = frame.context(&env.task_prompt());
        let mut dfs = Dfs::default();
        for _ in 0..max_paths {
            if let Some(b) = WordsGrammar.build(&ctx, &mut dfs) {
                let t = turn(&b, "call_0");
                if env.score(Some(&t.tool_calls[0])).is_ok_and(|s| s.success) {
                    return (Some(vec![(ctx, t)]), false);
                }
            }
            if !dfs.advance() {
                break;
            }
        }
        (None, false)
    }
    fn behaviour(&self) -> Option<BehaviourTagger> {
        Some(BehaviourTagger { tags: &[("answers", "answered", "the policy called `answer`")], tag })
    }
    fn harness_specs(&self) -> Vec<(String, String)> {
        vec![
            (
                "words/base.toml".into(),
                "name = \"base\"\nsuite = \"words\"\ndescription = \"The instruction and the answer tool.\"\nmax_steps = 3\ntools = [\"answer\"]\nsystem_prompt = \"Answer with one word.\"\n".into(),
            ),
            (
                "words/count-hint.toml".into(),
                "name = \"count-hint\"\nextends = \"base\"\nsuite = \"words\"\nspecialty = \"Tells the policy to count the quoted words.\"\n\n[[hooks]]\nid = \"count\"\nkind = \"pre_hint\"\nwhen = [\"first_step\"]\ntext = \"Count the words before you answer.\"\n".into(),
            ),
        ]
    }
    fn import_format(&self) -> &'static str {
        "none (bundled tasks only)"
    }
}

const EXPERIMENT: &str = r#"
name = "words"
suites = ["words"]
heldout_families = ["middle"]
arms = ["policy-only", "harness-s"]
seeds = [1, 2]
iterations = 3
eval_every = 1
workers = 2

[policy]
warm_start_demos = 4
learning_rate = 1.0

[budget]
batch_tasks = 8
base_tries = 2
rescue_siblings = 1
rescue_tries = 1
probe_tasks = 4
"#;

#[test]
fn a_suite_registered_from_outside_runs_the_whole_recipe() {
    suite::register(|| Box::new(Words));
    assert!(suite::names().contains(&"words"), "{:?}", suite::names());
    // its harness specs reach the library through the suite alone
    let lib = harness_s::harness::HarnessLibrary::builtin().expect("specs resolve");
    assert!(lib.get("words", "base").is_some());
    let sibs: Vec<&str> = lib.siblings("words", "base").iter().map(|e| e.spec.name.as_str()).collect();
    assert_eq!(sibs, vec!["count-hint"]);
    // the grammar search solves its tasks through the same seam as the built-in suites
    let base = &lib.get("words", "base").unwrap().spec;
    let c = harness_s::search::coverage(&Words, base, &tasks(), 10);
    assert_eq!((c.covered, c.total), (36, 36));

    let cfg = ExperimentConfig::parse("words.toml", EXPERIMENT).expect("a valid experiment on the plug-in suite");
    let dir = tempfile::tempdir().unwrap();
    let store = BlockingStore::open(dir.path().join("w.db").to_str().unwrap()).unwrap();
    let out = run_experiment(&cfg, &store, &NullSink, &AtomicBool::new(false)).expect("the experiment runs");
    assert!(out.finished);
    for arm in ["policy-only", "harness-s"] {
        let a = &out.arms[arm];
        assert!((0.0..=1.0).contains(&a["heldout"]) && (0.0..=1.0).contains(&a["train"]), "{arm}: {a:?}");
    }
    assert!(out.rollouts_detail["policy-only"].demo > 0, "warm-start demonstrations came from the suite's own search");
    // the analyses read it like any suite, its behaviour tag included
    let analysis = harness_s::analysis::analyse(&store, out.run_id).expect("analysed");
    let tags: Vec<&str> = analysis.behaviour.iter().flat_map(|b| b.rows.iter().map(|r| r.tag.as_str())).collect();
    assert!(tags.contains(&"answers"), "{tags:?}");
}
