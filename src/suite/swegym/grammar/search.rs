//! The grammar search: decision paths tried in a real episode until one solves the task.

use super::*;

/// Every action of one kind the grammar can build from `ctx`, up to `max` of them.
pub(super) fn all_of(ctx: &Context, kind: &'static str, max: usize) -> Vec<Built> {
    let view = SweView::parse(ctx);
    let mut dfs = Dfs::of_kind(kind);
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..max {
        if let Some(b) = build(&view, &mut dfs) {
            if seen.insert(b.arguments.to_string()) {
                out.push(b);
            }
        }
        if !dfs.advance() {
            break;
        }
    }
    out
}

pub(super) fn ids(ctx: &Context) -> String {
    format!("call_{}", ctx.messages.iter().filter(|m| m.role == Role::Assistant).count())
}

/// Search the grammar for a sequence that solves `task` under the base harness's frame: open a
/// pointed-at file (after one search if the issue points at none), apply one repair operator,
/// run the tests, finish. Returns the first solution and whether `max_paths` cut the search.
pub fn solve(suite: &dyn Suite, task: &Task, frame: &SearchFrame<'_>, max_paths: usize, _inspect: bool) -> (Option<Solution>, bool) {
    let Ok(mut env) = suite.make_env(task) else { return (None, false) };
    let frame = frame.context(&env.task_prompt());
    let mut starts: Vec<(Context, Solution)> = vec![(frame.clone(), Vec::new())];
    for b in all_of(&frame, "search", 4) {
        let t = turn(&b, &ids(&frame));
        let Ok(out) = env.step(&t.tool_calls[0]) else { continue };
        let mut c = frame.clone();
        push_call(&mut c, t.tool_calls[0].clone(), out.observation);
        starts.push((c, vec![(frame.clone(), t)]));
    }
    let mut truncated = false;
    let mut tried = 0usize;
    for (ctx, prefix) in &starts {
        for open in all_of(ctx, "open", 6) {
            let t_open = turn(&open, &ids(ctx));
            let Ok(out) = env.step(&t_open.tool_calls[0]) else { continue };
            if out.observation.starts_with("ERROR:") {
                continue;
            }
            let mut viewed = ctx.clone();
            push_call(&mut viewed, t_open.tool_calls[0].clone(), out.observation);
            for edit in all_of(&viewed, "edit", max_paths) {
                if tried >= max_paths {
                    truncated = true;
                    return (None, truncated);
                }
                tried += 1;
                let t_edit = turn(&edit, &ids(&viewed));
                let Ok(out) = env.step(&t_edit.tool_calls[0]) else { continue };
                if out.signals.error_kind.is_some() {
                    continue;
                }
                let mut edited = viewed.clone();
                push_call(&mut edited, t_edit.tool_calls[0].clone(), out.observation);
                let solved = env.score(None).map(|s| s.success).unwrap_or(false);
                if solved {
                    let mut sol = prefix.clone();
                    sol.push((ctx.clone(), t_open));
                    sol.push((viewed.clone(), t_edit));
                    let mut cur = edited;
                    for kind in ["test", "finish"] {
                        let Some(b) = all_of(&cur, kind, 1).into_iter().next() else { return (None, truncated) };
                        let t = turn(&b, &ids(&cur));
                        let Ok(out) = env.step(&t.tool_calls[0]) else { return (None, truncated) };
                        let next = {
                            let mut c = cur.clone();
                            push_call(&mut c, t.tool_calls[0].clone(), out.observation);
                            c
                        };
                        sol.push((cur, t));
                        cur = next;
                    }
                    return (Some(sol), truncated);
                }
                let undo = ToolCall {
                    id: "undo".into(),
                    name: "str_replace_editor".into(),
                    arguments: serde_json::json!({"command": "undo_edit", "path": edit.arguments["path"]}),
                };
                if env.step(&undo).is_err() {
                    return (None, truncated);
                }
            }
        }
    }
    (None, truncated)
}
