/// The inspector: one static page (HTML, CSS, plain JavaScript; no CDN, no build step, works offline) served from
/// the binary at `GET /` and `/inspector`. It only draws what the admin API returns: the live feed
/// (`/admin/notifications/stream`), the simulated devices (`/admin/devices`, their state, what each received and
/// its delivery logs), the notification-center preview (`/admin/preview`, a page at a time), a look-up by ID with
/// the push's delivery log, the scenario and the stats. With `--admin-token`, it asks for the token once, in a login
/// form, and the browser keeps it in an `HttpOnly`, `SameSite=Strict` cookie: no URL the page opens holds it.
enum InspectorPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>apns-mock inspector</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  :root { font: 14px/1.4 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d1d1f; background: #f2f2f7; }
  body { margin: 0; }
  [hidden] { display: none !important; }
  header { background: #1d1d1f; color: #fff; padding: 8px 16px; display: flex; gap: 24px; align-items: baseline; }
  header h1 { font-size: 16px; margin: 0; }
  #stats { font-size: 12px; opacity: .8; }
  main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(320px, 2fr); gap: 16px; padding: 16px; }
  section { background: #fff; border-radius: 10px; padding: 12px; margin-bottom: 16px; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
  h2 { font-size: 14px; margin: 0 0 8px; }
  table { width: 100%; border-collapse: collapse; font-size: 12px; }
  th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eee; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 180px; }
  tbody tr { cursor: pointer; } tbody tr:hover { background: #f5f5ff; }
  .status-200 { color: #1a7f37; } .status-err { color: #c62828; font-weight: 600; }
  .warn { color: #b26a00; }
  input, select, button, textarea { font: inherit; }
  .filters, .controls { display: flex; gap: 6px; flex-wrap: wrap; margin-bottom: 8px; }
  pre { background: #f7f7f7; padding: 8px; border-radius: 6px; overflow: auto; max-height: 360px; font-size: 12px; }
  .app { margin-bottom: 12px; }
  .app-name { font-weight: 600; display: flex; justify-content: space-between; }
  .badge { background: #ff3b30; color: #fff; border-radius: 10px; padding: 0 7px; font-size: 12px; }
  .stack { background: #e9e9ef; border-radius: 12px; padding: 8px 10px; margin: 6px 0; }
  .card .title { font-weight: 600; } .card .subtitle { font-size: 12px; } .card .body { font-size: 13px; }
  .card.critical { border-left: 4px solid #ff3b30; padding-left: 6px; }
  .card.time-sensitive { border-left: 4px solid #ff9500; padding-left: 6px; }
  .card.passive { opacity: .65; }
  .mark { font-size: 11px; font-weight: 600; color: #ff3b30; margin-right: 4px; }
  .summary, .legacy, .hidden-text { font-size: 12px; color: #555; margin-top: 4px; }
  .legacy { font-style: italic; }
  .activity { border: 1px solid #ccc; border-radius: 10px; padding: 6px 10px; margin: 6px 0; font-size: 12px; }
  .other { font-size: 12px; color: #555; }
  #scenario-text { width: 100%; height: 160px; font-family: ui-monospace, Menlo, monospace; font-size: 12px; }
  #scenario-problems { color: #c62828; font-size: 12px; white-space: pre-wrap; }
  #devices tbody tr.selected { background: #e3e3ff; }
  .thread { font-size: 11px; color: #555; margin-bottom: 2px; }
  #device-log .delivery { font-size: 12px; border-bottom: 1px solid #eee; padding: 3px 0; }
  #device-log .delivery.stored { color: #b26a00; } #device-log .delivery.discarded { color: #c62828; }
  #preview-page { font-size: 12px; color: #555; }
  #access-warning { background: #ffcc00; color: #1d1d1f; padding: 6px 16px; font-weight: 600; }
  #login { margin: 32px auto; max-width: 640px; background: #fff; border-radius: 10px; padding: 16px; }
</style>
</head>
<body>
<header><h1>apns-mock inspector</h1><span id="tenant-box" hidden>tenant <select id="tenant"></select><span id="tenant-name"></span></span><span id="stats">…</span><span id="feed-state" class="warn"></span></header>
<div id="access-warning" hidden></div>
<form id="login" method="post" action="/admin/login" hidden>
  <h2>This mock asks for its admin token</h2>
  <input type="password" name="token" id="login-token" placeholder="admin token" autocomplete="current-password" size="40">
  <button type="submit">Log in</button> <span class="other">It is kept in a cookie for this page only, never in a URL.</span>
</form>
<main>
<div>
  <section>
    <h2>Live feed</h2>
    <div class="filters">
      <input id="f-token" placeholder="token"><input id="f-topic" placeholder="topic">
      <input id="f-status" placeholder="status" size="5"><button id="f-apply">Filter</button>
    </div>
    <table id="feed"><thead><tr><th>#</th><th>time</th><th>token</th><th>topic</th><th>type</th><th>prio</th><th>answer</th><th>auth</th><th>warnings</th><th>rule</th><th>tenant</th></tr></thead><tbody></tbody></table>
  </section>
  <section>
    <h2>Recording</h2>
    <div class="controls"><input id="lookup-id" placeholder="apns-id or apns-unique-id" size="40"><button id="lookup">Look up</button></div>
    <pre id="detail">Click a row of the feed, or look up an ID.</pre>
  </section>
  <section>
    <h2>Scenario</h2>
    <textarea id="scenario-text" spellcheck="false"></textarea>
    <div class="controls"><button id="scenario-put">Put in force</button><button id="scenario-reload">Reload</button></div>
    <div id="scenario-problems"></div>
    <div id="scenario-state" class="other"></div>
  </section>
</div>
<div>
  <section>
    <h2>Devices</h2>
    <table id="devices"><thead><tr><th>name</th><th>token</th><th>state</th></tr></thead><tbody></tbody></table>
    <div class="other" id="devices-note">Pick a device to see what it received; register devices with POST /admin/devices or a scenario.</div>
  </section>
  <section>
    <h2 id="preview-title">Notification Center</h2>
    <div class="controls">
      <input id="p-token" placeholder="device token (all when empty)" size="28">
      <select id="p-grouping"><option>automatic</option><option>app</option><option>off</option></select>
      <label><input type="checkbox" id="p-hide"> hide previews</label>
    </div>
    <div id="preview-page"></div>
    <div id="preview"></div>
    <div id="device-log"></div>
  </section>
</div>
</main>
<script>
"use strict";
// The admin token, when there is one, travels in the login cookie the browser sends by itself: never in a URL.
// The tenant looked at (`--tenants`, an unscoped token) does: it is no secret, and the page's own ?tenant= picks it.
let tenant = new URLSearchParams(location.search).get("tenant") || "";
function url(path, params) {
  const all = Object.assign({}, params || {});
  if (tenant) all.tenant = tenant;
  const text = new URLSearchParams(all).toString();
  return path + (text ? "?" + text : "");
}
async function getJSON(path, params) { const r = await fetch(url(path, params)); return { status: r.status, body: await r.json() }; }
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) { if (k === "class") node.className = v; else node.setAttribute(k, v); }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}
function short(token) { return token ? token.slice(0, 8) + "…" : "—"; }

// Live feed
let source = null, lastSequence = 0;
function filters() {
  const f = {};
  for (const [key, id] of [["token", "f-token"], ["topic", "f-topic"], ["status", "f-status"]]) {
    const value = document.getElementById(id).value.trim(); if (value) f[key] = value;
  }
  return f;
}
function addRow(r, prepend) {
  const response = r.response;
  const answer = response ? (response.status + (response.reason ? " " + response.reason : "")) : "no answer";
  const header = name => (r.headers.find(h => h.name === name) || {}).value || "";
  const row = el("tr", { "data-sequence": r.sequence, "data-tenant": r.tenant || "" },
    el("td", {}, String(r.sequence)), el("td", {}, r.receivedAt.slice(11, 23)),
    el("td", { title: r.deviceToken || "" }, short(r.deviceToken || r.channelId)), el("td", {}, r.topic || r.bundleId || ""),
    el("td", {}, r.pushType || r.kind), el("td", {}, header("apns-priority")),
    el("td", { class: response && response.status < 300 ? "status-200" : "status-err" }, answer),
    el("td", {}, r.authentication ? r.authentication.method : ""),
    el("td", { class: "warn" }, (r.warnings || []).map(w => w.code).join(", ")), el("td", {}, r.scenarioRule || ""),
    el("td", {}, r.tenant || ""));
  row.addEventListener("click", () => showDetail(r));
  const body = document.querySelector("#feed tbody");
  if (prepend) body.prepend(row); else body.append(row);
  while (body.rows.length > 500) body.deleteRow(body.rows.length - 1);
}
// A recording's whole story: what came in, the answer, the warnings, and what the device would have shown.
async function showDetail(r) {
  const detail = document.getElementById("detail");
  detail.textContent = JSON.stringify(r, null, 2);
  const params = r.deviceToken ? { token: r.deviceToken } : {};
  const preview = (await getJSON("/admin/preview", params)).body;
  let story = "Device: not shown (no alert, or replaced by a later push with the same apns-collapse-id).";
  for (const app of preview.apps) for (const stack of app.stacks) for (const c of stack.cards) {
    if (c.sequence === r.sequence) story = "Device: in Notification Center under " + app.bundleId + (stack.threadId ? " / thread " + stack.threadId : "") + ": " + [c.title, c.subtitle, c.body].filter(Boolean).join(" — ") + (c.interruptionLevel !== "active" ? " [" + c.interruptionLevel + "]" : "");
  }
  for (const o of preview.silent) if (o.sequence === r.sequence) story = "Device: delivered to the app in the background, not shown.";
  for (const o of preview.notDelivered) if (o.sequence === r.sequence) story = "Device: nothing (" + o.why + ").";
  for (const a of preview.liveActivities) if (a.lastSequence === r.sequence) story = "Device: Live Activity " + a.state + ", content-state " + a.contentState + ".";
  const warnings = (r.warnings || []).map(w => "Warning " + w.code + " at " + w.path + ": " + w.message).join("\n");
  let delivery = "";
  if (r.response && r.response.status === 200 && r.response.apnsId) {
    const log = await getJSON("/admin/delivery", { "apns-id": r.response.apnsId });
    if (log.status === 200) delivery = "\nDelivery: " + logText(log.body);
  }
  detail.textContent = story + delivery + (warnings ? "\n" + warnings : "") + "\n\n" + JSON.stringify(r, null, 2);
  detail.dataset.sequence = String(r.sequence);
}
async function startFeed() {
  if (source) source.close();
  document.querySelector("#feed tbody").textContent = "";
  const recent = await getJSON("/admin/notifications", Object.assign({ order: "newest", limit: "100" }, filters()));
  lastSequence = 0;
  for (const r of recent.body.notifications || []) { addRow(r, false); lastSequence = Math.max(lastSequence, r.sequence); }
  source = new EventSource(url("/admin/notifications/stream", Object.assign({ after: String(lastSequence) }, filters())));
  source.addEventListener("notification", event => { const r = JSON.parse(event.data); addRow(r, true); schedulePreview(); });
  source.addEventListener("skipped", event => {
    document.getElementById("feed-state").textContent = "feed fell behind: " + JSON.parse(event.data).skipped + " skipped";
  });
  source.onopen = () => { document.getElementById("feed").dataset.live = "true"; };
}
document.getElementById("f-apply").addEventListener("click", startFeed);

// Look-up
document.getElementById("lookup").addEventListener("click", async () => {
  const id = document.getElementById("lookup-id").value.trim(); if (!id) return;
  let found = await getJSON("/admin/notifications/" + encodeURIComponent(id));
  if (found.status === 404) {
    const all = await getJSON("/admin/notifications", { order: "newest", limit: "1000" });
    const match = (all.body.notifications || []).find(r => r.response && (r.response.apnsUniqueId || "").toLowerCase() === id.toLowerCase());
    found = match ? { status: 200, body: match } : found;
  }
  if (found.status === 200) showDetail(found.body); else document.getElementById("detail").textContent = "No recording with that ID.";
});

// Preview
let previewTimer = null;
function schedulePreview() { clearTimeout(previewTimer); previewTimer = setTimeout(renderPreview, 200); }
function card(c) {
  const level = c.interruptionLevel;
  const mark = level === "critical" ? el("span", { class: "mark" }, "CRITICAL") : level === "time-sensitive" ? el("span", { class: "mark" }, "TIME SENSITIVE") : null;
  return el("div", { class: "card " + level, "data-sequence": c.sequence },
    c.title ? el("div", { class: "title" }, mark, c.title) : mark,
    c.subtitle ? el("div", { class: "subtitle" }, c.subtitle) : null,
    el("div", { class: "body" }, c.body || ""),
    c.replaced ? el("div", { class: "summary" }, "replaced " + c.replaced + " earlier (collapse-id " + c.collapseId + ")") : null);
}
// One push's delivery log, in the Console's words, each with its time on the mock's clock.
function logText(log) { return log.events.map(e => e.console + " " + e.time.slice(11, 19)).join(" → "); }
// The preview: the picked device's Notification Center, built from what it received, with its stored pushes and
// delivery logs; or, with no device picked, a page of the newest recordings (older pages on request).
let previewBefore = null;
// Renders overlap (a state change, a push arriving): only the newest one started draws, so an older one's answers,
// read before the change, never cover the newer ones'.
let previewGeneration = 0;
async function renderPreview() {
  const generation = ++previewGeneration;
  const root = document.getElementById("preview"), log = document.getElementById("device-log"), page = document.getElementById("preview-page");
  const hide = document.getElementById("p-hide").checked;
  let preview;
  if (selectedDevice) {
    const device = encodeURIComponent(selectedDevice);
    const [received, deliveries] = await Promise.all([
      getJSON("/admin/devices/" + device + "/received", hide ? { hidePreviews: "true" } : {}),
      getJSON("/admin/devices/" + device + "/deliveries"),
    ]);
    if (generation !== previewGeneration) return;
    if (received.status !== 200) { selectedDevice = null; return renderPreview(); }
    preview = received.body.preview;
    log.textContent = ""; page.textContent = "";
    document.getElementById("preview-title").textContent = "Notification Center of " + short(selectedDevice) + ": what it received";
    const logs = deliveries.body.deliveries || [];
    log.append(el("h2", {}, "Delivery logs (stored last)"));
    for (const d of logs.slice().reverse()) {
      const kind = d.state.startsWith("stored") ? "stored" : d.state.startsWith("discarded") ? "discarded" : "delivered";
      log.append(el("div", { class: "delivery " + kind, "data-state": d.state, "data-apns-id": d.apnsId || "" }, (d.apnsId || "").slice(0, 8) + "… " + logText(d)));
    }
  } else {
    const params = { grouping: document.getElementById("p-grouping").value };
    const token = document.getElementById("p-token").value.trim(); if (token) params.token = token;
    if (hide) params["hide-previews"] = "true";
    if (previewBefore) params.before = String(previewBefore);
    preview = (await getJSON("/admin/preview", params)).body;
    if (generation !== previewGeneration) return;
    log.textContent = ""; page.textContent = "";
    document.getElementById("preview-title").textContent = "Notification Center";
    page.append("Built from the newest " + Math.min(preview.total, 500) + " of " + preview.total + " matching recordings" + (previewBefore ? " before #" + previewBefore : "") + ". ");
    if (preview.next) { const older = el("button", { id: "p-older" }, "Older"); older.addEventListener("click", () => { previewBefore = preview.next.before; renderPreview(); }); page.append(older); }
    if (previewBefore) { const newest = el("button", { id: "p-newest" }, "Newest"); newest.addEventListener("click", () => { previewBefore = null; renderPreview(); }); page.append(newest); }
  }
  root.textContent = "";
  for (const app of preview.apps) {
    const node = el("div", { class: "app", "data-bundle": app.bundleId },
      el("div", { class: "app-name" }, app.bundleId, app.badge !== null ? el("span", { class: "badge" }, String(app.badge)) : null));
    for (const stack of app.stacks) {
      const s = el("div", { class: "stack", "data-thread": stack.threadId || "" });
      if (stack.threadId) s.append(el("div", { class: "thread" }, "thread " + stack.threadId));
      if (stack.hiddenText) s.append(card(stack.cards[0]), el("div", { class: "hidden-text" }, stack.hiddenText));
      else {
        s.append(card(stack.cards[0]));
        if (stack.summary) s.append(el("div", { class: "summary" }, stack.summary));
        if (stack.legacySummary) s.append(el("div", { class: "legacy" }, stack.legacySummary + " (iOS 12–14; ignored by iOS 15 and later)"));
      }
      node.append(s);
    }
    root.append(node);
  }
  if (preview.liveActivities.length) {
    root.append(el("h2", {}, "Live Activities"));
    for (const a of preview.liveActivities) root.append(el("div", { class: "activity " + a.state }, a.bundleId + " · " + a.state + " · " + (a.event || "?") + " · " + (a.contentState || "") + " · " + a.updates + " push(es)"));
  }
  if (preview.silent.length) {
    root.append(el("h2", {}, "Delivered to the app, not shown"));
    for (const o of preview.silent) root.append(el("div", { class: "other silent" }, "#" + o.sequence + " " + short(o.token) + " " + (o.topic || "")));
  }
  if (preview.notDelivered.length) {
    root.append(el("h2", {}, "Not delivered"));
    for (const o of preview.notDelivered) root.append(el("div", { class: "other not-delivered" }, "#" + o.sequence + " " + short(o.token) + " " + o.why));
  }
  root.dataset.rendered = String(Date.now());
}

// Devices: each simulated device and its state, changed here; picking one shows what it received.
const deviceStates = ["online", "offline", "lowPower", "notificationsDisabled", "appRemoved"];
let selectedDevice = null, drawnDevices = null;
async function loadDevices() {
  const devices = (await getJSON("/admin/devices")).body.devices || [];
  // Redrawn only when something changed: a menu being used is not replaced under the pointer.
  const drawn = JSON.stringify(devices) + "|" + selectedDevice;
  if (drawn === drawnDevices) return;
  drawnDevices = drawn;
  const body = document.querySelector("#devices tbody"); body.textContent = "";
  for (const d of devices) {
    const select = el("select", { "data-token": d.token });
    for (const state of deviceStates) { const option = el("option", {}, state); option.selected = state === d.state; select.append(option); }
    select.addEventListener("click", event => event.stopPropagation());
    select.addEventListener("change", async () => {
      const answer = await fetch(url("/admin/devices/" + encodeURIComponent(d.token) + "/state"), { method: "PUT", body: JSON.stringify({ state: select.value }) });
      document.getElementById("devices-note").textContent = answer.status === 200 ? short(d.token) + " is " + select.value + "." : (await answer.json()).error;
      await loadDevices(); renderPreview();
    });
    const row = el("tr", { "data-token": d.token, class: d.token === selectedDevice ? "selected" : "" },
      el("td", {}, d.name || ""), el("td", { title: d.token }, short(d.token)), el("td", { class: "state" }, select));
    row.addEventListener("click", () => { selectedDevice = selectedDevice === d.token ? null : d.token; loadDevices(); renderPreview(); });
    body.append(row);
  }
  document.getElementById("devices").dataset.loaded = String(Date.now());
}
for (const id of ["p-token", "p-grouping", "p-hide"]) document.getElementById(id).addEventListener("change", () => { previewBefore = null; renderPreview(); });

// Scenario and stats
async function loadScenario() {
  const scenario = await getJSON("/admin/scenario");
  // The text as loaded (YAML, comments and all); the JSON form for a scenario that has none.
  const source = scenario.body.source;
  document.getElementById("scenario-text").value = source != null ? source : JSON.stringify(scenario.body.scenario, null, 2);
  const rules = (scenario.body.rules || []).map(r => (r.name || "rule " + r.index) + ": " + r.hits + " hit(s)" + (r.exhausted ? ", exhausted" : ""));
  const devices = (scenario.body.devices || []).map(d => "device " + (d.name || "") + " " + short(d.token) + (d.unregisteredAt ? " unregistered " + d.unregisteredAt : ""));
  document.getElementById("scenario-state").textContent = rules.concat(devices).join(" · ") || "no rules, no devices";
}
document.getElementById("scenario-reload").addEventListener("click", loadScenario);
document.getElementById("scenario-put").addEventListener("click", async () => {
  const r = await fetch(url("/admin/scenario"), { method: "PUT", body: document.getElementById("scenario-text").value });
  const body = await r.json();
  document.getElementById("scenario-problems").textContent = r.status === 200 ? "In force." : (body.problems || [body.error]).join("\n");
  if (r.status === 200) loadScenario();
});
async function refreshStats() {
  const s = (await getJSON("/admin/stats")).body;
  const byStatus = Object.entries(s.byStatus || {}).map(([k, v]) => k + ": " + v).join(", ");
  document.getElementById("stats").textContent = s.received + " received (" + byStatus + ") · " + s.connections.open + " connections open";
  const banner = document.getElementById("access-warning"), warning = s.adminAccess && s.adminAccess.warning;
  banner.hidden = !warning; banner.textContent = warning ? "Open to the network: " + warning : "";
  drawTenants(s);
}
// With tenants: a tenant's token sees its own, named; an unscoped one picks a tenant, or all of them.
function drawTenants(s) {
  document.getElementById("tenant-box").hidden = !s.tenants;
  if (!s.tenants) return;
  const select = document.getElementById("tenant"), name = document.getElementById("tenant-name");
  select.hidden = !s.tenants.names;
  name.textContent = s.tenants.names ? "" : s.tenant || "";
  if (!s.tenants.names) return;
  const names = [""].concat(s.tenants.names);
  if (select.dataset.names === names.join(",")) return;
  select.dataset.names = names.join(",");
  select.textContent = "";
  for (const n of names) { const option = el("option", { value: n }, n || "all tenants"); option.selected = n === tenant; select.append(option); }
}
document.getElementById("tenant").addEventListener("change", event => {
  tenant = event.target.value; selectedDevice = null; drawnDevices = null; previewBefore = null;
  startFeed(); renderPreview(); loadScenario(); refresh();
});
// The device list is redrawn with the stats, except while one of its state menus is open.
async function refresh() { refreshStats(); if (!(document.activeElement && document.activeElement.closest("#devices"))) loadDevices(); }
// With an admin token and no login yet, the page shows the login form and nothing else.
(async () => {
  const probe = await fetch(url("/admin/stats"));
  if (probe.status === 401) {
    document.querySelector("main").hidden = true;
    document.getElementById("login").hidden = false;
    document.getElementById("login-token").focus();
    return;
  }
  startFeed(); renderPreview(); loadScenario(); refresh(); setInterval(refresh, 2000);
})();
</script>
</body>
</html>
"""#
}
