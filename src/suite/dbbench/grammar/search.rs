//! The grammar search: every decision path of the grammar tried in a real episode until one
//! solves the task (warm-start demonstrations and the coverage ceiling).

use super::*;

/// Search the grammar for a sequence that solves `task`: one query (or mutation) then a commit,
/// optionally after inspecting the table first (`inspect`). Contexts carry no tool specs (the
/// grammar reads only messages).
pub fn solve(suite: &dyn Suite, task: &Task, frame: &SearchFrame<'_>, max_paths: usize, inspect: bool) -> (Option<Solution>, bool) {
    let Ok(mut probe) = suite.make_env(task) else { return (None, false) };
    let task_prompt = probe.task_prompt();
    let frame = Context { messages: (frame.frame)(&task_prompt), tools: Vec::new() };
    // (context, steps that led to it)
    let mut starts: Vec<(Context, Solution)> = vec![(frame.clone(), Vec::new())];
    if inspect {
        let mut dfs = Dfs::of_kind("inspect");
        let view = DbView::parse(&frame);
        if let Some(b) = build(&view, &mut dfs) {
            let t = turn(&b, "call_0");
            let call = t.tool_calls[0].clone();
            if let Ok(out) = probe.step(&call) {
                let mut c = frame.clone();
                push_call(&mut c, call, out.observation);
                starts.push((c, vec![(frame.clone(), t)]));
            }
        }
    }
    let mutation = DbView::parse(&frame).mutation.is_some();
    let kinds: &[&'static str] = if mutation { &["insert", "update", "delete"] } else { &["query"] };
    let mut truncated = false;
    for (ctx, prefix) in &starts {
        let view = DbView::parse(ctx);
        for &kind in kinds {
            let mut dfs = Dfs::of_kind(kind);
            let mut n = 0;
            let mut seen = std::collections::HashSet::new();
            loop {
                if n >= max_paths {
                    truncated = true;
                    break;
                }
                n += 1;
                if let Some(b) = build(&view, &mut dfs) {
                    let sql = b.arguments.to_string();
                    if seen.insert(sql) {
                        let t = turn(&b, &format!("call_{}", prefix.len()));
                        // a query leaves the table as it was, so one environment serves them all;
                        // a mutation gets a fresh one
                        let found = if mutation {
                            match suite.make_env(task) {
                                Ok(mut env) => solves(env.as_mut(), ctx, t.tool_calls[0].clone()),
                                Err(_) => None,
                            }
                        } else {
                            solves(probe.as_mut(), ctx, t.tool_calls[0].clone())
                        };
                        if let Some((after, commit)) = found {
                            let mut sol = prefix.clone();
                            sol.push((ctx.clone(), t));
                            sol.push((after, commit));
                            return (Some(sol), truncated);
                        }
                    }
                }
                if !dfs.advance() {
                    break;
                }
            }
        }
    }
    (None, truncated)
}

/// Run `call`, then try every answer the grammar could commit; the
/// context after the call and the winning commit.
pub(super) fn solves(env: &mut dyn crate::suite::Environment, ctx: &Context, call: ToolCall) -> Option<(Context, AssistantTurn)> {
    let out = env.step(&call).ok()?;
    if out.signals.error_kind.is_some() {
        return None;
    }
    let mut after = ctx.clone();
    let n = after.messages.iter().filter(|m| m.role == Role::Assistant).count();
    push_call(&mut after, call, out.observation);
    let view = DbView::parse(&after);
    let mut dfs = Dfs::of_kind("commit");
    loop {
        if let Some(b) = build(&view, &mut dfs) {
            let commit = turn(&b, &format!("call_{}", n + 1));
            if let Ok(s) = env.score(Some(&commit.tool_calls[0])) {
                if s.success {
                    return Some((after, commit));
                }
            }
        }
        if !dfs.advance() {
            return None;
        }
    }
}
