// Ghost Agent status page. Reads the daemon's /v1/ghost/... JSON endpoints; renders every value as text
// (textContent, never innerHTML): lessons and turns are user-, model- and web-written data.
"use strict";

window.__ghostErrors = [];
window.addEventListener("error", (e) => { window.__ghostErrors.push(String(e.message)); });
window.addEventListener("unhandledrejection", (e) => {
  if (!(e.reason && e.reason.auth)) window.__ghostErrors.push(String(e.reason));
});

const KEY = "ghost-api-key";
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

function h(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else node.setAttribute(k, String(v));
  }
  append(node, children);
  return node;
}

function append(node, ...children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function s(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined) continue;
    node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// ------------------------------------------------------------------------------------------ the API

async function api(path, options) {
  const headers = { "accept": "application/json" };
  const key = sessionStorage.getItem(KEY);
  if (key) headers["authorization"] = "Bearer " + key;
  const response = await fetch(path, { ...(options || {}), headers });
  if (response.status === 401) {
    sessionStorage.removeItem(KEY);
    $("keyform").hidden = false;
    $("key").focus();
    const err = new Error("the api key is needed");
    err.auth = true;
    throw err;
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const message = body && body.error ? body.error.message : response.statusText;
    throw new Error(response.status + ": " + message);
  }
  return body;
}

const post = (path) => api(path, { method: "POST" });

function fmt(value, digits) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "number") return value.toLocaleString(undefined, { maximumFractionDigits: digits ?? 2 });
  return String(value);
}

function ms(value) {
  if (value === null || value === undefined) return "—";
  return value >= 1000 ? fmt(value / 1000, 1) + " s" : fmt(value, 0) + " ms";
}

function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toLocaleString();
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  const units = [[86400, "d"], [3600, "h"], [60, "min"], [1, "s"]];
  for (const [n, u] of units) if (seconds >= n) return fmt(seconds / n, 1) + " " + u;
  return fmt(seconds, 1) + " s";
}

function kv(pairs) {
  return h("dl", { class: "kv" }, pairs.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

function card(title, ...children) {
  return h("section", { class: "card" }, h("h2", {}, title), ...children);
}

function empty(text) { return h("p", { class: "muted empty" }, text); }

// ------------------------------------------------------------------------------------------ plots

// Bars of `values` (null drawn as a gap), with the y axis from 0 to the largest value.
function barChart(values, { width = 520, height = 120, label = "" } = {}) {
  const top = Math.max(1e-9, ...values.filter((v) => v !== null));
  const pad = 24, bw = Math.min(28, (width - pad) / Math.max(values.length, 1));
  const bars = values.map((v, i) => v === null ? null : s("rect", {
    class: "dot bar", x: pad + i * bw + 1, width: Math.max(bw - 2, 1),
    y: height - 14 - (v / top) * (height - 24), height: (v / top) * (height - 24),
  }, s("title", {}, fmt(v) + " " + label)));
  return s("svg", { width, height, role: "img", "aria-label": label, class: "plot" },
    s("line", { class: "axis", x1: pad, y1: height - 14, x2: width, y2: height - 14 }),
    s("text", { x: 0, y: 10 }, fmt(top, 1)), s("text", { x: 0, y: height - 16 }, "0"),
    s("text", { x: pad, y: height - 2 }, label), bars);
}

// One row per phase, one rectangle per run, coloured by its status, on a shared time axis.
function timeline(runs, phases, { width = 900 } = {}) {
  const names = [...new Set([...phases, ...runs.map((r) => r.phase)])];
  const starts = runs.map((r) => Date.parse(r.start)), ends = runs.map((r) => Date.parse(r.end));
  const lo = Math.min(...starts), hi = Math.max(...ends, lo + 1000);
  const left = 110, row = 20, height = names.length * row + 22;
  const x = (t) => left + ((t - lo) / (hi - lo)) * (width - left - 10);
  const rows = names.map((name, i) => [
    s("text", { x: 0, y: i * row + 14 }, name),
    s("line", { class: "axis", x1: left, y1: i * row + row - 2, x2: width, y2: i * row + row - 2 }),
  ]);
  const marks = runs.map((r, k) => s("rect", {
    class: "run run-" + r.status, x: x(starts[k]), y: names.indexOf(r.phase) * row + 3,
    width: Math.max(x(ends[k]) - x(starts[k]), 3), height: row - 8,
  }, s("title", {}, `${r.phase} ${r.status} ${when(r.start)} (${ms(r.duration_ms)})${r.detail ? ": " + r.detail : ""}`)));
  return s("svg", { width, height, role: "img", "aria-label": "phase runs over time", class: "plot timeline" },
    rows, marks,
    s("text", { x: left, y: height - 4 }, when(new Date(lo).toISOString())),
    s("text", { x: width - 150, y: height - 4 }, when(new Date(hi).toISOString())));
}

// Lines over categories on the x axis (days, retrains): `series` is [{name, points: [[label, y], ...]}], y in
// [0, yMax]; each point carries a tooltip.
const COLORS = 8;  // colour classes c0..c7 in app.css (the policy allows no inline style)

function lineChart(series, { width = 620, height = 180, yMax = 1, label = "" } = {}) {
  const labels = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort();
  const left = 30, bottom = 20, top = 8;
  const x = (l) => left + (labels.length < 2 ? (width - left) / 2 : labels.indexOf(l) * (width - left - 10) / (labels.length - 1));
  const y = (v) => top + (1 - v / yMax) * (height - top - bottom);
  const lines = series.map((sr, k) => {
    const color = "c" + (k % COLORS);
    const pts = sr.points.filter((p) => p[1] !== null && p[1] !== undefined);
    return s("g", { class: "line", "data-name": sr.name },
      pts.length > 1 ? s("polyline", { class: "series " + color,
        points: pts.map((p) => x(p[0]) + "," + y(p[1])).join(" ") }) : null,
      pts.map((p) => s("circle", { class: "dot " + color, cx: x(p[0]), cy: y(p[1]), r: 3 },
        s("title", {}, `${sr.name} ${p[0]}: ${fmt(p[1], 3)}${p[2] ? " (" + p[2] + ")" : ""}`))));
  });
  const legend = series.map((sr, k) => s("text", { class: "legend c" + (k % COLORS), x: left + 4 + (k % 4) * 150,
    y: height + 12 + Math.floor(k / 4) * 12 }, sr.name));
  return s("svg", { width, height: height + 14 + Math.ceil(series.length / 4) * 12, role: "img", "aria-label": label,
    class: "plot lines" },
    s("line", { class: "axis", x1: left, y1: y(0), x2: width, y2: y(0) }),
    s("line", { class: "axis", x1: left, y1: y(yMax), x2: width, y2: y(yMax) }),
    s("text", { x: 0, y: y(yMax) + 4 }, fmt(yMax)), s("text", { x: 0, y: y(0) }, "0"),
    labels.length ? [s("text", { x: left, y: height - 4 }, labels[0]),
      s("text", { x: width - 80, y: height - 4 }, labels[labels.length - 1])] : null,
    lines, legend);
}

// Predicted probability (x) against the observed rate (y) per bin; the diagonal is perfect calibration, each
// point's area grows with its count.
function calibrationPlot(bins, { size = 220 } = {}) {
  const pad = 24, span = size - pad - 6;
  const at = (v) => pad + v * span, up = (v) => 6 + (1 - v) * span;
  const most = Math.max(1, ...bins.map((b) => b.n));
  return s("svg", { width: size, height: size, role: "img", "aria-label": "calibration", class: "plot calibration" },
    s("line", { class: "axis", x1: at(0), y1: up(0), x2: at(1), y2: up(0) }),
    s("line", { class: "axis", x1: at(0), y1: up(0), x2: at(0), y2: up(1) }),
    s("line", { class: "axis diagonal", x1: at(0), y1: up(0), x2: at(1), y2: up(1), "stroke-dasharray": "3 3" }),
    s("text", { x: at(1) - 50, y: size - 2 }, "predicted"), s("text", { x: 0, y: 12 }, "1"),
    bins.map((b) => s("circle", { class: "dot bin", cx: at(b.predicted), cy: up(b.observed), r: 2 + 6 * Math.sqrt(b.n / most) },
      s("title", {}, `${fmt(b.lo, 1)}–${fmt(b.hi, 1)}: predicted ${fmt(b.predicted, 3)}, observed ${fmt(b.observed, 3)}, n ${b.n}`))));
}

// ------------------------------------------------------------------------------------------ sections

function modelCard(name, m) {
  if (!m || !m.loaded) return card(name + " model", empty("No learned model yet: the default decides."));
  const gate = m.gate || {}, metrics = m.metrics || {};
  const figures = Object.entries(gate).filter(([, v]) => typeof v === "number")
    .map(([k, v]) => [k, fmt(v, 3)]);
  return card(name + " model", kv([
    ["id", m.model_id], ["source", m.source], ["swaps", fmt(m.swaps)], ["trained", when(m.trained_at)],
    ["samples", fmt(m.n_samples)],
    ...Object.entries(metrics).filter(([, v]) => typeof v === "number").map(([k, v]) => [k, fmt(v, 3)]),
    ...figures.map(([k, v]) => ["held-out " + k, v]),
  ]));
}

function countsCard(counts) {
  if (!counts) return card("Counts", empty("Counting… (the first count runs in the background)"));
  const rows = [];
  for (const [name, value] of Object.entries(counts)) {
    if (name === "computed_at") continue;
    if (value && typeof value === "object") {
      if (value.available === false) { rows.push([name, value.reason || "not available"]); continue; }
      rows.push([name, fmt(value.total)]);
      for (const [k, v] of Object.entries(value)) {
        if (v && typeof v === "object" && !Array.isArray(v)) {
          const parts = Object.entries(v).filter(([, n]) => typeof n === "number").map(([a, n]) => fmt(n) + " " + a);
          if (parts.length) rows.push(["  " + k.replace(/^by_/, "by "), parts.join(" · ")]);
        }
      }
    } else rows.push([name, fmt(value)]);
  }
  return card("Counts", rows.length ? kv(rows) : empty("Nothing recorded yet."));
}

async function renderNow(main) {
  const now = await api("/v1/ghost/now");
  const a = now.activity, sandbox = now.sandbox;
  const speeds = a.replies.map((r) => r.tokens_per_s);
  append(main, [
    h("div", { class: "grid", id: "now" },
      card("Backend", h("div", { class: "big" }, now.model || now.backend.kind),
        kv([["backend", now.backend.kind], ["ready", now.backend.ready ? "yes" : "no"],
            now.backend.error && ["error", now.backend.error]])),
      card("Sandbox", h("div", { class: "big " + (sandbox.isolated ? "ok" : "bad") },
        sandbox.isolated ? "isolated" : sandbox.backend ? "NOT isolated" : (sandbox.error ? "unavailable" : "probing")),
        kv([["backend", sandbox.backend], ["isolates", (sandbox.isolates || []).join(", ")],
            ...sandbox.warnings.map((w) => ["warning", w]), sandbox.error && ["error", sandbox.error]])),
      card("Load", kv([["uptime", duration(now.uptime_s)], ["requests / min", fmt(a.requests_per_min)],
        ["tokens / min", fmt(a.tokens_per_min, 0)], ["in flight", fmt(now.in_flight)],
        ["window", duration(a.window_s)]])),
      card("Watchdog", kv([["enabled", now.watchdog.enabled ? "yes" : "no"],
        ["running now", now.watchdog.current_phase || "nothing"], ["idle for", duration(now.watchdog.idle_s)]])),
    ),
    card("Tokens per second, last replies",
      speeds.some((v) => v !== null) ? barChart(speeds, { label: "tokens/s" }) : empty("No replies since the daemon started.")),
    h("div", { class: "grid" }, modelCard("PRM", now.models.prm), modelCard("Router", now.models.router),
      countsCard(now.counts)),
  ]);
}

const turnsState = { q: "", source: "", outcome: "" };

function turnRow(t) {
  return h("tr", { class: "row", "data-id": t.id, onclick: () => { location.hash = "#turn/" + t.id; } },
    h("td", {}, when(t.ts)),
    h("td", { class: t.outcome === "passed" ? "ok" : t.outcome === "failed" ? "bad" : "muted" },
      t.outcome, t.corrected_by ? " (" + t.corrected_by + ")" : ""),
    h("td", {}, [t.route, t.strategy].filter(Boolean).join(" / ") || t.source),
    h("td", {}, ms(t.latency_ms)), h("td", {}, fmt(t.llm_calls)),
    h("td", {}, fmt((t.prompt_tokens || 0) + (t.completion_tokens || 0))),
    h("td", {}, t.tools.map((n) => h("span", { class: "tag" }, n))),
    h("td", { class: "text" }, t.request));
}

async function renderTurns(main) {
  const search = h("input", { type: "search", placeholder: "search requests and replies", value: turnsState.q });
  const source = h("select", {}, ["", "chat", "self_play", "eval", "reflection", "self_consistency"]
    .map((v) => h("option", { value: v, selected: v === turnsState.source }, v || "any source")));
  const outcome = h("select", {}, ["", "passed", "failed", "unknown"]
    .map((v) => h("option", { value: v, selected: v === turnsState.outcome }, v || "any outcome")));
  const body = h("tbody", {});
  const more = h("button", { hidden: true }, "More");
  let cursor = null;
  const load = async (reset) => {
    const params = new URLSearchParams({ limit: "50" });
    if (turnsState.q) params.set("q", turnsState.q);
    if (turnsState.source) params.set("source", turnsState.source);
    if (turnsState.outcome) params.set("outcome", turnsState.outcome);
    if (!reset && cursor) params.set("before", cursor);
    const page = await api("/v1/ghost/turns?" + params);
    if (reset) body.replaceChildren();
    append(body, page.items.map(turnRow));
    if (reset && !page.items.length) append(body, h("tr", {}, h("td", { colspan: 8 }, empty("No turns recorded yet."))));
    cursor = page.next;
    more.hidden = !cursor;
  };
  const apply = () => {
    turnsState.q = search.value; turnsState.source = source.value; turnsState.outcome = outcome.value;
    load(true);
  };
  search.addEventListener("change", apply);
  source.addEventListener("change", apply);
  outcome.addEventListener("change", apply);
  more.addEventListener("click", () => load(false));
  append(main, h("div", { class: "toolbar" }, search, source, outcome),
    h("table", { id: "turns" }, h("thead", {}, h("tr", {}, ["time", "outcome", "route / strategy", "latency",
      "model calls", "tokens", "tools", "request"].map((c) => h("th", {}, c)))), body), more);
  await load(true);
}

function treeNode(node, total) {
  const width = node.ms && total ? Math.max(2, Math.round(160 * node.ms / total)) : 0;
  return h("li", { class: "step" },
    width ? h("span", { class: "bar", style: null, "data-width": width }) : null,
    h("strong", { class: node.ok === false ? "bad" : "" }, node.name), " ",
    h("span", { class: "muted" }, node.ms !== null && node.ms !== undefined ? ms(node.ms) : ""),
    node.detail ? h("div", { class: "muted text" }, node.detail) : null,
    node.children.length ? h("ul", {}, node.children.map((c) => treeNode(c, total))) : null);
}

async function renderTurn(main, id) {
  const t = await api("/v1/ghost/turns/" + encodeURIComponent(id));
  const tree = h("div", { class: "tree", id: "tree" }, h("ul", {}, treeNode(t.tree, t.tree.ms)));
  for (const bar of tree.querySelectorAll(".bar")) bar.style.width = bar.dataset.width + "px";
  const shown = (title, items, label) => items.length
    ? card(title, h("ul", {}, items.map((i) => h("li", {}, label(i))))) : null;
  append(main, h("p", {}, h("a", { href: "#turns" }, "← all turns")),
    card("Turn " + t.id, kv([["time", when(t.ts)], ["source", t.source], ["session", t.session_id],
      ["outcome", t.outcome], t.failure_reason && ["why", t.failure_reason],
      ["route", [t.router.decision, t.router.reason].filter(Boolean).join(" — ")], ["latency", ms(t.latency_ms)],
      ["tokens", fmt((t.usage.prompt_tokens || 0)) + " in, " + fmt(t.usage.completion_tokens || 0) + " out"]])),
    card("Request", h("pre", {}, t.request)), card("Reply", h("pre", { id: "reply" }, t.reply)),
    card("Steps", tree),
    shown("Lessons shown", t.lessons_shown, (l) => [l.id, " ", h("span", { class: "muted" },
      [l.source, l.score !== null && l.score !== undefined ? "score " + fmt(l.score, 2) : ""].filter(Boolean).join(", "))]),
    shown("Demonstrations shown", t.demonstrations_shown, (d) => "lesson " + d.lesson_id + " from turn " + d.trajectory_id),
    shown("Worked examples shown", t.examples_shown, (e) => e.id + (e.template ? " (" + e.template + ")" : "")),
    t.correction ? card("Correction", kv([["by", t.correction.source], ["outcome", t.correction.outcome],
      ["reason", t.correction.reason], ["when", when(t.correction.ts)]])) : null,
    t.corrected_prior ? card("This turn corrected", h("a", { href: "#turn/" + t.corrected_prior }, t.corrected_prior)) : null);
}

function lessonRow(l, reload) {
  const act = (action) => h("button", { "data-action": action, onclick: async (e) => {
    e.stopPropagation();
    await post(`/v1/ghost/lessons/${encodeURIComponent(l.id)}/${action}`);
    await reload();
  } }, action);
  const actions = l.status === "retracted" ? [] : [
    act(l.pinned ? "unpin" : "pin"), act(l.archived ? "unarchive" : "archive"), act("retract")];
  return h("tr", { class: "lesson", "data-id": l.id, "data-status": l.status },
    h("td", {}, h("span", { class: "tag status" }, l.status), l.retract_reason ? h("div", { class: "muted" }, l.retract_reason) : null),
    h("td", { class: "text" }, h("div", { class: "task" }, l.task), l.mistake ? h("div", { class: "muted" }, "mistake: " + l.mistake) : null,
      h("div", { class: "solution" }, l.solution)),
    h("td", {}, kv([["source", l.source || "reflection"], ["from turn", l.source_trajectory_id
      ? h("a", { href: "#turn/" + l.source_trajectory_id }, l.source_trajectory_id.slice(0, 12)) : "—"],
      ["client", l.session_id || "all (pinned)"], ["written", when(l.created_at)], ["shown / used", fmt(l.uses)],
      ["last used", when(l.last_used)]])),
    h("td", {}, actions));
}

async function renderLearning(main) {
  const status = h("select", {}, ["", "active", "pinned", "archived", "retracted"]
    .map((v) => h("option", { value: v }, v || "every status")));
  const search = h("input", { type: "search", placeholder: "search lessons" });
  const body = h("tbody", {});
  const summary = h("span", { class: "muted" });
  const reload = async () => {
    const params = new URLSearchParams({ limit: "100" });
    if (status.value) params.set("status", status.value);
    if (search.value) params.set("q", search.value);
    const page = await api("/v1/ghost/lessons?" + params);
    body.replaceChildren(...page.items.map((l) => lessonRow(l, reload)));
    if (!page.items.length) append(body, h("tr", {}, h("td", { colspan: 4 }, empty("No lessons yet: a correction or a reflection writes the first."))));
    summary.textContent = Object.entries(page.counts).map(([k, v]) => `${v} ${k}`).join(" · ");
  };
  status.addEventListener("change", reload);
  search.addEventListener("change", reload);
  const skills = h("div", { id: "skills" });
  append(main, card("Lessons", h("div", { class: "toolbar" }, status, search, summary),
    h("table", { id: "lessons" }, h("thead", {}, h("tr", {}, ["status", "lesson", "provenance", ""].map((c) => h("th", {}, c)))), body)),
    card("Skill candidates", skills));
  await reload();
  await renderSkills(skills);
}

async function renderSkills(box) {
  const page = await api("/v1/ghost/skills");
  box.replaceChildren();
  if (!page.items.length) { append(box, empty("No skill candidates yet: they are mined from passing tool-using turns.")); return; }
  const decide = (c, action) => h("button", { "data-action": action, onclick: async () => {
    await post(`/v1/ghost/skills/${encodeURIComponent(c.id)}/${action}`);
    await renderSkills(box);
  } }, action);
  append(box, h("table", {}, h("thead", {}, h("tr", {}, ["status", "sequence", "support", "samples", ""].map((c) => h("th", {}, c)))),
    h("tbody", {}, page.items.map((c) => h("tr", { class: "skill", "data-id": c.id },
      h("td", {}, h("span", { class: "tag" }, c.status)), h("td", { class: "text" }, c.sequence), h("td", {}, fmt(c.support)),
      h("td", { class: "text" }, c.samples.join("\n")),
      h("td", {}, c.status === "candidate" ? [decide(c, "promote"), decide(c, "reject")] : []))))));
}

async function renderWatchdog(main) {
  const data = await api("/v1/ghost/watchdog/runs?limit=500");
  const phases = data.phases.map((p) => p.name);
  const phaseRow = (p) => h("tr", {},
    h("td", {}, p.title || p.name), h("td", {}, fmt(p.runs)),
    h("td", { class: p.failures ? "bad" : "" }, fmt(p.failures)), h("td", {}, when(p.last_end)),
    h("td", {}, p.last_result ? p.last_result.status + (p.last_result.detail ? ": " + p.last_result.detail : "") : "—"),
    h("td", {}, !data.enabled ? "the watchdog is off" : p.next_eligible ? when(p.next_eligible) : "after the next request"),
    h("td", { class: "muted" }, p.skip_reason || (p.built ? "" : "not built")));
  const runRow = (r) => h("tr", {},
    h("td", {}, when(r.start)), h("td", {}, r.phase), h("td", { class: "run-status" }, r.status),
    h("td", {}, ms(r.duration_ms)), h("td", { class: "text muted" }, r.detail));
  const header = ["phase", "runs", "failures", "last run", "result", "next eligible", "not running because"];
  append(main,
    card("Phase runs", data.items.length ? timeline(data.items, phases)
      : empty("No phase has run yet: phases run while the daemon is idle.")),
    card("Phases", h("table", { id: "phases" },
      h("thead", {}, h("tr", {}, header.map((c) => h("th", {}, c)))),
      h("tbody", {}, data.phases.map(phaseRow)))),
    data.items.length ? card("Recent runs", h("table", { id: "runs" },
      h("tbody", {}, data.items.slice(-30).reverse().map(runRow)))) : null);
}

function dayRates(days, good, bad) {
  return Object.keys(days).sort().map((day) => {
    const c = days[day], done = (c[good] || 0) + (c[bad] || 0);
    return [day, done ? (c[good] || 0) / done : null, `${c[good] || 0}/${done}`];
  });
}

async function renderModels(main) {
  const [play, models] = await Promise.all([api("/v1/ghost/selfplay"), api("/v1/ghost/models")]);
  const clusters = play.clusters.filter((c) => c.attempts);
  const series = Object.entries(play.history).sort().map(([name, days]) => ({ name, points: dayRates(days, "passed", "failed") }));
  append(main,
    card("Self-play: pass rate per cluster per day",
      series.length ? lineChart(series, { label: "self-play pass rate" }) : empty("No self-play yet: it runs while the daemon is idle.")),
    card("Practice clusters", clusters.length ? h("table", { id: "clusters" },
      h("thead", {}, h("tr", {}, ["cluster", "attempts", "passed", "pass rate", "recent", "difficulty", "saturated", "frontier weight"]
        .map((c) => h("th", {}, c)))),
      h("tbody", {}, clusters.map((c) => h("tr", { class: "cluster" }, h("td", {}, c.cluster), h("td", {}, fmt(c.attempts)),
        h("td", {}, fmt(c.passes)), h("td", {}, fmt(c.pass_rate)), h("td", {}, fmt(c.recent_pass_rate)),
        h("td", {}, fmt(c.difficulty)), h("td", {}, c.saturated ? "yes" : ""),
        h("td", {}, c.weight === null ? "off" : fmt(c.weight, 3)))))) : empty("No cluster has been practised yet.")),
    card("Experience bank", play.bank ? kv([["examples", fmt(play.bank.examples) + " of " + fmt(play.bank.max_examples)],
      ["shown", fmt(play.bank.shown)], ["passed after shown", fmt(play.bank.passes_after_shown)],
      ["failed after shown", fmt(play.bank.fails_after_shown)], ["retired", fmt(play.bank.retired)]])
      : empty("The experience bank is not open.")));
  const retrains = models.retrains;
  const judged = retrains.filter((r) => r.gate && r.gate.judged);
  const auc = [];
  for (const kind of ["prm", "router"]) {
    const mine = judged.filter((r) => r.kind === kind);
    if (!mine.length) continue;
    auc.push({ name: kind + " candidate", points: mine.map((r) => [r.ts, r.gate.candidate.auc, r.result]) });
    auc.push({ name: kind + " live (or 0.5)", points: mine.map((r) => [r.ts, r.gate.live.auc, r.gate.live_id]) });
  }
  const latest = [...judged].reverse().find((r) => (r.gate.calibration || []).length);
  const routeSeries = [{ name: "share sent to the agent", points: dayRates(Object.fromEntries(
    Object.entries(models.router_days).map(([d, c]) => [d, { agent: c.agent || 0, fast: c.fast || 0 }])), "agent", "fast") }];
  append(main,
    h("div", { class: "grid" }, modelCard("PRM", models.live.prm), modelCard("Router", models.live.router)),
    card("Held-out AUC per retrain, beside the model it had to beat",
      auc.length ? lineChart(auc, { label: "held-out AUC" }) : empty("No retrain has been judged on held-out data yet.")),
    card("Calibration of the latest judged candidate" + (latest ? ` (${latest.kind}, ${when(latest.ts)})` : ""),
      latest ? [calibrationPlot(latest.gate.calibration), h("table", { id: "calibration" }, h("thead", {}, h("tr", {},
        ["bin", "rows", "predicted", "observed"].map((c) => h("th", {}, c)))),
        h("tbody", {}, latest.gate.calibration.map((b) => h("tr", {}, h("td", {}, fmt(b.lo, 1) + "–" + fmt(b.hi, 1)),
          h("td", {}, fmt(b.n)), h("td", {}, fmt(b.predicted, 3)), h("td", {}, fmt(b.observed, 3)))))) ]
        : empty("No calibration yet: it is measured when a retrain is judged on a held-out slice.")),
    card("Retrains", retrains.length ? h("table", { id: "retrains" }, h("thead", {}, h("tr", {},
      ["when", "model", "result", "held-out rows", "log loss (new / live)", "AUC (new / live)", "reason"].map((c) => h("th", {}, c)))),
      h("tbody", {}, [...retrains].reverse().map((r) => {
        const g = r.gate || {}, c = g.candidate || {}, l = g.live || {};
        return h("tr", { class: "retrain" }, h("td", {}, when(r.ts)), h("td", {}, r.kind), h("td", {}, r.result),
          h("td", {}, fmt(g.holdout_samples)), h("td", {}, fmt(c.log_loss, 3) + " / " + fmt(l.log_loss, 3)),
          h("td", {}, fmt(c.auc, 3) + " / " + fmt(l.auc, 3)), h("td", { class: "muted text" }, g.reason || r.reason || ""));
      }))) : empty("No retrain yet: the watchdog retrains while the daemon is idle.")),
    card("Router decisions per day", Object.keys(models.router_days).length
      ? lineChart(routeSeries, { label: "share of chat turns sent to the agent" }) : empty("No chat turns yet.")));
}

async function renderEval(main) {
  const data = await api("/v1/ghost/evals");
  const suites = [...new Set(data.runs.map((r) => r.suite))].sort();
  const series = suites.map((suite) => ({ name: suite, points: data.runs.filter((r) => r.suite === suite)
    .map((r) => [r.ts, r.pass_rate, `${r.command} ${r.passed}/${r.total}${r.model ? " " + r.model : ""}`]) }));
  append(main,
    card("Pass rate per eval run", series.length ? lineChart(series, { label: "eval pass rate" })
      : empty("No eval run yet: `ghost-agent eval freeze --suite default` runs one and freezes it as a baseline.")),
    card("Runs", data.runs.length ? h("table", { id: "evals" }, h("thead", {}, h("tr", {},
      ["when", "suite", "run", "passed", "pass rate", "baseline", "model", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, [...data.runs].reverse().map((r) => h("tr", { class: "eval-run" }, h("td", {}, when(r.ts)),
        h("td", {}, r.suite), h("td", {}, r.command), h("td", {}, `${r.passed}/${r.total}`), h("td", {}, fmt(r.pass_rate, 3)),
        h("td", {}, fmt(r.baseline_pass_rate, 3)), h("td", {}, r.model || r.runner || ""),
        h("td", { class: r.regressed ? "bad" : "" }, r.regressed ? "dropped" : ""))))) : empty("No runs recorded.")),
    card("Frozen baselines", data.baselines.length ? h("table", { id: "baselines" }, h("thead", {}, h("tr", {},
      ["file", "suite", "passed", "pass rate", "frozen", "model"].map((c) => h("th", {}, c)))),
      h("tbody", {}, data.baselines.map((b) => h("tr", {}, h("td", {}, b.file), h("td", {}, b.suite || b.error),
        h("td", {}, b.total ? `${b.passed}/${b.total}` : "—"), h("td", {}, fmt(b.pass_rate, 3)), h("td", {}, when(b.started_at)),
        h("td", {}, b.model || b.runner || ""))))) : empty("No frozen baseline.")));
}

// ------------------------------------------------------------------------------------------ routing

const SECTIONS = { now: renderNow, turns: renderTurns, learning: renderLearning, watchdog: renderWatchdog,
  models: renderModels, eval: renderEval };
let refresh = null;

async function route() {
  clearTimeout(refresh);
  const hash = location.hash.slice(1) || "now";
  const [name, arg] = hash.split("/");
  for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("on", a.dataset.section === (name === "turn" ? "turns" : name));
  const main = $("main");
  const fresh = h("main", { id: "main", "data-section": name });
  try {
    if (name === "turn") await renderTurn(fresh, decodeURIComponent(arg || ""));
    else await (SECTIONS[name] || renderNow)(fresh);
    $("banner").hidden = true;
    $("updated").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (err) {
    if (!err.auth) { $("banner").textContent = String(err.message || err); $("banner").hidden = false; }
  }
  main.replaceWith(fresh);
  fresh.dataset.ready = "1";
  if (window.__ghostFirstRender === undefined) window.__ghostFirstRender = performance.now();
  if (name === "now" || !hash) refresh = setTimeout(() => { if (!document.hidden) route(); else refresh = setTimeout(route, 5000); }, 5000);
}

document.addEventListener("DOMContentLoaded", () => {
  $("keyform").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem(KEY, $("key").value.trim());
    $("key").value = "";
    $("keyform").hidden = true;
    route();
  });
  window.addEventListener("hashchange", route);
  route();
});
