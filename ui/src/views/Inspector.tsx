// Trajectories: episodes of an experiment filtered on the server and paged into a virtualised
// list; one episode as a step timeline; a rescued task as base failure, sibling rescue and the
// distilled base-context example side by side.

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { call } from "../client";
import { navigate, replaceParams, showError, useLoad } from "../store";
import type { EpisodeRecord, EpisodeRow, EpisodesArgs, Rescue, RouteDecision } from "../types";
import { ArmName, Empty, Loading, ms, Outcome, VirtualList } from "../ui";
import { AlignedTimelines, ExampleView, Timeline } from "./Timeline";

const PAGE = 200;
const ROW_H = 26;
const FILTERS = ["arm", "suite", "family", "harness", "phase", "split", "success", "rescued"] as const;
type FilterKey = (typeof FILTERS)[number];

const episodeCache = new Map<number, Promise<EpisodeRecord>>();
function loadEpisode(id: number): Promise<EpisodeRecord> {
  let p = episodeCache.get(id);
  if (!p) {
    p = call("episode", { id });
    p.catch(() => episodeCache.delete(id));
    episodeCache.set(id, p);
    if (episodeCache.size > 60) episodeCache.delete(episodeCache.keys().next().value!);
  }
  return p;
}

const rescueCache = new Map<number, Promise<Rescue>>();
/** A rescue's three sides, fetched once; with its base failure and sibling episodes asked for
 * as soon as it is known, so the three columns fill together. */
function loadRescue(episodeId: number): Promise<Rescue> {
  let p = rescueCache.get(episodeId);
  if (!p) {
    p = call("rescue", { episode_id: episodeId });
    p.then(
      (d) => {
        if (d.base_failures.length) void loadEpisode(d.base_failures[0]).catch(() => {});
        if (typeof d.rescue === "number") void loadEpisode(d.rescue).catch(() => {});
      },
      () => rescueCache.delete(episodeId),
    );
    rescueCache.set(episodeId, p);
    if (rescueCache.size > 60) rescueCache.delete(rescueCache.keys().next().value!);
  }
  return p;
}

function useEpisode(id: number | null) {
  const [rec, setRec] = useState<EpisodeRecord | null>(null);
  useEffect(() => {
    let live = true;
    setRec(null);
    if (id != null) loadEpisode(id).then((r) => live && setRec(r), (e) => live && showError(e));
    return () => {
      live = false;
    };
  }, [id]);
  return rec;
}

/** Sibling rollouts, and failed base tries that may have been rescued (the server says which). */
function rescuable(r: EpisodeRow): boolean {
  return r.rescued || r.phase === "rescue" || (r.phase === "train" && !r.success);
}

function typing(e: KeyboardEvent) {
  const t = e.target as HTMLElement;
  return t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT";
}

export function Inspector({ params }: { params: URLSearchParams }) {
  const exps = useLoad(() => call("experiments"), []);
  const runParam = Number(params.get("run") ?? NaN);
  const runId = Number.isInteger(runParam) ? runParam : exps.data?.find((e) => e.status === "finished")?.id ?? exps.data?.[0]?.id ?? null;
  const filters: Record<FilterKey, string> = Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? ""])) as Record<FilterKey, string>;
  const text = params.get("text") ?? "";
  const setParam = (p: Record<string, string | number | undefined>) => navigate("inspector", { run: runId ?? undefined, ...filters, text, ...p });

  const exp = useLoad(() => (runId != null ? call("experiment", { id: runId }) : Promise.resolve(null)), [runId]);
  const suites = useLoad(() => call("suites"), []);
  const suiteNames = exp.data?.config?.suites ?? suites.data?.map((s) => s.name) ?? [];
  const harnessSuite = filters.suite || suiteNames[0] || "";
  const harnesses = useLoad(() => (harnessSuite ? call("harnesses", { suite: harnessSuite }) : Promise.resolve([])), [harnessSuite]);
  const families = (suites.data ?? []).filter((s) => suiteNames.includes(s.name) && (!filters.suite || s.name === filters.suite)).flatMap((s) => s.families.map((f) => f.family));

  // ---- the paged list ----
  // the list's filters (fetchPage asks only once the run is known)
  const query = useMemo(() => {
    const q: Omit<EpisodesArgs, "run_id"> = {};
    for (const k of FILTERS) {
      const v = filters[k];
      if (!v) continue;
      if (k === "success" || k === "rescued") q[k] = v === "true";
      else q[k] = v;
    }
    if (text) q.text = text;
    return q;
  }, [runId, text, ...FILTERS.map((k) => filters[k])]);
  const qkey = JSON.stringify({ run_id: runId, ...query });
  const [total, setTotal] = useState<number | null>(null);
  const pages = useRef(new Map<number, EpisodeRow[]>());
  const pending = useRef(new Set<number>());
  const [, setTick] = useState(0);
  const [sel, setSel] = useState(0);
  const [selectedId, setSelectedId] = useState<number | null>(params.get("ep") ? Number(params.get("ep")) : null);

  function fetchPage(p: number, key: string) {
    if (pages.current.has(p) || pending.current.has(p) || runId == null) return;
    pending.current.add(p);
    call("episodes", { run_id: runId, ...query, limit: PAGE, offset: p * PAGE }).then(
      (r) => {
        if (key !== qkeyRef.current) return;
        pending.current.delete(p);
        pages.current.set(p, r.rows);
        setTotal(r.total);
        setTick((t) => t + 1);
      },
      (e) => {
        pending.current.delete(p);
        showError(e);
      },
    );
  }
  const qkeyRef = useRef(qkey);
  const rangeTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => {
    qkeyRef.current = qkey;
    pages.current = new Map();
    pending.current = new Set();
    setTotal(null);
    setSel(0);
    fetchPage(0, qkey);
  }, [qkey]);

  const rowAt = (i: number): EpisodeRow | undefined => pages.current.get(Math.floor(i / PAGE))?.[i % PAGE];
  const selRow = rowAt(sel);
  // The list selection drives the episode shown (a deep link's episode is kept until the list moves).
  const deepLink = useRef(selectedId != null);
  useEffect(() => {
    if (deepLink.current) return;
    if (selRow) setSelectedId(selRow.id);
  }, [selRow?.id]);

  // ---- focus: the list, or the steps of the open episode ----
  const [zone, setZone] = useState<"list" | "steps">("list");
  const [step, setStep] = useState(-1);
  const [mode, setMode] = useState<"timeline" | "rescue">(params.get("mode") === "rescue" ? "rescue" : "timeline");
  const rec = useEpisode(selectedId);
  // In rescue mode the rescue and its episodes are fetched beside the selected episode, not after it.
  useEffect(() => {
    if (mode === "rescue" && selectedId != null) loadRescue(selectedId).catch(() => {});
  }, [mode, selectedId]);
  useEffect(() => {
    setStep(zone === "steps" ? 0 : -1);
  }, [selectedId]);

  // The address bar holds a link to the episode and view on screen.
  useEffect(() => {
    replaceParams({ ep: selectedId, mode: mode === "rescue" ? "rescue" : null });
  }, [selectedId, mode]);

  const stateRef = useRef({ sel, total, zone, step, rec, mode });
  stateRef.current = { sel, total, zone, step, rec, mode };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      const s = stateRef.current;
      const down = e.key === "j" || e.key === "ArrowDown";
      const up = e.key === "k" || e.key === "ArrowUp";
      if (down || up) {
        e.preventDefault();
        if (s.zone === "list") {
          deepLink.current = false;
          const n = s.total ?? 0;
          setSel(Math.max(0, Math.min(n - 1, s.sel + (down ? 1 : -1))));
        } else if (s.rec) {
          const n = s.rec.episode.steps.length;
          setStep(Math.max(0, Math.min(n - 1, s.step + (down ? 1 : -1))));
        }
      } else if (e.key === "ArrowRight" || e.key === "l" || e.key === "Enter") {
        if (s.rec && s.mode === "timeline") {
          e.preventDefault();
          setZone("steps");
          setStep((x) => (x < 0 ? 0 : x));
        }
      } else if (e.key === "Escape" && s.mode === "rescue") {
        // out of the rescue view, back to the list beside the episode
        e.preventDefault();
        setMode("timeline");
      } else if (e.key === "ArrowLeft" || e.key === "h" || (e.key === "Escape" && s.zone === "steps")) {
        e.preventDefault();
        setZone("list");
        setStep(-1);
      } else if (e.key === "Home" || e.key === "End" || e.key === "g" || e.key === "G") {
        // First or last episode / step.
        e.preventDefault();
        const last = e.key === "End" || e.key === "G";
        if (s.zone === "list") {
          deepLink.current = false;
          setSel(last ? Math.max(0, (s.total ?? 1) - 1) : 0);
        } else if (s.rec) setStep(last ? s.rec.episode.steps.length - 1 : 0);
      } else if (e.key === "r") {
        setMode((m) => (m === "rescue" ? "timeline" : "rescue"));
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const [textDraft, setTextDraft] = useState(text);
  useEffect(() => setTextDraft(text), [text]);
  useEffect(() => {
    if (textDraft === text) return;
    const t = setTimeout(() => setParam({ text: textDraft }), 300);
    return () => clearTimeout(t);
  }, [textDraft]);

  const select = (name: FilterKey, options: string[], label?: string) => (
    <label class="field inline" key={name}>
      <span>{label ?? name}</span>
      <select name={name} value={filters[name]} onChange={(e) => setParam({ [name]: (e.target as HTMLSelectElement).value })}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );

  return (
    <div class="view inspector">
      <header class="view-head filters">
        <h1>Trajectories</h1>
        <label class="field inline">
          <span>experiment</span>
          <select name="run" value={runId ?? ""} onChange={(e) => navigate("inspector", { run: (e.target as HTMLSelectElement).value })}>
            {exps.data?.map((x) => (
              <option key={x.id} value={x.id}>
                #{x.id} {x.name}
              </option>
            ))}
          </select>
        </label>
        {select("arm", exp.data?.config?.arms ?? [])}
        {select("suite", suiteNames)}
        {select("family", families)}
        {select("harness", harnesses.data?.map((h) => h.name) ?? [])}
        {select("phase", ["train", "rescue", "resample", "eval", "probe", "rank1", "demo"])}
        {select("split", ["train", "heldout"])}
        <label class="field inline">
          <span>outcome</span>
          <select name="success" value={filters.success} onChange={(e) => setParam({ success: (e.target as HTMLSelectElement).value })}>
            <option value="">any</option>
            <option value="true">pass</option>
            <option value="false">fail</option>
          </select>
        </label>
        <label class="field inline">
          <span>rescued</span>
          <select name="rescued" value={filters.rescued} onChange={(e) => setParam({ rescued: (e.target as HTMLSelectElement).value })}>
            <option value="">any</option>
            <option value="true">rescue succeeded</option>
            <option value="false">rescue failed</option>
          </select>
        </label>
        <input data-search class="search" name="text" placeholder="Search text  ( / )" value={textDraft} onInput={(e) => setTextDraft((e.target as HTMLInputElement).value)} />
        {(FILTERS.some((k) => filters[k]) || text) && (
          <button class="link" onClick={() => navigate("inspector", { run: runId ?? undefined })}>
            clear
          </button>
        )}
      </header>
      {runId == null && exps.data && <Empty>No experiments yet.</Empty>}
      {runId != null && (
        <div class={`inspector-body ${mode === "rescue" && rec && rescuable(rec.row) ? "rescue-mode" : ""}`}>
          <section class={`pane episodes ${zone === "list" ? "focused" : ""}`}>
            <div class="list-head">
              <span id="episode-count">{total === null ? "…" : `${total.toLocaleString()} episodes`}</span>
              <span class="muted small">j/k move · → steps · r rescue</span>
            </div>
            <div class="ep-row ep-header">
              <span class="num">id</span>
              <span />
              <span>task</span>
              <span>arm</span>
              <span>phase</span>
              <span>harness</span>
              <span class="num" title="steps (⚑ interventions)">steps</span>
            </div>
            <VirtualListRows
              key={qkey}
              count={total ?? 0}
              sel={sel}
              rowAt={rowAt}
              onRange={(a, b) => {
                // While the scrollbar is dragged, only the pages it settles on are fetched.
                clearTimeout(rangeTimer.current);
                rangeTimer.current = setTimeout(() => {
                  for (let p = Math.floor(a / PAGE); p <= Math.floor(b / PAGE); p++) fetchPage(p, qkey);
                }, 60);
              }}
              onPick={(i) => {
                deepLink.current = false;
                setSel(i);
                setZone("list");
                const r = rowAt(i);
                if (r) setSelectedId(r.id);
              }}
            />
          </section>
          <section class={`pane episode ${zone === "steps" ? "focused" : ""}`}>
            {!rec && selectedId != null && <Loading />}
            {!rec && selectedId == null && <Empty>{total === 0 ? "No episode matches these filters." : "Pick an episode."}</Empty>}
            {rec && mode === "rescue" && rescuable(rec.row) && (
              <div class="rescue-nav small" id="rescue-nav">
                <button class="link" onClick={() => setMode("timeline")} title="Esc or r">
                  ← episode list
                </button>
                <span>
                  {deepLink.current || selRow?.id !== rec.row.id
                    ? `episode #${rec.row.id} · j/k move through the ${total?.toLocaleString() ?? "…"} listed`
                    : `episode ${(sel + 1).toLocaleString()} of ${total?.toLocaleString() ?? "…"}`}
                </span>
                <span class="muted">j/k move · Esc list</span>
              </div>
            )}
            {rec && <EpisodePane rec={rec} seeds={exp.data?.config?.seeds ?? null} mode={mode} setMode={setMode} step={zone === "steps" ? step : -1} onStep={(i) => (setZone("steps"), setStep(i))} />}
          </section>
        </div>
      )}
    </div>
  );
}


function VirtualListRows(props: { count: number; sel: number; rowAt: (i: number) => EpisodeRow | undefined; onRange: (a: number, b: number) => void; onPick: (i: number) => void }) {
  return (
    <VirtualList
      count={props.count}
      rowHeight={ROW_H}
      selected={props.sel}
      onRange={props.onRange}
      class="episode-list"
      row={(i) => {
        const r = props.rowAt(i);
        if (!r) return <div class="ep-row placeholder">…</div>;
        return (
          <button class={`ep-row ${i === props.sel ? "selected" : ""}`} onClick={() => props.onPick(i)} data-episode={r.id} title={`${r.task_id} · ${r.family} · ${r.harness}`}>
            <span class="num muted">{r.id}</span>
            <span class="outcome">
              {r.status === "infra_error" ? <span class="tag infra" title="infrastructure error">!</span> : r.success ? <span class="tag ok" title="pass">✓</span> : <span class="tag fail" title="fail">✗</span>}
              {r.rescued && (
                <span class="tag rescued" title="a successful sibling rescue">
                  R
                </span>
              )}
            </span>
            <span class="ellipsis task-cell">{r.task_id}</span>
            <span class="ellipsis">
              <ArmName arm={r.arm ?? "–"} />
            </span>
            <span class="muted" title={r.split === "heldout" ? "held-out family" : undefined}>
              {r.phase}
              {r.split === "heldout" ? " ·H" : ""}
            </span>
            <span class="ellipsis">{r.harness}</span>
            <span class="num">
              {r.n_steps}
              {r.n_interventions > 0 && <small class="ivn"> ⚑{r.n_interventions}</small>}
            </span>
          </button>
        );
      }}
    />
  );
}

/** "seed 3": the experiment's seed at a job's seed index (an index is what the store keeps). */
function seedLabel(seeds: number[] | null, index: number | null): string {
  if (index == null) return "seed –";
  const seed = seeds?.[index];
  return seed != null ? `seed ${seed}` : `seed #${index}`;
}

function EpisodePane({ rec, seeds, mode, setMode, step, onStep }: { rec: EpisodeRecord; seeds: number[] | null; mode: "timeline" | "rescue"; setMode: (m: "timeline" | "rescue") => void; step: number; onStep: (i: number) => void }) {
  const r = rec.row;
  const canRescue = rescuable(r);
  return (
    <div class="episode-view">
      <header class="ep-head">
        <h2>
          <Outcome success={r.success} status={r.status} /> {r.task_id} <span class="chip">{r.family}</span>
        </h2>
        <div class="ep-meta">
          <span>
            episode <b>{r.id}</b>
          </span>
          <ArmName arm={r.arm ?? "–"} />
          <span>
            harness <b>{r.harness}</b>
          </span>
          <span>
            {r.phase}
            {r.split ? ` · ${r.split}` : ""}
          </span>
          <span>
            {seedLabel(seeds, r.seed_index)} · it {r.iteration}
          </span>
          <span>reward {r.reward === null ? "not scored" : r.reward.toFixed(2)}</span>
          <span>{r.n_steps} steps</span>
          <span>{r.n_interventions} interventions</span>
          <span>
            {r.prompt_tokens}/{r.completion_tokens} tok
          </span>
          <span>{ms(r.duration_ms)}</span>
          <span class="muted">{r.status}</span>
        </div>
        <div class="tabs">
          <button class={mode === "timeline" ? "tab active" : "tab"} onClick={() => setMode("timeline")} id="timeline-tab">
            Timeline
          </button>
          <button class={mode === "rescue" ? "tab active" : "tab"} onClick={() => setMode("rescue")} disabled={!canRescue} title={canRescue ? "r" : "this task was not rescued"} id="rescue-tab">
            Rescue: base · sibling · distilled
          </button>
        </div>
      </header>
      {mode === "timeline" || !canRescue ? <Timeline ep={rec.episode} current={step} onCurrent={onStep} /> : <RescueView episodeId={r.id} seeds={seeds} />}
    </div>
  );
}

function RescueView({ episodeId, seeds }: { episodeId: number; seeds: number[] | null }) {
  const [rescue, setRescue] = useState<{ loading: boolean; data?: Rescue; error?: string }>({ loading: true });
  useEffect(() => {
    let live = true;
    setRescue({ loading: true });
    loadRescue(episodeId).then(
      (d) => live && setRescue({ loading: false, data: d }),
      (e) => live && setRescue({ loading: false, error: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      live = false;
    };
  }, [episodeId]);
  const [fail, setFail] = useState(0);
  const d = rescue.data;
  const baseId = d?.base_failures[fail] ?? null;
  const base = useEpisode(baseId);
  const sib = useEpisode(d?.rescue ?? null);
  if (rescue.loading) return <Loading />;
  if (!d) return <Empty>{rescue.error ?? "No rescue recorded for this episode."}</Empty>;
  return (
    <div class="rescue">
      <div class="muted small rescue-meta">
        task <b>{d.task_id}</b> · <ArmName arm={d.arm} /> · {seedLabel(seeds, d.seed_index)} · iteration {d.iteration} · rescued by <b>{d.sibling}</b> · distilled with <code>{d.distilled.mode}</code>
        {d.attempts && d.attempts.length > 0 && (
          <span class="attempts">
            {" "}
            · sibling tries:{" "}
            {d.attempts.map((a) => (
              <span key={a.id} class={`tag ${a.success ? "ok" : "fail"}`} title={`episode ${a.id}`}>
                {a.success ? "✓" : "✗"} {a.harness}
              </span>
            ))}
          </span>
        )}
      </div>
      {d.route && <RouteSummary route={d.route} />}
      <div class="three-cols rescue-cols">
        <AlignedTimelines
          loading={<Loading />}
          left={{
            col: "base",
            ep: base?.episode ?? null,
            none: d.base_failures.length ? undefined : <Empty>No base tries recorded.</Empty>,
            head: (
              <>
                Base failure
                {d.base_failures.length > 1 && (
                  <select value={fail} onChange={(e) => setFail(Number((e.target as HTMLSelectElement).value))} aria-label="base try">
                    {d.base_failures.map((id, i) => (
                      <option key={id} value={i}>
                        try {i + 1} of {d.base_failures.length} (episode {id})
                      </option>
                    ))}
                  </select>
                )}
              </>
            ),
          }}
          right={{
            col: "rescue",
            ep: sib?.episode ?? null,
            head: (
              <>
                Sibling rescue <span class="muted small">{d.sibling}</span>
              </>
            ),
          }}
        />
        <div class="col" data-col="distilled">
          <h3>
            Distilled base-context example <span class="muted small">{d.distilled.examples.length} examples</span>
          </h3>
          {d.distilled.examples.map((ex, i) => (
            <ExampleView key={i} ex={ex} n={i + 1} />
          ))}
          {d.distilled.examples.length === 0 && <Empty>No examples were distilled.</Empty>}
        </div>
      </div>
    </div>
  );
}

/** Why the task went to these siblings: its failure signature, each voter's ranking and the
 * Borda order, with the chosen siblings marked by whether they rescued. */
function RouteSummary({ route }: { route: RouteDecision }) {
  const outcome = new Map(route.rescued);
  return (
    <details class="route-summary" data-testid="route-summary">
      <summary>
        Routed as <code>{route.query.signature}</code> on <b>{route.query.family}</b>: chose{" "}
        {route.chosen.map((s) => (
          <span key={s} class={`tag ${outcome.get(s) ? "ok" : "fail"}`} title={outcome.get(s) ? "rescued the task" : "did not rescue"}>
            {outcome.get(s) ? "✓" : "✗"} {s}
          </span>
        ))}{" "}
        <span class="muted small">
          profiles of anchor {route.anchor}, policy v{route.policy_version}
        </span>
      </summary>
      <table class="route-table">
        <tbody>
          {route.rankings.map(([voter, order]) => (
            <tr key={voter}>
              <th>{voter}</th>
              <td>{order.join(" › ")}</td>
            </tr>
          ))}
          {(route.abstained ?? []).map(([voter, why]) => (
            <tr key={voter} class="muted">
              <th>{voter}</th>
              <td>abstained: {why}</td>
            </tr>
          ))}
          <tr class="aggregate">
            <th>Borda</th>
            <td>{route.aggregate.join(" › ")}</td>
          </tr>
        </tbody>
      </table>
      {route.query.summary && <pre class="route-failure">{route.query.summary}</pre>}
    </details>
  );
}
