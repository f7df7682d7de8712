// End-to-end: two small experiments compared in Results (the real `harness-s serve`, headless
// Chromium). Both runs' transfer curves in one chart, what differs in their configurations,
// warnings where their numbers are hard to compare, no interval from a single seed, the
// interactive charts (hover, hiding an arm from the legend), one colour per arm in the
// final-success chart, and the HTML report's comparison at 1440 px.
// Screenshots go to ui/test-artifacts/.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { api, artifacts, openPage, skipReason, startBrowser, startServer } from "./serve.mjs";

const reason = skipReason();
if (reason) console.log(`# skipping the browser tests: ${reason}`);

/** The charts' arm colours (src/chart/style.rs, ui/src/ui.tsx). */
const ARM_COLOR = { "harness-s": "#0072B2", "policy-only": "#000000", "random-rescue": "#E69F00" };

function config(name, seeds, iterations, batch) {
  return `name = "${name}"
suites = ["dbbench"]
heldout_families = ["aggregation-AVG"]
arms = ["policy-only", "harness-s", "random-rescue"]
seeds = [${seeds.join(", ")}]
iterations = ${iterations}
eval_every = 1
reanchor_every = 2
workers = 2

[policy]
warm_start_demos = 10

[budget]
batch_tasks = ${batch}
base_tries = 2
rescue_siblings = 2
rescue_tries = 1
probe_tasks = 8

[eval]
train_tasks = 20
`;
}

describe("results: comparison and interactive charts", { skip: reason ?? false }, () => {
  let server;
  let browser;
  let page;
  const runs = {};
  const pageErrors = [];
  const shot = (name, fullPage = false) => page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage });
  const go = (hash) => page.evaluate((h) => (window.location.hash = h), hash);

  async function finish(toml) {
    const started = await api(server, "experiment_start", { toml });
    const id = started.run_id;
    const t0 = Date.now();
    for (;;) {
      const e = await api(server, "experiment", { id });
      if (e.status === "finished") return id;
      assert.ok(!["failed", "cancelled"].includes(e.status), `run ${id} ${e.status}`);
      assert.ok(Date.now() - t0 < 240_000, `run ${id} did not finish in time`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  before(async () => {
    server = await startServer();
    // one seed, two iterations; three seeds, three iterations and a larger batch; and the first
    // again under another name
    runs.a = await finish(config("cmp-one-seed", [1], 2, 8));
    runs.b = await finish(config("cmp-three-seeds", [1, 2, 3], 3, 10));
    runs.c = await finish(config("cmp-one-seed-again", [1], 2, 8));
    browser = await startBrowser();
    page = await openPage(browser, server, pageErrors);
  });

  after(async () => {
    await browser?.stop();
    await server?.stop();
  });

  test("the comparison overlays both runs' transfer curves: arm by colour, run by line style", async () => {
    await go(`#/results?id=${runs.a}&other=${runs.b}`);
    const chart = ".comparison figure[data-chart=transfer-compare]";
    await page.waitForSelector(`${chart} svg.panel path.series`, { state: "attached", timeout: 30_000 });
    const panels = await page.locator(`${chart} svg.panel`).evaluateAll((ps) => ps.map((p) => p.getAttribute("data-panel")));
    assert.deepEqual(panels, ["training families", "held-out families"]);
    const lines = await page.locator(`${chart} svg.panel:first-child g[data-arm]`).evaluateAll((gs) =>
      gs.map((g) => {
        const p = g.querySelector("path.series");
        return { arm: g.getAttribute("data-arm"), run: g.getAttribute("data-run"), stroke: p.getAttribute("stroke"), dash: p.getAttribute("stroke-dasharray"), fill: g.querySelector(".point").getAttribute("fill") };
      }),
    );
    for (const arm of Object.keys(ARM_COLOR)) {
      const mine = lines.find((l) => l.arm === arm && l.run === "this");
      const theirs = lines.find((l) => l.arm === arm && l.run === "other");
      assert.ok(mine && theirs, `${arm}: both runs drawn: ${JSON.stringify(lines)}`);
      assert.equal(mine.stroke, ARM_COLOR[arm], `${arm}: its colour`);
      assert.equal(theirs.stroke, ARM_COLOR[arm], `${arm}: the same colour in the other run`);
      assert.equal(mine.dash, null, "this run solid");
      assert.ok(theirs.dash, "the other run dashed");
      assert.equal(theirs.fill, "#fff", "the other run's markers outlined");
    }
    const legend = await page.locator(`${chart} .legend-runs`).innerText();
    assert.match(legend, new RegExp(`#${runs.a} cmp-one-seed`));
    assert.match(legend, new RegExp(`#${runs.b} cmp-three-seeds`));
    await page.locator(".comparison").scrollIntoViewIfNeeded();
    await page.evaluate(() => document.querySelector(".comparison")?.scrollIntoView({ block: "start" }));
    await shot("5-results-compare-overlay");
  });

  test("the differences between the configurations are listed, or none but the name", async () => {
    await go(`#/results?id=${runs.a}&other=${runs.b}`);
    await page.waitForSelector(".comparison .differences");
    const text = (await page.locator(".comparison .differences").innerText()).replace(/\s+/g, " ");
    assert.match(text, /^Differs/);
    assert.match(text, /seeds 1 vs 3/);
    assert.match(text, /iterations 2 vs 3/);
    assert.match(text, /batch tasks 8 vs 10/);
    assert.doesNotMatch(text, /\bname\b/);
    // their final tables are at different iterations: said above the table, and in each cell
    const warnings = await page.locator(".comparison .compare-warnings").innerText();
    assert.match(warnings, new RegExp(`run ${runs.a}'s final table is at iteration 2 and run ${runs.b}'s at iteration 3`));
    const cells = await page.locator(".compare-table tbody tr td:nth-child(4)").allInnerTexts();
    assert.ok(cells.length > 0 && cells.every((t) => t.includes("it 2")), JSON.stringify(cells));
    // the explanation of both kinds of difference
    const terms = await page.locator(".comparison dl.terms").innerText();
    assert.match(terms, /difference[\s\S]*not paired/);
    assert.match(terms, /paired Δ[\s\S]*tasks both runs evaluated/);
    const same = await api(server, "compare", { id: runs.a, other: runs.c });
    assert.deepEqual(same.comparison.differences, []);
    await go(`#/results?id=${runs.a}&other=${runs.c}`);
    await page.waitForFunction((c) => document.querySelector(".comparison h3")?.textContent?.includes(`#${c}`), runs.c);
    assert.equal((await page.locator(".comparison .differences").innerText()).trim(), "Same configuration except the name.");
  });

  test("no interval is printed from a single seed, in the page or the HTML report", async () => {
    await go(`#/results?id=${runs.a}&other=${runs.b}`);
    await page.waitForSelector(".compare-table tbody tr");
    const report = await page.locator(".report").innerText();
    assert.doesNotMatch(report, /\+0\.0 to \+0\.0/);
    // every paired interval needs two seeds in each run: run a has one
    const paired = await page.locator(".compare-table tbody tr td:nth-child(8)").allInnerTexts();
    assert.ok(paired.length >= 4 && paired.every((t) => t.includes("one seed: no interval")), JSON.stringify(paired));
    const mine = await page.locator(".compare-table tbody tr td:nth-child(4)").allInnerTexts();
    assert.ok(mine.every((t) => t.includes("one seed: no interval") && !/\[\d/.test(t)), JSON.stringify(mine));
    // the other run has three seeds: its intervals are shown
    const theirs = await page.locator(".compare-table tbody tr td:nth-child(5)").allInnerTexts();
    assert.ok(theirs.every((t) => /\[\d+\.\d, \d+\.\d\]/.test(t)), JSON.stringify(theirs));
    const headline = await page.locator(".headline").first().innerText();
    assert.match(headline, /one seed: no interval/);
    assert.doesNotMatch(headline, /95% CI/);
    const finalCis = await page.locator(".final-table tbody tr td:nth-child(8)").allInnerTexts();
    assert.ok(finalCis.every((t) => t.includes("one seed")), JSON.stringify(finalCis));
    // the HTML report of the same comparison
    const html = (await api(server, "report_file", { id: runs.a, compare: runs.b, format: "html" })).text;
    assert.doesNotMatch(html, /\+0\.0 to \+0\.0/);
    const cmp = html.slice(html.indexOf('id="compare"'), html.indexOf("</section>", html.indexOf('id="compare"')));
    assert.match(cmp, /one seed: no interval/);
    assert.match(cmp, /seeds: 1 vs 3/);
  });

  test("hovering a point shows its arm, iteration, value and interval", async () => {
    await go(`#/results?id=${runs.b}&other=${runs.a}`);
    const chart = ".comparison figure[data-chart=transfer-compare]";
    await page.waitForSelector(`${chart} svg.panel .point`, { state: "attached", timeout: 30_000 });
    await page.evaluate(() => document.querySelector(".comparison")?.scrollIntoView({ block: "start" }));
    // the pointer over a point's marker (or near it)
    const hover = async (sel) => {
      const box = await page.locator(sel).last().boundingBox();
      await page.mouse.move(box.x + box.width / 2 + 3, box.y + box.height / 2 + 2);
    };
    // run b (this run here) has three seeds: a real interval
    await hover(`${chart} svg.panel:first-child g[data-arm="harness-s"][data-run="this"] .point`);
    const tip = page.locator(`${chart} .chart-tip`);
    await tip.waitFor();
    const text = await tip.innerText();
    assert.match(text, /harness-s/);
    assert.match(text, /#\d+ cmp-three-seeds/);
    assert.match(text, /iteration\s+3/);
    assert.match(text, /success\s+\d+\.\d%/);
    assert.match(text, /95% CI\s+\d+\.\d% – \d+\.\d% \(t over 3 seeds\)/);
    await shot("5-results-chart-tooltip");
    // beside the point, on the side with room: inside the figure, clear of the point itself
    const fig = await page.locator(chart).boundingBox();
    const tb = await tip.boundingBox();
    assert.ok(tb.x >= fig.x - 1 && tb.x + tb.width <= fig.x + fig.width + 1, `tooltip ${JSON.stringify(tb)} inside ${JSON.stringify(fig)}`);
    // run a's point: one seed, no interval
    await hover(`${chart} svg.panel:first-child g[data-arm="harness-s"][data-run="other"] .point`);
    await page.waitForFunction((sel) => /cmp-one-seed/.test(document.querySelector(sel)?.textContent ?? ""), `${chart} .chart-tip`);
    assert.match(await tip.innerText(), /one seed: no interval/);
    await page.mouse.move(2, 2);
    await tip.waitFor({ state: "detached" });
    // the labels are readable: no text under 11 px
    const small = await page.locator(`${chart} svg.panel text`).evaluateAll((ts) => ts.filter((t) => parseFloat(getComputedStyle(t).fontSize) * (t.ownerSVGElement.getBoundingClientRect().width / t.ownerSVGElement.viewBox.baseVal.width) < 11).map((t) => t.textContent));
    assert.deepEqual(small, []);
  });

  test("clicking a legend entry hides that arm; clicking again shows it", async () => {
    await go(`#/results?id=${runs.b}`);
    const chart = "#chart-transfer figure[data-chart=transfer]";
    await page.waitForSelector(`${chart} svg.panel path.series`, { state: "attached", timeout: 30_000 });
    const count = () => page.locator(`${chart} path.series[data-arm="policy-only"]`).count();
    assert.equal(await count(), 2, "one line per panel");
    const entry = page.locator(`${chart} button.legend-item[data-arm="policy-only"]`);
    await entry.click();
    assert.equal(await count(), 0);
    assert.equal(await entry.getAttribute("aria-pressed"), "false");
    assert.ok((await page.locator(`${chart} path.series[data-arm="harness-s"]`).count()) > 0, "the other arms stay");
    await entry.click();
    assert.equal(await count(), 2);
    assert.equal(await entry.getAttribute("aria-pressed"), "true");
    // the 95% bands can be switched off and on
    const bands = () => page.locator(`${chart} .band`).count();
    const before = await bands();
    assert.ok(before > 0, "three seeds: bands drawn");
    await page.locator(`${chart} button.bands-toggle`).click();
    assert.equal(await bands(), 0);
    await page.locator(`${chart} button.bands-toggle`).click();
    assert.equal(await bands(), before);
    // each chart downloads as the report draws it
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator('#chart-transfer [data-download="transfer"] button', { hasText: "SVG" }).click()]);
    assert.equal(download.suggestedFilename(), `run-${runs.b}-transfer.svg`);
    const svgText = readFileSync(await download.path(), "utf8");
    assert.match(svgText, /^<svg[^>]*data-chart="transfer"/);
    const [png] = await Promise.all([page.waitForEvent("download"), page.locator('#chart-transfer [data-download="transfer"] button', { hasText: "PNG" }).click()]);
    assert.equal(png.suggestedFilename(), `run-${runs.b}-transfer.png`);
    assert.deepEqual([...readFileSync(await png.path()).subarray(1, 4)].map((b) => String.fromCharCode(b)).join(""), "PNG");
    // and in the final-success chart
    const fin = "#chart-final-table figure[data-chart=final-table]";
    await page.locator(`${fin} button.legend-item[data-arm="random-rescue"]`).click();
    assert.equal(await page.locator(`${fin} g.dot[data-arm="random-rescue"]`).count(), 0);
    await page.locator(`${fin} button.legend-item[data-arm="random-rescue"]`).click();
    assert.equal(await page.locator(`${fin} g.dot[data-arm="random-rescue"]`).count(), 2);
    // the static charts of the report can be found by title
    await page.fill("input[data-search]", "router");
    assert.equal(await page.locator(".charts figure.chart").count(), 1);
    assert.equal(await page.locator("#chart-transfer").count(), 0);
    await page.fill("input[data-search]", "");
    assert.ok((await page.locator(".charts figure.chart").count()) > 1);
  });

  test("the final-success chart gives each arm one colour, in the page and in the report's SVG", async () => {
    await go(`#/results?id=${runs.b}`);
    const fin = "#chart-final-table figure[data-chart=final-table]";
    await page.waitForSelector(`${fin} g.dot`, { state: "attached", timeout: 30_000 });
    const dots = await page.locator(`${fin} g.dot`).evaluateAll((gs) =>
      gs.map((g) => {
        const m = g.querySelector(".point");
        return { arm: g.getAttribute("data-arm"), split: g.getAttribute("data-split"), color: m.getAttribute("fill") === "#fff" ? m.getAttribute("stroke") : m.getAttribute("fill"), hollow: m.getAttribute("fill") === "#fff" };
      }),
    );
    assert.equal(dots.length, 6, "three arms × two splits");
    for (const d of dots) {
      assert.equal(d.color, ARM_COLOR[d.arm], `${d.arm} ${d.split}: the arm's colour`);
      assert.equal(d.hollow, d.split === "heldout", "held-out outlined, training filled");
    }
    await page.locator(fin).scrollIntoViewIfNeeded();
    await page.locator(`${fin} g.dot[data-arm="harness-s"][data-split="heldout"] circle.hit`).hover();
    const tip = await page.locator(`${fin} .chart-tip`).innerText();
    assert.match(tip, /harness-s/);
    assert.match(tip, /held-out families/);
    assert.match(tip, /iteration\s+3/);
    assert.match(tip, /95% CI\s+\d+\.\d% – \d+\.\d%/);
    await shot("5-results-final-success");
    // the report's SVG: every marker of a split in its arm's colour, not one colour per split
    const report = await api(server, "results", { id: runs.b });
    const svg = report.charts.find((c) => c.id === "final-table").svg;
    const colours = await page.evaluate((svg) => {
      const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
      const out = {};
      for (const g of doc.querySelectorAll("g.series")) {
        const fills = new Set();
        for (const el of g.querySelectorAll("circle, polygon, rect")) {
          for (const a of ["fill", "stroke"]) {
            const v = (el.getAttribute(a) ?? "").toUpperCase();
            if (v.startsWith("#") && v !== "#FFFFFF") fills.add(v);
          }
        }
        out[g.getAttribute("data-series")] = [...fills].sort();
      }
      return out;
    }, svg);
    const want = Object.values(ARM_COLOR).map((c) => c.toUpperCase()).sort();
    assert.deepEqual(colours.train, want, JSON.stringify(colours));
    assert.deepEqual(colours.heldout, want, JSON.stringify(colours));
  });

  test("the paired differences against policy-only are drawn in the page, around a zero line, with hover values", async () => {
    await go(`#/results?id=${runs.b}`);
    const fig = "#chart-final-deltas figure[data-chart=final-deltas]";
    await page.waitForSelector(`${fig} g.dot`, { state: "attached", timeout: 30_000 });
    assert.equal(await page.locator(".charts figure[data-chart=final-deltas]").count(), 0, "no static copy of the same chart");
    const dots = await page.locator(`${fig} g.dot`).evaluateAll((gs) => gs.map((g) => ({ arm: g.getAttribute("data-arm"), split: g.getAttribute("data-split"), color: g.getAttribute("data-color") })));
    // policy-only is the baseline: the two other arms × two splits
    assert.deepEqual(dots.map((d) => d.arm).sort(), ["harness-s", "harness-s", "random-rescue", "random-rescue"]);
    for (const d of dots) assert.equal(d.color, ARM_COLOR[d.arm]);
    assert.equal(await page.locator(`${fig} line.zero`).count(), 1, "one zero line");
    const ticks = await page.locator(`${fig} text.tick`).allTextContents();
    assert.ok(ticks.includes("0") && ticks.some((t) => t.startsWith("−")) && ticks.some((t) => t.startsWith("+")), JSON.stringify(ticks));
    const fontPx = await page.locator(`${fig} text.tick`).first().evaluate((t) => parseFloat(getComputedStyle(t).fontSize));
    assert.ok(fontPx >= 12, `tick labels ${fontPx}px`);
    await page.locator(fig).scrollIntoViewIfNeeded();
    await page.locator(`${fig} g.dot[data-arm="harness-s"][data-split="heldout"] circle.hit`).hover();
    const tip = await page.locator(`${fig} .chart-tip`).innerText();
    assert.match(tip, /harness-s/);
    assert.match(tip, /held-out families/);
    assert.match(tip, /Δ vs policy-only\s+[+−±]\d+\.\d pts/);
    assert.match(tip, /95% CI\s+[+−±]\d+\.\d pts to [+−±]\d+\.\d pts \(paired bootstrap over 40 tasks, 3 seeds\)/);
    await shot("5-results-paired-deltas");
  });

  test("the HTML report puts the comparison under the headline, its tables within 1440 px", async () => {
    const html = (await api(server, "report_file", { id: runs.b, compare: runs.a, format: "html" })).text;
    assert.ok(html.indexOf('id="compare"') < html.indexOf('id="charts"'), "the comparison comes before the charts");
    assert.ok(html.indexOf('data-headline="dbbench"') < html.indexOf('id="compare"'), "right after the headline");
    const report = await browser.context.newPage();
    await report.setViewportSize({ width: 1440, height: 2200 });
    await report.setContent(html);
    const overflow = await report.evaluate(() => {
      const over = [...document.querySelectorAll("#compare table")].filter((t) => t.scrollWidth > t.clientWidth + 1 || t.getBoundingClientRect().right > document.documentElement.clientWidth);
      return { tables: document.querySelectorAll("#compare table").length, over: over.length, page: document.documentElement.scrollWidth > document.documentElement.clientWidth };
    });
    assert.ok(overflow.tables >= 3, JSON.stringify(overflow));
    assert.equal(overflow.over, 0, JSON.stringify(overflow));
    assert.equal(overflow.page, false, "no horizontal scroll");
    assert.match(await report.locator("#compare").innerText(), /Differs/);
    await report.screenshot({ path: path.join(artifacts, "report-compare.png"), fullPage: false });
    await report.close();
  });

  test("no script errors in the page throughout", () => {
    assert.deepEqual(pageErrors, []);
  });
});
