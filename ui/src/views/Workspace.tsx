// The first page: where the workspace is, the bundled suites, and the demo.

import { useEffect, useState } from "preact/hooks";
import { SeedCi } from "../charts";
import { call } from "../client";
import { finished, navigate, runBar, runs, showError, useLoad, useStore } from "../store";
import type { ExperimentRow } from "../types";
import { ci, DeleteRunButton, duration, Loading, names, pct, Progress, signedPts, StatusTag, when } from "../ui";

/** The run's headline difference, from the same analysis as its results page: pooled over
 * suites for a run of several, else the one suite's; at the last evaluation every arm reached. */
function HeadlineDelta({ e }: { e: ExperimentRow }) {
  const h = e.headline[0];
  const d = e.pooled ?? h;
  if (!d || !h) return <span class="muted">–</span>;
  const its = e.headline.map((x) => `${x.suite} iteration ${x.iteration}`).join(", ");
  const split = d.split === "heldout" ? "held-out families" : "training families (no held-out families)";
  return (
    <span class="headline-delta" title={`harness-s minus policy-only on ${split}, ${its}: ${d.sentence}`}>
      {signedPts(d.delta.mean)}{" "}
      <SeedCi seeds={d.delta.seeds}>
        <span class="muted">{ci(d.delta.ci95)}</span>
      </SeedCi>
      {d.split !== "heldout" && <span class="muted small"> train</span>}
      <span class="muted small"> · it {e.headline.length === 1 ? h.iteration : e.headline.map((x) => x.iteration).join("/")}</span>
    </span>
  );
}

export function Workspace() {
  const ws = useLoad(() => call("workspace"), []);
  const suites = useLoad(() => call("suites"), []);
  const done = useStore(finished);
  const [demoRun, setDemoRun] = useState<number | null>(null);
  const exps = useLoad(() => call("experiments"), [done, demoRun]);
  const [starting, setStarting] = useState(false);
  const [filter, setFilter] = useState("");
  const all = useStore(runs);

  // A demo started here (or still running from before) is followed until it lands on its results.
  const runningDemo =
    ws.data?.demo_run_id != null
      ? ws.data.running.includes(ws.data.demo_run_id)
        ? ws.data.demo_run_id
        : null
      : ([...all.values()].find((r) => r.status === "running" && r.name === "demo")?.run_id ?? null);
  const demoId = demoRun ?? runningDemo;
  const progress = demoId != null ? all.get(demoId) : undefined;
  useEffect(() => {
    if (demoId != null && done?.run_id === demoId) {
      if (done.status === "finished") navigate("results", { id: demoId });
      else ws.reload();
    }
  }, [done, demoId]);
  useEffect(() => {
    if (demoId != null && progress && progress.status === "finished") navigate("results", { id: demoId });
  }, [progress?.status]);

  async function runDemo() {
    setStarting(true);
    try {
      const r = await call("run_demo");
      setDemoRun(r.run_id);
    } catch (e) {
      showError(e);
    } finally {
      setStarting(false);
    }
  }

  const demoFinished =
    ws.data?.demo_run_id != null
      ? exps.data?.find((e) => e.id === ws.data!.demo_run_id && e.status === "finished")
      : exps.data?.find((e) => e.name === "demo" && e.status === "finished");
  const running = progress && progress.status === "running";
  const demoRow = demoId != null ? exps.data?.find((e) => e.id === demoId) : undefined;
  // the newest eight, or every run the filter matches (id, name, status, suite)
  const f = filter.trim().toLowerCase();
  const shown = f
    ? (exps.data ?? []).filter((e) => String(e.id) === f.replace(/^#/, "") || [e.name, e.status, ...names(e.suites)].some((x) => x.toLowerCase().includes(f)))
    : (exps.data ?? []).slice(0, 8);
  const startedAt = demoRow ? Date.parse(demoRow.created_at) : NaN;

  return (
    <div class="view workspace">
      <header class="view-head">
        <h1>Workspace</h1>
        {ws.data && (
          <div class="meta">
            <span title="run store">{ws.data.db}</span>
            <span title="workspace folder">{ws.data.workspace_dir}</span>
            <span>v{ws.data.version}</span>
          </div>
        )}
      </header>

      <section class="hero">
        <div class="hero-text">
          <h2>Learning from sibling harnesses</h2>
          <p>
            When every try under the base harness fails, the router sends the task to sibling harnesses (base plus one repair specialty), and their successes are
            distilled back into the policy as base-context examples. The demo trains the built-in CPU policy on the bundled DBBench with every arm, offline, and
            opens its report.
          </p>
        </div>
        <div class="hero-action">
          <button class="primary big" id="run-demo" onClick={runDemo} disabled={starting || !!running}>
            {running ? "Demo running…" : starting ? "Starting…" : "▶ Run demo"}
          </button>
          {demoFinished && !running && (
            <button class="link" onClick={() => navigate("results", { id: demoFinished.id })}>
              Open the last demo's results (run {demoFinished.id})
            </button>
          )}
        </div>
        {progress && (
          <div class="demo-progress" id="demo-progress">
            <div class="row">
              <StatusTag status={progress.status} />
              <span>{(progress.status === "running" && progress.now) || progress.label || (progress.done === 0 ? "starting…" : "")}</span>
              <span class="spacer" />
              <span>{runBar(progress).text}</span>
              <span>success {pct(progress.success_rate)}</span>
              <span>{progress.status === "running" ? `ETA ${duration(progress.eta_s)}${Number.isFinite(startedAt) ? ` · running ${duration((Date.now() - startedAt) / 1000)}` : ""}` : ""}</span>
            </div>
            <Progress done={runBar(progress).done} total={runBar(progress).total} status={progress.status} />
            {progress.messages.length > 0 && <div class="muted small">{progress.messages[progress.messages.length - 1]}</div>}
            {progress.status === "failed" && progress.error && <div class="error-text">{progress.error}</div>}
          </div>
        )}
      </section>

      <section>
        <h2>Bundled suites</h2>
        {suites.loading && <Loading />}
        <div class="cards">
          {suites.data?.map((s) => (
            <a class="card" key={s.name} href={`#/suites?suite=${encodeURIComponent(s.name)}`}>
              <h3>{s.name}</h3>
              <p>{s.description}</p>
              <div class="muted">
                {s.tasks} tasks · {s.families.length} families
                {s.datasets.length > 0 && ` · ${s.datasets.length} imported dataset${s.datasets.length > 1 ? "s" : ""}`}
              </div>
              <div class="chips">
                {s.families.slice(0, 14).map((f) => (
                  <span class="chip" key={f.family}>
                    {f.family} <small>{f.tasks}</small>
                  </span>
                ))}
                {s.families.length > 14 && <span class="chip">+{s.families.length - 14}</span>}
              </div>
            </a>
          ))}
        </div>
      </section>

      <section>
        <div class="runs-head">
          <h2>Recent experiments</h2>
          <input data-search class="search" name="run-filter" placeholder="Filter runs  ( / )" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
          {shown.length < (exps.data?.length ?? 0) && (
            <span class="muted small">
              {shown.length} of {exps.data?.length} shown{filter ? "" : " · all under Experiments (4)"}
            </span>
          )}
        </div>
        {exps.data && exps.data.length === 0 && <p class="muted">No experiments yet: run the demo, or build one under Experiments (4).</p>}
        {exps.data && exps.data.length > 0 && shown.length === 0 && <p class="muted small">No run matches “{filter}”.</p>}
        {shown.length > 0 && (
          <table class="table">
            <thead>
              <tr>
                <th>run</th>
                <th>name</th>
                <th>status</th>
                <th>suites</th>
                <th>created</th>
                <th class="num" title="harness-s minus policy-only on held-out families, as on the run's results page: at the last evaluation every arm and seed reached (it)">held-out Δ</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {shown.map((e) => (
                <tr key={e.id} data-run={e.id}>
                  <td class="num">{e.id}</td>
                  <td>{e.name}</td>
                  <td>
                    <StatusTag status={e.status} />
                  </td>
                  <td>{names(e.suites).join(", ")}</td>
                  <td class="muted">{when(e.created_at)}</td>
                  <td class="num">
                    <HeadlineDelta e={e} />
                  </td>
                  <td class="actions">
                    <a href={`#/results?id=${e.id}`}>results</a> <a href={`#/inspector?run=${e.id}`}>trajectories</a>{" "}
                    <DeleteRunButton run={e} onDeleted={() => (exps.reload(), ws.reload())} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
