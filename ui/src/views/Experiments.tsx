// Experiments: build an experiment file (form over its JSON, TOML beside it), save it, start
// it, and follow every run's progress per arm and seed; cancel and resume.

import { createContext } from "preact";
import { useContext, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError, call } from "../client";
import { TransferChart } from "../charts";
import { navigate, refreshJobs, runBar, runs, showError, Store, useLoad, useStore, type RunProgress } from "../store";
import type { ExperimentConfig, RolloutEstimate, ServingConfig, SuitePower, TrainerCheck, TrainerConfig, Unit, WorkerRow, Workers } from "../types";
import { ArmName, arms, ConfirmDialog, DeleteRunButton, duration, Loading, names, pct, Progress, StatusTag, when } from "../ui";

/** A problem the server found: in the TOML the user typed (`toml`, with its line) or in the form's
 * configuration (`form`: the TOML pane then shows the last valid file). */
type TomlError = { error: string; line: number | null; key?: string | null; origin: "form" | "toml" };

/** A config the server refused, with the setting it named. */
class ConfigError extends Error {
  constructor(readonly detail: TomlError) {
    super(detail.error);
  }
}

const asTomlError = (e: unknown): TomlError =>
  e instanceof ConfigError ? e.detail : { error: e instanceof Error ? e.message : String(e), line: null, origin: "form" };

/**
 * The experiment file for the form's config: `original` (the file being edited) with only the
 * changed settings edited, comments and order kept (the server's `config_render`). When the
 * server refuses the config, `config_check` on the same JSON names the setting.
 */
async function render(config: ExperimentConfig, original?: string): Promise<string> {
  try {
    return (await call("config_render", { config, original })).toml;
  } catch (e) {
    const c = await call("config_check", { config });
    if (!c.ok) throw new ConfigError({ ...c, origin: "form" });
    throw e;
  }
}


function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

/** The experiment file the builder should load next (an earlier run's), or null for the template. */
const builderSource = new Store<string | null>(null);
/** The file being edited, kept while the user visits other views. */
let draft: { toml: string; copy: string | null } | null = null;

async function editCopy(runId: number) {
  try {
    const e = await call("experiment", { id: runId });
    builderSource.set(e.config_toml?.trim() ? e.config_toml : await render(e.config));
    document.querySelector(".builder")?.scrollIntoView({ block: "start" });
  } catch (err) {
    showError(err);
  }
}

/** Settings whose form field is not named after the setting's last segment. */
const FIELD_OF_KEY: Record<string, string> = {
  "eval.train_tasks": "eval_train_tasks",
  heldout_families: "heldout",
  arms: "arm",
  suites: "suite",
  "policy.backend": "backend",
  "trainer.command": "trainer_command",
  "trainer.objective": "trainer_objective",
  "trainer.timeout_s": "trainer_timeout",
  "trainer.base_model": "trainer_base_model",
  "serving.kind": "serving_kind",
  "serving.ready_timeout_s": "serving_ready_timeout",
};
const fieldOfKey = (key: string) => FIELD_OF_KEY[key] ?? key.split(".").pop() ?? key;

/** The file name an experiment is saved under by default: its name, made safe. */
export function fileNameFor(name: string): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "");
  return `${slug || "experiment"}.toml`;
}

/** What a number field accepts; the server checks the same bounds (src/experiment/config.rs). */
type Rule = { whole: boolean; min: number; max?: number };
const WHOLE = (min: number, max?: number): Rule => ({ whole: true, min, max });

/** Why `raw` is not acceptable for the field `label`, in words, or null. */
function numberProblem(label: string, raw: string, rule: Rule): string | null {
  const t = raw.trim();
  const v = Number(t);
  // the upper bound is named when it is the one crossed
  const range = rule.max !== undefined && v > rule.max ? `from ${rule.min} to ${rule.max.toLocaleString("en")}` : `≥ ${rule.min}`;
  if (rule.whole) {
    if (t === "" || !Number.isInteger(v) || v < rule.min || (rule.max !== undefined && v > rule.max)) return `${label} must be a whole number ${range}`;
    return null;
  }
  if (t === "" || !Number.isFinite(v) || v < rule.min || (rule.max !== undefined && v > rule.max)) return `${label} must be a number ${range}`;
  return null;
}

/** A seed list: whole numbers ≥ 0, at least one (at most 1,000). */
function seedsProblem(raw: string): string | null {
  const parts = raw.split(/[\s,]+/).filter(Boolean);
  if (parts.length === 0) return "seeds must list at least one whole number ≥ 0";
  if (parts.length > 1000) return "seeds: at most 1,000";
  if (parts.some((p) => !/^\d+$/.test(p))) return "seeds must be whole numbers ≥ 0, separated by commas";
  return null;
}

/** How number fields report to the builder: their own problem, and the server's for their setting. */
const FieldCheck = createContext<{ report: (name: string, problem: string | null) => void; serverProblem: (name: string) => string | null }>({
  report: () => {},
  serverProblem: () => null,
});

function NumField(props: { label: string; hint?: string; value: number | undefined; onChange: (n: number) => void; rule: Rule; step?: number; name: string }) {
  const check = useContext(FieldCheck);
  // The text typed while it is not an acceptable value; the config keeps its last good value.
  const [raw, setRaw] = useState<string | null>(null);
  const problem = (raw !== null ? numberProblem(props.label, raw, props.rule) : null) ?? check.serverProblem(props.name);
  // A value set from elsewhere (the TOML) replaces what was typed.
  useEffect(() => {
    setRaw(null);
    check.report(props.name, null);
  }, [props.value]);
  useEffect(() => () => check.report(props.name, null), []);
  const msgId = `${props.name}-problem`;
  return (
    <label class={`field num-field ${problem ? "invalid" : ""}`} title={props.hint}>
      <span>{props.label}</span>
      <input
        type="number"
        name={props.name}
        min={props.rule.min}
        max={props.rule.max}
        step={props.step ?? 1}
        value={raw ?? props.value ?? ""}
        aria-invalid={problem ? "true" : undefined}
        aria-describedby={problem ? msgId : undefined}
        onInput={(e) => {
          const text = (e.target as HTMLInputElement).value;
          const p = numberProblem(props.label, text, props.rule);
          check.report(props.name, p);
          if (p) setRaw(text);
          else {
            setRaw(null);
            props.onChange(Number(text));
          }
        }}
      />
      {problem && (
        <span class="field-problem" id={msgId} role="alert">
          {problem}
        </span>
      )}
    </label>
  );
}

export function Experiments({ params }: { params: URLSearchParams }) {
  const focusRun = params.get("run") ? Number(params.get("run")) : null;
  const { status, active } = useWorkers();
  return (
    <div class="view experiments">
      <header class="view-head">
        <h1>Experiments</h1>
      </header>
      <RunsPanel focus={focusRun} running={status?.running.map((r) => r.run_id).join(",") ?? ""} active={active} />
      <WorkersPanel status={status} />
      <Builder />
    </div>
  );
}

/** How many executor rollouts the experiment runs and roughly how long (the server's estimate). */
function Estimate({ config, e, stale, updating }: { config: ExperimentConfig; e: RolloutEstimate; stale: boolean; updating: boolean }) {
  const n = (x: number) => x.toLocaleString("en");
  const plural = (k: number, w: string) => `${k} ${w}${k === 1 ? "" : "s"}`;
  const rollouts = e.min === e.max ? n(e.max) : `${n(e.min)}–${n(e.max)}`;
  const time = e.seconds_min === e.seconds_max ? duration(e.seconds_max) : `${duration(e.seconds_min)} – ${duration(e.seconds_max)}`;
  return (
    <div class={`estimate ${stale || updating ? "stale" : ""}`} id="estimate" aria-busy={updating ? "true" : undefined}>
      <div>
        {stale && <span class="tag warn">last valid settings</span>} {plural(config.arms.length, "arm")} × {plural(config.seeds.length, "seed")}
        {config.suites.length > 1 ? ` × ${plural(config.suites.length, "suite")}` : ""} × {plural(config.iterations, "iteration")}:{" "}
        <b id="estimate-rollouts">{rollouts}</b> executor rollouts, about <b id="estimate-time">{time}</b> here ({e.parallel} at a time).
      </div>
      <div class="muted small" title="fewest: every training task succeeds in a base try; most: every one fails them all and is rescued">
        training {n(e.train)} · rescues up to {n(e.rescue)} · profile probes {n(e.probe)} · evaluation {n(e.eval)}
        {e.demonstrations > 0 ? ` · ${n(e.demonstrations)} warm-start demonstrations searched` : ""}. Times are rough per-suite figures.
      </div>
      {e.warning && (
        <div class="banner warn" id="estimate-warning">
          {e.warning}
        </div>
      )}
    </div>
  );
}

/**
 * What the design can detect, per suite, planned from the newest finished run on that suite
 * (the server's plan: no statistics here), and the sizes an effect the user types needs.
 */
function Power({ plans, effect, setEffect, updating }: { plans: SuitePower[]; effect: string; setEffect: (v: string) => void; updating: boolean }) {
  if (plans.length === 0) return null;
  const bad = effect.trim() !== "" && !(Number(effect) > 0 && Number(effect) <= 100);
  return (
    <div class={`power ${updating ? "stale" : ""}`} id="power" aria-busy={updating ? "true" : undefined}>
      <div class="row">
        <b>Detectable difference</b>
        <span class="muted small">80% power, two-sided 5%, from a finished run's spread (docs/power.md)</span>
        <span class="spacer" />
        <label class="small">
          size for{" "}
          <input
            id="power-effect"
            class={bad ? "invalid" : ""}
            inputMode="decimal"
            size={4}
            value={effect}
            placeholder="5"
            aria-label="effect to size for, in points"
            onInput={(e) => setEffect((e.target as HTMLInputElement).value)}
          />{" "}
          pts
        </label>
      </div>
      {plans.map((p) => (
        <div class="power-suite" data-suite={p.suite} key={p.suite}>
          {p.mde != null && (
            <b class="power-mde">
              {(100 * p.mde).toFixed(1)} pts
            </b>
          )}{" "}
          <span class="power-sentence">{p.sentence}</span>
        </div>
      ))}
      {bad && <div class="error-text">The effect is a number of points between 0 and 100.</div>}
    </div>
  );
}

function Builder() {
  const suites = useLoad(() => call("suites"), []);
  const [config, setConfig] = useState<ExperimentConfig | null>(null);
  const [toml, setToml] = useState("");
  const [tomlError, setTomlError] = useState<TomlError | null>(null);
  // The server's estimate, with the text it is for (while the file is being re-checked, it is marked).
  const [estimate, setEstimate] = useState<{ toml: string; e: RolloutEstimate | null } | null>(null);
  // The plan of what the design detects, with the text and effect it is for.
  const [power, setPower] = useState<{ toml: string; effect: number | undefined; plans: SuitePower[] } | null>(null);
  const [effect, setEffect] = useState("");
  const effectShare = Number(effect) > 0 && Number(effect) <= 100 ? Number(effect) / 100 : undefined;
  // Form fields whose text is not an acceptable value, with why.
  const [problems, setProblems] = useState<Record<string, string>>({});
  // Which side was edited last decides which way the next conversion goes.
  const source = useRef<"form" | "toml" | "init">("init");
  // The last text that checked valid: form edits are applied onto it.
  const lastValid = useRef<string | undefined>(undefined);
  // The save path the user typed (relative to experiments/); until then it follows the name.
  const [customPath, setCustomPath] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [confirmPath, setConfirmPath] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);

  // The builder starts from the demo's file, or from an earlier run's file ("edit a copy").
  const copy = useStore(builderSource);
  useEffect(() => {
    (async () => {
      try {
        // Coming back to the view keeps the file being edited.
        const t = draft && draft.copy === copy ? draft.toml : (copy ?? (await call("config_template")).toml);
        const c = await call("config_check", { toml: t, effect: effectShare });
        source.current = "init";
        setToml(t);
        setSaved(null);
        setCustomPath(null);
        if (c.ok) {
          lastValid.current = t;
          setConfig(c.config);
          setEstimate({ toml: t, e: c.estimate });
          setPower({ toml: t, effect: effectShare, plans: c.power });
          setTomlError(null);
        } else setTomlError({ ...c, origin: "toml" });
      } catch (e) {
        showError(e);
      }
    })();
  }, [copy]);

  const invalidFields = Object.keys(problems);
  const formInvalid = invalidFields.length > 0;

  const debouncedConfig = useDebounced(config, 200);
  useEffect(() => {
    if (!debouncedConfig || source.current !== "form" || formInvalid) return;
    render(debouncedConfig, lastValid.current).then(
      (t) => {
        lastValid.current = t;
        setToml(t);
        setTomlError(null);
      },
      (e) => setTomlError(asTomlError(e)),
    );
  }, [debouncedConfig, formInvalid]);

  useEffect(() => {
    if (toml) draft = { toml, copy };
  }, [toml]);

  // Every text shown is checked: a typed one updates the form, and each brings its estimate.
  const debouncedToml = useDebounced(toml, 300);
  useEffect(() => {
    if (!debouncedToml || source.current === "init") return;
    const typed = source.current === "toml";
    call("config_check", { toml: debouncedToml, effect: effectShare }).then(
      (c) => {
        if (c.ok) {
          setEstimate({ toml: debouncedToml, e: c.estimate });
          setPower({ toml: debouncedToml, effect: effectShare, plans: c.power });
          if (typed) {
            lastValid.current = debouncedToml;
            setConfig(c.config);
            setTomlError(null);
          }
        } else if (typed) setTomlError({ ...c, origin: "toml" });
      },
      (e) => showError(e),
    );
  }, [debouncedToml]);

  // A typed effect re-plans the last valid file.
  const debouncedEffect = useDebounced(effectShare, 300);
  useEffect(() => {
    const t = lastValid.current;
    if (!t || power?.effect === debouncedEffect) return;
    call("config_check", { toml: t, effect: debouncedEffect }).then(
      (c) => {
        if (c.ok) setPower({ toml: t, effect: debouncedEffect, plans: c.power });
      },
      (e) => showError(e),
    );
  }, [debouncedEffect]);

  function edit(f: (c: ExperimentConfig) => void) {
    if (!config) return;
    const next = structuredClone(config);
    f(next);
    source.current = "form";
    setSaved(null);
    setConfig(next);
  }

  const fieldCheck = useMemo(
    () => ({
      report: (name: string, problem: string | null) =>
        setProblems((p) => {
          if ((p[name] ?? null) === problem) return p;
          const next = { ...p };
          if (problem) next[name] = problem;
          else delete next[name];
          return next;
        }),
      serverProblem: (name: string) => {
        if (!tomlError?.key || fieldOfKey(tomlError.key) !== name) return null;
        // "experiment file: budget.batch_tasks: line 4: must be …" → "budget.batch_tasks: must be …"
        const rest = tomlError.error.slice(tomlError.error.indexOf(`${tomlError.key}: `) + tomlError.key.length + 2).replace(/^line \d+: /, "");
        return `${tomlError.key}: ${rest}`;
      },
    }),
    [tomlError],
  );

  const families = useMemo(() => {
    const out: { suite: string; family: string; tasks: number }[] = [];
    for (const s of suites.data ?? []) if (config?.suites.includes(s.name)) for (const f of s.families) out.push({ suite: s.name, ...f });
    return out;
  }, [suites.data, config?.suites]);

  // The TOML sent to the server is the one shown, once it agrees with the form.
  async function settled(): Promise<string | null> {
    if (!config || formInvalid) return null;
    if (source.current === "form") {
      const t = await render(config, lastValid.current);
      lastValid.current = t;
      setToml(t);
      return t;
    }
    const c = await call("config_check", { toml });
    if (!c.ok) {
      setTomlError({ ...c, origin: "toml" });
      return null;
    }
    return toml;
  }

  const defaultPath = fileNameFor(config?.name ?? "");
  const savePath = customPath ?? defaultPath;

  async function save(overwrite = false) {
    try {
      const t = await settled();
      if (t === null) return;
      const r = await call("config_save", { path: savePath, toml: t, overwrite: overwrite || undefined });
      setConfirmPath(null);
      setSaved(r.path);
    } catch (e) {
      if (e instanceof ApiError && e.kind === "conflict") setConfirmPath(savePath);
      else if (e instanceof ConfigError) setTomlError(e.detail);
      else showError(e);
    }
  }

  async function start() {
    setStarting(true);
    try {
      const t = await settled();
      if (t === null) return;
      const r = await call("experiment_start", { toml: t });
      await refreshJobs();
      navigate("experiments", { run: r.run_id });
    } catch (e) {
      if (e instanceof ConfigError) setTomlError(e.detail);
      else showError(e);
    } finally {
      setStarting(false);
    }
  }

  // The form field (or group) of the setting the server complained about is marked; number
  // fields mark themselves.
  useEffect(() => {
    for (const el of document.querySelectorAll(".builder-form .server-invalid")) el.classList.remove("server-invalid");
    const name = tomlError?.key ? fieldOfKey(tomlError.key) : null;
    const input = name ? document.querySelector(`.builder-form [name="${CSS.escape(name)}"]`) : null;
    if (input && input.closest(".num-field") === null) input.closest(".field, fieldset")?.classList.add("server-invalid");
  }, [tomlError, config]);

  if (!config) return tomlError ? <div class="error-text">{tomlError.error}</div> : <Loading />;
  const p = config.policy;
  const openai = p.backend !== "builtin";
  // The TOML pane shows the last valid file while the form holds something it cannot become.
  const stale = formInvalid || tomlError?.origin === "form";
  const blocked = stale || !!tomlError;

  return (
    <FieldCheck.Provider value={fieldCheck}>
    <section class="builder">
      <div class="builder-form">
        <div class="form-row">
          <label class="field grow">
            <span>Name</span>
            <input name="name" value={config.name} onInput={(e) => edit((c) => (c.name = (e.target as HTMLInputElement).value))} />
          </label>
        </div>

        <fieldset>
          <legend>Suites</legend>
          <div class="checks">
            {suites.data?.map((s) => (
              <label key={s.name} class="check">
                <input
                  type="checkbox"
                  name="suite"
                  value={s.name}
                  checked={config.suites.includes(s.name)}
                  onChange={(e) =>
                    edit((c) => {
                      const on = (e.target as HTMLInputElement).checked;
                      c.suites = on ? [...c.suites, s.name] : c.suites.filter((x) => x !== s.name);
                      const fams = new Set((suites.data ?? []).filter((x) => c.suites.includes(x.name)).flatMap((x) => x.families.map((f) => f.family)));
                      c.heldout_families = c.heldout_families.filter((f) => fams.has(f));
                    })
                  }
                />
                {s.name} <small class="muted">{s.tasks} tasks</small>
              </label>
            ))}
          </div>
        </fieldset>

        <fieldset>
          <legend>
            Split: held-out families <small class="muted">never trained on; evaluated under the base harness</small>
          </legend>
          <div class="checks chips-checks">
            {families.map((f) => (
              <label key={f.suite + f.family} class={`chip check ${config.heldout_families.includes(f.family) ? "on" : ""}`}>
                <input
                  type="checkbox"
                  name="heldout"
                  value={f.family}
                  checked={config.heldout_families.includes(f.family)}
                  onChange={(e) =>
                    edit((c) => {
                      const on = (e.target as HTMLInputElement).checked;
                      c.heldout_families = on ? [...c.heldout_families, f.family] : c.heldout_families.filter((x) => x !== f.family);
                    })
                  }
                />
                {f.family} <small>{f.tasks}</small>
              </label>
            ))}
          </div>
        </fieldset>

        <fieldset>
          <legend>Policy</legend>
          <div class="form-row">
            <label class="check">
              <input
                type="radio"
                name="backend"
                value="builtin"
                checked={!openai}
                onChange={() =>
                  edit((c) => {
                    c.policy = { ...c.policy, backend: "builtin", base_url: undefined, model: undefined, api_key_env: undefined };
                    // the built-in policy trains in process
                    delete c.trainer;
                    delete c.serving;
                  })
                }
              />
              built-in (CPU, offline)
            </label>
            <label class="check">
              <input
                type="radio"
                name="backend"
                value="openai"
                checked={openai}
                onChange={() =>
                  edit((c) => {
                    c.policy = { ...c.policy, backend: "openai", base_url: c.policy.base_url ?? "http://127.0.0.1:8000/v1", model: c.policy.model ?? "" };
                    c.trainer = c.trainer ?? { kind: "command", command: [...REFERENCE_TRAINER], timeout_s: 3600, objective: "group" };
                    c.serving = c.serving ?? { kind: "vllm-lora", ready_timeout_s: 120 };
                  })
                }
              />
              OpenAI-compatible endpoint
            </label>
          </div>
          {openai && <Endpoint config={config} edit={edit} />}
          {openai && <TrainerServing config={config} edit={edit} />}
          <div class="form-row">
            <NumField name="temperature" label="temperature" step={0.1} rule={{ whole: false, min: 0, max: 10 }} value={p.temperature} onChange={(v) => edit((c) => (c.policy.temperature = v))} />
            {!openai && (
              <NumField name="learning_rate" label="learning rate" step={0.1} rule={{ whole: false, min: 0, max: 100 }} value={p.learning_rate} onChange={(v) => edit((c) => (c.policy.learning_rate = v))} />
            )}
            {!openai && <NumField name="warm_start_demos" label="warm-start demos" rule={WHOLE(0, 50)} value={p.warm_start_demos} onChange={(v) => edit((c) => (c.policy.warm_start_demos = v))} />}
          </div>
        </fieldset>

        <fieldset>
          <legend>Arms</legend>
          <div class="arms">
            {arms().map((a) => (
              <label key={a.arm} class="check arm-check" title={a.description}>
                <input
                  type="checkbox"
                  name="arm"
                  value={a.arm}
                  checked={config.arms.includes(a.arm)}
                  onChange={(e) =>
                    edit((c) => {
                      const on = (e.target as HTMLInputElement).checked;
                      c.arms = on ? arms().map((x) => x.arm).filter((x) => x === a.arm || c.arms.includes(x)) : c.arms.filter((x) => x !== a.arm);
                    })
                  }
                />
                <ArmName arm={a.arm} /> <small class="muted">{a.description}</small>
              </label>
            ))}
          </div>
        </fieldset>

        <fieldset>
          <legend>Budgets</legend>
          <div class="form-row">
            <NumField name="base_tries" label="n base tries" hint="base-harness tries per training task" rule={WHOLE(1, 1024)} value={config.budget.base_tries} onChange={(v) => edit((c) => (c.budget.base_tries = v))} />
            <NumField name="rescue_siblings" label="k siblings" hint="siblings per all-fail task" rule={WHOLE(0, 64)} value={config.budget.rescue_siblings} onChange={(v) => edit((c) => (c.budget.rescue_siblings = v))} />
            <NumField name="rescue_tries" label="m rollouts" hint="tries under each chosen sibling" rule={WHOLE(0, 1024)} value={config.budget.rescue_tries} onChange={(v) => edit((c) => (c.budget.rescue_tries = v))} />
            <NumField name="batch_tasks" label="batch" hint="training tasks per iteration" rule={WHOLE(1, 1_000_000)} value={config.budget.batch_tasks} onChange={(v) => edit((c) => (c.budget.batch_tasks = v))} />
            <NumField name="probe_tasks" label="probe" hint="probe tasks for behaviour profiles" rule={WHOLE(0, 1_000_000)} value={config.budget.probe_tasks} onChange={(v) => edit((c) => (c.budget.probe_tasks = v))} />
          </div>
        </fieldset>

        <fieldset>
          <legend>Schedule</legend>
          <div class="form-row">
            <NumField name="iterations" label="iterations" rule={WHOLE(1, 100_000)} value={config.iterations} onChange={(v) => edit((c) => (c.iterations = v))} />
            <NumField name="reanchor_every" label="R re-anchor every" rule={WHOLE(1, 100_000)} value={config.reanchor_every} onChange={(v) => edit((c) => (c.reanchor_every = v))} />
            <NumField name="eval_every" label="E evaluate every" rule={WHOLE(1, 100_000)} value={config.eval_every} onChange={(v) => edit((c) => (c.eval_every = v))} />
            <NumField
              name="eval_train_tasks"
              label="eval train tasks"
              hint="training-family tasks per evaluation (0 = all)"
              rule={WHOLE(0, 1_000_000)}
              value={config.eval?.train_tasks ?? 0}
              onChange={(v) => edit((c) => (c.eval = { ...(c.eval ?? {}), train_tasks: v }))}
            />
            <SeedsField seeds={config.seeds} onChange={(seeds) => edit((c) => (c.seeds = seeds))} />
          </div>
        </fieldset>

        <div class="form-row actions-row">
          <label class="field grow" title="a file name in the workspace's experiments folder; it follows the experiment's name until you type one">
            <span>Save as</span>
            <span class="path-input">
              <span class="muted">experiments/</span>
              <input
                name="save_path"
                value={savePath}
                onInput={(e) => {
                  setSaved(null);
                  setCustomPath((e.target as HTMLInputElement).value);
                }}
                onBlur={(e) => {
                  // an emptied path follows the name again
                  if (!(e.target as HTMLInputElement).value.trim()) setCustomPath(null);
                }}
              />
            </span>
          </label>
          <button onClick={() => save()} disabled={blocked} id="save-config">
            Save
          </button>
          <button class="primary" onClick={start} disabled={starting || blocked} id="start-experiment">
            {starting ? "Starting…" : "▶ Start"}
          </button>
        </div>
        {saved && <div class="note ok">Saved {saved}</div>}
        {tomlError && <div class="error-text">Cannot start: {tomlError.error}</div>}
        {formInvalid && (
          <div class="error-text" id="form-problems">
            Cannot start: {invalidFields.map((f) => problems[f]).join("; ")}.
          </div>
        )}
        {/* while something is invalid, the estimate of the last valid settings, marked so */}
        {estimate?.e && <Estimate config={config} e={estimate.e} stale={blocked} updating={estimate.toml !== toml} />}
        {power && <Power plans={power.plans} effect={effect} setEffect={setEffect} updating={power.toml !== toml || power.effect !== effectShare} />}
      </div>
      <div class="builder-toml">
        <div class="row">
          <h3>Experiment file (TOML)</h3>
          <span class="spacer" />
          <span class="muted small">editable; checked as you type</span>
        </div>
        {stale && (
          <div class="banner warn stale-note" id="toml-stale">
            Not updated: the form holds a value the file cannot take (fix the highlighted field). This is the last valid file.
          </div>
        )}
        <textarea
          id="toml"
          spellcheck={false}
          wrap="off"
          value={toml}
          class={stale ? "stale" : tomlError ? "invalid" : ""}
          onInput={(e) => {
            source.current = "toml";
            setSaved(null);
            setToml((e.target as HTMLTextAreaElement).value);
          }}
        />
        {tomlError && tomlError.origin === "toml" && (
          <div class="error-text" id="toml-error">
            {tomlError.line != null ? `line ${tomlError.line}: ` : ""}
            {tomlError.error}
          </div>
        )}
      </div>
      {confirmPath && (
        <ConfirmDialog title="Replace the saved file?" confirm="Replace" onConfirm={() => void save(true)} onCancel={() => setConfirmPath(null)}>
          <p>
            <code>experiments/{confirmPath}</code> already exists in the workspace. Replace it with this experiment file?
          </p>
        </ConfirmDialog>
      )}
    </section>
    </FieldCheck.Provider>
  );
}

/** The seeds, comma-separated; checked as typed, taken when the field is left. */
function SeedsField({ seeds, onChange }: { seeds: number[]; onChange: (seeds: number[]) => void }) {
  const check = useContext(FieldCheck);
  const [raw, setRaw] = useState<string | null>(null);
  const problem = (raw !== null ? seedsProblem(raw) : null) ?? check.serverProblem("seeds");
  useEffect(() => {
    setRaw(null);
    check.report("seeds", null);
  }, [seeds.join(",")]);
  return (
    <label class={`field ${problem ? "invalid" : ""}`} title="comma-separated seeds; every arm runs with each">
      <span>seeds</span>
      <input
        name="seeds"
        value={raw ?? seeds.join(", ")}
        aria-invalid={problem ? "true" : undefined}
        aria-describedby={problem ? "seeds-problem" : undefined}
        onInput={(e) => {
          const text = (e.target as HTMLInputElement).value;
          setRaw(text);
          check.report("seeds", seedsProblem(text));
        }}
        onChange={(e) => {
          const text = (e.target as HTMLInputElement).value;
          if (seedsProblem(text)) return;
          const next = text.split(/[\s,]+/).filter(Boolean).map(Number);
          setRaw(null);
          if (next.join(",") !== seeds.join(",")) onChange(next);
        }}
      />
      {problem && (
        <span class="field-problem" id="seeds-problem" role="alert">
          {problem}
        </span>
      )}
    </label>
  );
}

/** The reference trainer (trainers/trl), run from the workspace with its virtualenv. */
const REFERENCE_TRAINER = [".cache/trainer-venv/bin/python", "trainers/trl/train_step.py", "{request}"];
const SERVING_KINDS: [string, string][] = [
  ["vllm-lora", "vLLM: load each checkpoint as a LoRA adapter"],
  ["sglang-lora", "SGLang: load each checkpoint as a LoRA adapter"],
  ["command", "a command of yours reloads the endpoint"],
  ["none", "the trainer updates the served model itself"],
];

/** `[trainer]` and `[serving]` of an endpoint's policy (docs/trainer-protocol.md). */
function TrainerServing({ config, edit }: { config: ExperimentConfig; edit: (f: (c: ExperimentConfig) => void) => void }) {
  const [check, setCheck] = useState<TrainerCheck | null>(null);
  const [busy, setBusy] = useState(false);
  const t: Partial<TrainerConfig> = config.trainer ?? {};
  const sv: Partial<ServingConfig> = config.serving ?? {};
  // A section the file does not have yet holds only what was typed: checking the file fills in
  // the server's defaults for the rest.
  const setTrainer = (f: (t: TrainerConfig) => void) =>
    edit((c) => {
      const trainer = { kind: "command", command: [], ...(c.trainer ?? {}) } as TrainerConfig;
      f(trainer);
      c.trainer = trainer;
    });
  const setServing = (f: (s: ServingConfig) => void) =>
    edit((c) => {
      const serving = { ...(c.serving ?? {}) } as ServingConfig;
      f(serving);
      c.serving = serving;
    });
  async function test() {
    setBusy(true);
    setCheck(null);
    try {
      // the button is enabled only once the trainer has a command
      if (config.trainer) setCheck(await call("test_trainer", { trainer: config.trainer, base_model: config.policy.model ?? "" }));
    } catch (e) {
      showError(e);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div class="trainer">
      <div class="form-row">
        <label class="field grow" title="the program and its arguments, separated by spaces; {request} becomes the request file's path">
          <span>trainer command</span>
          <input
            name="trainer_command"
            value={(t.command ?? []).join(" ")}
            onChange={(e) => setTrainer((x) => (x.command = (e.target as HTMLInputElement).value.split(/\s+/).filter(Boolean)))}
          />
        </label>
        <label class="field">
          <span>objective</span>
          <select name="trainer_objective" value={t.objective ?? "group"} onChange={(e) => setTrainer((x) => (x.objective = (e.target as HTMLSelectElement).value))}>
            <option value="group">group (advantage-weighted)</option>
            <option value="sft">sft (positive examples)</option>
          </select>
        </label>
        <NumField name="trainer_timeout" label="timeout s" rule={WHOLE(1)} value={t.timeout_s ?? 3600} onChange={(v) => setTrainer((x) => (x.timeout_s = v))} />
        <button onClick={test} disabled={busy || !(t.command ?? []).length} id="test-trainer" title="run the command once on a one-line batch">
          {busy ? "Training…" : "Test trainer"}
        </button>
      </div>
      <div class="form-row">
        <label class="field grow" title="what the trainer loads (default: the policy's model)">
          <span>base model</span>
          <input name="trainer_base_model" value={t.base_model ?? ""} placeholder={config.policy.model ?? ""} onInput={(e) => setTrainer((x) => (x.base_model = (e.target as HTMLInputElement).value || undefined))} />
        </label>
        <label class="field">
          <span>serving</span>
          <select name="serving_kind" value={sv.kind ?? "vllm-lora"} onChange={(e) => setServing((x) => (x.kind = (e.target as HTMLSelectElement).value))}>
            {SERVING_KINDS.map(([k, what]) => (
              <option key={k} value={k} title={what}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <NumField name="serving_ready_timeout" label="ready within s" rule={WHOLE(1)} value={sv.ready_timeout_s ?? 120} onChange={(v) => setServing((x) => (x.ready_timeout_s = v))} />
      </div>
      {check && check.ok && (
        <div class="note ok" id="trainer-check">
          The trainer ran in {check.seconds.toFixed(1)} s and wrote a checkpoint
          {Object.keys(check.metrics).length > 0 && <>: {Object.entries(check.metrics).map(([k, v]) => `${k} ${typeof v === "number" ? +v.toFixed(4) : String(v)}`).join(", ")}</>}.
        </div>
      )}
      {check && !check.ok && (
        <div class="error-text" id="trainer-check">
          Trainer failed: {check.error}
          {check.log_tail.length > 0 && <pre class="log-tail">{check.log_tail.slice(-8).join("\n")}</pre>}
        </div>
      )}
    </div>
  );
}

function Endpoint({ config, edit }: { config: ExperimentConfig; edit: (f: (c: ExperimentConfig) => void) => void }) {
  const [result, setResult] = useState<{ ok: boolean; models: string[]; error: string | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const p = config.policy;
  async function test() {
    setBusy(true);
    setResult(null);
    try {
      setResult(await call("test_connection", { base_url: p.base_url ?? "", model: p.model || undefined, api_key_env: p.api_key_env || undefined }));
    } catch (e) {
      showError(e);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div class="endpoint">
      <div class="form-row">
        <label class="field grow">
          <span>base URL</span>
          <input name="base_url" value={p.base_url ?? ""} placeholder="http://127.0.0.1:8000/v1" onInput={(e) => edit((c) => (c.policy.base_url = (e.target as HTMLInputElement).value))} />
        </label>
        <label class="field">
          <span>model</span>
          <input name="model" value={p.model ?? ""} onInput={(e) => edit((c) => (c.policy.model = (e.target as HTMLInputElement).value))} />
        </label>
        <label class="field" title="name of the environment variable holding the API key (the key itself is never stored)">
          <span>API key env var</span>
          <input name="api_key_env" value={p.api_key_env ?? ""} placeholder="OPENAI_API_KEY" onInput={(e) => edit((c) => (c.policy.api_key_env = (e.target as HTMLInputElement).value || undefined))} />
        </label>
        <button onClick={test} disabled={busy || !p.base_url} id="test-connection">
          {busy ? "Testing…" : "Test connection"}
        </button>
      </div>
      {result && result.ok && (
        <div class="note ok">
          Connected. Models:{" "}
          {result.models.length === 0
            ? "none listed"
            : result.models.map((m) => (
                <button key={m} class="chip" onClick={() => edit((c) => (c.policy.model = m))}>
                  {m}
                </button>
              ))}
        </div>
      )}
      {result && !result.ok && <div class="error-text">Connection failed: {result.error}</div>}
    </div>
  );
}

/** Whether a run matches the filter text: its id, name, status or suites. */
function runMatches(f: string, id: number, name: string, status: string, suites: string[] = []): boolean {
  const t = f.trim().toLowerCase();
  if (!t) return true;
  return String(id) === t.replace(/^#/, "") || [name, status, ...suites].some((x) => x.toLowerCase().includes(t));
}

/** Every experiment run of the store: those started or resumed here as live cards, the others
 * (the demo and runs made from the command line among them) in a table; each can be opened,
 * resumed when unfinished, or deleted. */
function RunsPanel({ focus, running, active }: { focus: number | null; running: string; active: Set<number> }) {
  const all = useStore(runs);
  // reloaded when a run starts or ends here, or the store's running runs change (started elsewhere)
  const exps = useLoad(() => call("experiments"), [all.size, [...all.values()].filter((r) => r.status !== "running").length, running]);
  const [filter, setFilter] = useState("");
  const byId = new Map((exps.data ?? []).map((e) => [e.id, e]));
  const list = [...all.values()].sort((a, b) => b.run_id - a.run_id).filter((r) => runMatches(filter, r.run_id, r.name, r.status, names(byId.get(r.run_id)?.suites)));
  const live = new Set(all.keys());
  const others = (exps.data ?? []).filter((e) => !live.has(e.id));
  const shown = others.filter((e) => runMatches(filter, e.id, e.name, e.status, names(e.suites)));
  const deleted = () => exps.reload();
  return (
    <section class="runs">
      {all.size === 0 && others.length === 0 ? (
        exps.data ? <p class="muted small">No runs yet. Started experiments show their progress here, per arm and seed.</p> : null
      ) : (
        <div class="runs-head">
          <h2>Runs</h2>
          <input data-search class="search" name="run-filter" placeholder="Filter runs  ( / )" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
          <span class="muted small">
            {all.size + others.length} run{all.size + others.length === 1 ? "" : "s"}
          </span>
        </div>
      )}
      {list.map((r) => (
        <RunCard key={r.run_id} r={r} open={focus === null ? r.status === "running" : focus === r.run_id} onDeleted={deleted} />
      ))}
      {shown.length > 0 && (
        <table class="table compact all-runs">
          <thead>
            <tr>
              <th>run</th>
              <th>name</th>
              <th>status</th>
              <th>suites</th>
              <th>created</th>
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
                <td class="actions">
                  {e.status !== "finished" && (active.has(e.id) ? <span class="muted small" title="its episodes are being recorded by another process">running elsewhere</span> : <ResumeButton id={e.id} />)} <a href={`#/results?id=${e.id}`}>results</a>{" "}
                  <a href={`#/inspector?run=${e.id}`}>trajectories</a>{" "}
                  <button class="link" title="load this run's experiment file into the builder" onClick={() => void editCopy(e.id)}>
                    edit a copy
                  </button>{" "}
                  <DeleteRunButton run={e} onDeleted={deleted} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {filter && list.length === 0 && shown.length === 0 && <p class="muted small">No run matches “{filter}”.</p>}
    </section>
  );
}

/** A worker whose heartbeat is older than the default lease (30 s) has probably gone: its jobs
 * go back to the queue when their lease passes. */
const LOST_AFTER_MS = 30_000;

function heartbeat(w: WorkerRow): { text: string; cls: string } {
  if (w.stopped_at) return { text: `stopped ${when(w.stopped_at)}`, cls: "muted" };
  const s = w.since_heartbeat_ms / 1000;
  if (w.since_heartbeat_ms > LOST_AFTER_MS) return { text: `no heartbeat for ${duration(s)}`, cls: "neg" };
  return { text: `${s.toFixed(1)} s ago`, cls: "" };
}

/** The store's running experiments and the workers of distributed runs, polled every 3 s: runs
 * started elsewhere (the command line, another machine) appear without a reload. `active`: the
 * running runs seen making progress (episodes recorded since the last poll, or jobs in their
 * queue); a run marked running that makes none was probably killed, and can be resumed. */
function useWorkers(): { status: Workers | null; active: Set<number> } {
  const [status, setStatus] = useState<Workers | null>(null);
  const [active, setActive] = useState<Set<number>>(new Set());
  useEffect(() => {
    let live = true;
    let seen = new Map<number, number>();
    const poll = () =>
      call("workers").then(
        (w) => {
          if (!live) return;
          const now = new Map(w.running.map((r) => [r.run_id, r.episodes]));
          const busy = w.running.filter((r) => (seen.has(r.run_id) && seen.get(r.run_id) !== r.episodes) || (r.queue && r.queue.queued + r.queue.running > 0));
          seen = now;
          setStatus(w);
          setActive(new Set(busy.map((r) => r.run_id)));
        },
        () => undefined, // a failed poll keeps the last status; the next one retries
      );
    void poll();
    const t = setInterval(poll, 3000);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, []);
  return { status, active };
}

/** The `harness-s worker` processes of distributed runs and each running run's episode queue;
 * shown only on a Postgres store once a worker has registered. */
function WorkersPanel({ status }: { status: Workers | null }) {
  if (!status || status.backend !== "postgres" || status.workers.length === 0) return null;
  const queued = status.running.filter((r) => r.queue);
  const active = status.workers.filter((w) => !w.stopped_at && w.since_heartbeat_ms <= LOST_AFTER_MS);
  return (
    <section class="workers" data-workers>
      <div class="runs-head">
        <h2>Workers</h2>
        <span class="muted small">
          {active.length} of {status.workers.length} heart-beating · {active.reduce((n, w) => n + w.slots, 0)} slots
        </span>
      </div>
      {queued.map((r) => (
        <p key={r.run_id} class="small" data-queue={r.run_id}>
          run {r.run_id} {r.name}: {r.queue!.queued} queued · {r.queue!.running} running · {r.queue!.done} done
          {r.queue!.failed > 0 && <span class="neg"> · {r.queue!.failed} failed</span>}
        </p>
      ))}
      <table class="table compact">
        <thead>
          <tr>
            <th>worker</th>
            <th>host</th>
            <th class="num">slots</th>
            <th class="num">jobs done</th>
            <th>started</th>
            <th>last heartbeat</th>
          </tr>
        </thead>
        <tbody>
          {status.workers.map((w) => {
            const h = heartbeat(w);
            return (
              <tr key={w.name} data-worker={w.name}>
                <td>{w.name}</td>
                <td>{w.host}</td>
                <td class="num">{w.slots}</td>
                <td class="num">{w.jobs_done}</td>
                <td class="muted">{when(w.started_at)}</td>
                <td class={h.cls}>{h.text}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

function ResumeButton({ id }: { id: number }) {
  return (
    <button
      onClick={async (e) => {
        e.preventDefault();
        try {
          const r = await call("experiment_resume", { run_id: id });
          await refreshJobs();
          navigate("experiments", { run: r.run_id });
        } catch (e) {
          showError(e);
        }
      }}
    >
      Resume
    </button>
  );
}

function RunCard({ r, open, onDeleted }: { r: RunProgress; open: boolean; onDeleted: () => void }) {
  const ref = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    if (open) ref.current?.scrollIntoView({ block: "nearest" });
  }, [open]);
  const units = [...r.units.values()].sort((a, b) => a.suite.localeCompare(b.suite) || a.arm.localeCompare(b.arm) || a.seed - b.seed);
  const running = r.status === "running";
  const bar = runBar(r);
  // the live transfer curves, redrawn only when an evaluation arrives
  const curves = r.curves;
  const iterations = Math.max(0, ...units.map((u) => u.iterations));
  return (
    <details ref={ref} class={`run-card status-${r.status}`} open={open} data-run={r.run_id}>
      <summary>
        <span class="num">#{r.run_id}</span>
        <b>{r.name}</b>
        <StatusTag status={r.status} />
        <Progress done={bar.done} total={bar.total} status={r.status} />
        <span class="num run-episodes">{bar.text}</span>
        {/* an experiment's success is per job (the table below); a plain evaluation has one */}
        {units.length === 0 && <span title="tasks solved so far, of the episodes finished">success {pct(r.success_rate)}</span>}
        {running && (
          <span class="run-eta" title="from the episodes per second measured so far (after a few seconds of episodes), with the demonstration searches still to come">
            ETA {r.eta_s != null ? duration(r.eta_s) : r.episodes?.done ? "measuring…" : units.some((u) => u.phase === "demonstrations") ? "after the warm-start search" : "–"}
          </span>
        )}
        <span class="spacer" />
        {running && !r.elsewhere && (
          <button
            class="danger"
            onClick={async (e) => {
              e.preventDefault();
              try {
                await call("experiment_cancel", { run_id: r.run_id });
                await refreshJobs();
              } catch (err) {
                showError(err);
              }
            }}
          >
            Cancel
          </button>
        )}
        {(r.status === "cancelled" || r.status === "failed") && <ResumeButton id={r.run_id} />}
        <button
          class="link"
          title="load this run's experiment file into the builder"
          onClick={(e) => {
            e.preventDefault();
            void editCopy(r.run_id);
          }}
        >
          edit a copy
        </button>
        {!running && (
          <>
            <a href={`#/results?id=${r.run_id}`}>results</a>
            <a href={`#/inspector?run=${r.run_id}`}>trajectories</a>
            <DeleteRunButton run={{ id: r.run_id, name: r.name, status: r.status }} onDeleted={onDeleted} />
          </>
        )}
      </summary>
      {r.error && <div class="error-text">{r.error}</div>}
      {running && r.elsewhere && (
        <div class="muted small run-elsewhere" data-elsewhere>
          run by {r.elsewhere}: its progress is read from the store, and only that process can cancel it
        </div>
      )}
      {running && (r.now || r.label) && <div class="muted small run-now">now: {r.now ?? r.label}</div>}
      {units.length > 0 && (
        <table class="table compact units">
          <thead>
            <tr>
              <th>suite</th>
              <th>arm</th>
              <th class="num">seed</th>
              <th>iteration</th>
              <th>phase</th>
              <th class="num">rollouts</th>
              <th class="num" title="the job's latest base-harness success on its training tasks">
                train success (latest evaluation)
              </th>
            </tr>
          </thead>
          <tbody>
            {units.map((u) => (
              <tr key={`${u.suite}-${u.arm}-${u.seed}`}>
                <td>{u.suite}</td>
                <td>
                  <ArmName arm={u.arm} />
                </td>
                <td class="num">{u.seed}</td>
                <td>
                  <span class="iter">
                    <Progress done={u.iteration} total={u.iterations} /> {u.iteration}/{u.iterations}
                  </span>
                </td>
                <td class="unit-phase" data-phase={u.phase ?? ""}>
                  <PhaseText u={u} />
                </td>
                <td class="num">{u.rollouts}</td>
                <td class="num">{pct(u.success)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {curves.length > 0 && (
        <div class="live-chart">
          <TransferChart curves={curves} iterations={iterations} live={running} />
        </div>
      )}
      {r.messages.length > 0 && (
        <ul class="messages small muted">
          {r.messages.slice(-5).map((m, i) => (
            <li key={i}>{m}</li>
          ))}
        </ul>
      )}
    </details>
  );
}

/** A job's phase in words, with where it stands in it (task 12 of 24). */
function PhaseText({ u }: { u: Unit }) {
  if (!u.label) return <span class="muted">–</span>;
  const what = u.phase === "demonstrations" ? "found" : u.phase === "evaluation" || u.phase === "rank_one" || u.phase === "probing" || u.phase === "rollouts" || u.phase === "rescues" ? "task" : null;
  const at = what && u.steps ? (what === "found" ? ` (${u.step} of ${u.steps} found)` : ` (task ${Math.min((u.step ?? 0) + 1, u.steps)} of ${u.steps})`) : "";
  return (
    <span>
      {u.label}
      <span class="muted">{at}</span>
    </span>
  );
}
