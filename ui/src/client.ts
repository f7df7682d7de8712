// The one way the UI reaches the workbench: the desktop shell's `call` command under Tauri,
// `/api/<command>` over HTTP in a browser (`harness-s serve`). Nothing else imports
// `@tauri-apps/*` or talks to the server.

import type { Commands, WorkbenchEvent } from "./types";

/** A command failed; `message` is the server's own `error` text, `kind` its `ErrorBody` kind
 * (`bad_arguments`, `not_found`, `conflict`, `internal`, ...; null when the server was not reached). */
export class ApiError extends Error {
  constructor(message: string, readonly command: string, readonly status: number | null, readonly kind: string | null = null) {
    super(message);
  }
}

declare global {
  interface Window {
    __TAURI_INTERNALS__?: unknown;
  }
}

export const inTauri = typeof window !== "undefined" && window.__TAURI_INTERNALS__ !== undefined;

const TOKEN_KEY = "harness-s.token";

/** The access token: from `?token=` on first load (then dropped from the address bar), else the
 * one this browser last saw for this address (so a link opened in a new tab works too). */
function readToken(): string {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get("token");
  if (fromUrl) {
    localStorage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete("token");
    history.replaceState(history.state, "", url.pathname + url.search + url.hash);
    return fromUrl;
  }
  return localStorage.getItem(TOKEN_KEY) ?? "";
}

const token = inTauri ? "" : readToken();

function errorKind(body: unknown): string | null {
  return body && typeof body === "object" && "kind" in body && typeof (body as { kind: unknown }).kind === "string" ? (body as { kind: string }).kind : null;
}

function errorText(body: unknown, fallback: string): string {
  if (body && typeof body === "object" && "error" in body) {
    const e = (body as { error: unknown }).error;
    return typeof e === "string" ? e : JSON.stringify(e);
  }
  if (typeof body === "string" && body.trim()) return body.trim();
  return fallback;
}

async function callHttp<T>(command: string, args: Record<string, unknown>): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`/api/${encodeURIComponent(command)}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify(args),
    });
  } catch (e) {
    throw new ApiError(`cannot reach the workbench server (${String(e)})`, command, null);
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* a non-JSON reply is shown as text */
  }
  if (!res.ok) {
    const hint = res.status === 401 ? " — open the address `harness-s serve` printed (it carries the access token)" : "";
    throw new ApiError(errorText(body, `${res.status} ${res.statusText}`) + hint, command, res.status, errorKind(body));
  }
  return body as T;
}

async function callTauri<T>(command: string, args: Record<string, unknown>): Promise<T> {
  const { invoke } = await import("@tauri-apps/api/core");
  try {
    return (await invoke("call", { command, args })) as T;
  } catch (e) {
    throw new ApiError(errorText(e, String(e)), command, null, errorKind(e));
  }
}

type Command = keyof Commands;
type ArgsOf<C extends Command> = Commands[C]["args"];
/** The response of command `C`. */
export type ResponseOf<C extends Command> = Commands[C]["response"];

/** Run one workbench command; its arguments and response are typed by the command's name
 * (`Commands`, generated from the workbench's registry). A command without required
 * arguments may be called without any. */
export function call<C extends Command>(
  command: C,
  ...rest: Record<string, never> extends ArgsOf<C> ? [args?: ArgsOf<C>] : [args: ArgsOf<C>]
): Promise<ResponseOf<C>> {
  // Optional arguments left undefined are not sent at all.
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest[0] ?? {})) if (v !== undefined && v !== "") clean[k] = v;
  return inTauri ? callTauri<ResponseOf<C>>(command, clean) : callHttp<ResponseOf<C>>(command, clean);
}

type Listener = (e: WorkbenchEvent) => void;
const listeners = new Set<Listener>();
let started = false;

function dispatch(e: WorkbenchEvent) {
  for (const l of listeners) l(e);
}

function startEvents() {
  if (started) return;
  started = true;
  if (inTauri) {
    void import("@tauri-apps/api/event").then(({ listen }) => listen<WorkbenchEvent>("workbench-event", (e) => dispatch(e.payload)));
  } else {
    // EventSource reconnects by itself when the stream drops.
    const es = new EventSource(`/api/events?token=${encodeURIComponent(token)}`);
    es.onmessage = (m) => {
      try {
        dispatch(JSON.parse(m.data) as WorkbenchEvent);
      } catch {
        /* not an event object */
      }
    };
  }
}

/** Subscribe to workbench events; returns the unsubscribe function. */
export function onEvent(l: Listener): () => void {
  startEvents();
  listeners.add(l);
  return () => listeners.delete(l);
}

export type ReportFormat = "html" | "json" | "csv" | "csv-zip";

/** What an export wrote: a sentence for the page and, on the desktop, the files to open. */
export interface SavedReport {
  note: string;
  /** The report's HTML file (desktop only). */
  file?: string;
  /** The folder the report was written into (desktop only). */
  dir?: string;
}

/**
 * Save a report. In a browser: the file is downloaded (`report_file`). On the desktop: the whole
 * report is written into a folder of the workspace's `reports/` (`export_report` writes only
 * inside the workspace), and the answer names the file and folder for {@link openPath}.
 */
export async function saveReport(id: number, compare: number | null, format: ReportFormat): Promise<SavedReport | null> {
  if (inTauri) {
    const dir = compare ? `report-${id}-vs-${compare}` : `report-${id}`;
    const out = await call("export_report", { id, compare: compare ?? undefined, out_dir: dir });
    return { note: `wrote ${out.html}, ${out.json} and ${out.csv.length} CSV files into ${out.dir}`, file: out.html, dir: out.dir };
  }
  const f = await call("report_file", { id, compare: compare ?? undefined, format });
  // a binary file (the CSV zip) comes as base64
  const body = f.encoding === "base64" ? Uint8Array.from(atob(f.text), (c) => c.charCodeAt(0)) : f.text;
  const url = URL.createObjectURL(new Blob([body], { type: f.mime }));
  const a = document.createElement("a");
  a.href = url;
  a.download = f.file_name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return { note: `downloaded ${f.file_name}` };
}

/** Whether {@link openPath} can open what an export wrote: only in the desktop app (a browser
 * downloads the file instead). */
export const canOpenFiles = inTauri;

/**
 * Open a file with its default application, or a folder in the file manager ("Show in
 * folder"). Desktop app only; the app allows only paths under the workspace's `reports/`.
 */
export async function openPath(path: string): Promise<void> {
  if (!inTauri) throw new ApiError("opening files needs the desktop app", "open", null);
  const opener = await import("@tauri-apps/plugin-opener");
  try {
    await opener.openPath(path);
  } catch (e) {
    throw new ApiError(`cannot open ${path}: ${errorText(e, String(e))}`, "open", null);
  }
}
