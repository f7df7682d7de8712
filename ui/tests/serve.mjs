// Test support: start the real `harness-s serve` on a fresh database and a headless Chromium
// (Debian's, never a downloaded one) pointed at it. Loopback only.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const uiDir = path.resolve(here, "..");
export const artifacts = path.join(uiDir, "test-artifacts");
export const CHROMIUM = "/usr/bin/chromium";

export function binary() {
  return path.resolve(uiDir, process.env.HARNESS_S_BIN ?? "../target/debug/harness-s");
}

/** Why the browser tests cannot run here, or null. */
function missingReason() {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is absent: install Debian's chromium to run the browser tests`;
  if (!existsSync(binary())) return `no harness-s binary at ${binary()} (set HARNESS_S_BIN)`;
  if (!existsSync(path.join(uiDir, "dist", "index.html"))) return "ui/dist is missing: run `npm run build` first";
  return null;
}

/** Why the browser tests cannot run here, or null. Under CI (HARNESS_S_REQUIRE_BROWSER) a missing
 * browser or binary is an error, not a skip. */
export function skipReason() {
  const reason = missingReason();
  if (reason && process.env.HARNESS_S_REQUIRE_BROWSER) throw new Error(`browser tests required but cannot run: ${reason}`);
  return reason;
}

/** Start `harness-s serve --port 0 --db <db>` (default: a fresh SQLite file in a temp folder,
 * which is also the workspace); resolves with its address once it prints it. */
export async function startServer({ db } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "harness-s-ui-"));
  db ??= path.join(dir, "workbench.db");
  const child = spawn(binary(), ["serve", "--port", "0", "--db", db], { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, HARNESS_S_UI_DIR: path.join(uiDir, "dist") } });
  let log = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`harness-s serve printed no address in 30 s:\n${log}`)), 30_000);
    const onData = (b) => {
      log += b.toString();
      const m = log.match(/serving (http:\/\/127\.0\.0\.1:\d+\/\?token=([A-Za-z0-9_\-]+))/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (b) => (log += b.toString()));
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`harness-s serve exited with ${code}:\n${log}`));
    });
  });
  const u = new URL(url);
  return {
    url,
    origin: u.origin,
    token: u.searchParams.get("token"),
    dir,
    log: () => log,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await new Promise((r) => {
          const t = setTimeout(() => {
            child.kill("SIGKILL");
            r();
          }, 5000);
          child.once("exit", () => {
            clearTimeout(t);
            r();
          });
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A headless Chromium with a fresh profile. */
export async function startBrowser() {
  const { chromium } = await import("playwright-core");
  const profile = mkdtempSync(path.join(tmpdir(), "harness-s-chromium-"));
  mkdirSync(artifacts, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1440, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  return {
    context,
    async stop() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A new page of `browser` on the server's UI; errors the page throws are logged and collected in
 * `errors` (the tests assert there were none). */
export async function openPage(browser, server, errors) {
  const page = await browser.context.newPage();
  page.on("pageerror", (e) => {
    errors.push(e.message);
    console.log(`# page error: ${e.message}`);
  });
  await page.goto(server.url);
  return page;
}

/** Call a command over HTTP the way the UI does. */
export async function api(server, command, args = {}) {
  const res = await fetch(`${server.origin}/api/${command}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${server.token}` },
    body: JSON.stringify(args),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`${command}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}
