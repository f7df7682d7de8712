// Writing an experiment config (plain JSON: scalars, arrays, tables) as TOML, used when the
// server cannot render it. The server checks the result with `config_check` before use.

function scalar(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") return String(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(scalar).join(", ")}]`;
  if (v && typeof v === "object") return `{ ${Object.entries(v).filter(([, x]) => x != null).map(([k, x]) => `${key(k)} = ${scalar(x)}`).join(", ")} }`;
  return '""';
}

function key(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k);
}

const isTable = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** The experiment file's keys in the order people read them (others follow in their own order). */
const ORDER = ["name", "suites", "heldout_families", "arms", "seeds", "iterations", "eval_every", "reanchor_every", "workers", "policy", "budget", "harness", "router", "distill", "eval", "datasets"];
const rank = (k: string) => {
  const i = ORDER.indexOf(k);
  return i < 0 ? ORDER.length : i;
};

export function toToml(value: Record<string, unknown>, path: string[] = []): string {
  const lines: string[] = [];
  const tables: [string, Record<string, unknown>][] = [];
  const entries = Object.entries(value).sort(([a], [b]) => (path.length ? 0 : rank(a) - rank(b)));
  for (const [k, v] of entries) {
    if (v === null || v === undefined) continue;
    if (isTable(v) && Object.values(v).every((x) => x === null || x === undefined)) continue;
    if (isTable(v)) tables.push([k, v]);
    else lines.push(`${key(k)} = ${scalar(v)}`);
  }
  let out = lines.join("\n");
  for (const [k, t] of tables) {
    const p = [...path, k];
    const body = toToml(t, p);
    out += `${out ? "\n\n" : ""}[${p.map(key).join(".")}]${body ? "\n" + body : ""}`;
  }
  return out;
}
