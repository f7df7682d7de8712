// One episode as a step timeline: context (collapsed by default), policy output, action,
// observation, tokens and time, with every harness intervention marked by the hook that fired.
// Steps are rendered in batches as they scroll into view, so a 500-step episode opens at once.

import { Fragment, type ComponentChildren } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { callText, Contexts, firstDivergence, fromHook, originLabel } from "../trajectory";
import type { AssistantTurn, Intervention, Message, StoredEpisode, StoredStep, TrainExample } from "../types";
import { ms } from "../ui";
import "./review.css";

const BATCH = 30;

export function Clip({ text, max = 1200 }: { text: string; max?: number }) {
  const [open, setOpen] = useState(false);
  if (text.length <= max || open) return <pre class="text">{text}</pre>;
  return (
    <pre class="text">
      {text.slice(0, max)}
      <button class="link more" onClick={() => setOpen(true)}>
        … {text.length - max} more characters
      </button>
    </pre>
  );
}

export function MessageView({ m, fresh }: { m: Message; fresh?: boolean }) {
  const hook = fromHook(m);
  return (
    <div class={`msg role-${m.role} ${hook ? "from-hook" : ""} ${fresh ? "fresh" : ""}`}>
      <div class="msg-head">
        <span class="role">{m.role}</span>
        {m.origin && <span class={`origin ${hook ? "hook" : ""}`}>{originLabel(m)}</span>}
        {fresh && <span class="tag new">new</span>}
      </div>
      {m.content && <Clip text={m.content} max={m.role === "system" ? 240 : 1200} />}
      {m.tool_calls?.map((c, i) => (
        <div key={i} class="toolcall">
          → <code>{callText(c)}</code>
        </div>
      ))}
    </div>
  );
}

function InterventionView({ iv }: { iv: Intervention }) {
  return (
    <div class={`intervention effect-${iv.effect}`}>
      <div class="iv-head">
        <span class="hook-name">⚑ {iv.hook}</span>
        <span class="tag">{iv.kind}</span>
        <span class="tag effect">{iv.effect}</span>
        {iv.when.length > 0 && <span class="muted small">when {iv.when.join(" ∧ ")}</span>}
      </div>
      {iv.effect === "inject" && iv.text && <Clip text={iv.text} max={600} />}
      {iv.effect === "block" && iv.message && (
        <div>
          blocked: <Clip text={iv.message} max={600} />
        </div>
      )}
      {iv.effect === "rewrite" && iv.from && iv.to && (
        <div class="rewrite">
          <code class="del">{callText(iv.from)}</code>
          <span> ⇒ </span>
          <code class="add">{callText(iv.to)}</code>
        </div>
      )}
      {iv.effect === "call" && (
        <details>
          <summary>
            extra {iv.call_kind} call: <span class="muted">{(iv.output ?? "").slice(0, 120)}</span>
          </summary>
          {iv.prompt && (
            <>
              <div class="muted small">prompt</div>
              <Clip text={iv.prompt} max={600} />
            </>
          )}
          <div class="muted small">output</div>
          <Clip text={iv.output ?? ""} max={1200} />
        </details>
      )}
    </div>
  );
}

function TurnView({ t }: { t: AssistantTurn }) {
  return (
    <div class="turn">
      {t.content && <Clip text={t.content} max={800} />}
      {t.tool_calls.map((c, i) => (
        <div key={i} class="toolcall">
          <code>{callText(c)}</code>
        </div>
      ))}
      {!t.content && t.tool_calls.length === 0 && <span class="muted">(empty reply)</span>}
    </div>
  );
}

function ContextView({ ctx, i, open, onToggle }: { ctx: Contexts; i: number; open: boolean; onToggle: () => void }) {
  // Only the summary is computed until the context is opened.
  const added = ctx.addedAt(i);
  return (
    <div class="context">
      <button class="link ctx-toggle" onClick={onToggle} aria-expanded={open}>
        {open ? "▾" : "▸"} context{open ? `: ${ctx.messagesAt(i).length} messages` : ""} ({added} new)
      </button>
      {open && <ContextMessages messages={ctx.messagesAt(i)} added={added} tools={ctx.toolsAt(i).map((t) => t.name)} />}
    </div>
  );
}

const CONTEXT_HEAD = 2;
const CONTEXT_TAIL = 12;

/** A context: its first messages (system, task) and its newest ones; the middle folds when long. */
export function ContextMessages({ messages, added, tools }: { messages: Message[]; added: number; tools: string[] }) {
  const [all, setAll] = useState(false);
  const tail = Math.max(CONTEXT_TAIL, added);
  const fold = !all && messages.length > CONTEXT_HEAD + tail + 1;
  const hidden = fold ? messages.length - CONTEXT_HEAD - tail : 0;
  const shown = fold ? [...messages.slice(0, CONTEXT_HEAD).map((m, k) => [m, k] as const), ...messages.slice(-tail).map((m, k) => [m, messages.length - tail + k] as const)] : messages.map((m, k) => [m, k] as const);
  return (
    <div class="ctx-messages">
      {tools.length > 0 && <div class="muted small">tools: {tools.join(", ")}</div>}
      {shown.map(([m, k], j) => (
        <Fragment key={k}>
          {fold && j === CONTEXT_HEAD && (
            <button class="link fold" onClick={() => setAll(true)}>
              ⋯ {hidden} earlier messages (show all)
            </button>
          )}
          <MessageView m={m} fresh={k >= messages.length - added} />
        </Fragment>
      ))}
    </div>
  );
}

/** Where a step stands against the other side of a rescue: the first step whose action differs,
 * or a step after it. */
type Divergence = "first" | "after";

function StepView(props: { s: StoredStep; i: number; ctx: Contexts; current: boolean; open: boolean; onToggle: () => void; onSelect: () => void; diverge?: Divergence }) {
  const { s, i, ctx, current, open, diverge } = props;
  const ivs = s.interventions ?? [];
  // Tool calls the environment ran as proposed are shown once, as the action.
  const asProposed = (c: StoredStep["calls"][number]) => c.executed !== null && JSON.stringify(c.executed) === JSON.stringify(c.proposed);
  const shownCalls = s.output.tool_calls.filter((tc) => !s.calls.some((c) => asProposed(c) && c.proposed.id === tc.id));
  return (
    <article
      class={`step ${current ? "current" : ""} ${ivs.length ? "has-iv" : ""} ${diverge === "first" ? "diverge-first" : diverge === "after" ? "diverged" : ""}`}
      data-step={i}
      data-diverge={diverge}
      onClick={props.onSelect}
    >
      <header class="step-head">
        <b>step {s.index}</b>
        {diverge === "first" && (
          <span class="tag diverge" title="the first step where base and sibling took different actions">
            ⟂ actions diverge here
          </span>
        )}
        {ivs.map((iv, k) => (
          <span key={k} class="tag hook" title={`${iv.kind} · ${iv.effect}`}>
            ⚑ {iv.hook}
          </span>
        ))}
        <span class="spacer" />
        <span class="muted small" title="prompt / completion tokens">
          {s.output.prompt_tokens ?? 0}/{s.output.completion_tokens ?? 0} tok
        </span>
        <span class="muted small" title="policy time · environment time">
          policy {ms(s.policy_ms)} · env {ms(s.env_ms)}
        </span>
      </header>
      <ContextView ctx={ctx} i={i} open={open} onToggle={props.onToggle} />
      {ivs
        .filter((iv) => iv.effect === "call" || iv.effect === "inject")
        .map((iv, k) => (
          <InterventionView key={`a${k}`} iv={iv} />
        ))}
      <div class="kv">
        {(s.output.content || shownCalls.length > 0 || s.calls.length === 0) && (
          <>
            <div class="lbl">policy</div>
            <TurnView t={{ ...s.output, tool_calls: shownCalls }} />
          </>
        )}
      </div>
      {ivs
        .filter((iv) => iv.effect === "block" || iv.effect === "rewrite")
        .map((iv, k) => (
          <InterventionView key={`b${k}`} iv={iv} />
        ))}
      {s.calls.map((c, k) => (
        <div key={k} class="kv call">
          <div class="lbl">action</div>
          <div>
            <code class="action">{callText(c.executed ?? c.proposed)}</code>{" "}
            {c.executed === null ? <span class="tag fail">blocked</span> : !asProposed(c) ? <span class="tag warn">rewritten</span> : null}
            <span class="muted small"> {ms(c.duration_ms)}</span>
          </div>
          <div class="lbl">observation</div>
          <Clip text={c.observation} max={800} />
        </div>
      ))}
    </article>
  );
}

/**
 * The timeline of one episode. `current` is the step the keyboard is on (or −1); the list grows
 * in batches as it scrolls, and jumps ahead when the current step is beyond what is rendered.
 */
export function Timeline({ ep, current = -1, onCurrent, compact }: { ep: StoredEpisode; current?: number; onCurrent?: (i: number) => void; compact?: boolean }) {
  const ctx = useMemo(() => new Contexts(ep.steps), [ep]);
  const [shown, setShown] = useState(BATCH);
  const [open, setOpen] = useState<Set<number>>(new Set());
  const sentinel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    setShown(BATCH);
    setOpen(new Set());
  }, [ep]);
  useEffect(() => {
    if (current >= shown) setShown(Math.min(ep.steps.length, current + BATCH));
    if (current >= 0) document.querySelector(`.timeline.active [data-step="${current}"]`)?.scrollIntoView({ block: "nearest" });
  }, [current]);
  useEffect(() => {
    const el = sentinel.current;
    if (!el) return;
    const io = new IntersectionObserver((es) => {
      if (es.some((e) => e.isIntersecting)) setShown((n) => Math.min(ep.steps.length, n + BATCH));
    });
    io.observe(el);
    return () => io.disconnect();
  }, [ep, shown]);
  // `c` opens or closes the current step's context (one listener for the timeline's life).
  const currentRef = useRef(current);
  currentRef.current = current;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === "c" && currentRef.current >= 0) toggle(currentRef.current);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  function toggle(i: number) {
    setOpen((o) => {
      const n = new Set(o);
      if (n.has(i)) n.delete(i);
      else n.add(i);
      return n;
    });
  }
  const steps = ep.steps.slice(0, shown);
  return (
    <div class={`timeline ${compact ? "compact" : ""} ${current >= 0 ? "active" : ""}`}>
      {ep.steps.length === 0 && <div class="muted">No steps.</div>}
      {steps.map((s, i) => (
        <StepView key={i} s={s} i={i} ctx={ctx} current={i === current} open={open.has(i)} onToggle={() => toggle(i)} onSelect={() => onCurrent?.(i)} />
      ))}
      {shown < ep.steps.length && (
        <div ref={sentinel} class="more-steps muted">
          {ep.steps.length - shown} more steps…
        </div>
      )}
      <EpisodeEnd ep={ep} />
    </div>
  );
}

/** How an episode ended: its score with the scorer's details, or its infrastructure error. */
function EpisodeEnd({ ep }: { ep: StoredEpisode }) {
  return (
    <>
      {ep.score && (
        <div class={`final-score ${ep.score.success ? "ok" : "fail"}`}>
          {ep.score.success ? "✓ success" : "✗ failure"} · reward {ep.score.reward.toFixed(2)}
          <AttemptDiff details={ep.score.details} />
          <ScoreDetails details={ep.score.details} />
        </div>
      )}
      {ep.infra_error && <div class="error-text">infrastructure error: {ep.infra_error}</div>}
    </>
  );
}

/** One side of an aligned pair: its column's key, heading and episode (null while it loads). */
export interface Side {
  col: string;
  head: ComponentChildren;
  ep: StoredEpisode | null;
  /** Shown when there is no episode and none is coming. */
  none?: ComponentChildren;
}

/**
 * Two episodes side by side, aligned by step: row i holds step i of each (or a gap where one
 * ended), so both read down together in one scroll. The first step whose actions differ is
 * marked on both sides, and the steps after it as diverged. Rows are rendered in batches as
 * they scroll into view, so two 500-step episodes open at once.
 */
export function AlignedTimelines({ left, right, loading }: { left: Side; right: Side; loading: ComponentChildren }) {
  const rows = Math.max(left.ep?.steps.length ?? 0, right.ep?.steps.length ?? 0);
  const diverge = useMemo(() => (left.ep && right.ep ? firstDivergence(left.ep.steps, right.ep.steps) : -1), [left.ep, right.ep]);
  const [shown, setShown] = useState(BATCH);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const box = useRef<HTMLDivElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    setShown(BATCH);
    setOpen(new Set());
  }, [left.ep, right.ep]);
  useEffect(() => {
    const el = sentinel.current;
    if (!el) return;
    const io = new IntersectionObserver(
      (es) => {
        if (es.some((e) => e.isIntersecting)) setShown((n) => Math.min(rows, n + BATCH));
      },
      { root: box.current, rootMargin: "400px" },
    );
    io.observe(el);
    return () => io.disconnect();
  }, [rows, shown]);
  const jump = (i: number) => {
    if (i >= shown) setShown(Math.min(rows, i + BATCH));
    requestAnimationFrame(() => box.current?.querySelector(`[data-row="${i}"]`)?.scrollIntoView({ block: "start" }));
  };
  const both = left.ep && right.ep;
  const upTo = Math.min(shown, rows);
  return (
    <div class="aligned-pair">
      {both && (
        <div class={`divergence-note ${diverge >= 0 ? "" : "same"}`} id="divergence-note">
          {diverge < 0 ? (
            <>Base and sibling take the same action at every step.</>
          ) : (
            <>
              {diverge > 1 ? <>Same actions for steps 0–{diverge - 1}</> : diverge === 1 ? <>Same action at step 0</> : <>Different actions from the start</>}; they diverge at{" "}
              <button class="link" onClick={() => jump(diverge)} id="jump-divergence">
                step {diverge}
              </button>
              <span class="muted small"> (marked, with every row after it)</span>
            </>
          )}
        </div>
      )}
      <div class="aligned" ref={box}>
        {[left, right].map((side, c) => (
          <div class="col" data-col={side.col} key={side.col}>
            <h3 style={{ gridColumn: c + 1, gridRow: 1 }}>{side.head}</h3>
            {!side.ep && (
              <div class={`aligned-cell c${c}`} style={{ gridColumn: c + 1, gridRow: 2 }}>
                {side.none ?? loading}
              </div>
            )}
            {side.ep && side.ep.steps.length === 0 && (
              <div class={`aligned-cell c${c} muted`} style={{ gridColumn: c + 1, gridRow: 2 }}>
                No steps.
              </div>
            )}
            {side.ep && <AlignedSide ep={side.ep} col={c} upTo={upTo} diverge={both ? diverge : -1} open={open} setOpen={setOpen} />}
            {side.ep && upTo >= rows && (
              <div class={`aligned-cell c${c}`} style={{ gridColumn: c + 1, gridRow: rows + 2 }}>
                <EpisodeEnd ep={side.ep} />
              </div>
            )}
          </div>
        ))}
        {upTo < rows && (
          <div ref={sentinel} class="more-steps muted" style={{ gridColumn: "1 / span 2", gridRow: upTo + 2 }}>
            {rows - upTo} more steps…
          </div>
        )}
      </div>
    </div>
  );
}

function AlignedSide(props: { ep: StoredEpisode; col: number; upTo: number; diverge: number; open: Set<string>; setOpen: (f: (o: Set<string>) => Set<string>) => void }) {
  const { ep, col, upTo, diverge, open, setOpen } = props;
  const ctx = useMemo(() => new Contexts(ep.steps), [ep]);
  const cells: ComponentChildren[] = [];
  for (let i = 0; i < upTo; i++) {
    const mark: Divergence | undefined = diverge < 0 || i < diverge ? undefined : i === diverge ? "first" : "after";
    const key = `${col}:${i}`;
    cells.push(
      <div key={i} class={`aligned-cell c${col} ${mark ? `row-${mark}` : ""}`} data-row={i} style={{ gridColumn: col + 1, gridRow: i + 2 }}>
        {i < ep.steps.length ? (
          <StepView
            s={ep.steps[i]}
            i={i}
            ctx={ctx}
            current={false}
            open={open.has(key)}
            diverge={mark}
            onToggle={() =>
              setOpen((o) => {
                const n = new Set(o);
                if (n.has(key)) n.delete(key);
                else n.add(key);
                return n;
              })
            }
            onSelect={() => {}}
          />
        ) : (
          <div class={`step step-missing ${mark === "first" ? "diverge-first" : mark ? "diverged" : ""}`} data-diverge={mark}>
            no step {i}: this episode ended after {ep.steps.length} step{ep.steps.length === 1 ? "" : "s"}
          </div>
        )}
      </div>,
    );
  }
  return <>{cells}</>;
}

/** The attempt's change to the repository (suites whose scorer reports a `diff`, e.g. SWE-Gym),
 * as a unified diff with added and removed lines marked. */
function AttemptDiff({ details }: { details: unknown }) {
  const diff = details && typeof details === "object" ? (details as Record<string, unknown>).diff : undefined;
  if (typeof diff !== "string") return null;
  if (diff.trim() === "") return <div class="attempt-diff muted small">The attempt left the repository unchanged (empty diff).</div>;
  const lines = diff.split("\n");
  return (
    <div class="attempt-diff">
      <div class="small muted">diff of the attempt against the base commit · {lines.filter((l) => l.startsWith("+") && !l.startsWith("+++")).length} added, {lines.filter((l) => l.startsWith("-") && !l.startsWith("---")).length} removed</div>
      <pre class="code diff">
        {lines.map((l, i) => (
          <div key={i} class={l.startsWith("+++") || l.startsWith("---") || l.startsWith("diff ") ? "d-file" : l.startsWith("@@") ? "d-hunk" : l.startsWith("+") ? "d-add" : l.startsWith("-") ? "d-del" : ""}>
            {l || " "}
          </div>
        ))}
      </pre>
    </div>
  );
}

/** The scorer's details: its short fields (answer, ground truth, type, ...) at a glance, all of it on demand. */
function ScoreDetails({ details }: { details: unknown }) {
  const short =
    details && typeof details === "object" && !Array.isArray(details)
      ? Object.entries(details as Record<string, unknown>)
          .map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)] as const)
          .filter(([k, v]) => v.length <= 160 && k !== "diff")
          .slice(0, 8)
      : [];
  return (
    <div class="score-details">
      {short.length > 0 && (
        <table class="kvtable">
          <tbody>
            {short.map(([k, v]) => (
              <tr key={k}>
                <th>{k}</th>
                <td>
                  <code>{v}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <details>
        <summary>all score details</summary>
        <pre class="code">{JSON.stringify(details, null, 2)}</pre>
      </details>
    </div>
  );
}

/** A distilled training example: the base-harness context (collapsed but for its tail) and the target. */
export function ExampleView({ ex, n }: { ex: TrainExample & { producible?: boolean }; n: number }) {
  const [open, setOpen] = useState(false);
  const msgs = ex.context.messages;
  const tail = open ? msgs : msgs.slice(-2);
  return (
    <article class="step example">
      <header class="step-head">
        <b>example {n}</b>
        <span class="spacer" />
        <span class="muted small">weight {ex.weight}</span>
      </header>
      <button class="link ctx-toggle" onClick={() => setOpen(!open)}>
        {open ? "▾" : "▸"} base context: {msgs.length} messages {open || msgs.length <= 2 ? "" : "(last 2 shown)"}
      </button>
      <div class="ctx-messages">
        {tail.map((m, k) => (
          <MessageView key={k} m={m} />
        ))}
      </div>
      {ex.producible === false ? (
        <>
          <div class="lbl">target (skipped in training)</div>
          <p class="muted small skipped-note">
            The built-in policy cannot write this reply from the base context: it relies on something only the sibling showed. Training skips it.
          </p>
        </>
      ) : (
        <div class="lbl">target (trained on)</div>
      )}
      <TurnView t={ex.target} />
    </article>
  );
}
