// The console (docs/console.md): a page that calls the public API with a test key. It adds no
// endpoint, builds every element with textContent (never HTML from an answer), keeps the key in
// sessionStorage only, and polls politely: it reads the RateLimit header and slows down.
"use strict";

const BASE = new URL(".", document.currentScript.src).href.replace(/\/$/, "");
const KEY_ITEM = "console.api_key";
const PLATFORMS = ["youtube", "tiktok", "twitch", "kick", "facebook", "instagram"];
const EVENTS = ["stream.started", "stream.ended", "stream.error", "stream.destination_active",
  "stream.destination_failed", "stream.recording_ready", "stream.recording_failed",
  "stream.clip_ready", "stream.clip_failed", "webhook.disabled", "show.started", "show.failed",
  "show.reminder"];
// Polling: every 5 s while the minute has room, slower as it fills, paused when it is spent.
const POLL_MS = 5000;
const viewerHistory = new Map();
let key = sessionStorage.getItem(KEY_ITEM);
let pollTimer = null;
let pollDelay = POLL_MS;
let pausedUntil = 0;
let current = null;
let uid = 0;

// --- Elements ---------------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "text") el.textContent = value;
    else el.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) {
      el.append(child instanceof Node ? child : String(child));
    }
  }
  return el;
}

/** A labelled field: the label names the control (how a screen reader and a test find it). */
function field(label, control) {
  control.id = control.id || `f${++uid}`;
  return h("div", { class: "field" }, h("label", { for: control.id, text: label }), control);
}

function select(name, options, value) {
  return h("select", { name }, options.map((o) => h("option", { value: o, selected: o === value, text: o })));
}

function statusText(status) {
  return h("span", { class: `status-${status}`, text: status });
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "-";
}

function table(headings, rows, caption) {
  return h("table", {}, caption ? h("caption", { class: "muted", text: caption }) : null,
    h("thead", {}, h("tr", {}, headings.map((t) => h("th", { scope: "col", text: t })))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: headings.length, class: "muted", text: "None yet." }))));
}

function fields(pairs) {
  return h("dl", { class: "fields" }, pairs.flatMap(([k, v]) => [h("dt", { text: k }), h("dd", {}, v ?? "-")]));
}

function replace(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
}

const say = (text) => { document.getElementById("status").textContent = text; };

// --- Charts: small SVGs, each an image with its figures in its accessible name -----------------

// A namespace name, never fetched.
const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

function lineChart(values, label) {
  const w = 240, hgt = 48, max = Math.max(1, ...values);
  const chart = svg("svg", { class: "chart", width: w, height: hgt, viewBox: `0 0 ${w} ${hgt}`, role: "img", "aria-label": label });
  const step = values.length > 1 ? w / (values.length - 1) : w;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(hgt - 4 - (v / max) * (hgt - 8)).toFixed(1)}`);
  chart.append(svg("polyline", { class: "line", points: points.join(" ") }));
  return chart;
}

function barChart(bars, label) {
  const w = Math.max(240, bars.length * 28), hgt = 140, max = Math.max(1, ...bars.map((b) => b.value));
  const chart = svg("svg", { class: "chart", width: w, height: hgt, viewBox: `0 0 ${w} ${hgt}`, role: "img", "aria-label": label });
  const slot = w / Math.max(1, bars.length);
  // "MM-DD" at the chart's 11px is about 34px wide; 10px of gap keeps two labels apart.
  const stride = Math.max(1, Math.ceil(44 / slot));
  bars.forEach((b, i) => {
    const barH = (b.value / max) * (hgt - 40);
    chart.append(svg("rect", { class: "bar", x: i * slot + 4, y: hgt - 20 - barH, width: slot - 8, height: barH }));
    if (b.value > 0) {
      const value = svg("text", { x: i * slot + slot / 2, y: hgt - 24 - barH, "text-anchor": "middle" });
      value.textContent = b.value;
      chart.append(value);
    }
    // Every stride-th day is labelled, the stride the fewest slots a label and its gap fill, so
    // labels never run into each other; the last day too when its slot leaves the room.
    const last = bars.length - 1;
    if (i % stride === 0 || (i === last && last % stride >= stride / 2 + 0.5)) {
      const day = svg("text", { class: "day", x: i * slot + slot / 2, y: hgt - 6, "text-anchor": "middle" });
      day.textContent = b.label;
      chart.append(day);
    }
  });
  return chart;
}

function viewerChart(stream) {
  const points = viewerHistory.get(stream.stream_id || stream.id) || [];
  if (points.length < 1) return null;
  const values = points.map((p) => p.v);
  return lineChart(values, `viewer_count over the last ${values.length} readings, now ${values[values.length - 1]}`);
}

function recordViewers(id, count) {
  const points = viewerHistory.get(id) || [];
  points.push({ t: Date.now(), v: count });
  if (points.length > 60) points.shift();
  viewerHistory.set(id, points);
}

// --- The API ----------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    const code = body && body.error ? body.error.code : `HTTP ${status}`;
    super(body && body.error ? `${code}: ${body.error.message}` : code);
    this.status = status;
    this.code = code;
  }
}

/** Reads `RateLimit: "default";r=<left>;t=<seconds>` and sets how soon the page polls again. */
function pace(response) {
  const header = response.headers.get("RateLimit") || "";
  const left = Number((/;r=(\d+)/.exec(header) || [])[1]);
  const reset = Number((/;t=(\d+)/.exec(header) || [])[1]);
  if (response.status === 429 || (Number.isFinite(left) && left < 20)) {
    pausedUntil = Date.now() + (Number.isFinite(reset) ? reset + 1 : 60) * 1000;
  } else if (Number.isFinite(left)) {
    pollDelay = left < 50 ? POLL_MS * 3 : POLL_MS;
  }
}

async function api(method, path, body) {
  if (!key) throw new ApiError(401, { error: { code: "no_key", message: "Use a test key first." } });
  const init = { method, headers: { Authorization: `Bearer ${key}` }, cache: "no-store", referrerPolicy: "no-referrer" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(BASE + path, init);
  pace(response);
  const parsed = await response.json().catch(() => null);
  if (response.status === 401) forgetKey("The API refused this key (401 unauthorized): use another test key.");
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

/** Runs an action from a button or a form, reporting its outcome in the status line. */
async function act(what, run) {
  try {
    const result = await run();
    say(`${what}: done.`);
    schedulePoll(300);
    return result;
  } catch (err) {
    say(`${what} failed: ${err.message}`);
    return undefined;
  }
}

// --- The key ----------------------------------------------------------------------------------

const alertText = (text) => { document.getElementById("key-alert").textContent = text; };

function forgetKey(why) {
  key = null;
  sessionStorage.removeItem(KEY_ITEM);
  alertText(why || "");
  stopPolling();
}

function useKey(event) {
  event.preventDefault();
  const input = document.getElementById("api-key");
  const typed = input.value.trim();
  input.value = "";
  if (typed.startsWith("svc_live_")) {
    forgetKey("That is a live key. The console takes test keys only (svc_test_...): the live key was not sent anywhere and not kept.");
    return;
  }
  if (!/^svc_test_[A-Za-z0-9]+$/.test(typed)) {
    forgetKey("That is not a test key. Test keys start with svc_test_; nothing was sent.");
    return;
  }
  key = typed;
  sessionStorage.setItem(KEY_ITEM, key);
  alertText("");
  input.placeholder = `using svc_test_...${key.slice(-4)}`;
  route();
}

// --- Polling ----------------------------------------------------------------------------------

const stopPolling = () => clearTimeout(pollTimer);

function schedulePoll(delay) {
  stopPolling();
  if (!current || !current.poll || !key) return;
  pollTimer = setTimeout(async () => {
    const wait = pausedUntil - Date.now();
    if (wait > 0 || document.hidden) return schedulePoll(Math.max(wait, POLL_MS));
    const view = current;
    try {
      await view.poll();
    } catch (err) {
      if (view === current) say(`Refresh failed: ${err.message}`);
    }
    if (view === current) schedulePoll(pollDelay);
  }, delay === undefined ? pollDelay : delay);
}

// --- Views ------------------------------------------------------------------------------------

async function creatorSelect() {
  const select = h("select", { name: "creator_id", required: true });
  try {
    const answer = await fetch(`${BASE}/creators`).then((r) => r.json());
    for (const c of answer.creators) select.append(h("option", { value: c.id, text: `${c.name} (${c.id})` }));
  } catch (err) {
    say(`Creators unavailable: ${err.message}`);
  }
  return select;
}

function destinationRow(list) {
  const row = h("div", { class: "row destination" },
    field("Destination platform", select("platform", PLATFORMS, "youtube")),
    field("Ingest URL", h("input", { name: "ingest_url", value: "rtmp://a.rtmp.youtube.com/live2", size: 34 })),
    field("Stream key", h("input", { name: "stream_key", type: "password", autocomplete: "off" })));
  row.append(h("button", { type: "button", class: "secondary", text: "Remove destination", onclick: () => row.remove() }));
  list.append(row);
  // The new row's first field takes the focus, so the keyboard goes on from there.
  row.querySelector("select").focus();
}

async function streamsView(main) {
  const list = h("div", { id: "stream-list" });
  const destinations = h("div");
  const form = h("form", { class: "panel", "aria-labelledby": "start-heading" },
    h("h2", { id: "start-heading", text: "Start a test stream" }),
    h("div", { class: "row" },
      field("Creator", await creatorSelect()),
      field("Product", h("input", { name: "product_name", required: true, value: "Glow Serum" })),
      field("Platform", select("platform", PLATFORMS, "tiktok")),
      field("Duration (minutes)", h("input", { name: "duration_minutes", type: "number", min: 1, max: 480 })),
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "record" }), "Record")),
    field("Script", h("textarea", { name: "script", rows: 2, cols: 60 })),
    h("fieldset", {}, h("legend", { text: "Destinations (up to 5)" }), destinations,
      h("button", { type: "button", class: "secondary", text: "Add destination", onclick: () => destinations.children.length < 5 && destinationRow(destinations) })),
    h("button", { type: "submit", text: "Start stream" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { creator_id: data.get("creator_id"), product_name: data.get("product_name"), platform: data.get("platform") };
    if (data.get("duration_minutes")) body.duration_minutes = Number(data.get("duration_minutes"));
    if (data.get("script")) body.script = data.get("script");
    if (data.get("record")) body.record = true;
    const rows = [...destinations.querySelectorAll(".destination")];
    if (rows.length) {
      body.destinations = rows.map((row) => ({
        platform: row.querySelector("[name=platform]").value,
        ingest_url: row.querySelector("[name=ingest_url]").value,
        stream_key: row.querySelector("[name=stream_key]").value,
      }));
    }
    act("Start stream", async () => {
      const stream = await api("POST", "/streams", body);
      say(`Started ${stream.stream_id}.`);
      await poll();
    });
  });
  main.append(h("h1", { tabindex: -1, text: "Streams" }), form, h("h2", { text: "Your streams" }), list);

  async function poll() {
    const answer = await api("GET", "/streams?limit=20");
    const rows = answer.streams.map((s) => {
      if (s.status === "live") recordViewers(s.id, s.viewer_count);
      return h("tr", {},
        h("td", {}, h("a", { href: `#streams/${s.id}`, class: "mono", text: s.id })),
        h("td", {}, statusText(s.status)), h("td", { text: s.product_name }), h("td", { text: s.platform }),
        h("td", {}, String(s.viewer_count), s.status === "live" ? viewerChart(s) : null),
        h("td", { text: when(s.created_at) }));
    });
    replace(list, table(["Stream", "Status", "Product", "Platform", "Viewers", "Created"], rows,
      `${answer.total} in all; the newest ${answer.streams.length}, refreshed while open.`));
  }
  return { poll };
}

/** A stream's events, as its fields tell them: the API keeps no event list to read. */
function timeline(stream, clips) {
  const items = [];
  const add = (at, type, note, after = false) => items.push({ at, type, note, after });
  if (stream.started_at) add(stream.started_at, "stream.started");
  for (const d of stream.destinations || []) {
    if (d.started_at) add(d.started_at, "stream.destination_active", `${d.platform} ${d.destination_id}`);
    if (d.status === "failed") add(d.ended_at, "stream.destination_failed", `${d.platform}: ${d.error || ""}`);
  }
  if (stream.status === "ended") add(stream.ended_at, "stream.ended", stream.end_reason);
  if (stream.status === "error") add(stream.ended_at, "stream.error", stream.end_reason);
  // The API gives a recording no time of its own. Its file is confirmed after the egress ends,
  // so its event goes right after the end, "after" that time, and before any clip cut from it.
  const rec = stream.recording;
  if (rec && rec.status === "ready") add(stream.ended_at, "stream.recording_ready", "", true);
  if (rec && rec.status === "failed") add(stream.ended_at, "stream.recording_failed", rec.error, true);
  for (const c of clips) {
    if (c.status === "ready") add(c.created_at, "stream.clip_ready", c.clip_id);
    if (c.status === "failed") add(c.created_at, "stream.clip_failed", c.clip_id);
  }
  // A stable sort: at the same time, the end stays before the recording's event.
  items.sort((a, b) => (a.at ? Date.parse(a.at) : Infinity) - (b.at ? Date.parse(b.at) : Infinity));
  const time = (e) => (!e.at ? "" : e.after ? `after ${when(e.at)}` : when(e.at));
  return h("ol", { class: "timeline" }, h("li", {}, h("strong", { text: "created" }), ` ${when(stream.created_at)}`),
    items.map((e) => h("li", {}, h("strong", { text: e.type }), ` ${time(e)} `, h("span", { class: "muted", text: e.note || "" }))));
}

/** A stream's `usage.live_ms`, to the millisecond, and whether it still counts. */
function liveTime(usage) {
  if (!usage) return null;
  const minutes = Math.floor(usage.live_ms / 60000), seconds = ((usage.live_ms % 60000) / 1000).toFixed(3);
  return `${minutes ? `${minutes} min ` : ""}${seconds} s${usage.in_progress ? ", still counting" : ""}`;
}

async function streamView(main, id) {
  const path = `/streams/${encodeURIComponent(id)}`;
  const detail = h("div"), chart = h("div"), dests = h("div"), events = h("div"), recording = h("div"), clipList = h("div"), clipPlayer = h("div");
  const viewers = h("input", { type: "number", min: 0, max: 1000000, value: 120 });
  let replay = null;
  let clips = [];
  const helper = (what, suffix, body) => act(what, () => api("POST", `/test_helpers${path}/${suffix}`, body));
  const start = h("input", { type: "number", min: 0, step: "0.1", value: 0 });
  const end = h("input", { type: "number", min: 0, step: "0.1", value: 5 });
  const title = h("input", { type: "text", maxlength: 200 });
  const fromPlayer = (input) => () => { if (replay) input.value = replay.currentTime.toFixed(1); };
  const clipForm = h("form", { class: "panel", "aria-labelledby": "clip-heading" },
    h("h3", { id: "clip-heading", text: "Cut a clip" }),
    h("div", { class: "row" }, field("Start", start), h("button", { type: "button", class: "secondary", text: "Start at player time", onclick: fromPlayer(start) }),
      field("End", end), h("button", { type: "button", class: "secondary", text: "End at player time", onclick: fromPlayer(end) }),
      field("Title", title), h("button", { type: "submit", text: "Cut clip" })));
  clipForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { start_seconds: Number(start.value), end_seconds: Number(end.value) };
    if (title.value) body.title = title.value;
    act("Cut clip", () => api("POST", `${path}/clips`, body));
  });
  // Ending and the helpers apply to a stream that has not finished.
  const liveActions = [
    h("button", { type: "button", class: "danger", text: "End stream", onclick: () => act("End stream", () => api("DELETE", path)) }),
    h("button", { type: "button", class: "secondary", text: "Set viewers", onclick: () => helper("Set viewers", "viewers", { count: Number(viewers.value) }) }),
    h("button", { type: "button", class: "secondary", text: "Finish (host left)", onclick: () => helper("Finish", "finish") }),
    h("button", { type: "button", class: "secondary", text: "Fail stream", onclick: () => helper("Fail", "fail") }),
  ];
  main.append(h("h1", { tabindex: -1 }, "Stream ", h("span", { class: "mono", text: id })), detail, chart,
    h("div", { class: "row" }, liveActions[0], field("Viewers", viewers), liveActions.slice(1)),
    h("h2", { text: "Destinations" }), dests, h("h2", { text: "Events" }), events,
    h("h2", { text: "Recording" }), recording, h("h2", { text: "Clips" }), clipForm, clipList, clipPlayer);

  async function playClip(clipId) {
    const clip = await api("GET", `${path}/clips/${clipId}`);
    replace(clipPlayer, h("h3", { text: `Clip ${clipId}` }),
      h("video", { controls: true, preload: "auto", src: clip.url, "aria-label": `Clip ${clipId}` }));
  }

  async function poll() {
    const stream = await api("GET", path);
    if (stream.recording) clips = (await api("GET", `${path}/clips`)).clips;
    if (stream.status === "live") recordViewers(stream.stream_id, stream.viewer_count);
    for (const button of liveActions) button.disabled = !["preparing", "live"].includes(stream.status);
    replace(detail, fields([["status", statusText(stream.status)], ["viewer_count", String(stream.viewer_count)],
      ["product_name", stream.product_name], ["platform", stream.platform], ["creator_id", stream.creator_id],
      ["created_at", when(stream.created_at)], ["started_at", when(stream.started_at)], ["ended_at", when(stream.ended_at)],
      ["live time", liveTime(stream.usage)], ["end_reason", stream.end_reason], ["room_name", h("span", { class: "mono", text: stream.room_name })]]));
    const drawn = viewerChart(stream);
    replace(chart, drawn ? h("p", { class: "muted", text: "viewer_count while this page is open" }) : null, drawn);
    replace(dests, table(["Destination", "Platform", "Ingest URL", "Key", "Status", "Error", ""], stream.destinations.map((d) => h("tr", {},
      h("td", { class: "mono", text: d.destination_id }), h("td", { text: d.platform }), h("td", { class: "mono", text: d.ingest_url }),
      h("td", { text: `...${d.stream_key_last4}` }), h("td", {}, statusText(d.status)), h("td", { text: d.error || "" }),
      h("td", {}, ["pending", "starting", "active"].includes(d.status) && stream.status === "live"
        ? h("button", { type: "button", class: "secondary", "aria-label": `Fail destination ${d.destination_id}`, text: "Fail destination",
          onclick: () => act("Fail destination", () => api("POST", `/test_helpers${path}/destinations/${d.destination_id}/fail`, {})) }) : null)))));
    replace(events, timeline(stream, clips));
    const rec = stream.recording;
    if (!rec) replace(recording, h("p", { class: "muted", text: "Not recorded (start a stream with Record)." }));
    else if (rec.status === "ready" && rec.url && !replay) {
      // The URL is new on every read: the player keeps the first, so playback is not restarted.
      replay = h("video", { controls: true, preload: "auto", src: rec.url, "aria-label": "Replay" });
      replace(recording, fields([["status", statusText(rec.status)], ["duration_seconds", String(rec.duration_seconds)]]), replay);
    } else if (rec.status !== "ready") {
      replace(recording, fields([["status", statusText(rec.status)], ["error", rec.error]]));
    }
    clipForm.hidden = !(rec && rec.status === "ready");
    replace(clipList, table(["Clip", "Range (s)", "Status", "Duration (s)", ""], clips.map((c) => h("tr", {},
      h("td", { class: "mono", text: c.clip_id }), h("td", { text: `${c.start_seconds} - ${c.end_seconds}` }),
      h("td", {}, statusText(c.status)), h("td", { text: c.duration_seconds ?? "" }),
      h("td", {}, c.status === "ready" ? h("button", { type: "button", class: "secondary", "aria-label": `Play clip ${c.clip_id}`, text: "Play",
        onclick: () => act("Play clip", () => playClip(c.clip_id)) }) : null)))));
  }
  return { poll };
}

function secretBox(text, secret) {
  return h("p", { class: "secret" }, `${text} `, h("code", { text: secret }), " It is shown this once: keep it.");
}

async function webhooksView(main) {
  const list = h("div"), shown = h("div");
  const url = h("input", { type: "url", name: "url", required: true, size: 48 });
  const form = h("form", { class: "panel", "aria-labelledby": "register-heading" },
    h("h2", { id: "register-heading", text: "Register a webhook" }), field("URL", url),
    h("fieldset", {}, h("legend", { text: "Events" }),
      EVENTS.map((e) => h("label", { class: "check" }, h("input", { type: "checkbox", name: "events", value: e, checked: true }), e))),
    h("button", { type: "submit", text: "Register" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const events = new FormData(form).getAll("events");
    act("Register", async () => {
      const hook = await api("POST", "/webhooks", { url: url.value, events });
      replace(shown, secretBox(`Webhook ${hook.webhook_id} registered. Its signing secret:`, hook.secret));
      await poll();
    });
  });
  main.append(h("h1", { tabindex: -1, text: "Webhooks" }), form, shown, h("h2", { text: "Your webhooks" }), list);
  async function poll() {
    const answer = await api("GET", "/webhooks");
    replace(list, table(["Webhook", "URL", "Active", "Events"], answer.webhooks.map((w) => h("tr", {},
      h("td", {}, h("a", { href: `#webhooks/${w.webhook_id}`, class: "mono", text: w.webhook_id })),
      h("td", { class: "mono", text: w.url }), h("td", { text: w.active ? "yes" : "no" }), h("td", { text: w.events.join(", ") })))));
  }
  return { poll };
}

async function webhookView(main, id) {
  const path = `/webhooks/${encodeURIComponent(id)}`;
  const detail = h("div"), shown = h("div"), log = h("div"), body = h("div", { id: "delivery-body" });
  let active = true;
  // The log's page: the newest (refreshed while open), or an older one by its cursor.
  let cursor = null, nextCursor = null;
  const older = h("button", { type: "button", class: "secondary", text: "Older deliveries", onclick: () => { cursor = nextCursor; act("Older deliveries", poll); } });
  const newest = h("button", { type: "button", class: "secondary", text: "Newest deliveries", onclick: () => { cursor = null; act("Newest deliveries", poll); } });
  const pause = h("button", { type: "button", class: "secondary", text: "Pause",
    onclick: () => act(active ? "Pause" : "Resume", async () => { await api("PATCH", path, { active: !active }); await poll(); }) });
  main.append(h("h1", { tabindex: -1 }, "Webhook ", h("span", { class: "mono", text: id })), detail,
    h("div", { class: "row" }, pause,
      h("button", { type: "button", class: "secondary", text: "Send test event",
        onclick: () => act("Send test event", async () => {
          const r = await api("POST", `${path}/test`);
          say(`Test event ${r.event_id}: ${r.delivered ? "delivered" : "not delivered"} (${r.status_code ?? r.error}).`);
        }) }),
      h("button", { type: "button", class: "secondary", text: "Rotate secret",
        onclick: () => act("Rotate secret", async () => {
          const r = await api("POST", `${path}/rotate-secret`);
          replace(shown, secretBox(`New secret (the previous one signs until ${when(r.previous_secret_expires_at)}):`, r.secret));
        }) })),
    shown, h("h2", { text: "Deliveries" }), log, h("div", { class: "row" }, newest, older), body);

  async function showBody(eventId) {
    const answer = await api("GET", `${path}/deliveries?limit=1&event_id=${encodeURIComponent(eventId)}`);
    const entry = answer.deliveries[0];
    replace(body, h("h3", { text: `Delivered body of ${eventId}` }),
      h("pre", { tabindex: 0 }, entry && entry.body ? JSON.stringify(entry.body, null, 2) : "No longer kept."));
  }

  async function poll() {
    const page = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const [hook, answer] = [await api("GET", path), await api("GET", `${path}/deliveries?limit=20${page}`)];
    nextCursor = answer.next_cursor;
    older.disabled = !nextCursor;
    newest.disabled = !cursor;
    active = hook.active;
    pause.textContent = active ? "Pause" : "Resume";
    replace(detail, fields([["url", h("span", { class: "mono", text: hook.url })], ["active", hook.active ? "yes" : "no"],
      ["events", hook.events.join(", ")], ["created_at", when(hook.created_at)], ["secret_rotated_at", when(hook.secret_rotated_at)],
      ["failing_since", when(hook.failing_since)], ["disabled_reason", hook.disabled_reason], ["public_key", h("code", { text: hook.public_key || "-" })]]));
    replace(log, table(["Attempted", "Event type", "Status", "Attempt", "Answer", "Duration", ""], answer.deliveries.map((d) => h("tr", {},
      h("td", { text: when(d.attempted_at) }), h("td", { text: d.event_type }), h("td", {}, statusText(d.status)),
      h("td", { text: d.attempt }), h("td", { text: d.response_status ?? d.error ?? "" }), h("td", { text: `${d.duration_ms} ms` }),
      h("td", {},
        h("button", { type: "button", class: "secondary", "aria-label": `Show body of ${d.event_id}`, text: "Show body", onclick: () => act("Show body", () => showBody(d.event_id)) }),
        " ",
        h("button", { type: "button", class: "secondary", text: "Redeliver", onclick: () => act("Redeliver", () => api("POST", `${path}/redeliver`, { event_id: d.event_id })) }))))));
  }
  return { poll };
}

async function showsView(main) {
  const list = h("div");
  const starts = h("input", { type: "datetime-local", name: "starts_at", required: true });
  const soon = new Date(Date.now() + 10 * 60000);
  starts.value = new Date(soon.getTime() - soon.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
  const form = h("form", { class: "panel", "aria-labelledby": "schedule-heading" },
    h("h2", { id: "schedule-heading", text: "Schedule a test show" }),
    h("div", { class: "row" }, field("Creator", await creatorSelect()),
      field("Product", h("input", { name: "product_name", required: true, value: "Glow Serum" })),
      field("Platform", select("platform", PLATFORMS, "tiktok")), field("Starts at", starts),
      field("Remind minutes before", h("input", { name: "remind", type: "number", min: 1, max: 1440 })),
      h("button", { type: "submit", text: "Schedule show" })));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { creator_id: data.get("creator_id"), product_name: data.get("product_name"), platform: data.get("platform"),
      starts_at: new Date(starts.value).toISOString() };
    if (data.get("remind")) body.remind_minutes_before = Number(data.get("remind"));
    act("Schedule show", async () => { await api("POST", "/shows", body); await poll(); });
  });
  main.append(h("h1", { tabindex: -1, text: "Shows" }), form, list);
  async function poll() {
    const answer = await api("GET", "/shows?limit=100");
    const days = new Map();
    for (const s of answer.shows) {
      const day = new Date(s.starts_at).toDateString();
      if (!days.has(day)) days.set(day, []);
      days.get(day).push(s);
    }
    replace(list, h("h2", { text: "Scheduled shows by day" }), days.size ? [...days].map(([day, shows]) => h("section", {}, h("h3", { text: day }),
      table(["Starts", "Show", "Product", "Status", "Stream", ""], shows.map((s) => h("tr", {},
        h("td", { text: new Date(s.starts_at).toLocaleTimeString() }), h("td", { class: "mono", text: s.show_id }),
        h("td", { text: s.stream.product_name }), h("td", {}, statusText(s.status), s.error ? ` (${s.error.code})` : ""),
        h("td", {}, s.stream_id ? h("a", { href: `#streams/${s.stream_id}`, class: "mono", text: s.stream_id }) : "-"),
        h("td", {}, s.status === "scheduled" && s.test ? h("button", { type: "button", class: "secondary", "aria-label": `Start now ${s.show_id}`, text: "Start now",
          onclick: () => act("Start show", () => api("POST", `/test_helpers/shows/${s.show_id}/start`)) }) : null)))))) : h("p", { class: "muted", text: "No shows yet." }));
  }
  return { poll };
}

async function analyticsView(main) {
  const out = h("div");
  const period = select("period", ["24h", "7d", "30d"], "7d");
  period.addEventListener("change", () => act("Analytics", poll));
  main.append(h("h1", { tabindex: -1, text: "Analytics" }), field("Period", period), out);
  async function poll() {
    const a = await api("GET", `/analytics?period=${period.value}`);
    // Every UTC day the window touches, those with no stream included.
    const perDay = new Map();
    const hours = { "24h": 24, "7d": 168, "30d": 720 }[a.period];
    for (let t = Date.now() - hours * 3600000; ; t += 86400000) {
      const day = new Date(Math.min(t, Date.now())).toISOString().slice(0, 10);
      perDay.set(day, 0);
      if (t >= Date.now()) break;
    }
    for (const s of a.streams) {
      const day = s.started_at && s.started_at.slice(0, 10);
      if (perDay.has(day)) perDay.set(day, perDay.get(day) + 1);
    }
    const bars = [...perDay].map(([day, value]) => ({ label: day.slice(5), value }));
    replace(out, fields([["total_streams", String(a.total_streams)], ["total_viewers", String(a.total_viewers)],
      ["total_minutes", String(a.total_minutes)], ["live_now", String(a.live_now)], ["avg_viewers_per_stream", String(a.avg_viewers_per_stream)],
      ["by_platform", Object.entries(a.by_platform).map(([p, n]) => `${p} ${n}`).join(", ") || "-"]]),
    h("h2", { text: "Streams per day (by the day they went live, UTC)" }),
    barChart(bars, `Streams per day: ${bars.map((b) => `${b.label} ${b.value}`).join(", ")}`));
  }
  return { poll };
}

// --- Routing ----------------------------------------------------------------------------------

const VIEWS = [
  [/^#?(streams)?$/, streamsView, "#streams"],
  [/^#streams\/([^/]+)$/, streamView, "#streams"],
  [/^#webhooks$/, webhooksView, "#webhooks"],
  [/^#webhooks\/([^/]+)$/, webhookView, "#webhooks"],
  [/^#shows$/, showsView, "#shows"],
  [/^#analytics$/, analyticsView, "#analytics"],
];

async function route() {
  stopPolling();
  current = null;
  const main = document.getElementById("view");
  if (!key) {
    document.getElementById("api-key").focus();
    return;
  }
  const hash = location.hash || "#streams";
  const [pattern, view, nav] = VIEWS.find(([p]) => p.test(hash)) || VIEWS[0];
  for (const a of document.querySelectorAll("nav a")) {
    if (a.getAttribute("href") === nav) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const arg = decodeURIComponent((pattern.exec(hash) || [])[1] || "");
  main.replaceChildren();
  const built = await view(main, arg);
  current = built;
  const heading = main.querySelector("h1");
  if (heading) heading.focus();
  document.title = `${heading ? heading.textContent : "Console"} - Live Stream Hosting API console`;
  try {
    await built.poll();
  } catch (err) {
    say(`Loading failed: ${err.message}`);
  }
  if (current === built) schedulePoll();
}

document.getElementById("key-form").addEventListener("submit", useKey);
document.getElementById("forget-key").addEventListener("click", () => { forgetKey(""); say("Key forgotten."); });
document.addEventListener("visibilitychange", () => { if (!document.hidden) schedulePoll(0); });
window.addEventListener("hashchange", route);
if (key) document.getElementById("api-key").placeholder = `using svc_test_...${key.slice(-4)}`;
route();
