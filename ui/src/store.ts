// Small shared state: the error banner, the current route, and live progress of runs.

import { useEffect, useState } from "preact/hooks";
import { call, onEvent, ApiError } from "./client";
import type { EpisodeCount, Job, LiveEvaluation, TransferCurve, Unit, WorkbenchEvent } from "./types";

type Sub = () => void;

export class Store<T> {
  private subs = new Set<Sub>();
  constructor(private value: T) {}
  get(): T {
    return this.value;
  }
  set(v: T) {
    this.value = v;
    for (const s of this.subs) s();
  }
  update(f: (v: T) => T) {
    this.set(f(this.value));
  }
  subscribe(s: Sub): () => void {
    this.subs.add(s);
    return () => this.subs.delete(s);
  }
}

export function useStore<T>(s: Store<T>): T {
  const [, force] = useState(0);
  useEffect(() => s.subscribe(() => force((n) => n + 1)), [s]);
  return s.get();
}

// ---- errors -------------------------------------------------------------------------------

export interface Banner {
  id: number;
  text: string;
  command: string | null;
}

export const banners = new Store<Banner[]>([]);
let bannerSeq = 0;

/** Show an error from the server (its own `error` text) or from the UI. */
export function showError(e: unknown) {
  const text = e instanceof Error ? e.message : String(e);
  const command = e instanceof ApiError ? e.command : null;
  banners.update((b) => [...b.filter((x) => x.text !== text), { id: ++bannerSeq, text, command }].slice(-4));
}

export function dismissBanner(id: number) {
  banners.update((b) => b.filter((x) => x.id !== id));
}

// ---- routing ------------------------------------------------------------------------------

export type View = "workspace" | "suites" | "harnesses" | "experiments" | "results" | "inspector";

export const VIEWS: { view: View; label: string; key: string }[] = [
  { view: "workspace", label: "Workspace", key: "1" },
  { view: "suites", label: "Suites", key: "2" },
  { view: "harnesses", label: "Harnesses", key: "3" },
  { view: "experiments", label: "Experiments", key: "4" },
  { view: "results", label: "Results", key: "5" },
  { view: "inspector", label: "Trajectories", key: "6" },
];

export interface Route {
  view: View;
  params: URLSearchParams;
}

function parseHash(): Route {
  const h = window.location.hash.replace(/^#\/?/, "");
  const [path, query] = h.split("?", 2);
  const view = (VIEWS.find((v) => v.view === path)?.view ?? "workspace") as View;
  return { view, params: new URLSearchParams(query ?? "") };
}

export const route = new Store<Route>(parseHash());
/** Each view's last address, so going back to a view keeps its filters and selection. */
const lastQuery = new Map<View, string>();
function remember(r: Route) {
  lastQuery.set(r.view, r.params.toString());
}
remember(route.get());
window.addEventListener("hashchange", () => {
  const r = parseHash();
  remember(r);
  route.set(r);
});

/** The address of a view as it was last seen. */
export function viewHref(view: View): string {
  const q = lastQuery.get(view);
  return `#/${view}${q ? "?" + q : ""}`;
}

/** Write `params` into the current view's address without navigating (the view keeps its
 * state), so the address bar always holds a link to what is on screen; `null` removes one. */
export function replaceParams(params: Record<string, string | number | null>) {
  const r = parseHash();
  for (const [k, v] of Object.entries(params)) {
    if (v === null || v === "") r.params.delete(k);
    else r.params.set(k, String(v));
  }
  const s = r.params.toString();
  const hash = `#/${r.view}${s ? "?" + s : ""}`;
  if (hash !== window.location.hash) history.replaceState(history.state, "", hash);
  remember(r);
}

export function navigate(view: View, params: Record<string, string | number | undefined | null> = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  window.location.hash = `#/${view}${s ? "?" + s : ""}`;
}

// ---- runs and progress --------------------------------------------------------------------

export interface RunProgress {
  run_id: number;
  label: string;
  status: string;
  done: number;
  total: number;
  success_rate: number | null;
  eta_s: number | null;
  error: string | null;
  name: string;
  /** Per (suite, arm, seed): the newest unit reported, with its phase. */
  units: Map<string, Unit>;
  messages: string[];
  /** The run's episodes against its plan (from phase events), once counted. */
  episodes: EpisodeCount | null;
  /** The newest phase of any job, in words. */
  now: string | null;
  /** Evaluations recorded, by (suite, arm, seed, split, iteration). */
  evals: Map<string, LiveEvaluation>;
  /** The transfer curves of those evaluations, as `jobs` computes them. */
  curves: TransferCurve[];
  /** Who runs it when this workbench does not (its progress is then read from the store). */
  elsewhere: string | null;
}

export const runs = new Store<Map<number, RunProgress>>(new Map());
/** Listeners told when a run finishes (e.g. the demo page moving to its results). */
export const finished = new Store<{ run_id: number; status: string } | null>(null);

function unitKey(u: { suite: string; arm: string; seed: number }) {
  return `${u.suite}\u0000${u.arm}\u0000${u.seed}`;
}

function evalKey(p: LiveEvaluation) {
  return `${p.suite}\u0000${p.arm}\u0000${p.seed}\u0000${p.split}\u0000${p.iteration}`;
}

function blank(run_id: number): RunProgress {
  return {
    run_id,
    label: "",
    status: "running",
    done: 0,
    total: 0,
    success_rate: null,
    eta_s: null,
    error: null,
    name: `run ${run_id}`,
    units: new Map(),
    messages: [],
    episodes: null,
    now: null,
    evals: new Map(),
    curves: [],
    elsewhere: null,
  };
}

/** Where a run stands: in episodes against its plan once they are counted (the bar moves with
 * every few episodes), else in (arm, seed) iterations. A finished run's bar is full. */
export function runBar(r: RunProgress): { done: number; total: number; text: string } {
  const n = (x: number) => x.toLocaleString("en");
  const e = r.episodes;
  if (!e) return { done: r.done, total: r.total, text: `${r.done}/${r.total || "?"}` };
  if (r.status === "finished") return { done: e.done, total: e.done, text: `${n(e.done)} episodes` };
  const planned = e.expected != null ? `~${n(e.expected)}` : e.min === e.max ? n(e.max) : `${n(e.min)}–${n(e.max)}`;
  return { done: e.done, total: e.expected ?? e.max, text: `${n(e.done)} / ${planned} episodes` };
}

/** A unit's numbers from a progress event or `jobs`, keeping the phase it already has when
 * they carry none. */
function mergeUnit(old: Unit | undefined, u: Unit): Unit {
  return old ? { ...old, ...Object.fromEntries(Object.entries(u).filter(([, v]) => v !== undefined)) } : u;
}

function apply(m: Map<number, RunProgress>, e: WorkbenchEvent) {
  {
    const next = m;
    const r = { ...(next.get(e.run_id) ?? blank(e.run_id)) };
    switch (e.event) {
      case "run_started":
        r.total = e.total;
        r.label = e.label;
        r.status = "running";
        if (r.name === `run ${e.run_id}`) r.name = e.label;
        break;
      case "progress":
        r.label = e.label;
        r.done = e.done;
        r.total = e.total;
        r.success_rate = e.success_rate;
        r.eta_s = e.eta_s;
        r.status = "running";
        if (e.unit) {
          r.units = new Map(r.units);
          r.units.set(unitKey(e.unit), mergeUnit(r.units.get(unitKey(e.unit)), e.unit));
        }
        break;
      case "phase": {
        // counts never go backwards (events and `jobs` may cross)
        if (!r.episodes || e.episodes.done >= r.episodes.done) {
          r.episodes = e.episodes;
          r.eta_s = e.eta_s;
        }
        r.now = `${e.arm} seed ${e.seed}: ${e.label}`;
        r.status = "running";
        r.units = new Map(r.units);
        const k = unitKey(e);
        const old = r.units.get(k) ?? { suite: e.suite, arm: e.arm, seed: e.seed, iteration: 0, iterations: e.iterations, rollouts: 0, success: null };
        r.units.set(k, { ...old, phase: e.phase, label: e.label, step: e.step, steps: e.steps });
        break;
      }
      case "evaluation": {
        const p: LiveEvaluation = { suite: e.suite, arm: e.arm, seed: e.seed, iteration: e.iteration, split: e.split, success: e.success, tasks: e.tasks };
        r.evals = new Map(r.evals);
        r.evals.set(evalKey(p), p);
        // the curves are computed by the server: ask for them again
        refreshJobsSoon();
        break;
      }
      case "message":
        r.messages = [...r.messages, e.text].slice(-20);
        break;
      case "run_finished":
        r.status = e.status;
        r.eta_s = null;
        break;
    }
    next.set(e.run_id, r);
  }
}

// Events come many a second while an experiment runs: they are applied together, at most ten
// times a second, so the views re-render once for a batch.
let pending: WorkbenchEvent[] = [];
let flushTimer: ReturnType<typeof setTimeout> | null = null;

function flushEvents() {
  flushTimer = null;
  const batch = pending;
  pending = [];
  runs.update((m) => {
    const next = new Map(m);
    for (const e of batch) apply(next, e);
    return next;
  });
  for (const e of batch) {
    if (e.event === "run_finished") {
      finished.set({ run_id: e.run_id, status: e.status });
      void refreshJobs();
    }
  }
}

function applyEvent(e: WorkbenchEvent) {
  pending.push(e);
  if (flushTimer === null) flushTimer = setTimeout(flushEvents, 100);
}

let jobsTimer: ReturnType<typeof setTimeout> | null = null;

/** `refreshJobs` once after a burst of events (evaluations of several jobs come together). */
function refreshJobsSoon() {
  if (jobsTimer !== null) return;
  jobsTimer = setTimeout(() => {
    jobsTimer = null;
    void refreshJobs();
  }, 300);
}

/** Bring the run table up to date from `jobs` (also covers runs started before this page opened). */
export async function refreshJobs(): Promise<void> {
  let jobs: Job[];
  try {
    jobs = await call("jobs");
  } catch (e) {
    showError(e);
    return;
  }
  runs.update((m) => {
    const next = new Map(m);
    for (const j of jobs) {
      const r = { ...(next.get(j.run_id) ?? blank(j.run_id)) };
      r.name = j.name;
      r.status = j.status;
      r.error = j.error;
      // Events may be ahead of the poll; never move progress backwards while running.
      if (j.status !== "running" || j.done >= r.done) {
        r.done = j.done;
        r.total = j.total;
        r.eta_s = j.eta_s;
        r.success_rate = j.success_rate;
        const units = new Map<string, Unit>();
        for (const u of j.units) units.set(unitKey(u), mergeUnit(r.units.get(unitKey(u)), u));
        r.units = units;
      }
      if (j.episodes && (j.status !== "running" || !r.episodes || j.episodes.done >= r.episodes.done)) {
        r.episodes = j.episodes;
        r.eta_s = j.eta_s;
      }
      if (j.now) r.now = j.now;
      if (j.evaluations.length) {
        r.evals = new Map(r.evals);
        for (const p of j.evaluations) r.evals.set(evalKey(p), p);
        r.curves = j.curves;
      }
      if (j.messages?.length) r.messages = j.messages.slice(-20);
      r.elsewhere = j.elsewhere;
      next.set(j.run_id, r);
    }
    // a run another process ran has ended once the store no longer lists it as running: it
    // leaves the live cards for the run list
    for (const [id, r] of next) if (r.elsewhere && !jobs.some((j) => j.run_id === id)) next.delete(id);
    return next;
  });
}

let watching = false;
/** Start following events and polling `jobs` while something runs. */
export function watchRuns() {
  if (watching) return;
  watching = true;
  onEvent(applyEvent);
  void refreshJobs();
  // every 3 s while something runs; else every 6 s, to notice a run started elsewhere (the
  // command line, another app, a cluster)
  let tick = 0;
  setInterval(() => {
    tick += 1;
    const active = [...runs.get().values()].some((r) => r.status === "running");
    if (active || tick % 2 === 0) void refreshJobs();
  }, 3000);
}

/** Load data for a component; errors go to the banner. Re-runs when `deps` change. */
export function useLoad<T>(f: () => Promise<T>, deps: unknown[]): { data: T | undefined; loading: boolean; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    f().then(
      (d) => {
        if (live) {
          setData(d);
          setLoading(false);
        }
      },
      (e) => {
        if (live) {
          setLoading(false);
          showError(e);
        }
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, n]);
  return { data, loading, reload: () => setN((x) => x + 1) };
}
