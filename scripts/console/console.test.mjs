// The console (docs/console.md) in a real browser: Debian's Chromium, driven by playwright-core,
// against a running local server. Every view loads with no console error and no request to
// another host, under its Content-Security-Policy; a test stream is started, watched, ended,
// replayed and clipped from the page; a webhook registered from the page shows its delivery
// with its body, and a redelivery adds an attempt; a live key is refused before any request
// carries it; the page's refreshes slow down, then stop, as the RateLimit header says the
// minute fills; the key and the stream's form work from the keyboard alone; axe-core finds no
// serious or critical violation on any view (a stream's twice: live, then ended with its replay
// and a clip).
//
//   node console.test.mjs <base .../api/v1> <test key> <live key> <server log> [screenshot dir]
//
// With MEASURE=1 it prints the page's weight and its first paint instead (BENCHMARKS.md).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const [base, testKey, liveKey, serverLog, shots] = process.argv.slice(2);
const origin = new URL(base).origin;
const WAIT = 45_000;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
    // Any host but this machine resolves nowhere: a request elsewhere fails, and is caught below.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const requests = [];
const problems = [];
let inFlight = 0;
page.on("request", (r) => { inFlight++; requests.push({ url: r.url(), headers: r.headers(), body: r.postData() || "" }); });
page.on("requestfinished", () => inFlight--);
page.on("requestfailed", () => inFlight--);
page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()} (${m.location().url})`); });
page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
page.on("response", (r) => { if (r.status() >= 400) problems.push(`${r.status()} for ${r.request().method()} ${r.url()}`); });
// A <video> cancels its own range requests as it buffers (net::ERR_ABORTED): not a failure.
page.on("requestfailed", (r) => { if (!r.url().includes("/clips/") && !r.url().includes("/recordings/")) problems.push(`failed request: ${r.url()}`); });

function step(text) {
  console.log(`console: ${text}`);
}

async function accessible(view) {
  // axe is evaluated through the DevTools protocol, which the page's CSP does not govern (an
  // inline script tag would be refused, as it should be).
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.filter((v) => ["serious", "critical"].includes(v.impact)).map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join("; ")})`);
  });
  assert.deepEqual(result, [], `${view}: accessibility violations`);
  if (shots) {
    // The status line sticks to the window's bottom; in a whole-page picture it goes last. Set
    // through the CSSOM, which the policy allows (Playwright's `style` option is an inline sheet).
    const status = (position) => page.evaluate((p) => { document.getElementById("status").style.position = p; }, position);
    await status("static");
    await page.screenshot({ path: `${shots}/console-${view}.png`, fullPage: true });
    await status("");
  }
  step(`${view}: no serious or critical accessibility violation`);
}

/** The focused element's name as a screen reader would give it (its label, else its text). */
function focusedName() {
  return page.evaluate(() => {
    const el = document.activeElement;
    const label = el.labels && el.labels[0];
    return (el.getAttribute("aria-label") || (label ? label.textContent : el.textContent) || "").trim();
  });
}

/** Presses Tab until the control named `name` has the focus. */
async function tabTo(name) {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press("Tab");
    if ((await focusedName()) === name) return;
  }
  assert.fail(`Tab never reached ${name}`);
}

async function plays(video) {
  await video.waitFor({ timeout: WAIT });
  await video.evaluate((v) => { v.muted = true; return v.play(); });
  await page.waitForFunction((v) => v.readyState === 4 && v.currentTime > 0.5, await video.elementHandle(), { timeout: WAIT });
}

async function measure() {
  const weight = ["console", "console.js", "console.css", "console.svg"].map((f) => {
    const text = readFileSync(new URL(`../../shared/docs/assets/console/${f === "console" ? "index.html" : f}`, import.meta.url));
    return { file: f, bytes: text.length, gzip: gzipSync(text, { level: 9 }).length };
  });
  const paints = [];
  for (let i = 0; i < 11; i++) {
    const p = await browser.newPage();
    await p.goto(`${base}/console`, { waitUntil: "load" });
    await p.waitForFunction(() => performance.getEntriesByName("first-contentful-paint").length > 0);
    paints.push(await p.evaluate(() => performance.getEntriesByName("first-contentful-paint")[0].startTime));
    await p.close();
  }
  paints.sort((a, b) => a - b);
  console.log(JSON.stringify({ weight, total_gzip: weight.reduce((n, w) => n + w.gzip, 0), first_contentful_paint_ms: { median: paints[5], max: paints[10] } }));
}

// A receiver on this machine, answering 200 and keeping what it got.
const received = [];
const receiver = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => { body += c; });
  req.on("end", () => { received.push(body); res.writeHead(200).end("ok"); });
});
await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

try {
  if (process.env.MEASURE) {
    await measure();
    process.exit(0);
  }
  const icon = page.waitForResponse((r) => r.url().endsWith("/console.svg"));
  const first = await page.goto(`${base}/console`);
  assert.equal(first.status(), 200);
  // The page's own icon, under its base path: no request to the host's /favicon.ico.
  assert.equal((await icon).status(), 200);
  assert.equal((await icon).url(), `${base}/console.svg`);
  assert.equal(first.headers()["content-security-policy"].split(";")[0], "default-src 'self'");

  // A live key is refused before anything is sent.
  const before = requests.length;
  await page.getByLabel("API key").fill(liveKey);
  await page.getByRole("button", { name: "Use key" }).click();
  await page.getByRole("alert").filter({ hasText: "live key" }).waitFor();
  assert.equal(requests.length, before, "a request was made after a live key was typed");
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  step("a live key is refused with role=alert, and no request was made");

  // From here to the stream's start, the keyboard alone: a new load puts the focus in the key's
  // field, Enter uses it, and Tab reaches each control of the form by its label.
  await page.reload();
  assert.equal(await focusedName(), "API key");
  await page.keyboard.type(testKey);
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Streams", exact: true }).waitFor();
  assert.equal(await focusedName(), "Streams", "the new view's heading takes the focus");
  assert.equal(await page.evaluate(() => document.cookie), "");
  await accessible("streams");

  // Start a recorded test stream with a destination from the form.
  await tabTo("Record");
  await page.keyboard.press("Space");
  await tabTo("Add destination");
  await page.keyboard.press("Enter");
  await tabTo("Stream key");
  await page.keyboard.type("console-test-key-1234");
  await tabTo("Start stream");
  const [started] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${base}/streams` && r.request().method() === "POST"),
    page.keyboard.press("Enter"),
  ]);
  assert.equal(started.status(), 201, await started.text());
  const streamId = (await started.json()).stream_id;
  await page.getByRole("link", { name: streamId }).click();
  await page.getByRole("heading", { name: `Stream ${streamId}` }).waitFor();
  step(`stream ${streamId} started from the form and listed`);

  // The viewers helper raises the chart.
  await page.getByLabel("Viewers", { exact: true }).fill("120");
  await page.getByRole("button", { name: "Set viewers" }).click();
  await page.getByRole("img", { name: /now 120$/ }).waitFor({ timeout: WAIT });
  await page.getByRole("definition").filter({ hasText: /^120$/ }).waitFor();
  assert.ok(await page.getByText("active", { exact: true }).first().isVisible(), "the destination's status");
  // The stream's usage while live: its live time, still counting.
  await page.getByRole("definition").filter({ hasText: /^(\d+ min )?\d+\.\d{3} s, still counting$/ }).waitFor({ timeout: WAIT });
  await accessible("stream");

  await page.getByRole("button", { name: "End stream" }).click();
  await page.getByText("stream.ended", { exact: true }).waitFor({ timeout: WAIT });
  assert.ok(await page.getByRole("button", { name: "End stream" }).isDisabled(), "an ended stream cannot be ended");
  await page.getByText("stream.started", { exact: true }).waitFor();
  // Ended, the live time stops: what the API's usage says, to the millisecond.
  const ended = await (await fetch(`${base}/streams/${streamId}`, { headers: { Authorization: `Bearer ${testKey}` } })).json();
  assert.equal(ended.usage.in_progress, false);
  const ms = ended.usage.live_ms;
  const liveTime = `${Math.floor(ms / 60000) ? `${Math.floor(ms / 60000)} min ` : ""}${((ms % 60000) / 1000).toFixed(3)} s`;
  await page.getByRole("definition").filter({ hasText: new RegExp(`^${liveTime.replace(".", "\\.")}$`) }).waitFor({ timeout: WAIT });
  step(`ended; the timeline shows stream.started and stream.ended; live time ${liveTime}`);

  // The replay plays; a clip cut from it on the page becomes ready and plays.
  await plays(page.locator("video[aria-label=Replay]"));
  step("the replay plays (readyState 4, currentTime advancing)");
  await page.getByLabel("Start", { exact: true }).fill("1");
  await page.getByLabel("End", { exact: true }).fill("4");
  await page.getByRole("button", { name: "Cut clip" }).click();
  const play = page.getByRole("button", { name: /^Play clip clp_/ });
  await play.waitFor({ timeout: WAIT });
  await play.click();
  await plays(page.locator("video[aria-label^='Clip clp_']"));
  step("a clip cut from the page is ready and plays");
  // The timeline in the order things happened: the recording's file is confirmed after the
  // end, and a clip is cut from it after that. The recording's event shows the end's time.
  const timeline = await page.locator("ol.timeline li").allTextContents();
  const at = (type) => timeline.findIndex((t) => t.startsWith(type));
  assert.ok(at("stream.ended") >= 0 && at("stream.ended") < at("stream.recording_ready")
    && at("stream.recording_ready") < at("stream.clip_ready"), `timeline order: ${timeline.join(" | ")}`);
  assert.match(timeline[at("stream.recording_ready")], /^stream\.recording_ready after \S/, "the recording's time");
  step("the timeline: stream.ended, then stream.recording_ready (after the end), then stream.clip_ready");
  await accessible("stream-replay");

  // Webhooks: register, test, see the delivery with its body, redeliver, rotate, pause.
  await page.getByRole("link", { name: "Webhooks", exact: true }).click();
  await page.getByRole("heading", { name: "Webhooks", exact: true }).waitFor();
  await page.getByLabel("URL", { exact: true }).fill(receiverUrl);
  await page.getByRole("button", { name: "Register" }).click();
  await page.getByText(/whsec_/).waitFor();
  await accessible("webhooks");
  const webhookLink = page.getByRole("link", { name: /^[0-9a-f-]{36}$/ }).first();
  const webhookId = await webhookLink.textContent();
  await webhookLink.click();
  await page.getByRole("heading", { name: `Webhook ${webhookId}` }).waitFor();
  await page.getByRole("button", { name: "Send test event" }).click();
  const testRows = page.getByRole("row").filter({ hasText: "webhook.test" });
  await testRows.filter({ hasText: "succeeded" }).first().waitFor({ timeout: WAIT });
  await testRows.first().getByRole("button", { name: /^Show body/ }).click();
  const shown = JSON.parse(await page.locator("#delivery-body pre").textContent());
  assert.deepEqual(shown, JSON.parse(received[received.length - 1]), "the body shown is the body delivered");
  step("a test event's delivery is listed with the body the receiver got");
  const attempts = await testRows.count();
  await testRows.first().getByRole("button", { name: "Redeliver" }).click();
  await page.waitForFunction((n) => [...document.querySelectorAll("tr")].filter((r) => r.textContent.includes("webhook.test")).length > n, attempts, { timeout: WAIT });
  step("redeliver added an attempt");
  // Past a page of 20 attempts, the log walks back by its cursor.
  for (let i = 0; i < 19; i++) {
    const sent = await fetch(`${base}/webhooks/${webhookId}/test`, { method: "POST", headers: { Authorization: `Bearer ${testKey}` } });
    assert.equal(sent.status, 200);
  }
  const older = page.getByRole("button", { name: "Older deliveries" });
  await older.and(page.locator(":enabled")).waitFor({ timeout: WAIT });
  await older.click();
  await page.getByRole("button", { name: "Newest deliveries" }).and(page.locator(":enabled")).waitFor();
  assert.ok(await older.isDisabled(), "the oldest page is the last");
  assert.ok((await page.getByRole("row").filter({ hasText: "webhook.test" }).count()) >= 1);
  await page.getByRole("button", { name: "Newest deliveries" }).click();
  await older.and(page.locator(":enabled")).waitFor();
  step("the delivery log pages back by its cursor, and to the newest again");
  await page.getByRole("button", { name: "Rotate secret" }).click();
  await page.getByText(/New secret/).waitFor();
  await page.getByRole("button", { name: "Pause" }).click();
  await page.getByRole("button", { name: "Resume" }).waitFor();
  await accessible("webhook");

  // Shows: schedule a test show and start it with the helper.
  await page.getByRole("link", { name: "Shows", exact: true }).click();
  await page.getByRole("button", { name: "Schedule show" }).click();
  const start = page.getByRole("button", { name: /^Start now shw_/ }).first();
  await start.waitFor({ timeout: WAIT });
  await accessible("shows");
  await start.click();
  await page.getByText("started", { exact: true }).first().waitFor({ timeout: WAIT });
  step("a test show scheduled from the page started with the helper");

  await page.getByRole("link", { name: "Analytics", exact: true }).click();
  await page.getByRole("img", { name: /^Streams per day/ }).waitFor({ timeout: WAIT });
  // The day labels never run into each other, whatever the period (7d: 8 days in 240 pixels).
  for (const period of ["7d", "30d", "24h"]) {
    await page.getByLabel("Period").selectOption(period);
    const days = { "24h": 2, "7d": 8, "30d": 31 }[period];
    // Measured once the period's chart is laid out: a chart being replaced has boxes of no width.
    const laidOut = await page.waitForFunction((n) => {
      if (document.querySelectorAll("svg.chart rect.bar").length !== n) return false;
      const boxes = [...document.querySelectorAll("svg.chart text.day")].map((e) => {
        const r = e.getBoundingClientRect();
        return { text: e.textContent, left: r.left, right: r.right };
      });
      return boxes.length > 0 && boxes.every((b) => b.right > b.left) && boxes;
    }, days, { timeout: WAIT });
    const boxes = await laidOut.jsonValue();
    assert.ok(boxes.length >= Math.min(days, 4), `${period}: labels ${JSON.stringify(boxes)}`);
    for (let i = 1; i < boxes.length; i++) {
      assert.ok(boxes[i].left - boxes[i - 1].right >= 4, `${period}: ${boxes[i - 1].text} and ${boxes[i].text} overlap: ${JSON.stringify(boxes)}`);
    }
  }
  step("the chart's day labels stand apart for 7d, 30d and 24h");
  await accessible("analytics");

  // Polite: with the minute filling, the page refreshes every 15 s instead of 5; with it nearly
  // spent, not at all until it ends. Each case watches the 11 s after a new load's first read,
  // in which 5 s refreshes read twice more.
  const list = `${base}/streams?limit=20`;
  const reads = () => requests.filter((r) => r.url === list).length;
  // To the Streams view, its first read done (a load would cancel it).
  const settled = page.waitForResponse(list);
  await page.getByRole("link", { name: "Streams", exact: true }).click();
  await settled;
  for (const [left, expected] of [[90, "every 5 s"], [40, "every 15 s"], [5, "paused for the minute"]]) {
    await page.route(list, async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, headers: { ...response.headers(), ratelimit: `"default";r=${left};t=30` } });
    });
    // A new load: the page starts with no pace of its own. Not while a read is on its way,
    // which the load would cancel.
    while (inFlight > 0) await page.waitForTimeout(20);
    const first = page.waitForResponse(list);
    await page.reload();
    await first;
    const before = reads();
    await page.waitForTimeout(11_000);
    // The control (90 left) reads again within the 11 s, so the two others' silence is the pace's.
    const again = reads() - before;
    assert.ok(left === 90 ? again >= 1 : again === 0, `${left} requests left: ${expected}, yet ${again} reads in 11 s`);
    await page.unroute(list);
    step(`${left} requests left in the minute: refreshes ${expected}`);
  }

  // Nothing reached another host; the live key travelled nowhere.
  const elsewhere = requests.filter((r) => new URL(r.url).origin !== origin && !r.url.startsWith("data:"));
  assert.deepEqual(elsewhere.map((r) => r.url), [], "requests to another host");
  const carried = requests.filter((r) => JSON.stringify(r).includes(liveKey));
  assert.deepEqual(carried.map((r) => r.url), [], "requests carrying the live key");
  if (serverLog) {
    // The server prints its demo keys once when it starts; no request may log the key again.
    const logged = readFileSync(serverLog, "utf8").split("\n").filter((l) => l.includes(liveKey));
    assert.ok(logged.every((l) => /^\s*live key: /.test(l)) && logged.length <= 1, `the live key in the server's log: ${logged}`);
  }
  assert.deepEqual(problems, [], "console errors or failed requests");
  step(`${requests.length} requests, all to ${origin}; no console error`);
} finally {
  receiver.close();
  await browser.close();
}
