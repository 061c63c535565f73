// groove UI: a status band and a search box. It talks to /mcp like any MCP
// client (initialize, notifications/initialized, tools/call over Streamable
// HTTP), so what you see is what an LLM client gets. Document text is only
// ever inserted with textContent; match_spans are UTF-8 byte offsets.
// A search lives in the address (/ui?q=…&limit=…&tags_any=…), so it can be
// linked, bookmarked and gone back to; the parameter names are the search
// tool's own (docs/mcp.md), except q for the query.
"use strict";

const MCP_URL = "/mcp";
const PROTOCOL_VERSION = "2025-11-25";

const mcp = {
  sessionId: null,
  protocolVersion: null,
  nextId: 1,
  ready: null,

  headers() {
    const h = { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" };
    if (this.sessionId) h["mcp-session-id"] = this.sessionId;
    if (this.protocolVersion) h["mcp-protocol-version"] = this.protocolVersion;
    return h;
  },

  // POST one JSON-RPC message; resolve with the response whose id matches (or null for notifications).
  async post(message) {
    const resp = await fetch(MCP_URL, { method: "POST", headers: this.headers(), body: JSON.stringify(message) });
    const sid = resp.headers.get("mcp-session-id");
    if (sid) this.sessionId = sid;
    if (resp.status === 202) return null;
    if (!resp.ok) {
      const err = new Error(`HTTP ${resp.status}: ${(await resp.text()).slice(0, 300)}`);
      err.status = resp.status;
      throw err;
    }
    const type = resp.headers.get("content-type") || "";
    const messages = type.includes("text/event-stream") ? parseSse(await resp.text()) : [await resp.json()];
    const found = messages.find((m) => m && m.id === message.id && ("result" in m || "error" in m));
    if (!found) throw new Error("no response to request " + message.id);
    if (found.error) throw new Error(found.error.message || "MCP error");
    return found.result;
  },

  async request(method, params) {
    return this.post({ jsonrpc: "2.0", id: this.nextId++, method, params });
  },

  async connect() {
    this.sessionId = null;
    this.protocolVersion = null;
    const result = await this.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "groove-ui", version: "1" },
    });
    this.protocolVersion = result.protocolVersion || PROTOCOL_VERSION;
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
  },

  async callTool(name, args) {
    if (!this.ready) this.ready = this.connect();
    try {
      await this.ready;
    } catch (e) {
      this.ready = null;
      throw e;
    }
    try {
      return await this.request("tools/call", { name, arguments: args });
    } catch (e) {
      if (e.status !== 404) throw e;
      this.ready = this.connect(); // session expired: open a new one and retry once
      await this.ready;
      return this.request("tools/call", { name, arguments: args });
    }
  },

  close() {
    if (!this.sessionId) return;
    fetch(MCP_URL, { method: "DELETE", headers: this.headers(), keepalive: true }).catch(() => {});
    this.sessionId = null;
  },
};

// Server-sent events: the data lines of each event, joined, parsed as JSON.
function parseSse(text) {
  const out = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, ""));
    if (!data.length) continue;
    try { out.push(JSON.parse(data.join("\n"))); } catch (_) { /* keep-alive or partial event */ }
  }
  return out;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function setText(id, value) {
  document.getElementById(id).textContent = value === undefined || value === null ? "—" : String(value);
}

function formatUptime(seconds) {
  const s = Math.floor(seconds || 0);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return h ? `${h}h ${m}m` : m ? `${m}m ${s % 60}s` : `${s}s`;
}

// The index state (docs/index-lifecycle.md) in a few words: "complete", "building: 3/48 embedded".
function describeIndex(index) {
  if (!index) return "unknown";
  const share = `${index.documents_embedded}/${index.documents} documents embedded`;
  if (index.state === "building" || index.state === "incomplete") return `${index.state}: ${share}`;
  const notes = [];
  if (index.files_newer) notes.push(`${index.files_newer} file(s) changed since`);
  if (index.files_skipped) notes.push(`${index.files_skipped} skipped: see groove doctor`);
  if (index.state === "complete" && notes.length) return `complete (${notes.join("; ")})`;
  return index.state;
}

async function refreshStatus() {
  const band = document.getElementById("status");
  try {
    const resp = await fetch("/api/admin/status", { headers: { "Accept": "application/json" } });
    if (!resp.ok) throw new Error("HTTP " + resp.status);
    const st = await resp.json();
    setText("st-version", st.version);
    setText("st-documents", st.documents);
    setText("st-chunks", st.chunks);
    setText("st-model", st.model);
    setText("st-watcher", st.indexing.active ? `${st.watcher.state} (indexing…)` : st.watcher.state);
    setText("st-index", describeIndex(st.index));
    setText("st-last-indexed", st.last_indexed);
    setText("st-uptime", formatUptime(st.uptime_s));
    setText("st-pid", st.pid);
    band.classList.toggle("error", Boolean(st.error) || st.watcher.state === "error");
    offerCollections(Object.keys(st.collections || {}));
  } catch (e) {
    band.classList.add("error");
    setText("st-watcher", "status unavailable: " + e.message);
  }
}

// A server of several collections: the picker lists them ("all collections" first).
function offerCollections(names) {
  const picker = document.getElementById("collection");
  if (!names.length || picker.options.length > 1) return;
  for (const name of names) {
    const option = el("option", null, name);
    option.value = name;
    picker.append(option);
  }
  picker.value = new URLSearchParams(location.search).get("collection") || "";
  picker.hidden = false;
}

// Split content at the byte spans: [{text, marked}] pieces, decoded back from UTF-8.
function spanPieces(content, spans) {
  const bytes = new TextEncoder().encode(content);
  const decoder = new TextDecoder();
  const sorted = (spans || []).filter((s) => s.end > s.start).sort((a, b) => a.start - b.start);
  const pieces = [];
  let pos = 0;
  for (const span of sorted) {
    const start = Math.max(span.start, pos), end = Math.min(span.end, bytes.length);
    if (start >= end) continue;
    if (start > pos) pieces.push({ text: decoder.decode(bytes.subarray(pos, start)), marked: false });
    pieces.push({ text: decoder.decode(bytes.subarray(start, end)), marked: true });
    pos = end;
  }
  if (pos < bytes.length) pieces.push({ text: decoder.decode(bytes.subarray(pos)), marked: false });
  return pieces;
}

function renderHit(hit) {
  const li = el("li", "hit");
  const head = el("div", "hit-head");
  head.append(el("span", "hit-score", Number(hit.score).toFixed(4)));
  if (hit.collection) head.append(el("span", "hit-collection", hit.collection));
  // a source-code hit shows path:line, and its kind and scope beside its name
  const where = hit.line_start ? `${hit.path}:${hit.line_start}` : hit.path;
  head.append(el("span", "hit-path", where));
  if (hit.heading) {
    const label = hit.symbol_kind ? `${hit.symbol_kind} ${hit.heading}` : hit.heading;
    head.append(el("span", "hit-heading", hit.scope ? `${label} (${hit.scope})` : label));
  }
  const tags = el("span", "hit-tags");
  for (const t of hit.tags || []) tags.append(el("span", "tag", t));
  head.append(tags);
  li.append(head);
  const pre = el("pre", "hit-content");
  for (const piece of spanPieces(hit.content || "", hit.match_spans)) {
    pre.append(piece.marked ? el("mark", null, piece.text) : document.createTextNode(piece.text));
  }
  li.append(pre);
  return li;
}

function showMessage(text, kind) {
  const msg = document.getElementById("message");
  msg.textContent = text;
  msg.className = kind || "";
}

// Filters of the search tool the page offers: [argument, is a list]. A list is
// typed comma-separated and repeated in the address (tags_any=a&tags_any=b).
const FILTERS = [["category", false], ["topic", false], ["tags_any", true], ["tags_all", true],
  ["path_globs", true], ["date_from", false], ["date_to", false]];
const DEFAULT_LIMIT = 5;

function splitList(text) {
  return text.split(",").map((t) => t.trim()).filter(Boolean);
}

// The form as address parameters: q, limit when not the default, each filter set.
function formParams() {
  const params = new URLSearchParams();
  params.set("q", document.getElementById("q").value.trim());
  const limit = parseInt(document.getElementById("limit").value, 10) || DEFAULT_LIMIT;
  if (limit !== DEFAULT_LIMIT) params.set("limit", String(limit));
  const collection = document.getElementById("collection").value;
  if (collection) params.set("collection", collection);
  for (const [name, isList] of FILTERS) {
    const value = document.getElementById("f-" + name).value.trim();
    if (!value) continue;
    if (isList) for (const item of splitList(value)) params.append(name, item);
    else params.set(name, value);
  }
  return params;
}

// Address parameters back into the form (unknown ones are ignored).
function fillForm(params) {
  document.getElementById("q").value = params.get("q") || "";
  document.getElementById("limit").value = params.get("limit") || String(DEFAULT_LIMIT);
  const picker = document.getElementById("collection");
  const wanted = params.get("collection") || "";
  if (!picker.hidden || !wanted) picker.value = wanted;
  let anyFilter = false;
  for (const [name, isList] of FILTERS) {
    const values = params.getAll(name).map((v) => v.trim()).filter(Boolean);
    document.getElementById("f-" + name).value = isList ? values.join(", ") : (values[0] || "");
    anyFilter = anyFilter || values.length > 0;
  }
  if (anyFilter) document.getElementById("filters").open = true;
}

// The search tool's arguments for these parameters.
function searchArgs(params) {
  const args = { query: params.get("q") || "", limit: parseInt(params.get("limit"), 10) || DEFAULT_LIMIT,
    all_language_spans: true };
  if (params.get("collection")) args.collection = [params.get("collection")];
  for (const [name, isList] of FILTERS) {
    const values = params.getAll(name);
    if (values.length) args[name] = isList ? values : values[0];
  }
  return args;
}

async function submitSearch(event) {
  event.preventDefault();
  const params = formParams();
  if (!params.get("q")) return;
  const address = "/ui?" + params.toString();
  if (location.pathname + location.search !== address) history.pushState(null, "", address);
  await runSearch(params);
}

// The search the address names, if any (on load, and on back/forward).
async function searchFromAddress() {
  const params = new URLSearchParams(location.search);
  fillForm(params);
  if ((params.get("q") || "").trim()) await runSearch(params);
  else {
    document.getElementById("results").replaceChildren();
    showMessage("");
  }
}

async function runSearch(params) {
  const args = searchArgs(params);
  const query = args.query.trim();
  const list = document.getElementById("results");
  if (!query) return;
  list.dataset.state = "busy";
  showMessage("Searching…");
  const started = performance.now();
  try {
    const result = await mcp.callTool("search", args);
    const text = (result.content || []).map((c) => c.text || "").join("");
    if (result.isError) {
      list.replaceChildren();
      showMessage(text, "error");
      return;
    }
    const data = result.structuredContent || JSON.parse(text);
    list.replaceChildren(...data.results.map(renderHit));
    const ms = Math.round(performance.now() - started);
    const partial = data.index && data.index.state !== "complete"
      ? ` The index is ${describeIndex(data.index)}: answers come from what is indexed so far.` : "";
    if (partial) showMessage(`${data.results.length} results (${ms} ms).${partial}`, "warn");
    else if (!data.results.length) showMessage(`No results (${ms} ms): the knowledge base is silent on this.`, "warn");
    else if (data.low_confidence) showMessage(`${data.results.length} results, low confidence (${ms} ms): ${data.low_confidence_note || "no hit stands out"}.`, "warn");
    else showMessage(`${data.results.length} results (${ms} ms)`);
  } catch (e) {
    showMessage("Search failed: " + e.message, "error");
  } finally {
    list.dataset.query = query; // lets a test (or a person's script) tell the search finished
    list.dataset.state = "done";
  }
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("search-form").addEventListener("submit", submitSearch);
  window.addEventListener("popstate", searchFromAddress);
  searchFromAddress();
  refreshStatus();
  setInterval(refreshStatus, 5000);
});
window.addEventListener("pagehide", () => mcp.close());
