// Writing an experiment config (plain JSON: scalars, arrays, tables) as TOML, used when the
// server cannot render it. The server checks the result with `config_check` before use.

function scalar(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(scalar).join(", ")}]`;
  if (v && typeof v === "object") return `{ ${Object.entries(v).filter(([, x]) => x != null).map(([k, x]) => `${key(k)} = ${scalar(x)}`).join(", ")} }`;
  return '""';
}

function key(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k);
}

const isTable = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

export function toToml(value: Record<string, unknown>, path: string[] = []): string {
  const lines: string[] = [];
  const tables: [string, Record<string, unknown>][] = [];
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === undefined) continue;
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
