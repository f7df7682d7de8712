// The inspector's components at the sizes they must handle: a list of 100,000 episodes keeps
// only the visible rows in the page and scrolls without stalls; a 500-step trajectory opens at
// once with its contexts folded, and a far step's context is rebuilt on demand.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { build } from "vite";
import { artifacts, CHROMIUM, startBrowser, uiDir } from "./serve.mjs";

const reason = existsSync(CHROMIUM) ? null : `${CHROMIUM} is absent: install Debian's chromium to run the browser tests`;
if (reason) console.log(`# skipping the scale tests: ${reason}`);

describe("inspector at scale", { skip: reason ?? false }, () => {
  let out;
  let http;
  let browser;
  let page;

  before(async () => {
    out = mkdtempSync(path.join(tmpdir(), "harness-s-scale-"));
    await build({ root: path.join(uiDir, "tests/scale"), base: "./", logLevel: "error", configFile: false, oxc: { jsx: { runtime: "automatic", importSource: "preact" } }, build: { outDir: out, emptyOutDir: true } });
    http = createServer((req, res) => {
      const rel = decodeURIComponent(new URL(req.url, "http://x").pathname).replace(/^\/+/, "") || "index.html";
      const file = path.join(out, rel);
      if (!file.startsWith(out) || !existsSync(file)) return res.writeHead(404).end();
      const type = file.endsWith(".js") ? "text/javascript" : file.endsWith(".css") ? "text/css" : "text/html";
      res.writeHead(200, { "Content-Type": type }).end(readFileSync(file));
    });
    await new Promise((r) => http.listen(0, "127.0.0.1", r));
    browser = await startBrowser();
    page = await browser.context.newPage();
    await page.goto(`http://127.0.0.1:${http.address().port}/index.html`);
    await page.waitForFunction(() => typeof window.renderList === "function");
  });

  after(async () => {
    await browser?.stop();
    http?.close();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  test("100,000 episodes: only visible rows exist, and scrolling stays smooth", async () => {
    const ms = await page.evaluate(() => window.renderList(100_000));
    // Timings are figures to read (`npm run bench`), not pass/fail conditions.
    console.log(`# figure: first render of a 100,000-episode list: ${ms.toFixed(1)} ms (target < 200 ms)`);
    await page.waitForSelector("[data-row='0']");
    assert.ok((await page.locator("[data-row]").count()) < 80);
    // Scroll through the list in 60 jumps; the slowest frame must stay short.
    const worst = await page.evaluate(async () => {
      const el = document.querySelector(".vlist");
      let worst = 0;
      for (let i = 1; i <= 60; i++) {
        const t0 = performance.now();
        el.scrollTop = (el.scrollHeight * i) / 61;
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        worst = Math.max(worst, performance.now() - t0);
      }
      el.scrollTop = el.scrollHeight;
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      return worst;
    });
    console.log(`# figure: slowest of 60 scroll jumps through 100,000 rows: ${worst.toFixed(1)} ms (target < 120 ms)`);
    await page.waitForSelector("[data-row='99999']");
    assert.ok((await page.locator("[data-row]").count()) < 80);
  });

  test("a 500-step trajectory opens fast with contexts folded; a far step's context opens", async () => {
    const ms = await page.evaluate(() => window.renderTimeline(500));
    console.log(`# figure: opening a 500-step trajectory: ${ms.toFixed(1)} ms (target < 300 ms)`);
    const rendered = await page.locator(".step").count();
    assert.ok(rendered > 0 && rendered < 500, `rendered ${rendered} steps up front`);
    assert.equal(await page.locator(".ctx-messages").count(), 0, "contexts start folded");
    // Scrolling down renders more steps on demand.
    for (let i = 0; i < 40 && (await page.locator(".step").count()) < 500; i++) {
      await page.locator(".more-steps").scrollIntoViewIfNeeded();
      await page.waitForTimeout(20);
    }
    assert.equal(await page.locator(".step").count(), 500);
    // Step 499's context is rebuilt from the keep/add encoding: 2 frame messages, 2 per step after, plus hints.
    const last = page.locator('[data-step="499"]');
    await last.locator(".ctx-toggle").click();
    const hints = Math.floor(498 / 7); // steps 7, 14, ..., 497 add a hint
    assert.match(await last.locator(".ctx-toggle").innerText(), new RegExp(`${2 + 2 * 499 + hints} messages`));
    await last.locator(".fold").click();
    assert.equal(await last.locator(".ctx-messages .msg").count(), 2 + 2 * 499 + hints);
    assert.equal(await last.locator(".msg.from-hook").count(), hints);
    await page.screenshot({ path: path.join(artifacts, "scale-timeline.png") });
  });
});
