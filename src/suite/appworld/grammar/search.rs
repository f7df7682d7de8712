//! The grammar search: decision paths tried in a real episode until one solves the task.

use super::*;

/// AppWorld's sequences are long (docs, login, calls, completion), so instead of enumerating
/// every path the search samples whole episodes from the grammar's innate priors: the first
/// greedily, then at rising temperature, one per 300 paths of the budget.
pub fn solve(suite: &dyn Suite, task: &Task, frame: &SearchFrame<'_>, max_paths: usize, _inspect: bool) -> (Option<Solution>, bool) {
    let model = LinearModel::default();
    let attempts = (max_paths / 300).max(1);
    for attempt in 0..attempts {
        let Ok(mut env) = suite.make_env(task) else { return (None, false) };
        let mut ctx = frame.context(&env.task_prompt());
        let mut steps: Solution = Vec::new();
        let temperature = if attempt == 0 { 0.0 } else { 0.5 + 2.5 * attempt as f32 / attempts as f32 };
        for step in 0..frame.max_steps {
            let seed = (attempt as u64) << 32 | step as u64;
            let t = sample_turn(&model, &GRAMMAR, &ctx, seed, temperature);
            let Some(call) = t.tool_calls.first().cloned() else { break };
            let Ok(out) = env.step(&call) else { break };
            steps.push((ctx.clone(), t));
            push_call(&mut ctx, call, out.observation);
            if out.done {
                if env.score(None).is_ok_and(|s| s.success) {
                    return (Some(steps), false);
                }
                break;
            }
        }
    }
    (None, false)
}
