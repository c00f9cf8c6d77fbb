// kvref's cache view: plain JavaScript, no framework, nothing from the network but this
// server. It draws GET /v1/cache, follows GET /v1/cache/events (Server-Sent Events), drives
// POST /v1/step in stepping mode and asks GET /v1/plan for the "price it" panel.
"use strict";

const $ = (sel) => document.querySelector(sel);

// el builds an element: el("div", {class: "x", "data-id": 3}, child, "text", ...).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Numbers and sizes as kvref prints them.
const fmtInt = (n) => Number(n).toLocaleString("en-US");
function fmtBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0, x = Number(n);
  while (Math.abs(x) >= 1024 && i < units.length - 1) { x /= 1024; i++; }
  return i === 0 ? `${fmtInt(n)} B` : `${x.toFixed(x >= 100 ? 0 : x >= 10 ? 1 : 2)} ${units[i]}`;
}
const quote = (text) => JSON.stringify(text);

const state = {
  view: null,          // the last GET /v1/cache
  selected: -1,        // the selected block id
  hover: -1,           // the block under the pointer
  current: -1,         // stepping mode: the sequence the controls act on
  log: [],             // events, oldest first (at most maxLog)
  seen: 0, dropped: 0,
  tally: {},           // events by kind ({n, slots}): the hello's, then every event received or lost
  lastN: 0,            // the number of the last event received
  replayedUpTo: 0,     // events numbered up to this came from the server's ring (the page opened later)
  request: -1,         // the selected request (serve mode)
  lastStep: null,      // stepping mode: the last decoded token
  lastNote: "",        // ... or why there is none to show
  flash: new Set(),    // blocks touched since the last drawing
  fetching: false, again: false, lastFetch: 0,
};
const maxLog = 300;

// ---- the snapshot ----------------------------------------------------------------------

// refresh fetches a snapshot, at most one at a time and at most every 150 ms.
async function refresh() {
  if (state.fetching) { state.again = true; return; }
  const wait = 150 - (Date.now() - state.lastFetch);
  if (wait > 0) { state.fetching = true; await sleep(wait); state.fetching = false; }
  state.fetching = true;
  try {
    const res = await fetch("/v1/cache", { cache: "no-store" });
    if (!res.ok) throw new Error(`GET /v1/cache: ${res.status}`);
    state.view = await res.json();
    state.lastFetch = Date.now();
    render();
  } catch (err) {
    $("#status").className = "status lost";
  } finally {
    state.fetching = false;
  }
  if (state.again) { state.again = false; refresh(); }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function render() {
  const v = state.view;
  if (!v) return;
  document.body.dataset.mode = v.mode;
  const slide = v.model.sliding_window ? `, sliding window ${v.model.sliding_window}` : "";
  $("#model").textContent = `${v.model.name} · ${v.model.layers} layers, ${v.model.heads} query heads, ${v.model.kv_heads} KV heads of ${v.model.head_dim}${slide} · ` +
    `${v.mode === "step" ? "stepping" : "serving"} · ${v.cache_type_k === v.cache_type_v ? v.cache_type_k : v.cache_type_k + "/" + v.cache_type_v} cache`;
  document.querySelectorAll(".bsz").forEach((b) => (b.textContent = v.block_size));
  renderGrid(v);
  renderRequests(v);
  renderTables(v);
  renderFormula(v);
  renderCounters();
  renderDetail();
  if (v.mode === "step") { renderControls(v); renderLastStep(); }
  state.flash.clear();
  window.kvrefView = v; // what the page drew, for tests and the curious (the browser's console)
  document.body.dataset.snapshotEvents = String(v.events);
  document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
}

// owners maps a block id to the [seq id, table index] pairs that hold it (every cache
// group's table, for a model with groups).
function owners(v) {
  const m = new Map();
  for (const s of v.sequences) for (const t of (s.tables || [s.table])) t.forEach((id, i) => {
    if (id < 0) return;
    if (!m.has(id)) m.set(id, []);
    m.get(id).push([s.id, i]);
  });
  return m;
}

// groups are the pool's cache groups (a model with sliding layers beside full ones), or
// an empty list: [{group, layers, window, blocks_used, blocks_cached, blocks_reclaimed}].
function groups(v) { return v.stats.groups || []; }

// groupName says which layers a cache group holds and over what they attend.
function groupName(g) {
  return `group ${g.group}: layers ${g.layers.join(",")} · ` + (g.window > 0 ? `window ${g.window}` : "global");
}

// excerpt is what a block cell shows of its tokens: the first token's text (spaces shown
// as they are trimmed), shortened, with an ellipsis when the block holds more.
function excerpt(b) {
  if (!b.text || b.text.length === 0 || b.state === "free") return "";
  let t = b.text[0].replace(/\s+/g, " ").trim() || "␣";
  if (t.length > 5) t = t.slice(0, 4) + "…";
  else if (b.text.length > 1) t += "…";
  return t;
}

// blockTitle is a block's tooltip: its state, its tokens' full text, hash, refcount and owners.
function blockTitle(b, v, own) {
  const who = own.length ? own.map(([s, i]) => `seq ${s} table[${i}]`).join(", ") : "none";
  return `block ${b.id}: ${b.state}, refcount ${b.ref}, ${b.filled}/${v.block_size} slots\n` +
    `text: ${b.text && b.text.length ? quote(b.text.join("")) : "(nothing)"}\n` +
    `hash: ${b.hash ? b.hash + "…" : "none"}\nowners: ${who}`;
}

// reqBlocks is the set of blocks the selected request holds (live) or held and the pool
// still keeps (finished: blocks given to other tokens since, and freed ones, left out).
function reqBlocks(v) {
  const q = v.requests && v.requests.find((r) => r.id === state.request);
  const set = new Set();
  if (!q) return set;
  for (const s of q.sequences) {
    const stale = new Set(s.stale || []);
    for (const id of s.blocks || []) if (id >= 0 && !stale.has(id) && v.blocks[id] && v.blocks[id].state !== "free") set.add(id);
  }
  return set;
}

function blockCell(b, v, extra) {
  const own = (state.owners && state.owners.get(b.id)) || [];
  const gs = groups(v);
  const g = gs.length && b.state !== "free" ? gs[b.group || 0] : null;
  const cell = el("div", {
    class: "blk" + (state.flash.has(b.id) ? " flash" : "") + (b.id === state.selected ? " sel" : "") + (state.reqSet && state.reqSet.has(b.id) ? " req" : "") +
      (g ? (g.window > 0 ? " g-sliding" : " g-full") : ""),
    "data-block-id": b.id, "data-state": b.state, role: "listitem", tabindex: 0,
    title: blockTitle(b, v, own) + (g ? `\n${groupName(g)}` : ""),
    onmouseenter: () => { state.hover = b.id; renderDetail(); highlight(b.id); },
    onmouseleave: () => { state.hover = -1; renderDetail(); highlight(-1); },
    onclick: () => { state.selected = state.selected === b.id ? -1 : b.id; render(); },
  }, el("span", { class: "id", text: b.id }), el("span", { class: "ex", text: excerpt(b) }));
  if (b.filled > 0 && b.state !== "free") cell.append(el("span", { class: "fill", style: `width:${(100 * b.filled) / v.block_size}%` }));
  if (b.ref > 1) cell.append(el("span", { class: "ref", text: `×${b.ref}` }));
  if (extra) extra(cell);
  return cell;
}

function renderGrid(v) {
  state.owners = owners(v);
  state.reqSet = reqBlocks(v);
  const grid = $("#grid");
  grid.classList.toggle("dense", v.blocks.length > 400);
  grid.replaceChildren(...v.blocks.map((b) => blockCell(b, v)));
  const s = v.stats;
  $("#pool-summary").textContent = `${s.blocks_total} blocks of ${s.block_size} slots: ${s.blocks_used} in use` +
    (s.blocks_shared ? ` (${s.blocks_shared} shared)` : "") + ` · ${s.blocks_cached} cached · ${s.blocks_free} free`;
  renderGroups(v);
}

// renderGroups lists the cache groups of a model with sliding layers beside full ones:
// their layers and window, the blocks each holds, and the blocks the window released
// against those the global layers still hold.
function renderGroups(v) {
  const box = $("#groups");
  const gs = groups(v);
  box.hidden = gs.length === 0;
  if (!gs.length) return;
  let full = 0, sliding = 0, released = 0;
  for (const g of gs) {
    if (g.window > 0) { sliding += g.blocks_used; released += g.blocks_reclaimed; } else full += g.blocks_used;
  }
  box.replaceChildren(
    el("p", {}, el("b", { text: `${gs.length} cache groups` }), ` of ${gs[0].layers.length} layers, each with its own block table per sequence, all drawn from this pool: `,
      el("span", { class: "g-full-text", text: `${full} blocks held by the global layers (every position kept)` }), " · ",
      el("span", { class: "g-sliding-text", text: `${sliding} by the sliding layers` }), ` · ${released} released by the window so far`),
    el("table", { class: "groups" },
      el("tr", {}, ...["group", "layers", "attends over", "in use", "cached", "released by the window"].map((h) => el("th", { text: h }))),
      ...gs.map((g) => el("tr", { class: g.window > 0 ? "g-sliding" : "g-full" },
        el("td", { text: g.group }), el("td", { text: g.layers.join(", ") }), el("td", { text: g.window > 0 ? `the last ${g.window} positions` : "every position" }),
        el("td", { text: g.blocks_used }), el("td", { text: g.blocks_cached }), el("td", { text: g.window > 0 ? g.blocks_reclaimed : "—" })))));
}

// highlight marks every cell of block id (grid and tables).
function highlight(id) {
  document.querySelectorAll(".blk.hl").forEach((c) => c.classList.remove("hl"));
  if (id < 0) return;
  document.querySelectorAll(`.blk[data-block-id="${id}"]`).forEach((c) => c.classList.add("hl"));
}

function renderTables(v) {
  const box = $("#tables");
  if (v.sequences.length === 0) {
    box.replaceChildren(el("p", { class: "empty", text: v.mode === "step" ? "No live sequence: add a prompt." : "No live sequence. Send a request to /v1/completions and watch its blocks arrive." }));
    return;
  }
  const byId = new Map(v.blocks.map((b) => [b.id, b]));
  box.replaceChildren(...v.sequences.map((s) => {
    const who = el("div", { class: "who" }, el("b", { text: `seq ${s.id}` }), ` · ${s.len} tokens`);
    if (s.request !== undefined) who.append(el("br"), `request ${s.request}` + (s.choice ? `, choice ${s.choice}` : ""));
    if (s.parent !== undefined) who.append(el("br"), `forked from seq ${s.parent}`);
    // (A decoding sequence always has its sampled token waiting: only a prompt still being
    // computed is worth a word.)
    if (s.len - s.computed > 1) who.append(el("br"), el("span", { class: "muted", text: `${s.len - s.computed} prompt tokens to compute` }));
    const row = (table, g) => el("div", { class: "cells", "data-group": g ? g.group : undefined }, ...table.map((id, i) => {
      if (id < 0) {
        return el("div", { class: "blk", "data-block-id": -1, "data-state": "hole", "data-index": i,
          title: `table[${i}]: reclaimed, positions ${i * v.block_size}–${(i + 1) * v.block_size - 1} slid out of the attention window` + (g ? ` of ${groupName(g)}` : "") }, "—");
      }
      const cell = blockCell(byId.get(id), v, (c) => {
        c.dataset.index = i;
        c.title = `table[${i}] = block ${id}: positions ${i * v.block_size}–${(i + 1) * v.block_size - 1}\n` + blockTitle(byId.get(id), v, state.owners.get(id) || []) + (g ? `\n${groupName(g)}` : "");
      });
      return cell;
    }));
    const gs = groups(v);
    const cells = s.tables && gs.length
      ? el("div", { class: "grouptables" }, ...s.tables.map((t, g) => el("div", { class: "grouprow " + (gs[g].window > 0 ? "g-sliding" : "g-full") },
        el("span", { class: "glabel", text: `g${g} ` + (gs[g].window > 0 ? `window ${gs[g].window}` : "global") + ` (layers ${gs[g].layers.join(",")})` }), row(t, gs[g]))))
      : row(s.table, null);
    const mine = v.requests && v.requests.some((q) => q.id === state.request && q.sequences.some((x) => x.seq === s.id && x.state !== "finished"));
    return el("div", { class: "seqrow" + (s.id === state.current ? " current" : "") + (mine ? " req" : ""), "data-seq-id": s.id,
      onclick: () => { if (v.mode === "step") { state.current = s.id; render(); } } }, who, cells);
  }));
}

// renderRequests lists the live requests and the last finished ones (serve mode): the
// prompt's start, the prompt tokens reused from the cache, each sequence's blocks, the state
// and why it ended. Selecting one outlines its blocks in the pool and its sequences' tables.
function renderRequests(v) {
  const box = $("#requests");
  if (!box) return;
  const reqs = v.requests || [];
  const h = v.history;
  $("#requests-note").textContent = h ? `live, then the last ${h.requests} finished (newest first); the event log replays the last ${fmtInt(h.events)} events` : "";
  if (reqs.length === 0) {
    box.replaceChildren(el("p", { class: "empty", text: "No request yet. Send one to /v1/completions or /v1/chat/completions: it is listed here, live and after it ends." }));
    return;
  }
  const byId = new Map(v.blocks.map((b) => [b.id, b]));
  box.replaceChildren(...reqs.map((q) => {
    const reused = q.reused < 0 ? "waiting for the cache" : `${q.reused} of ${q.prompt_tokens} prompt tokens reused`;
    const seqs = q.sequences.map((s) => {
      const stale = new Set(s.stale || []);
      const cells = (s.blocks || []).map((id, i) => {
        if (id < 0) return el("span", { class: "mini hole", title: `table[${i}]: reclaimed` }, "—");
        const b = byId.get(id);
        const gone = stale.has(id);
        return el("span", { class: "mini" + (gone ? " gone" : ""), "data-block-id": id, "data-state": gone ? "gone" : b ? b.state : "free",
          title: gone ? `block ${id}: since given to other tokens (evicted or freed, then reused)` :
            b && b.state === "free" ? `block ${id}: freed when the request ended (it was not full, so not cached)` : b ? blockTitle(b, v, state.owners.get(id) || []) : `block ${id}` }, String(id));
      });
      return el("div", { class: "rseq", "data-choice": s.choice },
        el("span", { class: "muted" }, q.choices > 1 ? `choice ${s.choice}` : "", s.seq >= 0 ? ` seq ${s.seq}` : "", ` · ${s.state}${s.finish ? ` (${s.finish})` : ""}`),
        el("span", { class: "minis" }, ...cells));
    });
    if (q.choices > q.sequences.length) seqs.push(el("div", { class: "muted small", text: `and ${q.choices - q.sequences.length} more continuations` }));
    return el("div", {
      class: "req-row" + (q.id === state.request ? " sel" : ""), "data-request-id": q.id, "data-state": q.state, role: "button", tabindex: 0,
      onclick: () => { state.request = state.request === q.id ? -1 : q.id; render(); },
      onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); e.currentTarget.click(); } },
    },
      el("div", { class: "req-head" }, el("b", { text: `#${q.id}` }), el("span", { class: "rstate " + q.state, text: q.state }),
        el("span", { class: "prompt", text: quote(q.prompt) }),
        el("span", { class: "reused", "data-reused": q.reused, text: reused }),
        q.finish ? el("span", { class: "finish", text: q.finish }) : null),
      ...seqs);
  }));
}

function renderFormula(v) {
  const m = v.model;
  let per;
  let head = "per token = 2 · layers · kv_heads · head_dim · bytes";
  if (v.element_bytes) {
    per = `2 · ${m.layers} · ${m.kv_heads} · ${m.head_dim} · ${v.element_bytes} B`;
  } else {
    head = "per token = layers · (K row + V row)   (rows carry scales)";
    per = `${m.layers} · (${v.k_row_bytes} B + ${v.v_row_bytes} B)`;
  }
  const used = v.stats.blocks_used, cached = v.stats.blocks_cached, total = v.blocks_total;
  const pct = (n) => `${(100 * n) / total}%`;
  $("#formula").replaceChildren(
    el("div", { class: "eq" }, head, el("br"),
      `          = ${per}`, el("br"), "          = ", el("span", { class: "big", text: `${fmtInt(v.bytes_per_token)} B` })),
    groups(v).length
      ? el("div", {}, "bytes per block = ", el("b", { text: `${v.block_size} slots × ${groups(v)[0].layers.length} layers of one cache group × ${fmtInt(v.k_row_bytes + v.v_row_bytes)} B = ${fmtBytes(v.bytes_per_block)}` }),
        el("br"), el("span", { class: "muted small", text: "a block holds one group's layers; the sliding groups keep only the window's blocks, so a token costs less than the line above once the window is full" }))
      : el("div", {}, "bytes per block = ", el("b", { text: `${v.block_size} slots × ${fmtInt(v.bytes_per_token)} B = ${fmtBytes(v.bytes_per_block)}` })),
    el("div", {}, "in use: ", el("b", { text: `${used} blocks × ${fmtBytes(v.bytes_per_block)} = ${fmtBytes(v.bytes_in_use)}` }),
      ` of ${fmtBytes(v.bytes_total)} (${total} blocks)`),
    el("div", { class: "bar", title: `${used} in use, ${cached} cached, ${total - used - cached} free` },
      el("span", { style: `width:${pct(used)};background:var(--used)` }), el("span", { style: `width:${pct(cached)};background:var(--cached)` })),
    el("div", {}, `a full ${fmtInt(v.context)}-token sequence holds ${fmtInt(v.blocks_per_sequence)} blocks: `,
      el("b", { id: "fit", text: `${fmtInt(v.sequences_fit)} fit in this pool` }), ` (it holds ${fmtInt(v.blocks_total * v.block_size)} tokens in all)`),
    el("div", { class: "muted small" }, `tokens stored ${fmtInt(v.stats.tokens_stored)} in ${fmtInt(used * v.block_size)} slots; ` +
      `${fmtInt(v.stats.unused_slots)} slots of used blocks are empty (paging's only waste)`),
  );
}

// renderCounters counts the event stream itself (the hello's tally of what came before,
// then every event received or lost), so that the counters and the log always agree; the
// prompt tokens and the engine's steps come from the last snapshot.
function renderCounters() {
  const v = state.view;
  const t = (k) => state.tally[k] || { n: 0, slots: 0 };
  const rows = [
    ["events", Object.values(state.tally).reduce((a, k) => a + k.n, 0)],
    ["allocations", t("alloc").n],
    ["tokens from prefix hits", t("prefix_hit").slots],
    ["copy-on-write copies", t("cow").n],
    ["evictions", t("evict").n],
    ["blocks reclaimed (sliding window)", t("reclaim").n],
  ];
  if (!v || v.mode === "serve") {
    rows.push(["requests submitted", t("submit").n], ["requests finished", t("finish").n], ["admissions", t("admit").n], ["preemptions", t("preempt").n]);
  }
  if (state.dropped) rows.push(["events dropped (slow viewer)", state.dropped]);
  const snap = [];
  if (v) {
    snap.push(["prompt tokens", v.stats.prompt_tokens]);
    if (v.engine) snap.push(["engine steps", v.engine.steps]);
  }
  const dl = (k, n) => [el("dt", { text: k }), el("dd", { "data-counter": k, text: fmtInt(n) })];
  $("#counters").replaceChildren(...rows.flatMap(([k, n]) => dl(k, n)),
    ...(snap.length ? [el("dt", { class: "sub", text: "from the last snapshot" }), el("dd", {}), ...snap.flatMap(([k, n]) => dl(k, n))] : []));
  document.body.dataset.tallyEvents = String(rows[0][1]);
}

// requestsOf says which listed requests hold, or held, block id (and the pool still keeps
// what they wrote there): the story of a cached block.
function requestsOf(v, id) {
  const out = [];
  for (const q of v.requests || []) {
    for (const s of q.sequences) {
      const i = (s.blocks || []).indexOf(id);
      if (i >= 0 && !(s.stale || []).includes(id)) out.push(`#${q.id}${q.choices > 1 ? ` choice ${s.choice}` : ""} (${q.state === "finished" ? "held" : "holds"} it as table[${i}])`);
    }
  }
  return out.join(", ");
}

function renderDetail() {
  const v = state.view;
  const id = state.hover >= 0 ? state.hover : state.selected;
  const box = $("#detail");
  if (!v || id < 0 || id >= v.blocks.length) {
    $("#detail-title").textContent = "hover or click one";
    box.replaceChildren(el("p", { class: "muted", text: "Each block holds the keys and values of " + (v ? v.block_size : "B") + " consecutive positions of a sequence, in every layer." }));
    return;
  }
  const b = v.blocks[id];
  const own = owners(v).get(id) || [];
  $("#detail-title").textContent = `${b.id}`;
  const slots = [];
  for (let i = 0; i < v.block_size; i++) {
    if (i < b.tokens.length) slots.push(el("span", { class: "slot", title: `slot ${i}: token id ${b.tokens[i]}` }, quote(b.text[i]), " ", el("small", { text: b.tokens[i] })));
    else slots.push(el("span", { class: "slot emptyslot", text: `slot ${i}: empty` }));
  }
  const explain = {
    free: "on the free list: holds nothing",
    used: "in one sequence's table",
    shared: `in ${b.ref} table entries: read by all, copied before anyone writes into it`,
    cached: "full and indexed by its hash, but no sequence holds it: a new prompt with the same prefix reuses it; evicted when memory is needed (least recently used first)",
  }[b.state];
  box.replaceChildren(
    el("dl", { class: "kv" },
      el("dt", { text: "state" }), el("dd", {}, el("b", { text: b.state }), ` — ${explain}`),
      el("dt", { text: "text" }), el("dd", { class: "mono", "data-text": "", text: b.text && b.text.length ? quote(b.text.join("")) : "(nothing)" }),
      el("dt", { text: "refcount" }), el("dd", { text: b.ref }),
      el("dt", { text: "slots" }), el("dd", { text: `${b.filled} of ${v.block_size} filled` }),
      el("dt", { text: "hash" }), el("dd", { class: "mono", text: b.hash ? b.hash + "…" : "none (not full, or not indexed)" }),
      ...(groups(v).length && b.state !== "free" ? [el("dt", { text: "group" }), el("dd", { text: groupName(groups(v)[b.group || 0]) + " (the block holds these layers' K and V)" })] : []),
      el("dt", { text: "owners" }), el("dd", { text: own.length ? own.map(([s, i]) => `seq ${s} (table[${i}], positions ${i * v.block_size}–${(i + 1) * v.block_size - 1})`).join(", ") : "none" }),
      v.requests ? el("dt", { text: "requests" }) : null,
      v.requests ? el("dd", { "data-requests": "", text: requestsOf(v, id) || "none of the requests listed" }) : null,
    ),
    el("div", { class: "slots" }, ...slots),
  );
}

// ---- events ----------------------------------------------------------------------------

function describe(e) {
  const t = e.index >= 0 ? ` (table[${e.index}])` : "";
  switch (e.kind) {
    case "alloc": return `seq ${e.seq} takes block ${e.block}${t} for new slots`;
    case "prefix_hit": return `seq ${e.seq} reuses cached block ${e.block}${t}: ${e.slots} tokens not recomputed (refcount ${e.ref})`;
    case "cow": return `copy-on-write: seq ${e.seq} copies shared block ${e.from} into block ${e.block}${t} (${e.slots} slots) before writing`;
    case "evict": return `block ${e.block} evicted (cached, least recently used) to make room for seq ${e.seq}`;
    case "indexed": return `block ${e.block}${t} of seq ${e.seq} is full: indexed by hash ${e.hash}… for prefix hits`;
    case "release": return `seq ${e.seq} releases block ${e.block}${t}: refcount ${e.ref}`;
    case "fork": return `seq ${e.seq} shares block ${e.block}${t}: refcount ${e.ref}`;
    case "flush": return `block ${e.block} dropped from the prefix cache (flush)`;
    case "reclaim": return `seq ${e.seq} slid past block ${e.block}${t}: released (refcount ${e.ref})`;
    case "admit": return `request ${e.request}${e.choice ? ` choice ${e.choice}` : ""} admitted as seq ${e.seq}: ${e.tokens} tokens, ${e.computed} from the cache`;
    case "fork_seq": return `request ${e.request} forks choice ${e.choice} as seq ${e.seq}, sharing ${e.blocks} blocks`;
    case "preempt": return `seq ${e.seq} (request ${e.request}) preempted: its ${e.blocks} blocks are freed, ${e.tokens} tokens wait to be recomputed`;
    case "reset": return `a new, empty pool of ${e.blocks} blocks of ${e.slots} slots`;
    case "submit": return `request ${e.request} submitted: ${e.tokens} prompt tokens${e.blocks > 1 ? `, ${e.blocks} continuations` : ""}`;
    case "finish": return `request ${e.request} finished (${e.reason}): ${e.computed} of its ${e.tokens} prompt tokens came from the cache`;
  }
  return `${e.kind} block ${e.block}`;
}

function count(kind, n, slots) {
  const k = state.tally[kind] || (state.tally[kind] = { n: 0, slots: 0 });
  k.n += n;
  k.slots += slots;
}

let logDirty = false;
function addEvent(e) {
  if (e.n <= state.lastN) return; // had it already (a reconnection's replay)
  state.lastN = e.n;
  state.seen++;
  if (e.kind === "reset" && state.view && state.view.mode === "step") state.tally = {}; // a new pool: count afresh
  count(e.kind, 1, e.slots);
  if (e.block >= 0 && e.n > state.replayedUpTo) state.flash.add(e.block);
  state.log.push(e);
  if (state.log.length > maxLog) state.log.splice(0, state.log.length - maxLog);
  if (!logDirty) { logDirty = true; requestAnimationFrame(renderLog); }
}

function renderLog() {
  logDirty = false;
  const items = [];
  for (let i = state.log.length - 1; i >= 0; i--) {
    const e = state.log[i];
    if (e.n === state.replayedUpTo && i < state.log.length - 1) items.push(el("li", { class: "replay-mark", text: "▲ live since the page opened · ▼ replayed from the server's history" }));
    items.push(el("li", { "data-kind": e.kind, "data-n": e.n, class: e.n <= state.replayedUpTo ? "replayed" : null }, el("span", { class: "n", text: e.n }), el("span", { class: "kind " + e.kind, text: e.kind }), el("span", { text: describe(e) })));
  }
  $("#log").replaceChildren(...items);
  $("#log-note").textContent = state.replayedUpTo > 0 ? `· events 1–${fmtInt(state.replayedUpTo)} happened before the page opened (replayed, faded)` : "";
  renderCounters();
  if (state.log.length) document.body.dataset.logEvents = String(state.log[state.log.length - 1].n);
}

function connect() {
  // since=0: first the events the server still holds (what happened before the page opened),
  // then the live ones; a reconnection goes on from its last event (Last-Event-ID).
  const es = new EventSource("/v1/cache/events?since=0");
  es.addEventListener("open", () => ($("#status").className = "status live"));
  es.addEventListener("error", () => ($("#status").className = "status lost"));
  es.addEventListener("hello", (m) => {
    const h = JSON.parse(m.data);
    // The hello counts every event before the stream's first one.
    state.tally = {};
    for (const [k, t] of Object.entries(h.tally || {})) state.tally[k] = { n: t.n, slots: t.slots };
    if (state.lastN > h.from) for (const e of state.log) if (e.n > h.from) count(e.kind, 1, e.slots); // kept, not resent
    if (state.lastN === 0) state.replayedUpTo = h.published;
    if (state.lastN < h.from) state.lastN = h.from;
    document.body.dataset.helloFrom = String(h.from);
    if (!logDirty) { logDirty = true; requestAnimationFrame(renderLog); }
  });
  es.addEventListener("cache", (m) => { addEvent(JSON.parse(m.data)); refresh(); });
  es.addEventListener("dropped", (m) => {
    const d = JSON.parse(m.data);
    state.dropped += d.dropped;
    for (const [k, t] of Object.entries(d.lost || {})) count(k, t.n, t.slots);
    refresh();
  });
  // Filling a slot inside a block is no event: while sequences are live, look again now and then.
  setInterval(() => { if (state.view && state.view.sequences.length > 0 && state.view.mode === "serve") refresh(); }, 500);
}

// ---- stepping mode ---------------------------------------------------------------------

async function step(cmd) {
  const res = await fetch("/v1/step", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(cmd) });
  const body = await res.json();
  if (!res.ok) {
    const msg = (body.error && body.error.message) || `error ${res.status}`;
    say(msg, true);
    throw new Error(msg);
  }
  if (body.seq >= 0) state.current = body.seq;
  if (body.decoded && body.decoded.length) { state.lastStep = body.decoded[body.decoded.length - 1]; state.lastNote = ""; renderLastStep(); }
  if (body.op === "reset") { state.lastStep = null; state.lastNote = ""; renderLastStep(); state.current = -1; }
  // A freed sequence takes its last step with it: the panel says so instead of describing it.
  if (body.op === "free" && state.lastStep && state.lastStep.seq === cmd.seq) {
    state.lastStep = null;
    state.lastNote = `seq ${cmd.seq} was freed; decode a live sequence to see a step here.`;
    renderLastStep();
  }
  if (body.op === "undo" && body.undone) {
    // The command taken back published the events numbered from events_from on: forget them.
    for (const e of state.log) if (e.n >= body.undone.events_from) count(e.kind, -1, -e.slots); // the counters follow the log
    state.log = state.log.filter((e) => e.n < body.undone.events_from);
    renderLog();
    state.lastStep = body.undone.last_step;
    state.lastNote = "No step of a live sequence to show: undo took it back, or its sequence was freed.";
    renderLastStep();
  }
  if (!walk.active) say(body.message);
  await refreshNow();
  return body;
}

// refreshNow fetches a snapshot at once (the page waits for it after a command).
async function refreshNow() {
  const res = await fetch("/v1/cache", { cache: "no-store" });
  state.view = await res.json();
  state.lastFetch = Date.now();
  render();
}

function say(text, error) {
  const n = $("#narration");
  n.textContent = text;
  n.classList.toggle("error", !!error);
}

function renderControls(v) {
  const sel = $("#seq-select");
  const live = v.sequences.map((s) => s.id);
  if (!live.includes(state.current)) state.current = live.length ? live[live.length - 1] : -1;
  sel.replaceChildren(...v.sequences.map((s) => el("option", { value: s.id, selected: s.id === state.current, text: `seq ${s.id} (${s.len} tokens)` })));
  for (const id of ["#decode1", "#decodeN", "#fork", "#free"]) $(id).disabled = state.current < 0;
  const st = v.step;
  if (!st) return;
  $("#undo").disabled = !st.undoable;
  const layer = $("#attn-layer"), head = $("#attn-head");
  if (layer.options.length !== v.model.layers + 1) {
    layer.replaceChildren(el("option", { value: -1, text: "off" }), ...Array.from({ length: v.model.layers }, (_, i) => el("option", { value: i, text: i })));
    head.replaceChildren(el("option", { value: -1, text: `mean of ${v.model.heads}` }), ...Array.from({ length: v.model.heads }, (_, i) => el("option", { value: i, text: i })));
  }
  layer.value = st.attention_layer;
  head.value = st.attention_head;
  head.disabled = st.attention_layer < 0;
  if (document.activeElement !== $("#temp")) $("#temp").value = st.sampling.temperature;
  if (document.activeElement !== $("#seed")) $("#seed").value = st.sampling.seed;
  if (document.activeElement !== $("#reset-blocks")) $("#reset-blocks").value = st.cache_blocks;
  if (document.activeElement !== $("#reset-bs")) $("#reset-bs").value = st.block_size;
  const cur = v.sequences.find((s) => s.id === state.current);
  if (cur && cur.text !== undefined) $("#last-step").dataset.text = cur.text;
  renderAttention();
}

function renderLastStep() {
  const d = state.lastStep;
  const box = $("#last-step"), top = $("#topk");
  if (!d) {
    box.replaceChildren(el("p", { class: "muted", text: state.lastNote || "Nothing decoded yet." }));
    top.replaceChildren();
    renderAttention();
    return;
  }
  let where = `K/V of pos ${d.pos} → block ${d.block}, slot ${d.slot}`;
  if (d.copied_from >= 0) where += `: copy-on-write (block ${d.copied_from} was shared; its ${d.copied_slots} filled slots were copied into block ${d.block} first)`;
  else if (d.new_block) where += ": a new block (the sequence's last block was full)";
  if (d.evicted.length) where += `; evicted cached block${d.evicted.length > 1 ? "s" : ""} ${d.evicted.join(", ")}`;
  const cur = state.view && state.view.sequences.find((s) => s.id === d.seq);
  box.replaceChildren(
    el("p", {}, el("span", { class: "tok", text: quote(d.text) }), ` id ${d.token} · p ${d.p.toFixed(4)} · rank ${d.rank} · ${d.how} · seq ${d.seq}`),
    el("p", { text: where }),
  );
  // (replaceChildren writes a null child as the text "null": add the line only when there is one.)
  if (cur && cur.text !== undefined) box.append(el("p", { class: "muted" }, "text: ", quote(cur.text)));
  const pmax = Math.max(...d.top.map((a) => a.p), 1e-9);
  top.replaceChildren(el("div", { class: "muted small", text: `the ${d.top.length} most likely tokens at this step (the model's own probabilities, before temperature and filters)` }),
    ...d.top.map((a) => el("div", { class: "alt" + (a.token === d.token ? " chosen" : ""), "data-token": a.token },
      el("span", { class: "mono", text: quote(a.text) }), el("span", { class: "b", style: `width:${(100 * a.p) / pmax}%` }), el("span", { class: "p", text: a.p.toFixed(4) }))));
  renderAttention();
}

// heat is a weight's colour: white (0) to deep red (the largest weight of the step).
function heat(w, max) {
  const x = max > 0 ? Math.min(1, w / max) : 0;
  const r = 255, g = Math.round(255 - 205 * x), b = Math.round(255 - 215 * x);
  return `rgb(${r},${g},${b})`;
}

function renderAttention() {
  const d = state.lastStep, v = state.view, box = $("#attn-map");
  if (!v || !d || !d.attention) {
    $("#attn-title").textContent = "";
    if (!d) box.replaceChildren();
    return;
  }
  const a = d.attention, B = v.block_size;
  const max = Math.max(...a.weights);
  $("#attn-title").textContent = `layer ${a.layer}, ${a.head < 0 ? `mean of ${v.model.heads} heads` : `head ${a.head}`}: pos ${d.pos} (${quote(d.text)}) attends over pos 0–${d.pos}; the darkest is ${max.toFixed(3)}`;
  const seq = v.sequences.find((s) => s.id === d.seq);
  const tokensAt = (i) => {
    const id = a.table[i];
    return id >= 0 ? v.blocks[id] : null;
  };
  box.replaceChildren(...a.table.map((id, i) => {
    const blk = tokensAt(i);
    const cells = [];
    for (let s = 0; s < B; s++) {
      const p = i * B + s;
      if (p > d.pos) { cells.push(el("div", { class: "attn-slot none", text: "·" })); continue; }
      const w = a.weights[p] || 0;
      const text = blk && s < blk.text.length ? quote(blk.text[s]) : "";
      cells.push(el("div", { class: "attn-slot" + (p === d.pos ? " self" : ""), style: `background:${heat(w, max)}`, "data-pos": p, "data-weight": w.toFixed(6),
        title: `pos ${p} ${text}: weight ${w.toFixed(4)}` }, el("span", { class: "w", text: w.toFixed(2) }), el("span", { text: text.length > 8 ? text.slice(0, 7) + "…" : text })));
    }
    return el("div", { class: "attn-block" + (id < 0 ? " hole" : ""), "data-block-id": id, "data-state": id < 0 ? "hole" : (blk ? blk.state : "free") },
      el("div", { class: "hdr" }, id < 0 ? "reclaimed" : el("b", { text: `block ${id}` }), ` · table[${i}] · pos ${i * B}–${i * B + B - 1}`),
      el("div", { class: "attn-slots" }, ...cells));
  }));
  if (seq === undefined) box.prepend(el("p", { class: "muted", text: `seq ${d.seq} has been freed; these were its blocks then.` }));
}

function wireControls() {
  const cur = () => state.current;
  const safe = (f) => async () => { try { await f(); } catch (e) { /* said */ } };
  $("#add").addEventListener("click", safe(() => step({ op: "add", text: $("#prompt").value })));
  $("#prompt").addEventListener("keydown", (e) => { if (e.key === "Enter") $("#add").click(); });
  $("#seq-select").addEventListener("change", (e) => { state.current = Number(e.target.value); render(); });
  $("#decode1").addEventListener("click", safe(() => step({ op: "decode", seq: cur(), n: 1 })));
  $("#decodeN").addEventListener("click", safe(() => step({ op: "decode", seq: cur(), n: Number($("#decode-n").value) || 1 })));
  $("#fork").addEventListener("click", safe(() => step({ op: "fork", seq: cur() })));
  $("#free").addEventListener("click", safe(() => step({ op: "free", seq: cur() })));
  $("#undo").addEventListener("click", safe(() => step({ op: "undo" })));
  $("#apply-sampling").addEventListener("click", safe(async () => {
    await step({ op: "temperature", temperature: Number($("#temp").value) });
    await step({ op: "seed", seed: Number($("#seed").value) });
  }));
  const attn = safe(() => step({ op: "attention", layer: Number($("#attn-layer").value), head: Number($("#attn-head").value) }));
  $("#attn-layer").addEventListener("change", attn);
  $("#attn-head").addEventListener("change", attn);
  $("#reset").addEventListener("click", safe(() => step({ op: "reset", blocks: Number($("#reset-blocks").value), block_size: Number($("#reset-bs").value) })));
  document.querySelectorAll("[data-walk]").forEach((b) => b.addEventListener("click", safe(() => startWalk(b.dataset.walk))));
  $("#tut-next").addEventListener("click", safe(nextWalkStep));
}

// ---- the tutorial's walk ---------------------------------------------------------------

// Each walk is a list of steps; a step runs commands and says what to look at. Greedy
// decoding makes every walk the same every time.
const walks = {
  prefix: [
    async () => {
      await setup(16, 4);
      const r = await step({ op: "add", text: "Once upon a time" });
      return `seq ${r.seq}'s prompt is ${r.added.tokens.length} tokens: blocks ${r.added.tokens.length > 4 ? "0 and 1" : "0"} hold them (4 slots per block). Next: decode until block 1 is full.`;
    },
    async () => {
      await step({ op: "decode", seq: state.current, n: 3 });
      return `8 tokens now fill blocks 0 and 1 exactly. A full block gets a chain hash and joins the prefix index (the “indexed” events). Next: a new prompt with the same first 8 tokens.`;
    },
    async () => {
      const r = await step({ op: "add", text: "Once upon a time, there was a little dog" });
      return `seq ${r.seq}: ${r.added.hit} of its ${r.added.tokens.length} prompt tokens came from the cache (prefix_hit): its table starts with the same blocks, now shared (refcount 2, amber). Only the rest was computed.`;
    },
  ],
  fork: [
    async () => {
      await setup(16, 4);
      await step({ op: "add", text: "Once upon a time" });
      await step({ op: "decode", seq: state.current, n: 4 });
      return "9 tokens: blocks 0 and 1 are full, block 2 holds one slot. Next: fork the sequence (parallel sampling, beam search).";
    },
    async () => {
      const parent = state.current;
      const r = await step({ op: "fork", seq: parent });
      walk.parent = parent;
      return `seq ${r.seq} shares all 3 blocks of seq ${parent}: every refcount is 2 (amber), nothing was copied. Next: seq ${r.seq} writes its next token into slot 1 of the shared block 2.`;
    },
    async () => {
      const r = await step({ op: "decode", seq: state.current, n: 1 });
      const d = r.decoded[0];
      return `copy-on-write: block ${d.copied_from} was shared, so its ${d.copied_slots} filled slot was first copied into block ${d.block}, then pos ${d.pos} was written there. Block ${d.copied_from} is seq ${walk.parent}'s alone again (refcount 1). Next: seq ${walk.parent} decodes too.`;
    },
    async () => {
      const r = await step({ op: "decode", seq: walk.parent, n: 1 });
      const d = r.decoded[0];
      return `seq ${d.seq} writes pos ${d.pos} into block ${d.block}, which nobody shares any more: no copy. The two siblings share blocks 0 and 1 for as long as they live.`;
    },
  ],
  evict: [
    async () => {
      await setup(6, 4);
      await step({ op: "add", text: "Once upon a time" });
      await step({ op: "decode", seq: state.current, n: 7 });
      walk.text = state.view.sequences.find((s) => s.id === state.current).text;
      return "A pool of only 6 blocks. 12 tokens fill blocks 0, 1 and 2, each full and indexed. Next: free the sequence.";
    },
    async () => {
      await step({ op: "free", seq: state.current });
      return "Its 3 blocks have no owner now, but they stay cached (blue): a later prompt with the same prefix would reuse them. 3 blocks are free. Next: a long new prompt that needs more than 3 blocks.";
    },
    async () => {
      const r = await step({ op: "add", text: "Tom had a big red ball and he liked to play with it" });
      const ev = r.events.filter((e) => e.kind === "evict").map((e) => e.block);
      return `${r.added.tokens.length} tokens need ${Math.ceil(r.added.tokens.length / 4)} blocks. The free ones went first, then the least recently used cached blocks were evicted: ${ev.join(", ") || "none"} (a prefix's last block is released first, so it goes first). Next: the first prompt again.`;
    },
    async () => {
      await step({ op: "free", seq: state.current });
      const r = await step({ op: "add", text: walk.text });
      return `The long sequence is freed, and the first sequence's 12 tokens come again: ${r.added.hit} of them from the cache. Block 0 survived the eviction; what was evicted must be computed again. That is the price of a small pool.`;
    },
  ],
};
const walk = { active: null, i: 0, parent: -1, text: "" };

async function setup(blocks, blockSize) {
  await step({ op: "reset", blocks, block_size: blockSize });
  await step({ op: "temperature", temperature: 0 });
}

async function startWalk(name) {
  walk.active = name;
  walk.i = 0;
  await nextWalkStep();
}

async function nextWalkStep() {
  const steps = walks[walk.active];
  if (!steps || walk.i >= steps.length) return;
  const n = walk.i++;
  try {
    const text = await steps[n]();
    say(`${n + 1}/${steps.length} · ${text}`);
  } catch (e) {
    walk.active = null;
    return;
  }
  const more = walk.i < steps.length;
  $("#tut-next").hidden = !more;
  if (!more) walk.active = null;
  document.body.dataset.walkStep = `${walk.active || "done"}:${walk.i}`;
}

// ---- price it --------------------------------------------------------------------------

const plotColors = { f32: "#555", f16: "#2f5fd0", bf16: "#7aa2ff", int8: "#3fa66b", "fp8-e4m3": "#e8a317", "fp8-e5m2": "#d0453a", q8_0: "#8e44ad", q5_1: "#16a3a3", q5_0: "#5cc7c7", q4_1: "#a0522d", q4_0: "#c98b5e", iq4_nl: "#b03a7a" };
let presets = [];
// The price-it panel opens on a real model in a real GPU's memory (Llama-3-8B in 80 GB); the
// plot's legend hides and shows lines.
const defaultPreset = "llama-3-8b";
const hiddenTypes = new Set();
let lastPlan = null;

async function initPlan() {
  presets = await (await fetch("/v1/plan/presets")).json();
  const sel = $("#plan-preset");
  sel.replaceChildren(...presets.map((p) => el("option", { value: p.name, text: p.name === "this" ? `this model (${p.repo})` : p.name })), el("option", { value: "", text: "custom shape" }));
  const form = $("#plan-form");
  const fill = () => {
    const p = presets.find((x) => x.name === sel.value);
    if (!p) return;
    for (const k of ["layers", "heads", "kv_heads", "head_dim"]) form.elements[k].value = p[k];
    form.elements.ctx.value = p.context || 4096;
  };
  if (presets.some((p) => p.name === defaultPreset)) sel.value = defaultPreset;
  sel.addEventListener("change", () => { fill(); plan(); });
  for (const k of ["layers", "heads", "kv_heads", "head_dim"]) form.elements[k].addEventListener("input", () => { sel.value = ""; });
  form.addEventListener("input", debounce(plan, 250));
  form.addEventListener("submit", (e) => { e.preventDefault(); plan(); });
  fill();
  await plan();
}

function debounce(f, ms) { let t; return () => { clearTimeout(t); t = setTimeout(f, ms); }; }

async function plan() {
  const form = $("#plan-form");
  const q = new URLSearchParams();
  const preset = form.elements.preset.value;
  if (preset) q.set("preset", preset);
  else for (const k of ["layers", "heads", "kv_heads", "head_dim"]) if (form.elements[k].value) q.set(k, form.elements[k].value);
  for (const k of ["cache_dtype", "ctx", "block_size", "mem", "weights", "weights_dtype"]) if (form.elements[k].value) q.set(k, form.elements[k].value);
  const res = await fetch("/v1/plan?" + q.toString());
  const body = await res.json();
  const out = $("#plan-out");
  if (!res.ok) {
    out.replaceChildren(el("p", { class: "note", text: body.error ? body.error.message : `error ${res.status}` }));
    $("#plan-plot").replaceChildren();
    return;
  }
  lastPlan = body;
  renderPlan(body);
  renderPlot(body);
}

function renderPlan(a) {
  const p = a.plan, m = p.model;
  const bpe = { f32: 4, f16: 2, bf16: 2, "fp8-e5m2": 1 }[p.cache_type_k];
  const tokenArith = bpe && p.cache_type_k === p.cache_type_v
    ? `2 · ${m.layers} layers · ${m.kv_heads} KV heads · ${m.head_dim} · ${bpe} B`
    : `${m.layers} layers × (${p.k_row_bytes} B K row + ${p.v_row_bytes} B V row)`;
  const row = (k, v, arith) => el("tr", {}, el("td", { text: k }), el("td", { text: v }), el("td", { class: "arith", text: arith || "" }));
  const head = (...cols) => el("tr", {}, ...cols.map((c) => el("th", { text: c })));
  const parts = [
    el("p", {}, el("span", { class: "headline", id: "plan-max", text: fmtInt(p.max_sequences) }), ` full ${fmtInt(p.context)}-token sequences fit (${m.name}, ${p.cache_type_k === p.cache_type_v ? p.cache_type_k : p.cache_type_k + "/" + p.cache_type_v} cache)`),
    el("table", {},
      row("per token", fmtBytes(p.bytes_per_token), `${tokenArith} = ${fmtInt(p.bytes_per_token)} B`),
      row("per sequence", fmtBytes(p.bytes_per_sequence), p.groups ? "the sum over the cache groups below: full layers hold every token, sliding ones their window" : `${fmtInt(p.context)} tokens × ${fmtInt(p.bytes_per_token)} B`),
      row("in blocks", fmtBytes(p.block_bytes_per_sequence), `${fmtInt(p.blocks_per_sequence)} blocks of ${p.block_size} tokens, ${fmtBytes(p.bytes_per_block)} each`),
      row("memory", fmtBytes(p.memory_bytes), p.memory_from),
      row("weights", fmtBytes(p.weights_bytes), p.weights_from),
      row("left for the cache", fmtBytes(p.left_bytes), `${fmtInt(p.cache_blocks)} blocks`),
    ),
  ];
  if (p.groups) {
    // Sliding layers beside full ones (Gemma 2 and 3, gpt-oss): the formula per group.
    parts.push(el("table", { id: "plan-groups" }, head("layers", "window", "groups", "per token", `tokens at ${fmtInt(p.context)}`, "with the window", "without"),
      ...p.groups.map((g) => el("tr", {}, el("td", { text: `${g.layers} ${g.window ? "sliding" : "full"}` }), el("td", { text: g.window || "—" }), el("td", { text: g.groups }),
        el("td", { text: fmtBytes(g.bytes_per_token) }), el("td", { text: fmtInt(g.tokens) }), el("td", { text: fmtBytes(g.bytes_per_sequence) }), el("td", { text: fmtBytes(g.bytes_without_window) })))));
  }
  if (p.without_gqa) {
    const g = p.without_gqa;
    parts.push(el("table", { id: "plan-gqa" }, head("", "KV heads", "per token", "per sequence", "sequences"),
      el("tr", {}, el("td", { text: "with GQA" }), el("td", { text: m.kv_heads }), el("td", { text: fmtBytes(p.bytes_per_token) }), el("td", { text: fmtBytes(p.block_bytes_per_sequence) }), el("td", { text: fmtInt(p.max_sequences) })),
      el("tr", {}, el("td", { text: "without GQA" }), el("td", { text: g.kv_heads }), el("td", { text: fmtBytes(g.bytes_per_token) }), el("td", { text: fmtBytes(g.block_bytes_per_sequence) }), el("td", { text: fmtInt(g.max_sequences) }))));
  }
  parts.push(el("table", { id: "plan-types" }, head("cache dtype", "per token", "per sequence", "sequences"),
    ...p.cache_types.map((v) => el("tr", { class: v.cache_type_k === p.cache_type_k && v.cache_type_v === p.cache_type_v ? "current" : "" },
      el("td", { text: v.cache_type_k }), el("td", { text: v.error ? "—" : fmtBytes(v.bytes_per_token) }), el("td", { text: v.error ? "—" : fmtBytes(v.block_bytes_per_sequence) }), el("td", { text: v.error ? "shape not storable" : fmtInt(v.max_sequences) })))));
  parts.push(el("table", {}, head("shared prefix", "shared blocks", "own blocks", "sequences"),
    ...p.shared_prefix.map((s) => el("tr", {}, el("td", { text: s.prefix_tokens ? `${fmtInt(s.prefix_tokens)} tokens` : "none" }), el("td", { text: s.shared_blocks }), el("td", { text: s.own_blocks }), el("td", { text: fmtInt(s.max_sequences) })))));
  for (const n of a.notes) parts.push(el("p", { class: "note", text: "note: " + n }));
  $("#plan-out").replaceChildren(...parts);
}

// renderPlot draws sequences-that-fit against context, both on log scales, one line per
// cache dtype, as an SVG.
function renderPlot(a) {
  const c = a.curve, W = 640, H = 300, L = 52, R = 16, T = 12, Bm = 34;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const add = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.append(e);
    return e;
  };
  let ymax = 1;
  for (const t of c.types) for (const n of t.max_sequences) ymax = Math.max(ymax, n);
  const ytop = Math.pow(10, Math.ceil(Math.log10(ymax + 1)));
  const x = (i) => L + ((W - L - R) * i) / (c.contexts.length - 1);
  const y = (n) => T + (H - T - Bm) * (1 - Math.log10(n + 1) / Math.log10(ytop + 1));
  for (let d = 1; d <= ytop; d *= 10) {
    add("line", { class: "gridline", x1: L, x2: W - R, y1: y(d), y2: y(d) });
    add("text", { x: L - 6, y: y(d) + 4, "text-anchor": "end" }, d >= 1000 ? `${d / 1000}k` : d);
  }
  add("text", { x: L - 6, y: y(0) + 4, "text-anchor": "end" }, "0");
  c.contexts.forEach((n, i) => {
    if (i % 2 === 0 || c.contexts.length < 10) add("text", { x: x(i), y: H - Bm + 16, "text-anchor": "middle" }, n >= 1024 ? `${n / 1024}k` : n);
  });
  add("line", { class: "axis", x1: L, x2: W - R, y1: y(0), y2: y(0) });
  add("line", { class: "axis", x1: L, x2: L, y1: T, y2: y(0) });
  add("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, "context (tokens)");
  const ci = c.contexts.findIndex((n) => n >= a.plan.context);
  if (ci >= 0) add("line", { x1: x(ci), x2: x(ci), y1: T, y2: y(0), stroke: "#d0453a", "stroke-dasharray": "4 3" });
  // The selected cache type is drawn last (on top), thick and opaque; the others thin and
  // faded; a type switched off in the legend is not drawn.
  const current = (t) => t.cache_type === a.plan.cache_type_k;
  const order = [...c.types].sort((p, q) => current(p) - current(q));
  for (const t of order) {
    if (t.error || !t.max_sequences.length || hiddenTypes.has(t.cache_type)) continue;
    const pts = t.max_sequences.map((n, i) => `${x(i).toFixed(1)},${y(n).toFixed(1)}`).join(" ");
    const color = plotColors[t.cache_type] || "#999";
    const cur = current(t);
    add("polyline", { points: pts, fill: "none", stroke: color, "stroke-width": cur ? 4 : 1.4, "stroke-opacity": cur ? 1 : 0.45,
      "data-cache-type": t.cache_type, ...(cur ? { class: "current" } : {}) });
  }
  const legend = el("div", { class: "plot-legend", role: "group", "aria-label": "cache types drawn" }, ...c.types.map((t) => {
    const on = !hiddenTypes.has(t.cache_type) && !t.error;
    return el("button", {
      type: "button", class: "lg" + (current(t) ? " current" : ""), "data-cache-type": t.cache_type, "aria-pressed": on ? "true" : "false", disabled: !!t.error,
      title: t.error ? "this shape cannot be stored in this type" : (on ? "hide this line" : "show this line"),
      onclick: () => { if (hiddenTypes.has(t.cache_type)) hiddenTypes.delete(t.cache_type); else hiddenTypes.add(t.cache_type); if (lastPlan) renderPlot(lastPlan); },
    }, el("i", { style: `background:${plotColors[t.cache_type] || "#999"}` }), t.cache_type);
  }));
  $("#plan-plot").replaceChildren(svg, legend);
}

// ---- start -----------------------------------------------------------------------------

function showTab(name) {
  for (const t of ["cache", "plan"]) {
    $(`#view-${t}`).hidden = t !== name;
    $(`#tab-${t}`).classList.toggle("active", t === name);
  }
  if (location.hash !== `#${name}`) history.replaceState(null, "", name === "cache" ? location.pathname : `#${name}`);
}

async function main() {
  document.querySelectorAll(".tab").forEach((b) => b.addEventListener("click", () => showTab(b.dataset.tab)));
  showTab(location.hash === "#plan" ? "plan" : "cache");
  wireControls();
  connect();
  await refreshNow();
  initPlan();
}
main();
