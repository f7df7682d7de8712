// Results: one experiment's report (headline, charts, final table), or compared with another
// run (what differs in their configurations, both runs' transfer curves in one chart, the
// differences per arm), and the report's export.

import { useEffect, useMemo, useState } from "preact/hooks";
import { downloadChart, FinalSuccessChart, ONE_SEED, ONE_SEED_WHY, SeedCi, TransferChart, type FinalPoint } from "../charts";
import { call, canOpenFiles, inTauri, openPath, saveReport, type ReportFormat, type SavedReport } from "../client";
import { finished, navigate, showError, useLoad, useStore } from "../store";
import type { ExportedFiles, FinalRow, PairedDelta, Report, RoutedDelta, TransferCurve } from "../types";
import { ArmName, ci, Empty, Loading, pct, signedPts, StatusTag, when } from "../ui";

const SPLIT_LABEL: Record<string, string> = { train: "training families", heldout: "held-out families" };

export function Results({ params }: { params: URLSearchParams }) {
  const exps = useLoad(() => call("experiments"), []);
  const list = exps.data ?? [];
  const idParam = Number(params.get("id") ?? NaN);
  const id = Number.isInteger(idParam) ? idParam : (list.find((e) => e.status === "finished") ?? list[0])?.id;
  const otherParam = Number(params.get("other") ?? NaN);
  const other = Number.isInteger(otherParam) ? otherParam : null;
  const report = useLoad(() => (id == null ? Promise.resolve(null) : other != null ? call("compare", { id, other }) : call("results", { id })), [id, other]);
  // A run that finishes while its report is open is shown final.
  const done = useStore(finished);
  useEffect(() => {
    if (done && (done.run_id === id || done.run_id === other)) report.reload();
  }, [done]);

  return (
    <div class="view results">
      <header class="view-head">
        <h1>Results</h1>
        <label class="field inline">
          <span>experiment</span>
          <select id="result-run" value={id ?? ""} onChange={(e) => navigate("results", { id: (e.target as HTMLSelectElement).value, other: other ?? undefined })}>
            {list.map((e) => (
              <option key={e.id} value={e.id}>
                #{e.id} {e.name} ({e.status})
              </option>
            ))}
          </select>
        </label>
        <label class="field inline">
          <span>compare with</span>
          <select id="compare-run" value={other ?? ""} onChange={(e) => navigate("results", { id: id ?? undefined, other: (e.target as HTMLSelectElement).value || undefined })}>
            <option value="">— none —</option>
            {list
              .filter((e) => e.id !== id)
              .map((e) => (
                <option key={e.id} value={e.id}>
                  #{e.id} {e.name} ({e.status})
                </option>
              ))}
          </select>
        </label>
        <span class="spacer" />
        {report.data && !report.data.finished && (
          <button onClick={report.reload} title="the run is not finished: read its numbers again">
            ↻ Refresh
          </button>
        )}
        {id != null && <ExportButtons id={id} other={other} />}
      </header>
      {exps.data && list.length === 0 && <Empty>No experiments yet. Run the demo from the Workspace (1) or start one under Experiments (4).</Empty>}
      {report.loading && id != null && <Loading />}
      {report.data && !report.loading && <ReportView r={report.data} />}
      {!report.data && !report.loading && id != null && <Empty>No report for run {id}.</Empty>}
    </div>
  );
}


/** A headline's interval and what it is over; from a single seed, none. */
function Interval({ d }: { d: PairedDelta }) {
  const over = `${d.tasks} tasks${d.seeds ? ` × ${d.seeds} seed${d.seeds === 1 ? "" : "s"}` : ""}`;
  return d.seeds < 2 ? (
    <>
      {over}:{" "}
      <span class="one-seed" title={ONE_SEED_WHY}>
        {ONE_SEED}
      </span>
    </>
  ) : (
    <>
      95% CI {ci(d.ci95)} over {over}
    </>
  );
}

function ExportButtons({ id, other }: { id: number; other: number | null }) {
  const [saved, setSaved] = useState<SavedReport | null>(null);
  useEffect(() => setSaved(null), [id, other]);
  async function go(f: ReportFormat) {
    try {
      const n = await saveReport(id, other, f);
      if (n) setSaved(n);
    } catch (e) {
      showError(e);
    }
  }
  const open = (path: string) => void openPath(path).catch(showError);
  return (
    <div class="export" aria-label="export">
      <span class="muted small">Export{other != null ? " comparison" : ""}:</span>
      {inTauri ? (
        <button onClick={() => go("html")} id="export-report" title="write the report (HTML, JSON, CSV, charts) into reports/ in the workspace">
          Export report folder
        </button>
      ) : (
        (["html", "json", "csv-zip"] as ReportFormat[]).map((f) => (
          <button
            key={f}
            onClick={() => go(f)}
            id={`export-${f}`}
            title={f === "csv-zip" ? "every table as its own CSV file, in one zip" : undefined}
          >
            {f === "csv-zip" ? "CSV tables (zip)" : f.toUpperCase()}
          </button>
        ))
      )}
      {saved && (
        <span class="muted small export-note" title={saved.note}>
          {saved.note}
        </span>
      )}
      {saved && canOpenFiles && saved.file && (
        <button id="open-report" onClick={() => open(saved.file!)} title={saved.file}>
          Open file
        </button>
      )}
      {saved && canOpenFiles && saved.dir && (
        <button id="show-report-folder" onClick={() => open(saved.dir!)} title={saved.dir}>
          Show in folder
        </button>
      )}
    </div>
  );
}

function ReportView({ r }: { r: Report }) {
  const hasCmp = r.comparison != null;
  return (
    <div class="report">
      <div class="report-head">
        <h2>
          #{r.run.id} {r.run.name} <StatusTag status={r.status} />
        </h2>
        <div class="muted small">
          arms: {r.arms.join(", ")} · suites: {r.suites.join(", ")} · base harness <code>{r.base_harness}</code> · created {when(r.run.created_at)}
          {r.run.finished_at && ` · finished ${when(r.run.finished_at)}`}
        </div>
        {!r.finished && <div class="banner warn">This run is {r.status}: the numbers are as far as it got, not final.</div>}
      </div>
      {r.headline.length > 0 && (
        <div class="headlines">
          {r.pooled && (
            <div class={`headline ${r.pooled.covers_zero ? "flat" : r.pooled.delta.mean > 0 ? "up" : "down"}`}>
              <div class="big-num">{signedPts(r.pooled.delta.mean)}</div>
              <div>
                <div>{r.pooled.sentence}</div>
                <div class="muted small">
                  all suites, {SPLIT_LABEL[r.pooled.split] ?? r.pooled.split}: {r.pooled.delta.arm} {pct(r.pooled.arm_success)} vs {r.pooled.delta.baseline}{" "}
                  {pct(r.pooled.baseline_success)}, <Interval d={r.pooled.delta} />
                </div>
              </div>
            </div>
          )}
          {r.headline.map((h, i) => (
            <div key={i} class={`headline ${h.covers_zero ? "flat" : h.delta.mean > 0 ? "up" : "down"}`}>
              <div class="big-num">{signedPts(h.delta.mean)}</div>
              <div>
                <div>{h.sentence}</div>
                <div class="muted small">
                  {h.suite}, {SPLIT_LABEL[h.split] ?? h.split}, iteration {h.iteration}: {h.delta.arm} {pct(h.arm_success)} vs {h.delta.baseline} {pct(h.baseline_success)},{" "}
                  <Interval d={h.delta} />
                </div>
              </div>
            </div>
          ))}
        </div>
      )}
      {hasCmp && <Comparison r={r} />}
      <h3>Final table</h3>
      <FinalTable rows={r.final_table.rows} baseline={r.final_table.baseline} />
      {(r.final_table.routed_vs ?? []).length > 0 && <RoutedVs rows={r.final_table.routed_vs!} />}
      <h3>Charts</h3>
      <Charts r={r} />
      <TrainingData id={r.run.id} />
      {r.notes.length > 0 && (
        <>
          <h3>Notes</h3>
          <ul class="notes">
            {r.notes.map((n, i) => (
              <li key={i}>{n}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

const TRAINING_FORMATS: [string, string][] = [
  ["openai-chat", "JSONL (TRL, OpenAI fine-tuning)"],
  ["sharegpt", "ShareGPT (LLaMA-Factory, axolotl)"],
  ["verl-sft", "parquet (verl multi-turn SFT)"],
];

/** The policy versions an external trainer made, and the run's training data for training elsewhere. */
function TrainingData({ id }: { id: number }) {
  const versions = useLoad(() => call("policy_versions", { id }), [id]);
  const [done, setDone] = useState<ExportedFiles | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  async function go(format: string) {
    setBusy(format);
    setDone(null);
    try {
      setDone(await call("export_training", { id, format }));
    } catch (e) {
      showError(e);
    } finally {
      setBusy(null);
    }
  }
  const rows = versions.data ?? [];
  return (
    <div class="training-data">
      {rows.length > 0 && (
        <>
          <h3>Policy versions</h3>
          <table class="table compact" id="policy-versions">
            <thead>
              <tr>
                <th>arm</th>
                <th class="num">seed</th>
                <th class="num">iteration</th>
                <th>version</th>
                <th class="num">sequences</th>
                <th class="num">loss</th>
                <th class="num">seconds</th>
                <th>checkpoint</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((v) => (
                <tr key={v.key} class={v.ok ? "" : "failed"}>
                  <td>
                    <ArmName arm={v.arm} />
                  </td>
                  <td class="num">{v.seed}</td>
                  <td class="num">{v.iteration}</td>
                  <td>{v.ok ? `v${v.trained_from} → v${v.trained_from + 1}` : `failed: ${v.error ?? ""}`}</td>
                  <td class="num">{v.sequences ?? "–"}</td>
                  <td class="num">{v.loss == null ? "–" : v.loss.toFixed(4)}</td>
                  <td class="num">{v.seconds.toFixed(1)}</td>
                  <td class="small">
                    <code>{v.checkpoint ?? ""}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <h3>Training data</h3>
      <div class="row">
        <span class="muted small">every update's batch and the evaluation trajectories, for training elsewhere:</span>
        {TRAINING_FORMATS.map(([f, what]) => (
          <button key={f} title={what} onClick={() => void go(f)} disabled={busy != null} data-format={f}>
            {busy === f ? "Writing…" : f}
          </button>
        ))}
      </div>
      {done && (
        <div class="note ok" id="training-export">
          Wrote {Object.entries(done.conversations).map(([k, n]) => `${n} ${k}`).join(", ")} conversations to <code>{done.files.join(", ")}</code>
        </div>
      )}
    </div>
  );
}


function lastIteration(t: TransferCurve[]): number {
  return Math.max(0, ...t.flatMap((c) => c.points.map((p) => p.iteration)));
}

/** Download buttons for a chart: the report's drawing of it, as SVG or PNG. */
function ChartDownload({ r, id }: { r: Report; id: string }) {
  const svg = r.charts.find((c) => c.id === id)?.svg;
  if (!svg) return null;
  const name = `run-${r.run.id}-${id}`;
  const go = (kind: "svg" | "png") => (e: Event) => {
    e.preventDefault();
    downloadChart(svg, name, kind).catch(showError);
  };
  return (
    <span class="chart-download small" data-download={id}>
      <button class="link" title={`save ${name}.svg (as the report draws it)`} onClick={go("svg")}>
        ⤓ SVG
      </button>
      <button class="link" title={`save ${name}.png`} onClick={go("png")}>
        ⤓ PNG
      </button>
    </span>
  );
}

/** The charts drawn in the page, then the report's other charts (SVGs), each one full width or
 * two to a row; a filter finds a chart by its title. */
function Charts({ r }: { r: Report }) {
  const [wide, setWide] = useState<Set<string>>(new Set());
  const [filter, setFilter] = useState("");
  const curves = r.transfer;
  const finals: FinalPoint[] = useMemo(
    () => r.final_table.rows.map((x) => ({ suite: x.suite, arm: x.arm, split: x.split, iteration: x.iteration, success: x.success, ci95: x.ci95, seeds: x.seeds.length, tasks: x.tasks })),
    [r],
  );
  // each arm's paired difference against the baseline: the final table's deltas
  const deltas: FinalPoint[] = useMemo(
    () =>
      r.final_table.rows.flatMap((x) =>
        x.delta ? [{ suite: x.suite, arm: x.arm, split: x.split, iteration: x.iteration, success: x.delta.mean, ci95: x.delta.ci95, seeds: x.delta.seeds, tasks: x.delta.tasks }] : [],
      ),
    [r],
  );
  // the transfer curves, the final success and the paired differences are drawn in the page;
  // the rest as the report's SVGs
  const drawn: { id: string; title: string }[] = [
    { id: "transfer", title: "Transfer: success under the base harness during training" },
    { id: "final-table", title: "Final success under the base harness" },
    { id: "final-deltas", title: `Paired difference against ${r.final_table.baseline} on the same tasks` },
  ];
  const svgs = r.charts.filter((c) => !drawn.some((d) => d.id === c.id));
  const q = filter.trim().toLowerCase();
  const shown = (title: string) => !q || title.toLowerCase().includes(q);
  const index = [...drawn, ...svgs.map((c) => ({ id: c.id, title: c.title }))];
  return (
    <>
      <div class="chart-tools">
        <input type="search" class="chart-filter" data-search placeholder="filter charts (/)" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} aria-label="filter charts by title" />
        <nav class="chart-index small">
          {index.filter((c) => shown(c.title)).map((c) => (
            <a key={c.id} href={`#chart-${c.id}`} onClick={(e) => (e.preventDefault(), document.getElementById(`chart-${c.id}`)?.scrollIntoView({ block: "start" }))}>
              {c.title}
            </a>
          ))}
        </nav>
      </div>
      {shown(drawn[0].title) && (
        <div id="chart-transfer" class="chart live wide">
          <ChartDownload r={r} id="transfer" />
          {r.transfer.length ? <TransferChart curves={curves} iterations={lastIteration(r.transfer)} /> : <p class="muted">No evaluation yet.</p>}
        </div>
      )}
      {shown(drawn[1].title) && (
        <div id="chart-final-table" class="chart live wide">
          <ChartDownload r={r} id="final-table" />
          {finals.length ? <FinalSuccessChart rows={finals} /> : <p class="muted">No evaluation yet.</p>}
        </div>
      )}
      {shown(drawn[2].title) && deltas.length > 0 && (
        <div id="chart-final-deltas" class="chart live wide">
          <ChartDownload r={r} id="final-deltas" />
          <FinalSuccessChart rows={deltas} kind="delta" baseline={r.final_table.baseline} />
        </div>
      )}
      <div class="charts">
        {svgs
          .filter((c) => shown(c.title))
          .map((c) => (
            <figure key={c.id} id={`chart-${c.id}`} class={`chart ${wide.has(c.id) ? "wide" : ""}`} data-chart={c.id}>
              <button
                class="link widen"
                title={wide.has(c.id) ? "back to half width" : "full width"}
                onClick={() =>
                  setWide((w) => {
                    const n = new Set(w);
                    if (n.has(c.id)) n.delete(c.id);
                    else n.add(c.id);
                    return n;
                  })
                }
              >
                {wide.has(c.id) ? "⤡" : "⤢"}
              </button>
              <ChartDownload r={r} id={c.id} />
              <div class="svg" role="img" aria-label={c.title} dangerouslySetInnerHTML={{ __html: c.svg ?? "" }} />
            </figure>
          ))}
      </div>
      {q && !index.some((c) => shown(c.title)) && <p class="muted">No chart title contains “{filter}”.</p>}
    </>
  );
}

function FinalTable({ rows, baseline }: { rows: FinalRow[]; baseline: string }) {
  if (!rows.length) return <p class="muted">No evaluation yet.</p>;
  return (
    <table class="table final-table">
      <thead>
        <tr>
          <th>suite</th>
          <th>arm</th>
          <th>split</th>
          <th class="num">iteration</th>
          <th class="num">tasks</th>
          <th class="num">seeds</th>
          <th class="num">success</th>
          <th>95% CI</th>
          <th class="num">Δ vs {baseline}</th>
          <th>Δ 95% CI</th>
          <th class="num" title={MDE_TITLE}>
            detectable Δ
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r, i) => (
          <tr key={i}>
            <td>{r.suite}</td>
            <td>
              <ArmName arm={r.arm} />
            </td>
            <td>{SPLIT_LABEL[r.split] ?? r.split}</td>
            <td class="num">{r.iteration}</td>
            <td class="num">{r.tasks}</td>
            <td class="num">{r.seeds.length}</td>
            <td class="num">
              <b>{pct(r.success)}</b>
            </td>
            <td class="muted">
              <SeedCi seeds={r.seeds.length}>{ci(r.ci95)}</SeedCi>
            </td>
            <DeltaCells delta={r.delta} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What the "detectable Δ" columns hold. */
const MDE_TITLE = "the smallest true difference this comparison's size detects with 80% power at two-sided 5% (its minimum detectable effect)";

/** A paired difference, its interval and its minimum detectable effect as three cells, green or red when the interval excludes
 * zero; empty cells where there is none. */
function DeltaCells({ delta }: { delta: PairedDelta | null }) {
  const sign = delta && delta.seeds > 1 ? (delta.ci95[0] > 0 ? "pos" : delta.ci95[1] < 0 ? "neg" : "") : "";
  return (
    <>
      <td class={`num ${sign}`}>{delta ? signedPts(delta.mean) : ""}</td>
      <td class="muted">{delta ? <SeedCi seeds={delta.seeds}>{ci(delta.ci95)}</SeedCi> : ""}</td>
      <td class="num muted" title={MDE_TITLE}>
        {delta && delta.seeds > 1 && delta.mde != null ? `${(delta.mde * 100).toFixed(1)} pts` : ""}
      </td>
    </>
  );
}

/** The routed arm against every other arm, paired: does routing beat the controls? */
function RoutedVs({ rows }: { rows: RoutedDelta[] }) {
  return (
    <>
      <h3>{rows[0].delta.arm} against every other arm</h3>
      <table class="table routed-vs">
        <thead>
          <tr>
            <th>suite</th>
            <th>split</th>
            <th>against</th>
            <th class="num">Δ</th>
            <th>95% CI</th>
            <th class="num" title={MDE_TITLE}>
              detectable Δ
            </th>
            <th class="num">tasks</th>
            <th class="num">seeds</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              <td>{r.suite}</td>
              <td>{SPLIT_LABEL[r.split] ?? r.split}</td>
              <td>
                <ArmName arm={r.delta.baseline} />
              </td>
              <DeltaCells delta={r.delta} />
              <td class="num">{r.delta.tasks}</td>
              <td class="num">{r.delta.seeds}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** One run's number in the comparison table: its success with its interval over seeds and, when
 * the two runs' final tables are at different iterations, its iteration; a run without the arm
 * says so instead. */
function RunCell({ success, ci95, seeds, iteration }: { success: number | null; ci95: [number, number] | null; seeds: number; iteration: number | null }) {
  if (success == null) {
    return <td class="num muted">not in this run</td>;
  }
  return (
    <td class="num">
      {pct(success)}{" "}
      <small class="muted">
        <SeedCi seeds={seeds}>
          {ci(ci95)} · {seeds} seeds
        </SeedCi>
        {iteration != null && <> · it {iteration}</>}
      </small>
    </td>
  );
}

/** The comparison with another run: what differs in the configurations, both runs' transfer
 * curves in one chart, and per arm and split this run minus the other. */
function Comparison({ r }: { r: Report }) {
  const c = r.comparison!;
  const thisLabel = `#${r.run.id} ${r.run.name}`;
  const otherLabel = `#${c.other_run.id} ${c.other_run.name}`;
  const mine = r.transfer;
  const theirs = c.other_transfer;
  const diffs = c.differences;
  return (
    <section class="comparison">
      <h3>
        Compared with #{c.other_run.id} {c.other_run.name} <StatusTag status={c.other_run.status} />
      </h3>
      <div class={`differences ${diffs.length ? "" : "same"}`} data-differences={diffs.length}>
        {diffs.length === 0 ? (
          <>Same configuration except the name.</>
        ) : (
          <>
            <b>Differs</b> (#{r.run.id} vs #{c.other_run.id}):{" "}
            {diffs.map((d, i) => (
              <span key={d.key} class="difference" data-key={d.key}>
                {i > 0 && "; "}
                {d.label} <b>{d.this}</b> vs <b>{d.other}</b>
              </span>
            ))}
          </>
        )}
      </div>
      {c.warnings.length > 0 && (
        <ul class="compare-warnings" data-compare-warnings={c.warnings.length}>
          {c.warnings.map((w, i) => (
            <li key={i}>{w}</li>
          ))}
        </ul>
      )}
      {c.other_headline.map((h, i) => (
        <div key={i} class="muted small">
          #{c.other_run.id}: {h.sentence}
        </div>
      ))}
      <TransferChart chart="transfer-compare" curves={mine} label={thisLabel} compare={{ curves: theirs, label: otherLabel }} iterations={Math.max(lastIteration(r.transfer), lastIteration(c.other_transfer))} />
      <dl class="terms small">
        <dt>difference</dt>
        <dd>
          #{r.run.id}'s success minus #{c.other_run.id}'s, each the mean over its own tasks and seeds: not paired.
        </dd>
        <dt>paired Δ</dt>
        <dd>
          the same subtraction task by task over the tasks both runs evaluated (each task's success averaged over its seeds), with a paired bootstrap interval over those tasks; it needs two or more seeds in each run.
          The headline's Δ is another pairing: harness-s minus policy-only within one run, on the same tasks and seeds.
        </dd>
      </dl>
      <table class="table compare-table">
        <thead>
          <tr>
            <th>suite</th>
            <th>arm</th>
            <th>split</th>
            <th class="num">#{r.run.id}</th>
            <th class="num">#{c.other_run.id}</th>
            <th class="num" title="this run's mean minus the other's, not paired">
              difference
            </th>
            <th class="num" title="this run minus the other over the tasks both evaluated">
              paired Δ
            </th>
            <th>paired 95% CI</th>
            <th class="num">shared tasks</th>
          </tr>
        </thead>
        <tbody>
          {c.rows.map((x, i) => {
            const seeds = x.paired ? Math.min(x.this_seeds, x.other_seeds) : 0;
            // the two runs' numbers come from different iterations: say which
            const mixed = x.this_iteration != null && x.other_iteration != null && x.this_iteration !== x.other_iteration;
            const sign = x.paired && seeds > 1 ? (x.paired.ci95[0] > 0 ? "pos" : x.paired.ci95[1] < 0 ? "neg" : "") : "";
            return (
              <tr key={i}>
                <td>{x.suite}</td>
                <td>
                  <ArmName arm={x.arm} />
                </td>
                <td>{SPLIT_LABEL[x.split] ?? x.split}</td>
                <RunCell success={x.this} ci95={x.this_ci95} seeds={x.this_seeds} iteration={mixed ? x.this_iteration : null} />
                <RunCell success={x.other} ci95={x.other_ci95} seeds={x.other_seeds} iteration={mixed ? x.other_iteration : null} />
                <td class="num">{signedPts(x.difference)}</td>
                <td class={`num ${sign}`}>{x.paired ? signedPts(x.paired.mean) : "–"}</td>
                <td class="muted">{x.paired ? <SeedCi seeds={seeds}>{ci(x.paired.ci95)}</SeedCi> : ""}</td>
                <td class="num">{x.paired?.tasks ?? ""}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
