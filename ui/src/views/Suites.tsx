// Suites: tasks by family, a task's preview, and importing a dataset file.

import { useEffect, useMemo, useState } from "preact/hooks";
import { call } from "../client";
import { navigate, showError, useLoad } from "../store";
import type { ImportResult } from "../types";
import { Empty, JsonBlock, Loading, VirtualList } from "../ui";

export function Suites({ params }: { params: URLSearchParams }) {
  const suites = useLoad(() => call("suites"), []);
  const suiteName = params.get("suite") ?? suites.data?.[0]?.name ?? "";
  const family = params.get("family") ?? "";
  const dataset = params.get("dataset") ?? "";
  const taskId = params.get("task") ?? "";
  const suite = suites.data?.find((s) => s.name === suiteName);
  const go = (p: Record<string, string | undefined>) => navigate("suites", { suite: suiteName, family, dataset, task: taskId, ...p });

  const tasks = useLoad(() => (suiteName ? call("tasks", { suite: suiteName, family: family || undefined, dataset: dataset || undefined }) : Promise.resolve([])), [suiteName, family, dataset]);
  const [filter, setFilter] = useState("");
  const shown = useMemo(() => {
    const f = filter.trim().toLowerCase();
    const all = tasks.data ?? [];
    return f ? all.filter((t) => t.id.toLowerCase().includes(f) || t.instruction.toLowerCase().includes(f) || t.family.toLowerCase().includes(f)) : all;
  }, [tasks.data, filter]);
  const selIndex = shown.findIndex((t) => t.id === taskId);
  // Families the filter names, or that hold a task it matches (all while the filter is empty).
  const shownFamilies = useMemo(() => {
    const f = filter.trim().toLowerCase();
    const fams = suites.data?.find((s) => s.name === suiteName)?.families ?? [];
    if (!f) return fams;
    const holding = new Set(shown.map((t) => t.family));
    return fams.filter((x) => x.family.toLowerCase().includes(f) || holding.has(x.family) || x.family === family);
  }, [suites.data, suiteName, shown, filter, family]);

  const detail = useLoad(() => (taskId && suiteName ? call("task", { suite: suiteName, id: taskId, dataset: dataset || undefined }) : Promise.resolve(null)), [suiteName, taskId, dataset]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT") return;
      const down = e.key === "j" || e.key === "ArrowDown";
      const up = e.key === "k" || e.key === "ArrowUp";
      if (!down && !up) return;
      e.preventDefault();
      if (!shown.length) return;
      const i = Math.max(0, Math.min(shown.length - 1, (selIndex < 0 ? -1 : selIndex) + (down ? 1 : -1)));
      go({ task: shown[i].id });
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [shown, selIndex, suiteName, family, dataset]);

  return (
    <div class="view suites">
      <header class="view-head">
        <h1>Suites</h1>
        <div class="tabs">
          {suites.data?.map((s) => (
            <button key={s.name} class={s.name === suiteName ? "tab active" : "tab"} onClick={() => navigate("suites", { suite: s.name })}>
              {s.name} <small>{s.tasks}</small>
            </button>
          ))}
        </div>
      </header>
      {suites.loading && <Loading />}
      {suite && (
        <div class="cols-3">
          <aside class="pane">
            <p class="muted small">{suite.description}</p>
            <h3>Dataset</h3>
            <select value={dataset} onChange={(e) => go({ dataset: (e.target as HTMLSelectElement).value, family: "", task: "" })} aria-label="dataset">
              <option value="">bundled ({suite.tasks} tasks)</option>
              {suite.datasets.map((d) => (
                <option key={d.name} value={d.name}>
                  {d.name} ({d.tasks} tasks)
                </option>
              ))}
            </select>
            <h3>Families</h3>
            <ul class="facets">
              <li>
                <button class={family === "" ? "facet active" : "facet"} onClick={() => go({ family: "", task: "" })}>
                  all <small>{suite.tasks}</small>
                </button>
              </li>
              {shownFamilies.map((f) => (
                <li key={f.family}>
                  <button class={family === f.family ? "facet active" : "facet"} onClick={() => go({ family: f.family, task: "" })}>
                    {f.family} <small>{f.tasks}</small>
                  </button>
                </li>
              ))}
            </ul>
            <ImportDataset
              suite={suite.name}
              format={suite.import_format}
              onImported={(name) => {
                suites.reload();
                navigate("suites", { suite: suite.name, dataset: name });
              }}
            />
          </aside>
          <section class="pane list-pane">
            <input data-search class="search" name="task-filter" placeholder="Filter tasks and families  ( / )" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
            <div class="muted small count">
              {shown.length} task{shown.length === 1 ? "" : "s"}
              {family && ` in ${family}`}
            </div>
            {tasks.loading ? (
              <Loading />
            ) : (
              <VirtualList
                count={shown.length}
                rowHeight={44}
                selected={selIndex}
                class="tasks-list"
                row={(i) => {
                  const t = shown[i];
                  return (
                    <button class={`task-row ${t.id === taskId ? "selected" : ""}`} onClick={() => go({ task: t.id })}>
                      <span class="task-head">
                        <span class="task-id">{t.id}</span>
                        <span class="chip">{t.family}</span>
                      </span>
                      <span class="task-instr">{t.instruction}</span>
                    </button>
                  );
                }}
              />
            )}
          </section>
          <section class="pane preview">
            {!taskId && <Empty>Pick a task (j / k to move).</Empty>}
            {detail.data && (
              <div class="task-detail">
                <h2>
                  {detail.data.id} <span class="chip">{detail.data.family}</span>
                </h2>
                <h3>Instruction</h3>
                <p class="instruction">{detail.data.instruction}</p>
                <h3>Prompt under the base harness</h3>
                <pre class="code wrap">{detail.data.prompt}</pre>
                <Tables value={detail.data.payload} />
                <h3>Payload</h3>
                <JsonBlock value={detail.data.payload} />
              </div>
            )}
          </section>
        </div>
      )}
    </div>
  );
}

function ImportDataset({ suite, format, onImported }: { suite: string; format: string; onImported: (name: string) => void }) {
  const [result, setResult] = useState<ImportResult | null>(null);
  const [busy, setBusy] = useState(false);
  async function onFile(e: Event) {
    const input = e.target as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    setBusy(true);
    setResult(null);
    try {
      const text = await file.text();
      const r = await call("import_dataset", { suite, name: file.name, text });
      setResult(r);
      if (r.ok) onImported(r.name);
    } catch (err) {
      showError(err);
    } finally {
      setBusy(false);
      input.value = "";
    }
  }
  return (
    <div class="import">
      <h3>Import a dataset file</h3>
      <p class="muted small">The benchmark's release format ({format}). Problems are listed by line.</p>
      <input type="file" id="import-file" accept=".jsonl,.json,.txt" onChange={onFile} disabled={busy} />
      {busy && <Loading />}
      {result && result.ok && (
        <div class="note ok">
          Imported <b>{result.name}</b>: {result.tasks} tasks.
        </div>
      )}
      {result && !result.ok && (
        <div class="import-errors" role="alert">
          <div class="error-text">
            The file was not imported: {result.errors.length} problem{result.errors.length === 1 ? "" : "s"}.
          </div>
          <table class="table compact">
            <thead>
              <tr>
                <th>line</th>
                <th>problem</th>
              </tr>
            </thead>
            <tbody>
              {result.errors.map((er, i) => (
                <tr key={i}>
                  <td class="num">{er.line ?? "–"}</td>
                  <td>{er.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

type Grid = { name: string; columns: string[]; rows: unknown[][] };

/** Tables found in a payload (objects with `columns` and `rows`), shown as tables. */
function findTables(v: unknown, name: string, out: Grid[], depth = 0) {
  if (!v || typeof v !== "object" || depth > 4 || out.length > 4) return;
  const o = v as Record<string, unknown>;
  if (Array.isArray(o.columns) && Array.isArray(o.rows)) {
    const columns = o.columns.map((c) => (c && typeof c === "object" && "name" in c ? String((c as { name: unknown }).name) : String(c)));
    const rows = (o.rows as unknown[]).map((r) => (Array.isArray(r) ? r : r && typeof r === "object" ? columns.map((c) => (r as Record<string, unknown>)[c]) : [r]));
    out.push({ name, columns, rows });
    return;
  }
  for (const [k, x] of Object.entries(o)) findTables(x, typeof o.table_name === "string" ? o.table_name : k, out, depth + 1);
}

function Tables({ value }: { value: unknown }) {
  const grids: Grid[] = [];
  findTables(value, "table", grids);
  if (!grids.length) return null;
  return (
    <>
      {grids.map((g, i) => (
        <div key={i} class="payload-table">
          <h3>
            Table <code>{g.name}</code> <span class="muted small">{g.rows.length} rows</span>
          </h3>
          <div class="table-scroll">
            <table class="table compact">
              <thead>
                <tr>
                  {g.columns.map((c) => (
                    <th key={c}>{c}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {g.rows.slice(0, 50).map((r, j) => (
                  <tr key={j}>
                    {r.map((c, k) => (
                      <td key={k}>{c === null ? <span class="muted">NULL</span> : String(c)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {g.rows.length > 50 && <div class="muted small">first 50 of {g.rows.length} rows</div>}
        </div>
      ))}
    </>
  );
}
