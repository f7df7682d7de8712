// End-to-end: the real `harness-s serve` and the built UI in headless Chromium. Builds and runs
// two small experiments in the builder, then checks results, comparison, export, the
// trajectory inspector (filters, search, a rescue's three columns) and the access token.
// Screenshots of every view go to ui/test-artifacts/.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { api, artifacts, openPage, skipReason, startBrowser, startServer, uiDir } from "./serve.mjs";

const reason = skipReason();
if (reason) console.log(`# skipping the browser tests: ${reason}`);

describe("workbench UI", { skip: reason ?? false }, () => {
  let server;
  let browser;
  let page;
  const runs = {};
  const pageErrors = [];

  const shot = (name) => page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: false });
  const go = async (hash) => {
    await page.evaluate((h) => (window.location.hash = h), hash);
  };

  before(async () => {
    server = await startServer();
    browser = await startBrowser();
    page = await openPage(browser, server, pageErrors);
  });

  after(async () => {
    await browser?.stop();
    await server?.stop();
  });

  test("the API refuses requests without the token", async () => {
    const bare = await fetch(`${server.origin}/api/experiments`);
    assert.equal(bare.status, 401);
    const body = await bare.json();
    assert.ok(typeof body.error === "string" && body.error.length > 0);
    const wrong = await fetch(`${server.origin}/api/experiments`, { headers: { Authorization: "Bearer nope" } });
    assert.equal(wrong.status, 401);
    const ok = await fetch(`${server.origin}/api/experiments`, { headers: { Authorization: `Bearer ${server.token}` } });
    assert.equal(ok.status, 200);
    const events = await fetch(`${server.origin}/api/events`);
    assert.equal(events.status, 401);
    await events.body?.cancel();
  });

  test("opens on the workspace with the bundled suites and the demo action", async () => {
    await page.waitForSelector(".workspace .card h3");
    assert.match(await page.locator(".card h3").first().innerText(), /dbbench/);
    assert.ok(await page.locator("#run-demo").isEnabled());
    // The token left the address bar but the page still reaches the API.
    assert.ok(!page.url().includes("token="));
    await shot("1-workspace");
  });

  test("suites: families, a task preview, and import errors by line", async () => {
    await page.keyboard.press("2");
    await page.waitForSelector(".suites .facet");
    const family = page.locator(".facet").nth(1);
    const famName = (await family.innerText()).split(/\s/)[0];
    await family.click();
    await page.waitForSelector(".task-row");
    const first = page.locator(".task-row").first();
    await first.click();
    await page.waitForSelector(".task-detail h2");
    assert.match(await page.locator(".task-detail .chip").innerText(), new RegExp(famName));
    // j moves to the next task.
    const before = await page.locator(".task-detail h2").innerText();
    await page.keyboard.press("j");
    await page.waitForFunction((b) => document.querySelector(".task-detail h2")?.textContent !== b, before);
    // A broken dataset file: the problems come back by line.
    await page.setInputFiles("#import-file", { name: "broken.jsonl", mimeType: "application/json", buffer: Buffer.from('{"description": "ok?"\nnot json at all\n') });
    await page.waitForSelector(".import-errors td.num");
    const lines = await page.locator(".import-errors td.num").allInnerTexts();
    assert.ok(lines.some((l) => /^\d+$/.test(l.trim())), `line numbers shown: ${lines}`);
    await shot("2-suites");
    // A good file (three records of the bundled set) becomes a dataset of its own.
    const good = readFileSync(path.join(uiDir, "..", "datasets", "dbbench", "bundled.jsonl"), "utf8").split("\n").slice(0, 3).join("\n") + "\n";
    await page.setInputFiles("#import-file", { name: "three.jsonl", mimeType: "application/json", buffer: Buffer.from(good) });
    await page.waitForSelector(".import .note.ok");
    assert.match(await page.locator(".import .note.ok").innerText(), /3 tasks/);
    await page.waitForFunction(() => [...document.querySelectorAll("select[aria-label=dataset] option")].some((o) => o.textContent.includes("three")));
    await page.waitForFunction(() => document.querySelectorAll(".task-row").length === 3);
  });

  test("harnesses: siblings as their difference from base", async () => {
    await page.keyboard.press("3");
    await page.waitForSelector(".harness-row");
    assert.match(await page.locator(".harness-row").first().innerText(), /base/);
    await page.locator(".harness-row").nth(1).click();
    await page.waitForSelector(".diff .add");
    assert.ok((await page.locator(".diff .add").count()) > 0);
    // the filter is one line high however long the list
    const filter = await page.locator(".harness-list .list-filter").boundingBox();
    assert.ok(filter.height < 48, `filter ${filter.height} px high`);
    await shot("3-harnesses");
    // the base harness's spec stays inside its pane
    await page.locator(".harness-row").first().click();
    await page.waitForSelector("pre.code");
    const fits = await page.evaluate(() => {
      const pre = document.querySelector("pre.code").getBoundingClientRect();
      const pane = document.querySelector("pre.code").closest(".pane").getBoundingClientRect();
      return { pre: pre.right, pane: pane.right, page: document.documentElement.scrollWidth, width: window.innerWidth };
    });
    assert.ok(fits.pre <= fits.pane + 1 && fits.page <= fits.width, JSON.stringify(fits));
  });

  async function buildAndStart(name, seeds, more = {}) {
    await go("#/experiments");
    await page.waitForSelector("#toml");
    await page.waitForFunction(() => document.querySelector("#toml")?.value.includes("name ="));
    await page.fill("input[name=name]", name);
    for (const arm of ["policy-only", "harness-s", "random-rescue", "base-resample", "keep-scaffold", "all-siblings"]) {
      const box = page.locator(`input[name=arm][value="${arm}"]`);
      const want = arm === "policy-only" || arm === "harness-s" || arm === "random-rescue";
      if ((await box.isChecked()) !== want) await box.click();
    }
    // Split: one held-out family.
    for (const box of await page.locator("input[name=heldout]").all()) {
      const want = (await box.getAttribute("value")) === "aggregation-AVG";
      if ((await box.isChecked()) !== want) await box.click();
    }
    const nums = { iterations: 2, eval_every: 2, reanchor_every: 2, base_tries: 2, rescue_siblings: 2, rescue_tries: 1, batch_tasks: 8, probe_tasks: 8, warm_start_demos: 10, eval_train_tasks: 20, ...more };
    for (const [k, v] of Object.entries(nums)) await page.fill(`input[name=${k}]`, String(v));
    await page.fill("input[name=seeds]", seeds);
    await page.press("input[name=seeds]", "Tab");
    // The TOML follows the form.
    await page.waitForFunction(
      ({ name, iterations }) => {
        // Compared without white space, so any TOML layout of arrays will do.
        const t = (document.querySelector("#toml")?.value ?? "").replace(/\s+/g, "");
        return t.includes(`"${name}"`) && /heldout_families=\["aggregation-AVG",?\]/.test(t) && t.includes(`iterations=${iterations}`) && t.includes("warm_start_demos=10") && t.includes("train_tasks=20") && !t.includes("keep-scaffold");
      },
      { name, iterations: nums.iterations },
      { timeout: 10_000 },
    );
    await page.click("#start-experiment");
    await page.waitForFunction(() => /#\/experiments\?run=\d+/.test(window.location.hash));
    return Number(new URL(page.url()).hash.match(/run=(\d+)/)[1]);
  }

  test("builder: the TOML is checked as it is typed; the endpoint test reports its error", async () => {
    await go("#/experiments");
    await page.waitForFunction(() => document.querySelector("#toml")?.value.includes("name ="));
    const original = await page.inputValue("#toml");
    await page.fill("#toml", original + "\nbogus_key = 1\n");
    await page.waitForSelector("#toml-error");
    assert.match(await page.locator("#toml-error").innerText(), /bogus_key/);
    assert.ok(await page.locator("#start-experiment").isDisabled());
    await page.fill("#toml", original);
    await page.waitForSelector("#toml-error", { state: "detached" });
    // An OpenAI-compatible endpoint that is not one (this server): the test says why it failed.
    await page.click("input[name=backend][value=openai]");
    await page.fill("input[name=base_url]", `${server.origin}/v1`);
    await page.fill("input[name=model]", "none");
    await page.click("#test-connection");
    await page.waitForSelector(".endpoint .error-text, .endpoint .note.ok");
    const said = await page.locator(".endpoint .error-text, .endpoint .note.ok").innerText();
    assert.ok(said.length > 10, said);
    // the trainer section: the TOML gains [trainer] and [serving]; a trainer that fails says why
    await page.waitForFunction(() => document.querySelector("#toml")?.value.includes("[trainer]"));
    assert.match(await page.inputValue("#toml"), /\[serving\][\s\S]*kind = "vllm-lora"/);
    await page.fill("input[name=trainer_command]", "false");
    await page.locator("input[name=trainer_command]").dispatchEvent("change");
    await page.waitForFunction(() => document.querySelector("#toml")?.value.includes('command = ["false"]'));
    await page.click("#test-trainer");
    await page.waitForSelector("#trainer-check");
    assert.match(await page.locator("#trainer-check").innerText(), /exited with status 1/);
    await shot("4-builder-endpoint");
    await page.click("input[name=backend][value=builtin]");
    await page.waitForFunction(() => !document.querySelector("#toml")?.value.includes("base_url"));
    assert.ok(!(await page.inputValue("#toml")).includes("[trainer]"), "the built-in policy has no trainer");
  });

  test("builder: the save path follows the name; saving again asks before replacing the file", async () => {
    await go("#/experiments");
    await page.waitForFunction(() => document.querySelector("#toml")?.value.includes("name ="));
    await page.fill("input[name=name]", "UI Save Test!");
    await page.waitForFunction(() => document.querySelector("input[name=save_path]")?.value === "ui-save-test.toml");
    await page.waitForFunction(() => document.querySelector("#toml")?.value.includes('"UI Save Test!"'));
    await page.click("#save-config");
    await page.waitForSelector(".builder .note.ok");
    const file = path.join(server.dir, "experiments", "ui-save-test.toml");
    const first = readFileSync(file, "utf8");
    assert.match(first, /name = "UI Save Test!"/);
    // a form edit keeps the file's comments (the demo's header)
    assert.match(first, /^# The first-run demo/);
    // Saving again: asked first; Esc keeps the file as it was.
    await page.fill("input[name=iterations]", "3");
    await page.waitForFunction(() => /iterations = 3\b/.test(document.querySelector("#toml")?.value ?? ""));
    await page.click("#save-config");
    await page.waitForSelector("[role=alertdialog]");
    assert.match(await page.locator("[role=alertdialog]").innerText(), /experiments\/ui-save-test\.toml already exists/);
    assert.equal(await page.evaluate(() => document.activeElement?.id), "cancel-overwrite", "the safe choice has the focus");
    await shot("4-builder-confirm-overwrite");
    await page.keyboard.press("Escape");
    await page.waitForSelector("[role=alertdialog]", { state: "detached" });
    assert.equal(readFileSync(file, "utf8"), first, "nothing replaced without a yes");
    // ... and with the keyboard: Tab to Replace, Enter.
    await page.click("#save-config");
    await page.waitForSelector("[role=alertdialog]");
    await page.waitForFunction(() => document.activeElement?.id === "cancel-overwrite");
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "confirm-overwrite");
    await page.keyboard.press("Enter");
    await page.waitForSelector("[role=alertdialog]", { state: "detached" });
    await page.waitForSelector(".builder .note.ok");
    assert.match(readFileSync(file, "utf8"), /iterations = 3\b/);
    // A path of one's own stays when the name changes; emptied, it follows the name again.
    await page.fill("input[name=save_path]", "mine.toml");
    await page.fill("input[name=name]", "renamed");
    await page.waitForFunction(() => document.querySelector("#toml")?.value.includes('"renamed"'));
    assert.equal(await page.inputValue("input[name=save_path]"), "mine.toml");
    await page.fill("input[name=save_path]", "");
    await page.locator("input[name=save_path]").blur();
    await page.waitForFunction(() => document.querySelector("input[name=save_path]")?.value === "renamed.toml");
  });

  test("builder: a bad number is named beside its field, the file shown is marked stale; the estimate warns when large", async () => {
    await go("#/experiments");
    await page.waitForSelector("#estimate");
    assert.match(await page.locator("#estimate-rollouts").innerText(), /^[\d,]+(–[\d,]+)?$/);
    const before = await page.inputValue("#toml");
    for (const bad of ["-1", "2.5"]) {
      await page.fill("input[name=iterations]", bad);
      const field = page.locator(".num-field.invalid:has(input[name=iterations])");
      await field.waitFor();
      assert.match(await field.locator(".field-problem").innerText(), /^iterations must be a whole number ≥ 1$/);
      await page.waitForSelector("#toml-stale");
      assert.ok(await page.locator("#start-experiment").isDisabled());
      await page.waitForSelector("#estimate.stale", { timeout: 2000 });
      assert.doesNotMatch(await page.locator(".builder-form").innerText(), /−|-\d/, "no negative numbers in the summary");
    }
    await page.fill("input[name=iterations]", "100001");
    await page.waitForFunction(() => document.querySelector("#iterations-problem")?.textContent === "iterations must be a whole number from 1 to 100,000");
    await page.fill("input[name=batch_tasks]", "-24");
    await page.waitForSelector(".num-field.invalid:has(input[name=batch_tasks])");
    assert.match(await page.locator("#form-problems").innerText(), /iterations must be a whole number from 1 to 100,000; batch must be a whole number ≥ 1/);
    assert.equal(await page.inputValue("#toml"), before, "the stale file is the last valid one");
    assert.match(await page.getAttribute("#toml", "class"), /stale/);
    await page.fill("input[name=batch_tasks]", "24");
    // Large but allowed: a warning, not a refusal.
    await page.fill("input[name=iterations]", "100000");
    await page.waitForSelector("#toml-stale", { state: "detached" });
    await page.waitForSelector("#estimate-warning");
    assert.match(await page.locator("#estimate-warning").innerText(), /large experiment/);
    assert.ok(await page.locator("#start-experiment").isEnabled());
    await shot("4-builder-estimate-warning");
    await page.fill("input[name=iterations]", "8");
    await page.waitForSelector("#estimate-warning", { state: "detached" });
    assert.ok(!(await page.locator(".num-field.invalid").count()));
  });

  test("builder: builds, saves and runs two small experiments to completion with live progress", async () => {
    runs.a = await buildAndStart("ui-small-a", "1");
    // Saving writes the experiment file (checked first) into the workspace's experiments/.
    await page.fill("input[name=save_path]", "ui-small.toml");
    await page.click("#save-config");
    await page.waitForSelector(".builder .note.ok");
    assert.match(readFileSync(path.join(server.dir, "experiments", "ui-small.toml"), "utf8"), /iterations\s*=\s*2\b/);
    runs.b = await buildAndStart("ui-small-b", "2");
    assert.notEqual(runs.a, runs.b);
    // Live progress per arm and seed while they run.
    await page.waitForSelector(`[data-run="${runs.b}"] .units tbody tr`, { timeout: 100_000 });
    await shot("4-experiments-running");
    for (const id of [runs.a, runs.b]) {
      await page.waitForSelector(`[data-run="${id}"] summary .status-finished`, { timeout: 110_000 });
    }
    const units = await page.locator(`[data-run="${runs.b}"] .units tbody tr`).count();
    assert.ok(units >= 3, `one progress row per arm and seed, got ${units}`);
    await page.locator(`[data-run="${runs.b}"] summary`).scrollIntoViewIfNeeded();
    await shot("4-experiments");
  });

  test("runs: a running experiment names its phase and draws its transfer curves as evaluations arrive", async () => {
    const id = await buildAndStart("ui-live", "4", { iterations: 6, eval_every: 1 });
    const card = `[data-run="${id}"]`;
    // what each job is doing, in words, while the run goes on
    const phase = /warm-start demonstrations|probing siblings|first evaluation|iteration \d of 6: (rollouts|rescues|update|probing siblings|evaluation)/;
    await page.waitForFunction(({ card, re }) => new RegExp(re).test(document.querySelector(`${card} .unit-phase`)?.textContent ?? ""), { card, re: phase.source }, { timeout: 60_000 });
    assert.match(await page.locator(`${card} summary`).innerText(), /running/);
    // the bar counts episodes against the plan
    await page.waitForFunction((card) => /[1-9][\d,]* \/ [~\d,–]+ episodes/.test(document.querySelector(`${card} .run-episodes`)?.textContent ?? ""), card, { timeout: 60_000 });
    // once an evaluation is recorded, the transfer curves: the report's panels, one line per arm;
    // waiting for a second point on a line (the first iteration's evaluation)
    // (attached: a line of one point, or a flat one, has no area to be "visible")
    await page.waitForSelector(`${card} .live-chart svg.panel path.series`, { state: "attached", timeout: 100_000 });
    const evaluated = await api(server, "jobs");
    assert.ok(evaluated.find((j) => j.run_id === id).evaluations.length > 0, "a chart only once an evaluation is recorded");
    await page.waitForFunction((card) => [...document.querySelectorAll(`${card} .live-chart svg.panel g[data-arm]`)].some((g) => g.querySelectorAll(".point").length >= 2), card, { timeout: 100_000 });
    const panels = await page.locator(`${card} .live-chart svg.panel`).evaluateAll((ps) => ps.map((p) => p.getAttribute("data-panel")));
    assert.deepEqual(panels, ["training families", "held-out families"]);
    const arms = await page.locator(`${card} .live-chart svg.panel:first-child path.series`).evaluateAll((ps) => ps.map((p) => p.getAttribute("data-arm")));
    assert.ok(arms.length >= 1 && arms.every((a) => ["policy-only", "harness-s", "random-rescue"].includes(a)), JSON.stringify(arms));
    const running = /running/.test(await page.locator(`${card} summary`).innerText());
    await page.evaluate((card) => document.querySelector(card)?.scrollIntoView({ block: "start" }), card);
    await shot("4-experiments-live");
    assert.ok(running, "the screenshot shows the experiment running");
    await page.click(`${card} summary button.danger`);
    await page.waitForSelector(`${card} summary .status-cancelled`, { timeout: 60_000 });
  });

  test("runs: cancel a running experiment, then resume it to the end", async () => {
    const id = await buildAndStart("ui-cancel-resume", "3");
    const card = `[data-run="${id}"]`;
    await page.waitForSelector(`${card} summary .status-running`);
    await page.click(`${card} summary button.danger`);
    await page.waitForSelector(`${card} summary .status-cancelled`, { timeout: 60_000 });
    await shot("4-experiments-cancelled");
    await page.click(`${card} summary button:has-text("Resume")`);
    await page.waitForSelector(`${card} summary .status-finished`, { timeout: 110_000 });
    const exp = await api(server, "experiment", { id });
    assert.equal(exp.status, "finished");
    // An earlier run's file can be loaded back into the builder.
    await page.click(`[data-run="${runs.a}"] summary button:has-text("edit a copy")`);
    await page.waitForFunction(() => document.querySelector("input[name=name]")?.value === "ui-small-a");
    assert.match((await page.inputValue("#toml")).replace(/\s+/g, ""), /seeds=\[1,?\]/);
  });

  test("results: charts and the final table; two experiments compared", async () => {
    await go(`#/results?id=${runs.a}`);
    await page.waitForSelector(".final-table tbody tr", { timeout: 30_000 });
    assert.ok((await page.locator(".chart svg").count()) >= 1, "charts drawn inline");
    const arms = await page.locator(".final-table tbody tr td:nth-child(2)").allInnerTexts();
    assert.ok(arms.some((a) => a.includes("harness-s")) && arms.some((a) => a.includes("policy-only")));
    // harness-s against each other arm, one row per split
    const against = await page.locator(".routed-vs tbody tr td:nth-child(3)").allInnerTexts();
    assert.ok(against.length >= 1 && against.every((a) => !a.includes("harness-s")), JSON.stringify(against));
    await shot("5-results");
    // the run's training data for training elsewhere, written in the workspace
    await page.click("button[data-format=openai-chat]");
    await page.waitForSelector("#training-export");
    assert.match(await page.locator("#training-export").innerText(), /warm-start.*examples\.jsonl/s);
    await page.selectOption("#compare-run", String(runs.b));
    await page.waitForSelector(".compare-table tbody tr", { timeout: 30_000 });
    assert.match(await page.locator(".comparison h3").innerText(), new RegExp(`#${runs.b}`));
    await shot("5-results-compare");
  });

  test("builder: the detectable difference is planned from a finished run, live as sizes change, with the sizes an effect needs", async () => {
    await go("#/experiments");
    await page.waitForFunction(() => document.querySelector("#toml")?.value.includes("name ="));
    // the builder's own plan is the server's, for the file it shows
    const suite = '#power .power-suite[data-suite="dbbench"]';
    await page.waitForSelector(suite);
    const plan = (await api(server, "config_check", { toml: await page.inputValue("#toml") })).power[0];
    assert.ok(plan.pilot_run, `a finished dbbench run to plan from: ${JSON.stringify(plan)}`);
    assert.equal(await page.locator(`${suite} .power-sentence`).innerText(), plan.sentence);
    assert.match(plan.sentence, new RegExp(`run #${plan.pilot_run}`));
    const mde = async () => Number((await page.locator(`${suite} .power-mde`).innerText()).replace(" pts", ""));
    const before = await mde();
    assert.equal(before.toFixed(1), (100 * plan.mde).toFixed(1));
    // a second held-out family doubles the held-out tasks: the detectable difference shrinks
    const families = await page.locator("input[name=heldout]").all();
    let added = null;
    for (const box of families) {
      if (!(await box.isChecked())) {
        added = box;
        break;
      }
    }
    await added.click();
    await page.waitForFunction(({ sel, was }) => Number(document.querySelector(sel)?.textContent?.replace(" pts", "")) < was, { sel: `${suite} .power-mde`, was: before }, { timeout: 10_000 });
    assert.match(await page.locator(`${suite} .power-sentence`).innerText(), /^dbbench: \d+ held-out tasks × /);
    // an effect to size for: the tasks (and seeds) it needs, in the sentence
    await page.fill("#power-effect", "5");
    await page.waitForFunction((sel) => /For 5\.0 pts: [\d,]+ tasks at /.test(document.querySelector(sel)?.textContent ?? ""), `${suite} .power-sentence`, { timeout: 10_000 });
    await page.locator("#power").scrollIntoViewIfNeeded();
    await shot("4-builder-power");
    await page.fill("#power-effect", "");
    await added.click();
  });

  test("harnesses: a sibling's behaviour profile from the experiment", async () => {
    const hs = await api(server, "harnesses", { suite: "dbbench" });
    const measured = hs.find((h) => h.profile);
    assert.ok(measured, "the harness-s arm measured behaviour profiles");
    await go(`#/harnesses?suite=dbbench&h=${measured.name}`);
    await page.waitForSelector(".profile-counts");
    assert.match(await page.locator(".count.fix").innerText(), new RegExp(`^${measured.profile.fix}\\b`));
    if (measured.profile.evidence.length) assert.equal(await page.locator(".evidence li").count(), measured.profile.evidence.length);
    await shot("3-harnesses-profile");
    // Whose evidence: the picker lists every run that measured profiles and starts on the one
    // with the most paired probes; picking another run shows its profiles.
    const sources = await api(server, "profile_runs", { suite: "dbbench" });
    assert.ok(sources.length >= 2, JSON.stringify(sources));
    const most = sources.reduce((a, b) => (b.pairs > a.pairs || (b.pairs === a.pairs && b.run_id > a.run_id) ? b : a));
    assert.ok(sources.find((r) => r.default).run_id === most.run_id);
    const picker = page.locator("select[aria-label='profiles from run']");
    assert.equal(await picker.inputValue(), String(most.run_id));
    assert.match(await page.locator(".profile .muted.small").first().innerText(), new RegExp(`run ${most.run_id}\\b`));
    const other = sources.find((r) => r.run_id !== most.run_id);
    await picker.selectOption(String(other.run_id));
    await page.waitForFunction((id) => document.querySelector(".profile .muted.small a")?.textContent === `run ${id}`, other.run_id);
    assert.match(page.url(), new RegExp(`run=${other.run_id}`));
  });

  test("workspace and results give a run the same headline, and say at which iteration", async () => {
    for (const id of [runs.a, runs.b]) {
      const results = await api(server, "results", { id });
      await go("#/workspace");
      const cell = page.locator(`tr[data-run="${id}"] .headline-delta`);
      await cell.waitFor();
      const h = results.pooled ?? results.headline[0];
      const text = await cell.innerText();
      const pts = (x) => `${x > 0 ? "+" : x < 0 ? "−" : "±"}${Math.abs(x * 100).toFixed(1)} pts`;
      assert.ok(text.replace(/\s+/g, " ").includes(`it ${results.headline[0].iteration}`), text);
      if (h.delta.seeds < 2) {
        // as on the results page: one seed gives no seed interval
        assert.ok(text.includes("one seed: no interval") && !text.includes("["), `${text} vs ${JSON.stringify(h.delta)}`);
        assert.match(results.headline[0].sentence ?? h.sentence, /one seed cannot give a seed interval/);
      } else {
        assert.ok(text.includes(`[${(h.delta.ci95[0] * 100).toFixed(1)}, ${(h.delta.ci95[1] * 100).toFixed(1)}]`), `${text} vs ${JSON.stringify(h.delta)}`);
      }
      assert.ok(text.startsWith(pts(h.delta.mean)), `${text} vs ${pts(h.delta.mean)}`);
    }
    await shot("1-workspace-runs");
  });

  test("export: the report downloads as HTML, JSON and a zip of CSV tables", async () => {
    await go(`#/results?id=${runs.a}`);
    await page.waitForSelector(".final-table tbody tr");
    const html = await download("#export-html");
    assert.match(html.text, /<html/i);
    assert.match(html.text, /ui-small-a/);
    assert.match(html.name, /\.html$/);
    const json = await download("#export-json");
    const report = JSON.parse(json.text);
    assert.equal(report.run.id, runs.a);
    assert.ok(Array.isArray(report.final_table.rows) && report.final_table.rows.length > 0);
    // every table its own CSV file: Python's zipfile and csv read each with its header
    const zip = await download("#export-csv-zip");
    assert.match(zip.name, /-csv\.zip$/);
    const read = execFileSync(
      "python3",
      [
        "-c",
        "import csv, io, json, sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nprint(json.dumps({n: list(csv.reader(io.TextIOWrapper(z.open(n), newline='')))[0] for n in z.namelist()}))",
        zip.path,
      ],
      { encoding: "utf8" },
    );
    const headers = JSON.parse(read);
    assert.ok(Object.keys(headers).length >= 10, Object.keys(headers).join(", "));
    assert.deepEqual(headers["final_table.csv"].slice(0, 3), ["suite", "arm", "split"]);
    assert.ok(Object.keys(headers).every((n) => n.endsWith(".csv") && headers[n].length > 1));
  });

  async function download(button) {
    const [d] = await Promise.all([page.waitForEvent("download"), page.click(button)]);
    const file = await d.path();
    return { name: d.suggestedFilename(), path: file, text: readFileSync(file, "utf8") };
  }

  test("trajectories: filters, search, steps and keyboard", async () => {
    await go(`#/inspector?run=${runs.a}`);
    await page.waitForSelector(".ep-row[data-episode]");
    const total = Number((await page.locator("#episode-count").innerText()).replace(/\D/g, ""));
    const all = await api(server, "episodes", { run_id: runs.a, limit: 1 });
    assert.equal(total, all.total);
    // Outcome filter: the count is the server's for that filter, and every row shown passes.
    await page.selectOption("select[name=success]", "true");
    const passed = await api(server, "episodes", { run_id: runs.a, success: true, limit: 1 });
    await page.waitForFunction((n) => document.querySelector("#episode-count")?.textContent?.replace(/\D/g, "") === String(n), passed.total);
    assert.ok(passed.total < total);
    const outcomes = await page.locator(".ep-row[data-episode] .outcome .tag:first-child").evaluateAll((ts) => ts.map((t) => t.className));
    assert.ok(outcomes.length > 0 && outcomes.every((c) => c.includes("ok")), `outcomes shown: ${outcomes}`);
    // Text search, focused with '/'.
    await page.selectOption("select[name=success]", "");
    const rows = await api(server, "episodes", { run_id: runs.a, limit: 1 });
    const term = rows.rows[0].task_id;
    await page.keyboard.press("/");
    await page.keyboard.type(term);
    const found = await api(server, "episodes", { run_id: runs.a, text: term, limit: 1 });
    await page.waitForFunction((n) => document.querySelector("#episode-count")?.textContent?.replace(/\D/g, "") === String(n), found.total);
    assert.ok(found.total >= 1 && found.total < total);
    await page.keyboard.press("Escape");
    // An episode opens as a timeline; j moves to the next episode, → into the steps.
    await page.locator(".ep-row[data-episode]").first().click();
    await page.waitForSelector(".timeline .step");
    const firstId = await page.locator(".ep-head b").first().innerText();
    if (found.total > 1) {
      await page.keyboard.press("j");
      await page.waitForFunction((id) => document.querySelector(".ep-head b")?.textContent !== id, firstId);
    }
    await page.keyboard.press("ArrowRight");
    await page.waitForSelector(".step.current");
    await page.keyboard.press("c");
    await page.waitForSelector(".step.current .ctx-messages .msg");
    await shot("6-trajectories");
    // Back in the list, End goes to the last episode (a page the list had not loaded yet).
    await page.keyboard.press("Escape");
    await page.keyboard.press("Escape");
    await page.fill("input[name=text]", "");
    await page.keyboard.press("Escape");
    await page.waitForFunction((n) => document.querySelector("#episode-count")?.textContent?.replace(/\D/g, "") === String(n), total);
    const lastRow = await api(server, "episodes", { run_id: runs.a, limit: 1, offset: total - 1 });
    await page.keyboard.press("End");
    await page.waitForSelector(`.ep-row.selected[data-episode="${lastRow.rows[0].id}"]`);
  });

  test("a rescued task: base failure, sibling rescue and the distilled example side by side", async () => {
    const rescues = await api(server, "episodes", { run_id: runs.a, arm: "harness-s", phase: "rescue", success: true, limit: 5 });
    assert.ok(rescues.total > 0, "the harness-s arm rescued at least one task");
    const ep = rescues.rows[0];
    await go(`#/inspector?run=${runs.a}&arm=harness-s&phase=rescue&success=true`);
    await page.waitForSelector(`.ep-row[data-episode="${ep.id}"]`);
    await page.click(`.ep-row[data-episode="${ep.id}"]`);
    await page.waitForSelector("#rescue-tab:not([disabled])");
    await page.click("#rescue-tab");
    await page.waitForSelector('.col[data-col="base"] .step');
    await page.waitForSelector('.col[data-col="rescue"] .step');
    await page.waitForSelector('.col[data-col="distilled"] .step.example');
    const r = await api(server, "rescue", { episode_id: ep.id });
    assert.match(await page.locator('.col[data-col="rescue"] h3').innerText(), new RegExp(r.sibling));
    assert.equal(await page.locator('.col[data-col="distilled"] .step.example').count(), r.distilled.examples.length);
    // examples the built-in policy cannot produce in base context are marked as skipped
    const skipped = r.distilled.examples.filter((e) => e.producible === false).length;
    assert.equal(await page.locator('.col[data-col="distilled"] .skipped-note').count(), skipped);
    // The base failure's outcome is a failure, the rescue's a success.
    assert.match(await page.locator('.col[data-col="base"] .final-score').innerText(), /failure/);
    assert.match(await page.locator('.col[data-col="rescue"] .final-score').innerText(), /success/);
    // The routing decision: the failure signature, every voter's ranking, the choice.
    assert.ok(r.route, "a harness-s rescue carries its routing decision");
    const route = page.locator('[data-testid="route-summary"]');
    assert.match(await route.locator("summary").innerText(), new RegExp(r.route.query.signature));
    await route.locator("summary").click();
    assert.equal(await route.locator(".route-table tr").count(), r.route.rankings.length + 1);
    assert.match(await route.locator(".route-table").innerText(), /posterior[\s\S]*thompson[\s\S]*ucb[\s\S]*Borda/);
    await shot("6-rescue");
  });

  test("server errors are shown in a banner with the server's text", async () => {
    await go("#/results?id=987654");
    await page.waitForSelector(".banner.error");
    const text = await page.locator(".banner.error").first().innerText();
    assert.match(text, /987654/);
    await shot("error-banner");
    await page.keyboard.press("Escape");
  });

  test("no script errors in the page throughout", () => {
    assert.deepEqual(pageErrors, []);
  });
});
