// Harnesses: the base and its siblings, each sibling as its difference from base, with its
// behaviour profile (paired outcomes against base, by family and failure signature).

import { useEffect, useState } from "preact/hooks";
import { call } from "../client";
import { navigate, useLoad } from "../store";
import type { Counts, Harness } from "../types";
import { Empty, Loading } from "../ui";
import "./review.css";

function isBase(h: Harness): boolean {
  return h.base === true || (!h.extends && h.base !== false);
}

/** What a harness is for: a sibling's specialty, else its description. */
function summary(h: Harness): string {
  return h.specialty || h.description;
}

type DiffLine = Harness["diff"][number];
const DIFF_CONTEXT = 2;

/** Unchanged runs longer than a few lines fold, so the change itself is what one sees. */
function Diff({ lines }: { lines: DiffLine[] }) {
  const [open, setOpen] = useState<Set<number>>(new Set());
  const near = lines.map((_, i) => lines.slice(Math.max(0, i - DIFF_CONTEXT), i + DIFF_CONTEXT + 1).some((d) => d.op !== " "));
  const out = [];
  for (let i = 0; i < lines.length; ) {
    if (near[i] || open.has(i)) {
      const d = lines[i];
      out.push(
        <div key={i} class={d.op === "+" ? "add" : d.op === "-" ? "del" : "ctx"}>
          <span class="op">{d.op}</span>
          {d.line}
        </div>,
      );
      i++;
      continue;
    }
    let j = i;
    while (j < lines.length && !near[j]) j++;
    const start = i;
    out.push(
      <button key={`f${i}`} class="link fold-lines" onClick={() => setOpen((o) => new Set([...o, ...Array.from({ length: j - start }, (_, k) => start + k)]))}>
        ⋯ {j - i} unchanged line{j - i === 1 ? "" : "s"}
      </button>,
    );
    i = j;
  }
  return (
    <pre class="diff" aria-label="difference from base">
      {out}
    </pre>
  );
}

/** Paired probe outcomes behind a profile. */
function pairs(c: Counts): number {
  return c.fix + c.regress + c.both_pass + c.both_fail;
}

export function CountsBar({ c }: { c: Counts }) {
  const total = pairs(c);
  if (!total) return <span class="muted">no paired tries</span>;
  const seg = (n: number, cls: string, label: string) =>
    n > 0 ? <span class={`seg ${cls}`} style={{ flexGrow: n }} title={`${label}: ${n}`} /> : null;
  return (
    <span class="countsbar" title={`fix ${c.fix} · regress ${c.regress} · both pass ${c.both_pass} · both fail ${c.both_fail}`}>
      {seg(c.fix, "fix", "fix")}
      {seg(c.regress, "regress", "regress")}
      {seg(c.both_pass, "both-pass", "both pass")}
      {seg(c.both_fail, "both-fail", "both fail")}
    </span>
  );
}

export function Harnesses({ params }: { params: URLSearchParams }) {
  const suites = useLoad(() => call("suites"), []);
  const suite = params.get("suite") ?? suites.data?.[0]?.name ?? "";
  // Whose evidence: profiles come from one experiment run, by default the one with the most
  // paired probe outcomes (a small or cancelled run does not replace a large one).
  const runs = useLoad(() => (suite ? call("profile_runs", { suite }) : Promise.resolve([])), [suite]);
  const runParam = params.get("run");
  const run = runParam ? Number(runParam) : undefined;
  const list = useLoad(
    () => (suite ? call("harnesses", run === undefined ? { suite } : { suite, run }) : Promise.resolve([])),
    [suite, run],
  );
  const [filter, setFilter] = useState("");
  const f = filter.trim().toLowerCase();
  // the base first; the filter keeps harnesses whose name, specialty or description holds it
  const sorted = [...(list.data ?? [])].sort((a, b) => Number(isBase(b)) - Number(isBase(a)));
  const ordered = sorted.filter((x) => !f || [x.name, x.specialty ?? "", x.description].some((t) => t.toLowerCase().includes(f)));
  const name = params.get("h") ?? sorted[0]?.name ?? "";
  const h = sorted.find((x) => x.name === name);
  const idx = ordered.findIndex((x) => x.name === name);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT") return;
      const d = e.key === "j" || e.key === "ArrowDown" ? 1 : e.key === "k" || e.key === "ArrowUp" ? -1 : 0;
      if (!d || !ordered.length) return;
      e.preventDefault();
      const i = Math.max(0, Math.min(ordered.length - 1, idx + d));
      navigate("harnesses", { suite, h: ordered[i].name, ...(runParam ? { run: runParam } : {}) });
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [ordered.length, idx, suite, runParam]);

  return (
    <div class="view harnesses">
      <header class="view-head">
        <h1>Harnesses</h1>
        <div class="tabs">
          {suites.data?.map((s) => (
            <button key={s.name} class={s.name === suite ? "tab active" : "tab"} onClick={() => navigate("harnesses", { suite: s.name })}>
              {s.name}
            </button>
          ))}
        </div>
        {(runs.data?.length ?? 0) > 0 && (
          <label class="profile-source">
            Profiles from{" "}
            <select
              aria-label="profiles from run"
              value={String(run ?? runs.data?.find((r) => r.default)?.run_id ?? "")}
              onChange={(e) => navigate("harnesses", { suite, ...(name ? { h: name } : {}), run: (e.target as HTMLSelectElement).value })}
            >
              {runs.data?.map((r) => (
                <option key={r.run_id} value={String(r.run_id)}>
                  run {r.run_id} · {r.name} · {r.pairs} paired probes{r.status !== "finished" ? ` · ${r.status}` : ""}
                  {r.default ? " · most evidence" : ""}
                </option>
              ))}
            </select>
          </label>
        )}
        <div class="legend">
          <span>
            <i class="swatch fix" /> fix (sibling passes, base fails)
          </span>
          <span>
            <i class="swatch regress" /> regress
          </span>
          <span>
            <i class="swatch both-pass" /> both pass
          </span>
          <span>
            <i class="swatch both-fail" /> both fail
          </span>
        </div>
      </header>
      {list.loading && <Loading />}
      <div class="cols-2">
        <aside class="pane harness-list">
          <input data-search class="search list-filter" name="harness-filter" placeholder="Filter harnesses  ( / )" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
          {f && ordered.length === 0 && <p class="muted small">No harness matches “{filter}”.</p>}
          {ordered.map((x) => (
            <button
              key={x.name}
              class={`harness-row ${x.name === name ? "selected" : ""}`}
              onClick={() => navigate("harnesses", { suite, h: x.name, ...(runParam ? { run: runParam } : {}) })}
            >
              <div class="row">
                <b>{x.name}</b>
                {isBase(x) ? (
                  <span class="tag base">base</span>
                ) : (
                  <span class="muted small" title="lines of the resolved spec added and removed against base">
                    spec +{x.diff.filter((d) => d.op === "+").length} −{x.diff.filter((d) => d.op === "-").length} lines
                  </span>
                )}
              </div>
              <div class="muted small clamp">{summary(x)}</div>
              {x.profile && (
                <div class="row small">
                  <CountsBar c={x.profile} />
                  <span class="fixnum" title="probe tasks base failed and this sibling solved">
                    {x.profile.fix} fix
                  </span>
                  <span class="regnum" title="probe tasks base solved and this sibling failed">
                    {x.profile.regress} regress
                  </span>
                </div>
              )}
            </button>
          ))}
        </aside>
        <section class="pane harness-detail">
          {!h && !list.loading && <Empty>No harnesses for this suite.</Empty>}
          {h && <HarnessDetail h={h} />}
        </section>
      </div>
    </div>
  );
}

function HarnessDetail({ h }: { h: Harness }) {
  const base = isBase(h);
  return (
    <div>
      <h2>
        {h.name} {base ? <span class="tag base">base harness</span> : <span class="muted small">extends {h.extends ?? "base"}</span>}
      </h2>
      <p class="specialty">{summary(h)}</p>
      {h.hooks && h.hooks.length > 0 && (
        <div class="chips">
          {h.hooks.map((k) => (
            <span key={k.id} class="tag hook" title={k.kind}>
              ⚑ {k.id} <small>{k.kind}</small>
            </span>
          ))}
        </div>
      )}
      <h3>Behaviour profile</h3>
      {!h.profile && <p class="muted">{base ? "Profiles are measured for siblings against this base." : "Not measured yet: an experiment with the harness-s arm measures it at each re-anchor."}</p>}
      {h.profile && (
        <div class="profile">
          <div class="muted small">
            Measured in <a href={`#/results?id=${h.profile.run_id}`}>run {h.profile.run_id}</a> ({h.profile.arm} arm, re-anchor {h.profile.anchor}) with policy version{" "}
            {String(h.profile.policy_version)}: {pairs(h.profile)} paired probes
          </div>
          <div class="profile-counts">
            <div class="count fix">
              <b>{h.profile.fix}</b> fix
            </div>
            <div class="count regress">
              <b>{h.profile.regress}</b> regress
            </div>
            <div class="count both-pass">
              <b>{h.profile.both_pass}</b> both pass
            </div>
            <div class="count both-fail">
              <b>{h.profile.both_fail}</b> both fail
            </div>
            <CountsBar c={h.profile} />
          </div>
          {h.profile.evidence.length > 0 && (
            <>
              <h4>Evidence</h4>
              <ul class="evidence">
                {h.profile.evidence.map((e, i) => (
                  <li key={i}>{e}</li>
                ))}
              </ul>
            </>
          )}
          {h.profile.buckets.length > 0 && (
            <>
              <h4>By family and failure signature</h4>
              <table class="table compact">
                <thead>
                  <tr>
                    <th>family</th>
                    <th>failure signature</th>
                    <th class="num">fix</th>
                    <th class="num">regress</th>
                    <th class="num">both pass</th>
                    <th class="num">both fail</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {h.profile.buckets.map((b, i) => (
                    <tr key={i}>
                      <td>{b.family}</td>
                      <td>
                        <code>{b.signature}</code>
                      </td>
                      <td class="num fixnum">{b.fix}</td>
                      <td class="num regnum">{b.regress}</td>
                      <td class="num">{b.both_pass}</td>
                      <td class="num">{b.both_fail}</td>
                      <td class="barcell">
                        <CountsBar c={b} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </div>
      )}
      {!base && (
        <>
          <h3>Difference from base</h3>
          <Diff key={h.name} lines={h.diff} />
        </>
      )}
      {base && (
        <>
          <h3>Spec</h3>
          <pre class="code">{h.spec}</pre>
        </>
      )}
      {!base && (
        <details>
          <summary>Full spec</summary>
          <pre class="code">{h.spec}</pre>
        </details>
      )}
    </div>
  );
}
