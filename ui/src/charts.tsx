// Charts drawn in the page from numbers it already has (the HTML reports' charts are SVGs the
// server draws with plotters, src/chart/). Interactive: hovering a point shows its arm, iteration,
// value and interval; clicking a legend entry hides or shows that arm. Drawn at the size they are
// shown (no scaling of the text), so labels stay readable at any width.
//
// The transfer curves: one panel per suite and split, one line per arm (mean over seeds) with its
// 95% t-interval over seeds shaded, in the styles the report gives each arm (src/chart/style.rs:
// the arm's Okabe–Ito colour, dash pattern and marker, from `chart_style`). Every number drawn
// comes from the server: the running experiment's card draws the curves `jobs` computes as
// evaluations arrive; the Results view draws a report's `analysis.transfer` with the same
// component, and two runs' curves over each other for a comparison (arm by colour, run by line
// style). The final-success chart: per arm its success with the interval over tasks, the arm in
// its colour and the split told by the marker, as in the report.

import type { ComponentChildren, RefObject } from "preact";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { armColor, armLook, armRank, otherRunDash } from "./ui";
import type { CurvePoint, TransferCurve as Curve } from "./types";

export type { Curve, CurvePoint };

/** An arm's dash pattern, as the reports draw it (`chart_style`). */
export function armDash(arm: string): string | undefined {
  return armLook(arm).dash ?? undefined;
}

/** The marker shapes the charts draw (their names in `chart_style`). */
type MarkerKind = "circle" | "square" | "triangle" | "diamond" | "cross" | "inverted-triangle" | "plus";

function armMarker(arm: string): MarkerKind {
  return armLook(arm).marker as MarkerKind;
}

/** An arm's marker at (x, y), drawn in `color`; `hollow`: outlined, white inside; `kind`
 * overrides the arm's shape; `r` scales it. */
export function Marker({ arm, x, y, color, hollow, kind, r = 1, children }: { arm: string; x: number; y: number; color: string; hollow?: boolean; kind?: MarkerKind; r?: number; children?: ComponentChildren }) {
  const k = kind ?? armMarker(arm);
  const pts = (p: [number, number][]) => p.map(([a, b]) => `${(x + a * r).toFixed(1)},${(y + b * r).toFixed(1)}`).join(" ");
  const paint = hollow ? { fill: "#fff", stroke: color, "stroke-width": 1.6 } : { fill: color };
  switch (k) {
    case "circle":
      return (
        <circle class="point" cx={x} cy={y} r={3.4 * r} {...paint}>
          {children}
        </circle>
      );
    case "square":
      return (
        <rect class="point" x={x - 3.1 * r} y={y - 3.1 * r} width={6.2 * r} height={6.2 * r} {...paint}>
          {children}
        </rect>
      );
    case "triangle":
    case "inverted-triangle": {
      const s = k === "triangle" ? 1 : -1;
      return (
        <polygon class="point" points={pts([[0, -4 * s], [-3.8, 2.8 * s], [3.8, 2.8 * s]])} {...paint}>
          {children}
        </polygon>
      );
    }
    case "diamond":
      return (
        <polygon class="point" points={pts([[0, -4.3], [4.3, 0], [0, 4.3], [-4.3, 0]])} {...paint}>
          {children}
        </polygon>
      );
    default: {
      const a = 3.6 * r;
      const d = k === "cross" ? `M${x - a},${y - a} L${x + a},${y + a} M${x - a},${y + a} L${x + a},${y - a}` : `M${x - a - 0.5},${y} L${x + a + 0.5},${y} M${x},${y - a - 0.5} L${x},${y + a + 0.5}`;
      return (
        <path class="point" d={d} stroke={color} stroke-width={2} fill="none">
          {children}
        </path>
      );
    }
  }
}

export const SPLIT_LABEL: Record<string, string> = { train: "training families", heldout: "held-out families" };

const byArm = (a: string, b: string) => armRank(a) - armRank(b) || a.localeCompare(b);

/** Ticks for 0..max: whole numbers, at most about `n` of them. */
function ticks(max: number, n: number): number[] {
  const raw = max / n;
  const mag = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag);
  const out = [];
  for (let x = 0; x <= max + 1e-9; x += step) out.push(x);
  return out;
}

const pct1 = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The width of an element, followed as it changes (0 before the first layout). */
function useWidth<T extends HTMLElement>(): [RefObject<T | null>, number] {
  const ref = useRef<T>(null);
  const [w, setW] = useState(0);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setW(el.clientWidth);
    if (typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(() => setW(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, w];
}

/** One point's part of the tooltip: a title and rows of label and value. */
interface TipBlock {
  title: ComponentChildren;
  rows: [string, ComponentChildren][];
}

/** What the tooltip shows, and where (relative to the figure): beside the point, on the side
 * with more room, so it is never clipped at the figure's edge nor covers the line it describes. */
interface Tip {
  x: number;
  y: number;
  side: "left" | "right";
  blocks: TipBlock[];
}

/** The side of a point at `x` (in a figure `width` wide) a tooltip goes. */
const tipSide = (x: number, width: number): "left" | "right" => (x > width * 0.55 ? "left" : "right");

/** A chart's hover tooltip: `show` places it above a pixel of an element inside the figure (the
 * element's own coordinates, scaled as drawn), `showAt` above an element. */
function useTip() {
  const figure = useRef<HTMLElement>(null);
  const [tip, setTip] = useState<Tip | null>(null);
  const show = (el: SVGSVGElement, px: number, py: number, blocks: TipBlock[]) => {
    const f = figure.current;
    if (!f) return;
    const fr = f.getBoundingClientRect();
    const r = el.getBoundingClientRect();
    const k = r.width / (el.viewBox.baseVal?.width || r.width);
    const x = r.left - fr.left + px * k;
    setTip({ blocks, x, y: r.top - fr.top + py * k, side: tipSide(x, fr.width) });
  };
  const showAt = (e: Event, blocks: TipBlock[]) => {
    const f = figure.current;
    const el = e.currentTarget as Element | null;
    if (!f || !el) return;
    const fr = f.getBoundingClientRect();
    const r = el.getBoundingClientRect();
    const x = r.left + r.width / 2 - fr.left;
    setTip({ blocks, x, y: r.top + r.height / 2 - fr.top, side: tipSide(x, fr.width) });
  };
  const hide = () => setTip(null);
  const box = tip && (
    <div class={`chart-tip ${tip.side}`} role="tooltip" style={{ left: `${tip.x}px`, top: `${tip.y}px` }}>
      {tip.blocks.map((b, i) => (
        <div key={i} class="chart-tip-block">
          <div class="chart-tip-title">{b.title}</div>
          <table>
            <tbody>
              {b.rows.map(([k, v]) => (
                <tr key={k}>
                  <th>{k}</th>
                  <td>{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </div>
  );
  return { figure, show, showAt, hide, box, tip };
}

/** The words for an interval over `seeds` seeds: none from a single seed. */
export const ONE_SEED = "one seed: no interval";
export const ONE_SEED_WHY = "one seed cannot give a seed interval";

/** An interval from `seeds` seeds, or — from a single seed — a note that there is none. */
export function SeedCi({ seeds, children }: { seeds: number; children: ComponentChildren }) {
  return seeds < 2 ? (
    <span class="muted one-seed" title={ONE_SEED_WHY}>
      {ONE_SEED}
    </span>
  ) : (
    <>{children}</>
  );
}


/** Legend entries that hide or show an arm when clicked. */
function ArmLegend({ arms, hidden, toggle, mark }: { arms: string[]; hidden: Set<string>; toggle: (arm: string) => void; mark: "line" | "marker" | "swatch" }) {
  return (
    <>
      {arms.map((a) => (
        <button
          key={a}
          type="button"
          class={`legend-item${hidden.has(a) ? " off" : ""}`}
          data-arm={a}
          aria-pressed={!hidden.has(a)}
          title={hidden.has(a) ? `show ${a}` : `hide ${a}`}
          onClick={() => toggle(a)}
        >
          {mark === "swatch" ? (
            <i class="swatch" style={{ background: armColor(a) }} />
          ) : (
            <svg width={mark === "line" ? 34 : 14} height="12" aria-hidden="true">
              {mark === "line" && <line x1="1" x2="33" y1="6" y2="6" stroke={armColor(a)} stroke-width="2" stroke-dasharray={armDash(a)} />}
              <Marker arm={a} x={mark === "line" ? 17 : 7} y={6} color={armColor(a)} />
            </svg>
          )}
          {a}
        </button>
      ))}
    </>
  );
}

function useHidden(): [Set<string>, (arm: string) => void] {
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const toggle = (arm: string) =>
    setHidden((h) => {
      const n = new Set(h);
      if (n.has(arm)) n.delete(arm);
      else n.add(arm);
      return n;
    });
  return [hidden, toggle];
}

/** One run's curves in a panel: `other` marks the run compared with (dashed, outlined markers). */
interface Line {
  curve: Curve;
  other: boolean;
  run?: string;
}

const GAP = 16;

/** A point of a line, where it is drawn. */
interface Hit {
  line: Line;
  point: CurvePoint;
  x: number;
  y: number;
}

function Panel({
  title,
  lines,
  xMax,
  width,
  compared,
  bands,
  onHover,
  onLeave,
}: {
  title: string;
  lines: Line[];
  xMax: number;
  width: number;
  compared: boolean;
  bands: boolean;
  onHover: (svg: SVGSVGElement, at: Hit[]) => void;
  onLeave: () => void;
}) {
  const [near, setNear] = useState<Hit[]>([]);
  const W = width;
  const H = Math.round(Math.min(340, Math.max(230, W * 0.58)));
  const M = { l: 58, r: 16, t: 30, b: 46 };
  const x = (it: number) => M.l + ((W - M.l - M.r) * it) / xMax;
  const y = (v: number) => H - M.b - (H - M.t - M.b) * v;
  const path = (pts: [number, number][]) => pts.map(([a, b], i) => `${i ? "L" : "M"}${a.toFixed(1)},${b.toFixed(1)}`).join(" ");
  const hits: Hit[] = lines.flatMap((l) => l.curve.points.map((p) => ({ line: l, point: p, x: x(p.iteration), y: y(p.mean) })));
  // the points nearest the pointer (within 28 px), all of them where lines meet
  const move = (e: MouseEvent) => {
    const svg = e.currentTarget as SVGSVGElement;
    const r = svg.getBoundingClientRect();
    const k = W / (r.width || W);
    const mx = (e.clientX - r.left) * k;
    const my = (e.clientY - r.top) * k;
    let nearest: Hit | null = null;
    let best = Infinity;
    for (const h of hits) {
      const d = Math.hypot(h.x - mx, h.y - my);
      if (d < best) [best, nearest] = [d, h];
    }
    // that point and any drawn on top of it (lines that meet there)
    const n = nearest;
    const at = n && best <= 28 ? hits.filter((h) => Math.abs(h.x - n.x) < 0.5 && Math.abs(h.y - n.y) < 4) : [];
    const key = (h: Hit) => `${h.line.curve.arm}/${h.line.other}/${h.point.iteration}`;
    const same = at.length === near.length && at.every((h, i) => key(h) === key(near[i]));
    if (!same) {
      setNear(at);
      if (at.length) onHover(svg, at);
      else onLeave();
    }
  };
  const leave = () => {
    setNear([]);
    onLeave();
  };
  return (
    <svg class="panel" width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title} data-panel={title} onMouseMove={move} onMouseLeave={leave}>
      <text x={M.l} y={18} class="panel-title">
        {title}
      </text>
      {[0, 0.2, 0.4, 0.6, 0.8, 1].map((v) => (
        <g key={v}>
          <line x1={M.l} x2={W - M.r} y1={y(v)} y2={y(v)} class="grid" />
          <text x={M.l - 7} y={y(v) + 4} class="tick" text-anchor="end">
            {Math.round(v * 100)}%
          </text>
        </g>
      ))}
      {ticks(xMax, Math.max(2, Math.floor((W - M.l - M.r) / 50))).map((t) => (
        <text key={t} x={x(t)} y={H - M.b + 18} class="tick" text-anchor="middle">
          {t}
        </text>
      ))}
      <line x1={M.l} x2={W - M.r} y1={y(0)} y2={y(0)} class="axis" />
      <text x={(M.l + W - M.r) / 2} y={H - 8} class="axis-label" text-anchor="middle">
        Training iteration
      </text>
      <text transform={`translate(14 ${(M.t + H - M.b) / 2}) rotate(-90)`} class="axis-label" text-anchor="middle">
        Base-harness success
      </text>
      {lines.length === 0 && (
        <text x={(M.l + W - M.r) / 2} y={y(0.5)} class="tick" text-anchor="middle">
          no evaluation yet
        </text>
      )}
      {bands &&
        lines.map(({ curve: c, other }) =>
          c.points.some((p) => p.seeds > 1) ? (
            <path
              key={`band-${c.arm}-${other}`}
              class="band"
              data-arm={c.arm}
              d={path([...c.points.map((p) => [x(p.iteration), y(p.ci95[1])] as [number, number]), ...[...c.points].reverse().map((p) => [x(p.iteration), y(p.ci95[0])] as [number, number])]) + " Z"}
              fill={armColor(c.arm)}
            />
          ) : null,
        )}
      {near.length > 0 && <line class="hover-rule" x1={near[0].x} x2={near[0].x} y1={M.t} y2={H - M.b} />}
      {lines.map((l) => {
        const c = l.curve;
        const color = armColor(c.arm);
        const dash = compared ? (l.other ? otherRunDash() : undefined) : armDash(c.arm);
        return (
          <g key={`${c.arm}-${l.other}`} data-arm={c.arm} data-run={compared ? (l.other ? "other" : "this") : undefined}>
            <path class="series" data-arm={c.arm} d={path(c.points.map((p) => [x(p.iteration), y(p.mean)]))} stroke={color} stroke-dasharray={dash} />
            {c.points.map((p) => (
              <Marker key={p.iteration} arm={c.arm} x={x(p.iteration)} y={y(p.mean)} color={color} hollow={l.other} />
            ))}
          </g>
        );
      })}
      {near.map((h) => (
        <circle key={`${h.line.curve.arm}-${h.line.other}`} class="hover-ring" cx={h.x} cy={h.y} r={7} stroke={armColor(h.line.curve.arm)} />
      ))}
    </svg>
  );
}

/**
 * Transfer curves: success under the base harness during training, one panel per suite and split
 * (training families, then held-out families), one line per arm. `iterations` fixes the x axis
 * (a running experiment's whole length), so the curves grow into it. With `compare`, another
 * run's curves are drawn over these: the same colour per arm, this run solid with filled
 * markers, the other dashed with outlined ones (and no bands: the tooltip gives each interval).
 */
export function TransferChart({
  curves,
  iterations,
  live,
  compare,
  label,
  chart = "transfer",
  size,
}: {
  curves: Curve[];
  iterations: number;
  live?: boolean;
  /** Another run's curves and its name, drawn over these. */
  compare?: { curves: Curve[]; label: string };
  /** This run's name, for the legend and the tooltip when compared. */
  label?: string;
  /** The figure's `data-chart`. */
  chart?: string;
  /** Panels up to 480 px wide (a running experiment's card, the default when `live` is given) or 680 px. */
  size?: "compact" | "full";
}) {
  const [hidden, toggle] = useHidden();
  const [showBands, setShowBands] = useState(true);
  const { figure, show, hide, box } = useTip();
  const [panelsRef, width] = useWidth<HTMLDivElement>();
  const all: Line[] = [...curves.map((c) => ({ curve: c, other: false, run: label })), ...(compare?.curves ?? []).map((c) => ({ curve: c, other: true, run: compare?.label }))];
  const suites = [...new Set(all.map((l) => l.curve.suite))].sort();
  const xMax = Math.max(1, iterations, ...all.flatMap((l) => l.curve.points.map((p) => p.iteration)));
  const seeds = Math.max(0, ...curves.flatMap((c) => c.points.map((p) => p.seeds)));
  const arms = [...new Set(all.map((l) => l.curve.arm))].sort(byArm);
  const panels: { title: string; lines: Line[] }[] = [];
  for (const suite of suites.length ? suites : [""]) {
    for (const split of ["train", "heldout"]) {
      const ls = all.filter((l) => l.curve.suite === suite && l.curve.split === split);
      if (ls.length === 0 && split === "heldout") continue;
      ls.sort((a, b) => byArm(a.curve.arm, b.curve.arm) || Number(b.other) - Number(a.other));
      panels.push({ title: `${suites.length > 1 ? `${suite} — ` : ""}${SPLIT_LABEL[split] ?? split}`, lines: ls.filter((l) => !hidden.has(l.curve.arm)) });
    }
  }
  // two panels to a row when each keeps 340 px; drawn at the size shown
  const avail = width || 900;
  const cols = panels.length > 1 && avail >= 2 * 340 + GAP ? 2 : 1;
  const maxW = (size ?? (live !== undefined ? "compact" : "full")) === "compact" ? 480 : 680;
  const pw = Math.floor(Math.min(cols === 2 ? (avail - GAP) / 2 : avail, maxW));
  const compared = compare !== undefined;
  const hover = (svg: SVGSVGElement, at: Hit[]) =>
    show(
      svg,
      at[0].x,
      Math.min(...at.map((h) => h.y)),
      at.map(({ line: l, point: p }) => ({
        title: (
          <>
            <i class="swatch" style={{ background: armColor(l.curve.arm) }} /> {l.curve.arm}
            {compared && <span class="muted"> · {l.run ?? (l.other ? "other run" : "this run")}</span>}
          </>
        ),
        rows: [
          ["iteration", String(p.iteration)],
          ["success", pct1(p.mean)],
          ["95% CI", p.seeds > 1 ? `${pct1(p.ci95[0])} – ${pct1(p.ci95[1])} (t over ${p.seeds} seeds)` : <span title={ONE_SEED_WHY}>{ONE_SEED}</span>],
          ["split", SPLIT_LABEL[l.curve.split] ?? l.curve.split],
        ],
      })),
    );
  return (
    <figure class="transfer-chart ichart" data-chart={chart} ref={figure}>
      <figcaption>
        <b>{compared ? "Transfer, both runs: success under the base harness during training" : "Transfer: success under the base harness during training"}</b>
        <span class="muted small">
          {compared
            ? " Mean over each run's seeds; hover a point for its interval."
            : seeds > 1
              ? ` Mean over ${live ? "the seeds evaluated so far" : `${seeds} seeds`}; shaded: 95% t-interval over seeds.`
              : " One seed: no interval over seeds."}
        </span>
      </figcaption>
      <div class="panels" ref={panelsRef}>
        {panels.map((p) => (
          <Panel key={p.title} title={p.title} lines={p.lines} xMax={xMax} width={pw} compared={compared} bands={!compared && showBands} onHover={hover} onLeave={hide} />
        ))}
      </div>
      <div class="legend small">
        <ArmLegend arms={arms} hidden={hidden} toggle={toggle} mark={compared ? "marker" : "line"} />
        {compared && (
          <span class="legend-runs">
            <span class="legend-run" data-run="this">
              <svg width="34" height="12" aria-hidden="true">
                <line x1="1" x2="33" y1="6" y2="6" stroke="#222" stroke-width="2" />
                <circle cx="17" cy="6" r="3.4" fill="#222" />
              </svg>
              {label ?? "this run"}
            </span>
            <span class="legend-run" data-run="other">
              <svg width="34" height="12" aria-hidden="true">
                <line x1="1" x2="33" y1="6" y2="6" stroke="#222" stroke-width="2" stroke-dasharray={otherRunDash()} />
                <circle cx="17" cy="6" r="3.4" fill="#fff" stroke="#222" stroke-width="1.6" />
              </svg>
              {compare.label}
            </span>
          </span>
        )}
        {!compared && seeds > 1 && (
          <button type="button" class={`legend-item bands-toggle${showBands ? "" : " off"}`} aria-pressed={showBands} title={showBands ? "hide the 95% bands" : "show the 95% bands"} onClick={() => setShowBands((b) => !b)}>
            <i class="swatch band-swatch" /> 95% bands
          </button>
        )}
        {arms.length > 0 && <span class="muted legend-hint">click an arm to hide or show it</span>}
      </div>
      {box}
    </figure>
  );
}

/** Save a chart drawn by the server (its SVG text) as `name`.svg, or as `name`.png at twice its
 * size (drawn through a canvas, on white). */
export async function downloadChart(svg: string, name: string, kind: "svg" | "png"): Promise<void> {
  const save = (blob: Blob, file: string) => {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = file;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  };
  const doc = svg.includes("xmlns=") ? svg : svg.replace("<svg", '<svg xmlns="http://www.w3.org/2000/svg"');
  const blob = new Blob([doc], { type: "image/svg+xml" });
  if (kind === "svg") return save(blob, `${name}.svg`);
  const url = URL.createObjectURL(blob);
  try {
    const img = new Image();
    await new Promise<void>((ok, fail) => {
      img.onload = () => ok();
      img.onerror = () => fail(new Error("the chart could not be drawn as an image"));
      img.src = url;
    });
    const canvas = document.createElement("canvas");
    canvas.width = img.naturalWidth * 2;
    canvas.height = img.naturalHeight * 2;
    const g = canvas.getContext("2d")!;
    g.fillStyle = "#fff";
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.drawImage(img, 0, 0, canvas.width, canvas.height);
    const png = await new Promise<Blob | null>((ok) => canvas.toBlob(ok, "image/png"));
    if (png) save(png, `${name}.png`);
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** One arm's final success on one split: what the report's final table holds. */
export interface FinalPoint {
  suite: string;
  arm: string;
  split: string;
  iteration: number;
  success: number;
  /** Bootstrap interval over tasks. */
  ci95: [number, number];
  /** Seeds behind the number; fewer than two: no interval. */
  seeds: number;
  tasks: number;
}

/** `x` in percentage points with its sign ("+4.2 pts", "−1.0 pts"). */
const pts1 = (x: number) => `${x > 0 ? "+" : x < 0 ? "−" : "±"}${Math.abs(x * 100).toFixed(1)} pts`;

/** Ticks at a round step across [lo, hi] (fractions). */
function spanTicks(lo: number, hi: number): number[] {
  const span = hi - lo;
  const step = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5].find((s) => span / s <= 8) ?? 1;
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + 1e-9; v += step) out.push(Math.abs(v) < 1e-9 ? 0 : v);
  return out;
}

/**
 * Final success per arm, one panel per suite: a dot per split with its 95% interval over tasks
 * (none from a single seed). The arm is the colour, as in every chart; training families are
 * filled circles, held-out families outlined diamonds (src/chart/mod.rs `final_success`).
 * `kind = "delta"`: the same for each arm's paired difference against `baseline` on the same
 * tasks (`success` and `ci95` are the difference and its paired interval), around a zero line
 * (src/chart/mod.rs `final_deltas`).
 */
export function FinalSuccessChart({ rows, kind = "success", baseline = "policy-only" }: { rows: FinalPoint[]; kind?: "success" | "delta"; baseline?: string }) {
  const [hidden, toggle] = useHidden();
  const { figure, showAt, hide, box } = useTip();
  const [bodyRef, width] = useWidth<HTMLDivElement>();
  const suites = [...new Set(rows.map((r) => r.suite))].sort();
  const allArms = [...new Set(rows.map((r) => r.arm))].sort(byArm);
  const splits = ["train", "heldout"].filter((s) => rows.some((r) => r.split === s));
  const W = Math.floor(Math.min(width || 900, 900));
  const M = { l: 132, r: 20, t: 30, b: 46 };
  const rowH = 40;
  const oneSeed = rows.some((r) => r.seeds < 2);
  const delta = kind === "delta";
  // a difference's axis is symmetric around zero and as wide as the widest interval
  const reach = delta ? Math.min(1, Math.max(0.05, ...rows.flatMap((r) => [Math.abs(r.success), ...(r.seeds > 1 ? r.ci95.map(Math.abs) : [])])) * 1.1) : 1;
  const [lo, hi] = delta ? [-reach, reach] : [0, 1];
  const chartId = delta ? "final-deltas" : "final-table";
  const caption = delta
    ? `Paired difference against ${baseline} on the same tasks`
    : "Final success under the base harness";
  const note = delta
    ? oneSeed
      ? ` Right of the zero line: the arm solves more tasks; one seed: no interval.`
      : ` Right of the zero line: the arm solves more tasks; whiskers: paired 95% bootstrap interval over tasks.`
    : oneSeed
      ? " Per task: mean over seeds; one seed: no interval."
      : " Per task: mean over seeds; whiskers: 95% bootstrap interval over tasks.";
  return (
    <figure class="final-chart ichart" data-chart={chartId} ref={figure}>
      <figcaption>
        <b>{caption}</b>
        <span class="muted small">{note}</span>
      </figcaption>
      <div class="panels" ref={bodyRef}>
        {suites.map((suite) => {
          const arms = allArms.filter((a) => !hidden.has(a) && rows.some((r) => r.suite === suite && r.arm === a));
          const H = M.t + M.b + Math.max(1, arms.length) * rowH;
          const x = (v: number) => M.l + ((W - M.l - M.r) * (v - lo)) / (hi - lo);
          const yRow = (i: number) => M.t + rowH * (i + 0.5);
          const off = (split: string) => (splits.length > 1 ? (split === "train" ? -8 : 8) : 0);
          const it = rows.find((r) => r.suite === suite)?.iteration;
          const title = `${suites.length > 1 ? `${suite} — ` : ""}iteration ${it ?? "–"}`;
          return (
            <svg key={suite} class="panel" width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title} data-panel={title}>
              <text x={M.l} y={18} class="panel-title">
                {title}
              </text>
              {spanTicks(lo, hi).map((v) => (
                <g key={v}>
                  <line x1={x(v)} x2={x(v)} y1={M.t} y2={H - M.b} class={delta && v === 0 ? "zero" : "grid"} />
                  <text x={x(v)} y={H - M.b + 18} class="tick" text-anchor="middle">
                    {delta ? `${v > 0 ? "+" : v < 0 ? "−" : ""}${Math.round(Math.abs(v) * 100)}` : `${Math.round(v * 100)}%`}
                  </text>
                </g>
              ))}
              <text x={(M.l + W - M.r) / 2} y={H - 8} class="axis-label" text-anchor="middle">
                {delta ? `Arm minus ${baseline} (percentage points)` : "Base-harness success (% of tasks)"}
              </text>
              {arms.map((arm, i) => (
                <g key={arm} data-arm={arm}>
                  {i > 0 && <line x1={M.l} x2={W - M.r} y1={yRow(i) - rowH / 2} y2={yRow(i) - rowH / 2} class="grid" />}
                  <text x={M.l - 10} y={yRow(i) + 4} class="cat" text-anchor="end">
                    {arm}
                  </text>
                  {splits.map((split) => {
                    const r = rows.find((q) => q.suite === suite && q.arm === arm && q.split === split);
                    if (!r) return null;
                    const cy = yRow(i) + off(split);
                    const color = armColor(arm);
                    const whisker = r.seeds > 1 && r.ci95[1] > r.ci95[0];
                    return (
                      <g key={split} class="dot" data-arm={arm} data-split={split} data-color={color}>
                        {whisker && (
                          <path class="whisker" d={`M${x(r.ci95[0])},${cy} L${x(r.ci95[1])},${cy} M${x(r.ci95[0])},${cy - 4} L${x(r.ci95[0])},${cy + 4} M${x(r.ci95[1])},${cy - 4} L${x(r.ci95[1])},${cy + 4}`} stroke={color} />
                        )}
                        <Marker arm={arm} kind={split === "heldout" ? "diamond" : "circle"} hollow={split === "heldout"} r={1.2} x={x(r.success)} y={cy} color={color} />
                        <circle
                          class="hit"
                          cx={x(r.success)}
                          cy={cy}
                          r={9}
                          onMouseEnter={(e) =>
                            showAt(e, [{
                              title: (
                                <>
                                  <i class="swatch" style={{ background: color }} /> {arm}
                                </>
                              ),
                              rows: delta
                                ? [
                                    ["split", SPLIT_LABEL[split] ?? split],
                                    ["iteration", String(r.iteration)],
                                    [`Δ vs ${baseline}`, pts1(r.success)],
                                    ["95% CI", r.seeds > 1 ? `${pts1(r.ci95[0])} to ${pts1(r.ci95[1])} (paired bootstrap over ${r.tasks} tasks, ${r.seeds} seeds)` : <span title={ONE_SEED_WHY}>{ONE_SEED}</span>],
                                  ]
                                : [
                                    ["split", SPLIT_LABEL[split] ?? split],
                                    ["iteration", String(r.iteration)],
                                    ["success", pct1(r.success)],
                                    ["95% CI", r.seeds > 1 ? `${pct1(r.ci95[0])} – ${pct1(r.ci95[1])} (bootstrap over ${r.tasks} tasks, ${r.seeds} seeds)` : <span title={ONE_SEED_WHY}>{ONE_SEED}</span>],
                                  ],
                            }])
                          }
                          onMouseLeave={hide}
                        />
                      </g>
                    );
                  })}
                </g>
              ))}
            </svg>
          );
        })}
      </div>
      <div class="legend small">
        <ArmLegend arms={allArms} hidden={hidden} toggle={toggle} mark="swatch" />
        <span class="legend-runs">
          {splits.map((s) => (
            <span key={s} class="legend-split" data-split={s}>
              <svg width="16" height="14" aria-hidden="true">
                <Marker arm="" kind={s === "heldout" ? "diamond" : "circle"} hollow={s === "heldout"} r={1.2} x={8} y={7} color="#222" />
              </svg>
              {SPLIT_LABEL[s] ?? s}
            </span>
          ))}
        </span>
        {allArms.length > 0 && <span class="muted legend-hint">click an arm to hide or show it</span>}
      </div>
      {box}
    </figure>
  );
}
