// Renders the inspector's list and timeline components alone, at the sizes they must handle
// (100,000 episodes, a 500-step trajectory), for tests/scale.test.mjs to time in Chromium.

import { render } from "preact";
import "../../src/style.css";
import { Timeline } from "../../src/views/Timeline";
import { VirtualList } from "../../src/ui";
import type { Message, StoredEpisode, StoredStep } from "../../src/types";

function episode(steps: number): StoredEpisode {
  const out: StoredStep[] = [];
  for (let i = 0; i < steps; i++) {
    const add: Message[] =
      i === 0
        ? [
            { role: "system", content: "You are a database agent.", origin: { by: "frame" } },
            { role: "user", content: "How many rows are there?", origin: { by: "frame" } },
          ]
        : [
            { role: "assistant", content: "", tool_calls: [{ id: `c${i}`, name: "execute_sql", arguments: { query: `SELECT ${i}` } }], origin: { by: "policy" } },
            { role: "tool", content: `[(${i},)]`, tool_call_id: `c${i}`, origin: { by: "environment" } },
            ...(i % 7 === 0 ? [{ role: "user" as const, content: `hint ${i}`, origin: { by: "hook" as const, hook: "schema-card", kind: "pre_hint" } }] : []),
          ];
    out.push({
      index: i,
      keep: i === 0 ? 0 : Number.MAX_SAFE_INTEGER, // replaced below with the previous length
      add,
      tools: i === 0 ? [{ name: "execute_sql", description: "run SQL", parameters: {} }] : undefined,
      output: { content: `step ${i}`, tool_calls: [{ id: `c${i + 1}`, name: "execute_sql", arguments: { query: `SELECT ${i + 1}` } }], prompt_tokens: 100 + i, completion_tokens: 12 },
      calls: [{ proposed: { id: `c${i + 1}`, name: "execute_sql", arguments: { query: `SELECT ${i + 1}` } }, executed: { id: `c${i + 1}`, name: "execute_sql", arguments: { query: `SELECT ${i + 1}` } }, observation: `[(${i + 1},)]`, signals: {}, duration_ms: 0.3 }],
      interventions: i % 7 === 0 ? [{ hook: "schema-card", kind: "pre_hint", when: ["always"], effect: "inject", text: `hint ${i}` }] : [],
      policy_ms: 1.5,
      env_ms: 0.4,
    });
  }
  let len = 0;
  for (const s of out) {
    s.keep = s.index === 0 ? 0 : len;
    len = s.keep + s.add.length;
  }
  return { schema: 1, task_id: "t", suite: "dbbench", family: "counting", harness: "base", policy: "p", sample: 0, seed: 1, status: "completed", steps: out, score: { reward: 1, success: true, details: {} }, infra_error: null, duration_ms: 1, prompt_tokens: 1, completion_tokens: 1 };
}

declare global {
  interface Window {
    renderTimeline: (steps: number) => number;
    renderList: (rows: number) => number;
  }
}

const root = document.getElementById("app")!;

window.renderTimeline = (steps) => {
  const ep = episode(steps);
  const t0 = performance.now();
  render(<Timeline ep={ep} current={-1} />, root);
  return performance.now() - t0;
};

window.renderList = (rows) => {
  const t0 = performance.now();
  render(
    <div class="pane episodes" style={{ height: "800px" }}>
      <VirtualList count={rows} rowHeight={26} class="episode-list" row={(i) => <div class="ep-row" data-row={i}>episode {i}</div>} />
    </div>,
    root,
  );
  return performance.now() - t0;
};
