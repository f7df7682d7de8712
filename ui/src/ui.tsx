// Shared pieces: number formats, the arm colours of the charts, progress bars, lists.

import type { ComponentChildren } from "preact";
import { createPortal } from "preact/compat";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { call } from "./client";
import { runs, showError, Store } from "./store";
import type { ArmInfo, ChartStyle, RunDeleted, SeriesLook } from "./types";
import "./views/review.css";

/** The reports' chart style (`chart_style`): the arm order and each arm's look, so an arm looks
 * the same in the app and in every report. Loaded once before the first render. */
let chartStyle: ChartStyle | null = null;
/** Every arm an experiment can run (`arms`), in the order experiment files list them. */
let armList: ArmInfo[] = [];

/** Bumped when the style and the arm list arrive: the app renders again with them. */
export const armsAndStyle = new Store(0);

/** Load the chart style and the arm list, which the server owns. */
export async function loadArmsAndStyle(): Promise<void> {
  try {
    [chartStyle, armList] = await Promise.all([call("chart_style"), call("arms")]);
    armsAndStyle.update((n) => n + 1);
  } catch (e) {
    showError(e);
  }
}

export function arms(): ArmInfo[] {
  return armList;
}

/** Drawn in grey when the style could not be loaded. */
const UNSTYLED: SeriesLook = { color: "#777777", dash: null, marker: "circle" };

/** How an arm's series is drawn. */
export function armLook(arm: string): SeriesLook {
  if (!chartStyle) return UNSTYLED;
  return chartStyle.arms.find((a) => a.arm === arm)?.look ?? chartStyle.other_arm;
}

export function armColor(arm: string): string {
  return armLook(arm).color;
}

/** An arm's place in the display order (unknown arms after the known ones). */
export function armRank(arm: string): number {
  const order = chartStyle?.arms ?? [];
  const i = order.findIndex((a) => a.arm === arm);
  return i >= 0 ? i : order.length;
}

/** The dash of a compared run's lines (this run's lines are solid). */
export function otherRunDash(): string {
  return chartStyle?.other_run_dash ?? "";
}

export function ArmName({ arm }: { arm: string }) {
  return (
    <span class="arm">
      <i class="swatch" style={{ background: armColor(arm) }} />
      {arm}
    </span>
  );
}

export function pct(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  return `${(x * 100).toFixed(digits)}%`;
}

/** `x` with one decimal, signed by its rounded value: a value that rounds to zero is "0.0", never "−0.0". */
function oneDecimal(x: number): { sign: number; text: string } {
  const r = Math.round(x * 10) / 10;
  return { sign: Math.sign(r), text: Math.abs(r).toFixed(1) };
}

export function signedPts(x: number | null | undefined): string {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  const { sign, text } = oneDecimal(x * 100);
  return `${sign > 0 ? "+" : sign < 0 ? "−" : "±"}${text} pts`;
}

export function ci(c: [number, number] | null | undefined): string {
  if (!c) return "";
  const bound = (x: number) => {
    const { sign, text } = oneDecimal(x * 100);
    return `${sign < 0 ? "-" : ""}${text}`;
  };
  return `[${bound(c[0])}, ${bound(c[1])}]`;
}

export function duration(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return "–";
  if (s < 60) return `${Math.round(s)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(Math.round(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** A list of names sent either as an array or as one comma-separated string. */
export function names(v: string[] | string | null | undefined): string[] {
  if (Array.isArray(v)) return v;
  return v ? v.split(",").map((s) => s.trim()).filter(Boolean) : [];
}

/** An ISO timestamp as `YYYY-MM-DD HH:MM:SS` (UTC), the way the store writes it. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "–";
  const m = iso.match(/^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})/);
  return m ? `${m[1]} ${m[2]}` : iso;
}

export function ms(x: number | null | undefined): string {
  if (x === null || x === undefined) return "–";
  if (x < 1) return `${x.toFixed(2)} ms`;
  if (x < 1000) return `${x.toFixed(0)} ms`;
  return `${(x / 1000).toFixed(2)} s`;
}

export function Progress({ done, total, status }: { done: number; total: number; status?: string }) {
  const f = total > 0 ? Math.min(1, done / total) : 0;
  return (
    <span class={`progress ${status ?? ""}`} title={`${done} of ${total}`}>
      <span class="bar" style={{ width: `${(f * 100).toFixed(1)}%` }} />
    </span>
  );
}

export function StatusTag({ status }: { status: string }) {
  return <span class={`tag status-${status}`}>{status}</span>;
}

export function Outcome({ success, status }: { success: boolean; status?: string }) {
  if (status === "infra_error") return <span class="tag infra" title="infrastructure error: not a task failure">infra</span>;
  if (status === "action_error")
    return <span class="tag fail" title="the agent's own action broke its environment: a failed try that counts">✗ fail (action)</span>;
  return success ? <span class="tag ok">✓ pass</span> : <span class="tag fail">✗ fail</span>;
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function Loading() {
  return <div class="loading">Loading…</div>;
}

/** Pretty JSON, folded when long. */
export function JsonBlock({ value, open = false }: { value: unknown; open?: boolean }) {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  if (text.length < 400) return <pre class="code">{text}</pre>;
  return (
    <details open={open}>
      <summary>{text.split("\n").length} lines</summary>
      <pre class="code">{text}</pre>
    </details>
  );
}

/**
 * A list of fixed-height rows where only the visible rows exist in the page, so it stays smooth
 * with any number of rows. `row(i)` renders row `i` (or a placeholder while it loads);
 * `onRange` reports the visible range so the owner can fetch it.
 */
export function VirtualList(props: {
  count: number;
  rowHeight: number;
  row: (i: number) => ComponentChildren;
  onRange?: (first: number, last: number) => void;
  selected?: number;
  class?: string;
}) {
  const { count, rowHeight, row, onRange, selected } = props;
  const ref = useRef<HTMLDivElement>(null);
  const [scroll, setScroll] = useState(0);
  const [height, setHeight] = useState(600);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    setHeight(el.clientHeight);
    return () => ro.disconnect();
  }, []);
  const overscan = 8;
  const first = Math.max(0, Math.floor(scroll / rowHeight) - overscan);
  const last = Math.min(count - 1, Math.ceil((scroll + height) / rowHeight) + overscan);
  useEffect(() => {
    onRange?.(first, last);
  }, [first, last, count]);
  // Keep the selected row in view.
  useEffect(() => {
    const el = ref.current;
    if (!el || selected === undefined || selected < 0) return;
    const top = selected * rowHeight;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = top + rowHeight - el.clientHeight;
  }, [selected]);
  const items: ComponentChildren[] = [];
  for (let i = first; i <= last; i++) {
    items.push(
      <div key={i} class="vrow" style={{ top: `${i * rowHeight}px`, height: `${rowHeight}px` }}>
        {row(i)}
      </div>,
    );
  }
  return (
    <div ref={ref} class={`vlist ${props.class ?? ""}`} onScroll={(e) => setScroll((e.currentTarget as HTMLDivElement).scrollTop)}>
      <div class="vspace" style={{ height: `${count * rowHeight}px` }}>
        {items}
      </div>
    </div>
  );
}

/**
 * An in-page confirmation; the focus stays inside and no key reaches the page behind it. Esc or
 * Cancel keeps things as they are. `enterConfirms`: Enter confirms wherever the focus is in the
 * dialog (the confirm button starts with the focus); otherwise the safe choice, Cancel, starts
 * with it and Enter presses the focused button.
 */
export function ConfirmDialog(props: {
  title: string;
  children: ComponentChildren;
  confirm: string;
  onConfirm: () => void;
  onCancel: () => void;
  enterConfirms?: boolean;
  confirmId?: string;
  cancelId?: string;
  busy?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  // focused as the dialog appears, so no key goes to the page behind it
  useLayoutEffect(() => {
    box.current?.querySelector<HTMLButtonElement>(props.enterConfirms ? "[data-confirm]" : "[data-cancel]")?.focus();
  }, []);
  return (
    <div class="overlay" onClick={props.onCancel}>
      <div
        ref={box}
        class="dialog"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="confirm-title"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === "Escape") {
            e.preventDefault();
            props.onCancel();
          } else if (e.key === "Enter" && props.enterConfirms) {
            e.preventDefault();
            if (!props.busy) props.onConfirm();
          } else if (e.key === "Tab") {
            const buttons = [...(box.current?.querySelectorAll<HTMLButtonElement>("button") ?? [])];
            const i = buttons.indexOf(document.activeElement as HTMLButtonElement);
            e.preventDefault();
            buttons[(i + (e.shiftKey ? buttons.length - 1 : 1)) % buttons.length]?.focus();
          }
        }}
      >
        <h2 id="confirm-title">{props.title}</h2>
        <div>{props.children}</div>
        <div class="dialog-buttons">
          <button class="danger" onClick={props.onConfirm} id={props.confirmId ?? "confirm-overwrite"} data-confirm disabled={props.busy}>
            {props.confirm}
          </button>
          <button onClick={props.onCancel} data-cancel id={props.cancelId ?? "cancel-overwrite"}>
            Cancel
          </button>
        </div>
      </div>
    </div>
  );
}

/**
 * Delete a run, after a confirmation that says what goes with it (its episodes, records and
 * checkpoints). A running run cannot be deleted: it is cancelled first.
 */
export function DeleteRunButton({ run, onDeleted }: { run: { id: number; name: string; status: string }; onDeleted: (d: RunDeleted) => void }) {
  const [episodes, setEpisodes] = useState<number | null | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const running = run.status === "running";
  async function ask(e: Event) {
    e.preventDefault();
    e.stopPropagation();
    setEpisodes(null);
    try {
      const page = await call("episodes", { run_id: run.id, limit: 1 });
      setEpisodes(page.total);
    } catch (err) {
      setEpisodes(undefined);
      showError(err);
    }
  }
  async function remove() {
    setBusy(true);
    try {
      const d = await call("run_delete", { id: run.id });
      runs.update((m) => {
        const next = new Map(m);
        next.delete(run.id);
        return next;
      });
      setEpisodes(undefined);
      onDeleted(d);
    } catch (err) {
      setEpisodes(undefined);
      showError(err);
    } finally {
      setBusy(false);
    }
  }
  const n = (x: number) => x.toLocaleString("en");
  return (
    <>
      <button
        class="danger delete-run"
        data-delete-run={run.id}
        disabled={running}
        title={running ? "running: cancel it before deleting it (a run killed before finishing: resume and cancel it)" : "delete this run and everything recorded for it"}
        onClick={ask}
      >
        Delete
      </button>
      {/* on the page's body: inside a run card's summary a click would fold the card */}
      {episodes != null &&
        createPortal(
        <ConfirmDialog
          title={`Delete run ${run.id}?`}
          confirm={busy ? "Deleting…" : "Delete run"}
          confirmId="confirm-delete"
          cancelId="cancel-delete"
          enterConfirms
          busy={busy}
          onConfirm={() => void remove()}
          onCancel={() => setEpisodes(undefined)}
        >
          <p class="delete-what" id="delete-what">
            <b>
              #{run.id} {run.name}
            </b>{" "}
            ({run.status}) and everything recorded for it: <b id="delete-episodes">{n(episodes)}</b> episode{episodes === 1 ? "" : "s"} with their
            trajectories, its routing decisions, profiles, distilled examples, batches and checkpoints. This cannot be undone.
          </p>
          <p class="muted small">
            <kbd>Enter</kbd> deletes · <kbd>Esc</kbd> keeps it
          </p>
        </ConfirmDialog>,
          document.body,
        )}
    </>
  );
}
