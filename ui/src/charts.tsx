// Charts drawn in the page from numbers it already has (the report's charts are SVGs the server
// draws with plotters, src/chart/). The transfer curves: one panel per suite and split, one line
// per arm (mean over seeds) with its 95% t-interval over seeds shaded, in the styles the report
// gives each arm (src/chart/style.rs: the arm's Okabe–Ito colour, dash pattern and marker). The running
// experiment's card draws them as evaluations arrive; the Results view can use the same component
// from a report's `analysis.transfer`.

import type { ComponentChildren } from "preact";
import { ARM_ORDER, armColor } from "./ui";

/** One evaluation of one job: what the `evaluation` event and `jobs` carry. */
export interface EvalPoint {
  suite: string;
  arm: string;
  seed: number;
  iteration: number;
  split: string;
  success: number;
}

export interface CurvePoint {
  iteration: number;
  /** Mean over seeds of each seed's success. */
  mean: number;
  /** 95% t-interval over seeds, clipped to [0, 1]; the point itself with one seed. */
  ci95: [number, number];
  seeds: number;
}

export interface Curve {
  suite: string;
  arm: string;
  split: string;
  points: CurvePoint[];
}

/** The report charts' dash patterns (src/chart/style.rs `DASHES`), paired with the arm order. */
const DASHES: (string | undefined)[] = [undefined, "9 4", "2 3", "10 3 2 3", "15 4", "5 2 1 2 1 2", "1 4"];

export function armDash(arm: string): string | undefined {
  const i = ARM_ORDER.indexOf(arm);
  return DASHES[(i >= 0 ? i : ARM_ORDER.length) % DASHES.length];
}

/** The report charts' markers (src/chart/style.rs `MARKERS`), paired with the arm order. */
const MARKERS = ["circle", "square", "triangle", "diamond", "cross", "inverted-triangle", "plus"] as const;

/** An arm's marker at (x, y), drawn in `color`. */
export function Marker({ arm, x, y, color, children }: { arm: string; x: number; y: number; color: string; children?: ComponentChildren }) {
  const i = ARM_ORDER.indexOf(arm);
  const kind = MARKERS[(i >= 0 ? i : ARM_ORDER.length) % MARKERS.length];
  const pts = (p: [number, number][]) => p.map(([a, b]) => `${(x + a).toFixed(1)},${(y + b).toFixed(1)}`).join(" ");
  switch (kind) {
    case "circle":
      return (
        <circle class="point" cx={x} cy={y} r={3.2} fill={color}>
          {children}
        </circle>
      );
    case "square":
      return (
        <rect class="point" x={x - 3} y={y - 3} width={6} height={6} fill={color}>
          {children}
        </rect>
      );
    case "triangle":
    case "inverted-triangle": {
      const s = kind === "triangle" ? 1 : -1;
      return (
        <polygon class="point" points={pts([[0, -3.8 * s], [-3.6, 2.6 * s], [3.6, 2.6 * s]])} fill={color}>
          {children}
        </polygon>
      );
    }
    case "diamond":
      return (
        <polygon class="point" points={pts([[0, -4], [4, 0], [0, 4], [-4, 0]])} fill={color}>
          {children}
        </polygon>
      );
    default: {
      const d = kind === "cross" ? `M${x - 3.5},${y - 3.5} L${x + 3.5},${y + 3.5} M${x - 3.5},${y + 3.5} L${x + 3.5},${y - 3.5}` : `M${x - 4},${y} L${x + 4},${y} M${x},${y - 4} L${x},${y + 4}`;
      return (
        <path class="point" d={d} stroke={color} stroke-width={2} fill="none">
          {children}
        </path>
      );
    }
  }
}

export const SPLIT_LABEL: Record<string, string> = { train: "training families", heldout: "held-out families" };

/** Two-sided 97.5% quantile of Student's t (src/stats.rs `t_975`). */
function t975(df: number): number {
  const TABLE = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064,
    2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
  ];
  if (df <= 0) return Infinity;
  return df <= 30 ? TABLE[df - 1] : 1.96 + 2.4 / df;
}

/** Mean and 95% t-interval of values from independent seeds, clipped to [0, 1]. */
function tInterval(xs: number[]): { mean: number; ci95: [number, number] } {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  if (xs.length < 2) return { mean: m, ci95: [m, m] };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
  const half = (t975(xs.length - 1) * sd) / Math.sqrt(xs.length);
  return { mean: m, ci95: [Math.max(0, m - half), Math.min(1, m + half)] };
}

const splitRank = (s: string) => (s === "train" ? 0 : s === "heldout" ? 1 : 2);
const armRank = (a: string) => {
  const i = ARM_ORDER.indexOf(a);
  return i >= 0 ? i : ARM_ORDER.length;
};

/** The transfer curves of a set of evaluations, as the report computes them
 * (src/analysis/transfer.rs): per suite, arm and split, the mean over seeds at each iteration
 * (of the seeds evaluated there so far) and its t-interval. */
export function transferCurves(points: EvalPoint[]): Curve[] {
  const acc = new Map<string, { suite: string; arm: string; split: string; its: Map<number, number[]> }>();
  for (const p of points) {
    const k = `${p.suite}\u0000${p.arm}\u0000${p.split}`;
    let c = acc.get(k);
    if (!c) acc.set(k, (c = { suite: p.suite, arm: p.arm, split: p.split, its: new Map() }));
    const v = c.its.get(p.iteration) ?? [];
    v.push(p.success);
    c.its.set(p.iteration, v);
  }
  return [...acc.values()]
    .map((c) => ({
      suite: c.suite,
      arm: c.arm,
      split: c.split,
      points: [...c.its.entries()].sort((a, b) => a[0] - b[0]).map(([iteration, v]) => ({ iteration, seeds: v.length, ...tInterval(v) })),
    }))
    .sort((a, b) => a.suite.localeCompare(b.suite) || splitRank(a.split) - splitRank(b.split) || armRank(a.arm) - armRank(b.arm) || a.arm.localeCompare(b.arm));
}

/** Ticks for 0..max: whole numbers, at most about `n` of them. */
function ticks(max: number, n: number): number[] {
  const raw = max / n;
  const mag = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag);
  const out = [];
  for (let x = 0; x <= max + 1e-9; x += step) out.push(x);
  return out;
}

const W = 440;
const H = 250;
const M = { l: 46, r: 14, t: 26, b: 38 };

function Panel({ title, curves, xMax }: { title: string; curves: Curve[]; xMax: number }) {
  const x = (it: number) => M.l + ((W - M.l - M.r) * it) / xMax;
  const y = (v: number) => H - M.b - (H - M.t - M.b) * v;
  const line = (pts: [number, number][]) => pts.map(([a, b], i) => `${i ? "L" : "M"}${a.toFixed(1)},${b.toFixed(1)}`).join(" ");
  return (
    <svg class="panel" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title} data-panel={title}>
      <text x={M.l} y={16} class="panel-title">
        {title}
      </text>
      {[0, 0.2, 0.4, 0.6, 0.8, 1].map((v) => (
        <g key={v}>
          <line x1={M.l} x2={W - M.r} y1={y(v)} y2={y(v)} class="grid" />
          <text x={M.l - 6} y={y(v) + 4} class="tick" text-anchor="end">
            {Math.round(v * 100)}%
          </text>
        </g>
      ))}
      {ticks(xMax, 8).map((t) => (
        <text key={t} x={x(t)} y={H - M.b + 16} class="tick" text-anchor="middle">
          {t}
        </text>
      ))}
      <line x1={M.l} x2={W - M.r} y1={y(0)} y2={y(0)} class="axis" />
      <text x={(M.l + W - M.r) / 2} y={H - 6} class="axis-label" text-anchor="middle">
        Training iteration
      </text>
      {curves.length === 0 && (
        <text x={(M.l + W - M.r) / 2} y={y(0.5)} class="tick" text-anchor="middle">
          no evaluation yet
        </text>
      )}
      {curves.map((c) =>
        c.points.some((p) => p.seeds > 1) ? (
          <path
            key={`band-${c.arm}`}
            class="band"
            d={line([...c.points.map((p) => [x(p.iteration), y(p.ci95[1])] as [number, number]), ...[...c.points].reverse().map((p) => [x(p.iteration), y(p.ci95[0])] as [number, number])]) + " Z"}
            fill={armColor(c.arm)}
          />
        ) : null,
      )}
      {curves.map((c) => (
        <g key={c.arm} data-arm={c.arm}>
          <path class="series" data-arm={c.arm} d={line(c.points.map((p) => [x(p.iteration), y(p.mean)]))} stroke={armColor(c.arm)} stroke-dasharray={armDash(c.arm)} />
          {c.points.map((p) => (
            <Marker key={p.iteration} arm={c.arm} x={x(p.iteration)} y={y(p.mean)} color={armColor(c.arm)}>
              <title>
                {c.arm}, iteration {p.iteration}: {(p.mean * 100).toFixed(1)}%{p.seeds > 1 ? ` (mean of ${p.seeds} seeds, 95% CI ${(p.ci95[0] * 100).toFixed(1)}–${(p.ci95[1] * 100).toFixed(1)}%)` : " (one seed)"}
              </title>
            </Marker>
          ))}
        </g>
      ))}
    </svg>
  );
}

/**
 * Transfer curves: success under the base harness during training, one panel per suite and split
 * (training families, then held-out families), one line per arm. `iterations` fixes the x axis
 * (a running experiment's whole length), so the curves grow into it.
 */
export function TransferChart({ curves, iterations, live }: { curves: Curve[]; iterations: number; live?: boolean }) {
  const suites = [...new Set(curves.map((c) => c.suite))];
  const xMax = Math.max(1, iterations, ...curves.flatMap((c) => c.points.map((p) => p.iteration)));
  const seeds = Math.max(0, ...curves.flatMap((c) => c.points.map((p) => p.seeds)));
  const arms = [...new Set(curves.map((c) => c.arm))].sort((a, b) => armRank(a) - armRank(b) || a.localeCompare(b));
  const panels: { title: string; curves: Curve[] }[] = [];
  for (const suite of suites) {
    for (const split of ["train", "heldout"]) {
      const cs = curves.filter((c) => c.suite === suite && c.split === split);
      if (cs.length === 0 && split === "heldout") continue;
      panels.push({ title: `${suites.length > 1 ? `${suite} — ` : ""}${SPLIT_LABEL[split] ?? split}`, curves: cs });
    }
  }
  return (
    <figure class="transfer-chart" data-chart="transfer">
      <figcaption>
        <b>Transfer: success under the base harness during training</b>
        <span class="muted small">
          {seeds > 1 ? ` Mean over ${live ? "the seeds evaluated so far" : `${seeds} seeds`}; shaded: 95% t-interval over seeds.` : " One seed: no interval over seeds."}
        </span>
      </figcaption>
      <div class="panels">
        {panels.map((p) => (
          <Panel key={p.title} title={p.title} curves={p.curves} xMax={xMax} />
        ))}
      </div>
      <div class="legend small">
        {arms.map((a) => (
          <span key={a} class="legend-item">
            <svg width="34" height="10" aria-hidden="true">
              <line x1="1" x2="33" y1="5" y2="5" stroke={armColor(a)} stroke-width="2" stroke-dasharray={armDash(a)} />
              <Marker arm={a} x={17} y={5} color={armColor(a)} />
            </svg>
            {a}
          </span>
        ))}
      </div>
    </figure>
  );
}
