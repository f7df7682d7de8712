// End-to-end: a distributed run's workers in the Experiments view. A private PostgreSQL server,
// the real `harness-s serve` on it, two real `harness-s worker` processes and a coordinator
// (`experiment run --distributed`) started from the command line; the Workers panel shows each
// worker (host, slots, jobs done, last heartbeat), the run's episode queue while it runs, and a
// worker that stopped. Screenshot in ui/test-artifacts/.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { postgresMissing, startPostgres } from "./postgres.mjs";
import { api, artifacts, binary, openPage, skipReason, startBrowser, startServer } from "./serve.mjs";

let reason = skipReason();
if (!reason && postgresMissing()) {
  if (process.env.HARNESS_S_REQUIRE_BROWSER) throw new Error(`browser tests required but cannot run: ${postgresMissing()}`);
  reason = postgresMissing();
}
if (reason) console.log(`# skipping the workers browser test: ${reason}`);

// Large enough that the run is still going when the panel is looked at; the test stops it.
const CONFIG = `name = "distributed-ui"
suites = ["dbbench"]
heldout_families = ["aggregation-AVG"]
arms = ["policy-only", "harness-s"]
seeds = [1, 2]
iterations = 40
eval_every = 5

[policy]
warm_start_demos = 10

[budget]
batch_tasks = 16
base_tries = 4
rescue_siblings = 2
rescue_tries = 2
probe_tasks = 8
`;

describe("experiments: the workers of a distributed run", { skip: reason ?? false }, () => {
  let pg;
  let server;
  let browser;
  let page;
  const children = {};
  const pageErrors = [];

  function start(name, args) {
    const child = spawn(binary(), args, { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, HARNESS_S_FAULT: "" } });
    let log = "";
    child.stderr.on("data", (b) => (log += b.toString()));
    child.log = () => log;
    children[name] = child;
    return child;
  }

  const exited = (child, ms) =>
    new Promise((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
      const t = setTimeout(() => reject(new Error(`still running after ${ms} ms:\n${child.log()}`)), ms);
      child.once("exit", (code) => {
        clearTimeout(t);
        resolve(code);
      });
    });

  before(async () => {
    pg = await startPostgres();
    server = await startServer({ db: pg.url });
    start("w1", ["worker", "--db", pg.url, "--slots", "2", "--name", "ui-w1"]);
    start("w2", ["worker", "--db", pg.url, "--slots", "1", "--name", "ui-w2"]);
    browser = await startBrowser();
    page = await openPage(browser, server, pageErrors);
  });

  after(async () => {
    for (const c of Object.values(children)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    await browser?.stop();
    await server?.stop();
    await pg?.stop();
  });

  test("each worker is listed with its host, slots and heartbeat", async () => {
    await page.evaluate(() => (window.location.hash = "#/experiments"));
    await page.waitForSelector('[data-workers] tr[data-worker="ui-w2"]', { timeout: 30_000 });
    const row = (await page.locator('tr[data-worker="ui-w1"]').innerText()).split("\t").map((s) => s.trim());
    assert.equal(row[0], "ui-w1");
    assert.equal(row[1], hostname());
    assert.equal(row[2], "2", "slots");
    assert.equal(row[3], "0", "no job done yet");
    assert.match(row[5], /^\d+\.\d s ago$/, "the last heartbeat");
    assert.match(await page.locator("[data-workers] .runs-head").innerText(), /2 of 2 heart-beating · 3 slots/);
    // the same as the command line reads it
    const status = await api(server, "workers");
    assert.equal(status.backend, "postgres");
    assert.deepEqual(status.workers.map((w) => w.name).sort(), ["ui-w1", "ui-w2"]);
  });

  test("a distributed run's queue and the jobs each worker did show while it runs", async () => {
    const file = path.join(server.dir, "distributed-ui.toml");
    writeFileSync(file, CONFIG);
    start("coordinator", ["experiment", "run", file, "--db", pg.url, "--distributed"]);
    await page.waitForSelector("[data-workers] [data-queue]", { timeout: 60_000 });
    assert.match(await page.locator("[data-workers] [data-queue]").innerText(), /distributed-ui: \d+ queued · \d+ running · \d+ done$/);
    const t0 = Date.now();
    for (;;) {
      const done = Number((await page.locator('tr[data-worker="ui-w1"] td:nth-child(4)').innerText()).trim());
      if (done > 0) break;
      assert.ok(Date.now() - t0 < 60_000, "ui-w1 counted no job in 60 s");
      await new Promise((r) => setTimeout(r, 500));
    }
    await page.locator("[data-workers]").scrollIntoViewIfNeeded();
    await new Promise((r) => setTimeout(r, 3500)); // the Runs panel has caught up
    await page.screenshot({ path: path.join(artifacts, "experiments-workers.png") });
    // the run started from the command line is live in the Runs panel, as a run started here is,
    // with who runs it, and neither Cancel nor Resume here
    const listed = await api(server, "workers");
    assert.equal(listed.running.length, 1);
    assert.equal(listed.running[0].name, "distributed-ui");
    const card = page.locator(`.run-card[data-run="${listed.running[0].run_id}"]`);
    await card.waitFor({ timeout: 15_000 });
    assert.match(await card.locator("summary").innerText(), /distributed-ui[\s\S]*running/);
    assert.equal(await card.getByRole("button", { name: "Resume" }).count(), 0, "a run running elsewhere cannot be resumed here");
    assert.equal(await card.getByRole("button", { name: "Cancel" }).count(), 0, "nor cancelled");
    assert.match(await card.locator("[data-elsewhere]").textContent(), /run by process \d+ on host/);
  });

  test("a worker that stops says so; the coordinator stops on Ctrl-C", async () => {
    children.w2.kill("SIGTERM");
    assert.equal(await exited(children.w2, 30_000), 0, "the worker exits cleanly on SIGTERM");
    await page.waitForFunction(() => /^stopped /.test(document.querySelector('tr[data-worker="ui-w2"] td:last-child')?.textContent ?? ""), null, { timeout: 15_000 });
    assert.match(await page.locator("[data-workers] .runs-head").innerText(), /1 of 2 heart-beating · 2 slots/);
    children.coordinator.kill("SIGINT");
    await exited(children.coordinator, 60_000);
    await page.waitForFunction(() => !document.querySelector("[data-workers] [data-queue]"), null, { timeout: 15_000 });
    await page.waitForFunction(() => /cancelled/.test(document.querySelector(".all-runs tr[data-run]")?.textContent ?? ""), null, { timeout: 15_000 });
    assert.equal(await page.locator(".all-runs tr[data-run]").getByRole("button", { name: "Resume" }).count(), 1, "a cancelled run can be resumed");
    assert.deepEqual(pageErrors, []);
  });
});
