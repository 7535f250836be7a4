// GraphView: the Graphviz SVG of a graph, clickable, with a details panel.
//
// Everything shown comes from the model (svg, nodes, selected, color_by,
// title, status), so the view is rebuilt identically after a reconnect or
// from saved widget state. Graphviz names each node group by its id in
// the group's <title> (n3, v0, o1); clicks map back through it. An opened
// inner graph (a loop's body) is drawn with its own ids, which the view
// prefixes with `id_prefix` ("n7/": node n2 of the loop n7 is "n7/n2"), so
// `selected` and `nodes` name one node of the whole nested program. A box
// with the class lucent-opens opens its inner graph on a click of its
// "⊞ opens" line, a double click, or the panel's Open button.

const SVG_NS = "http://www.w3.org/2000/svg";
const MIN_AUTO_SCALE = 0.75; // below this, text gets too small: scroll instead

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

function fmt(x) {
  if (x === null || x === undefined) return "–";
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) return x.toExponential(3);
  return String(Number(x.toPrecision(5)));
}

function shapeText(shape) {
  if (!shape) return "";
  return "(" + shape.join(", ") + (shape.length === 1 ? "," : "") + ")";
}

const KIND_NAMES = {
  apply: "node", input: "input", shared: "shared variable", constant: "constant", output: "output",
};

// A histogram of a value summary as inline SVG bars, with its range below.
function histogram(h) {
  const w = 240, hgt = 54, pad = 2;
  const box = el("div", "lucent-gv-hist");
  const s = svgEl("svg", { width: w, height: hgt, viewBox: `0 0 ${w} ${hgt}` });
  const counts = h.counts;
  const top = Math.max(...counts, 1);
  const bw = (w - 2 * pad) / counts.length;
  counts.forEach((c, i) => {
    const bh = c === 0 ? 0 : Math.max(1.5, ((hgt - 2 * pad) * c) / top);
    const r = svgEl("rect", {
      x: (pad + i * bw + 0.5).toFixed(1), y: (hgt - pad - bh).toFixed(1),
      width: Math.max(bw - 1, 1).toFixed(1), height: bh.toFixed(1), class: "lucent-gv-bar",
    });
    const t = svgEl("title", {});
    t.textContent = `[${fmt(h.edges[i])}, ${fmt(h.edges[i + 1])}): ${c}`;
    r.appendChild(t);
    s.appendChild(r);
  });
  s.appendChild(svgEl("line", { x1: 0, x2: w, y1: hgt - pad + 0.5, y2: hgt - pad + 0.5, class: "lucent-gv-axis" }));
  box.appendChild(s);
  const range = el("div", "lucent-gv-hist-range");
  range.appendChild(el("span", "", fmt(h.edges[0])));
  range.appendChild(el("span", "", fmt(h.edges[h.edges.length - 1])));
  box.appendChild(range);
  return box;
}

// A sparkline of one statistic per call (nulls are gaps), with its last value.
function sparkline(values, w = 160, h = 30) {
  const box = el("span", "lucent-gv-spark");
  const s = svgEl("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}` });
  const finite = values.filter((v) => v !== null && Number.isFinite(v));
  box.dataset.points = String(finite.length);
  if (finite.length) {
    const lo = Math.min(...finite), hi = Math.max(...finite);
    const span = hi - lo || 1;
    const step = values.length > 1 ? (w - 4) / (values.length - 1) : 0;
    let d = "";
    let pen = false;
    values.forEach((v, i) => {
      if (v === null || !Number.isFinite(v)) { pen = false; return; }
      const x = 2 + i * step, y = h - 2 - ((v - lo) / span) * (h - 4);
      d += `${pen ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)} `;
      pen = true;
    });
    s.appendChild(svgEl("path", { d: d.trim(), class: "lucent-gv-spark-line" }));
    const t = svgEl("title", {});
    t.textContent = `${finite.length} calls · min ${fmt(lo)} · max ${fmt(hi)}`;
    s.appendChild(t);
  }
  box.appendChild(s);
  box.appendChild(el("span", "lucent-gv-spark-last", finite.length ? fmt(finite[finite.length - 1]) : "–"));
  return box;
}

function summaryBlock(summary) {
  const box = el("div", "lucent-gv-summary");
  if (!summary) return box;
  if (summary.kind !== "array") {
    box.appendChild(el("code", "", summary.text || ""));
    return box;
  }
  const table = el("table", "lucent-gv-stats");
  const rows = [
    ["shape", shapeText(summary.shape) + (summary.shape.length === 0 ? " (scalar)" : "")],
    ["dtype", summary.dtype],
  ];
  if (summary.min !== null) {
    rows.push(["min", fmt(summary.min)], ["max", fmt(summary.max)], ["mean", fmt(summary.mean)],
      ["std", fmt(summary.std)], ["norm", fmt(summary.norm)]);
  } else if (summary.size === 0) rows.push(["size", "empty"]);
  rows.push(["NaN", String(summary.nan)], ["Inf", String(summary.inf)]);
  for (const [k, v] of rows) {
    const tr = el("tr");
    tr.appendChild(el("th", "", k));
    const td = el("td", "", v);
    if ((k === "NaN" || k === "Inf") && v !== "0") td.className = "lucent-gv-bad";
    tr.appendChild(td);
    table.appendChild(tr);
  }
  box.appendChild(table);
  if (summary.histogram) box.appendChild(histogram(summary.histogram));
  return box;
}

function section(parent, title) {
  const s = el("div", "lucent-gv-section");
  s.appendChild(el("div", "lucent-gv-section-title", title));
  parent.appendChild(s);
  return s;
}

function render({ model, el: host }) {
  const root = el("div", "lucent-gv");
  const header = el("div", "lucent-gv-header");
  const title = el("span", "lucent-gv-title");
  const status = el("span", "lucent-gv-status");
  const tools = el("span", "lucent-gv-tools");
  const colorLabel = el("label", "lucent-gv-color");
  colorLabel.appendChild(el("span", "", "Colour by "));
  const colorSel = el("select");
  for (const [v, t] of [["", "nothing"], ["time", "time"], ["bytes", "bytes"]]) {
    const o = el("option", "", t);
    o.value = v;
    colorSel.appendChild(o);
  }
  colorLabel.appendChild(colorSel);
  const zoomOut = el("button", "lucent-gv-btn", "−");
  const zoomFit = el("button", "lucent-gv-btn", "Fit");
  const zoomOne = el("button", "lucent-gv-btn", "1:1");
  const zoomIn = el("button", "lucent-gv-btn", "+");
  zoomOut.title = "Zoom out"; zoomIn.title = "Zoom in";
  zoomFit.title = "Fit the width"; zoomOne.title = "Natural size";
  const search = el("input", "lucent-gv-search");
  search.type = "search";
  search.placeholder = "Find op, name, line…";
  search.title = "Find nodes by op, name, id or the line that created them; Enter selects the next";
  const found = el("span", "lucent-gv-found");
  const hideLabel = el("label", "lucent-gv-hide");
  const hideBox = el("input");
  hideBox.type = "checkbox";
  hideLabel.append(hideBox, el("span", "", " hide shape/fill"));
  hideLabel.title = "Leave out the nodes that only handle shapes or broadcast fills";
  const groupLabel = el("label", "lucent-gv-color");
  groupLabel.appendChild(el("span", "", "Group by "));
  const groupSel = el("select");
  for (const [v, t] of [["", "nothing"], ["name", "name"], ["line", "line"]]) {
    const o = el("option", "", t);
    o.value = v;
    groupSel.appendChild(o);
  }
  groupLabel.appendChild(groupSel);
  groupLabel.title = "Cluster the nodes by the user's variable names or by the line that created them";
  const collapseLabel = el("label", "lucent-gv-hide lucent-gv-collapse");
  const collapseBox = el("input");
  collapseBox.type = "checkbox";
  collapseLabel.append(collapseBox, el("span", "", " collapse backward"));
  collapseLabel.title = "Draw the nodes built by grad as one box";
  tools.append(search, found, hideLabel, collapseLabel, groupLabel, colorLabel, zoomOut, zoomFit, zoomOne, zoomIn);
  const fitNote = el("div", "lucent-gv-fitnote");
  const followStrip = el("div", "lucent-gv-follows");
  const crumbsBar = el("div", "lucent-gv-crumbs");
  header.append(title, status, tools);

  const body = el("div", "lucent-gv-body");
  const pane = el("div", "lucent-gv-pane");
  const canvas = el("div", "lucent-gv-canvas");
  pane.appendChild(canvas);
  const details = el("div", "lucent-gv-details");
  body.append(pane, details);
  root.append(header, crumbsBar, fitNote, followStrip, body);
  host.appendChild(root);

  // zoom: "auto" (fit the width, but not below MIN_AUTO_SCALE), "fit", or a number
  let zoom = "auto";
  let natural = null; // [width, height] in CSS px
  let groups = new Map(); // id -> <g class="node">
  let edges = []; // [from, to, <g class="edge">]

  function applyZoom() {
    const svg = canvas.querySelector("svg");
    if (!svg || !natural) return;
    const avail = Math.max(pane.clientWidth - 12, 50);
    let scale;
    if (zoom === "auto") scale = Math.min(1, Math.max(MIN_AUTO_SCALE, avail / natural[0]));
    else if (zoom === "fit") scale = Math.min(1.5, avail / natural[0]);
    else scale = zoom;
    svg.style.width = `${(natural[0] * scale).toFixed(0)}px`;
    svg.style.height = `${(natural[1] * scale).toFixed(0)}px`;
    root.dataset.scale = scale.toFixed(3);
  }

  function currentScale() {
    return parseFloat(root.dataset.scale || "1");
  }

  function prefixed(local) {
    return local.startsWith("part_") ? local : (model.get("id_prefix") || "") + local;
  }

  function openNode(id) {
    const prefix = model.get("id_prefix") || "";
    if (!id.startsWith(prefix)) return;
    model.set("inner_path", [...(model.get("inner_path") || []), id.slice(prefix.length)]);
    model.save_changes();
  }

  function goToDepth(depth) {
    model.set("inner_path", (model.get("inner_path") || []).slice(0, depth));
    model.save_changes();
  }

  function drawCrumbs() {
    crumbsBar.innerHTML = "";
    const path = model.get("inner_path") || [];
    const crumbs = model.get("crumbs") || [];
    crumbsBar.style.display = path.length ? "" : "none";
    if (!path.length) return;
    crumbs.forEach((text, depth) => {
      if (depth) crumbsBar.appendChild(el("span", "lucent-gv-crumb-sep", "▸"));
      const last = depth === crumbs.length - 1;
      const b = el("button", "lucent-gv-crumb" + (last ? " lucent-gv-crumb-current" : ""), text);
      b.dataset.depth = String(depth);
      b.title = last ? "The graph shown" : "Go back to this graph";
      if (!last) b.addEventListener("click", () => goToDepth(depth));
      crumbsBar.appendChild(b);
    });
    const note = model.get("inner_note");
    if (note) crumbsBar.appendChild(el("span", "lucent-gv-inner-note", note));
  }

  function drawSvg() {
    canvas.innerHTML = model.get("svg") || "";
    groups = new Map();
    edges = [];
    const svg = canvas.querySelector("svg");
    if (!svg) {
      natural = null;
      return;
    }
    const w = parseFloat(svg.getAttribute("width")) || 400;
    const h = parseFloat(svg.getAttribute("height")) || 300;
    natural = [(w * 4) / 3, (h * 4) / 3]; // Graphviz sizes are in points
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.classList.add("lucent-gv-svg");
    for (const g of svg.querySelectorAll("g.node")) {
      const t = g.querySelector(":scope > title");
      if (!t) continue;
      // A variable drawn in several parts has copies named "<id>__<part>": they all stand for <id>.
      const id = prefixed(t.textContent.trim().split("__")[0]);
      t.remove(); // the inner tooltip (op and types) is the one to show on hover
      if (groups.has(id)) {
        const extra = groups.get(id);
        (extra.copies = extra.copies || []).push(g);
        g.dataset.id = id;
        g.addEventListener("click", (ev) => { ev.stopPropagation(); select(id); });
        continue;
      }
      g.dataset.id = id;
      groups.set(id, g);
      g.addEventListener("click", (ev) => {
        ev.stopPropagation();
        const line = ev.target.closest && ev.target.closest("text");
        if (id.startsWith("part_")) expandParts();
        else if (g.classList.contains("lucent-opens") && line && line.textContent.trim().startsWith("⊞")) openNode(id);
        else select(id);
      });
      if (g.classList.contains("lucent-opens"))
        g.addEventListener("dblclick", (ev) => { ev.stopPropagation(); openNode(id); });
    }
    for (const g of svg.querySelectorAll("g.edge")) {
      const t = g.querySelector(":scope > title");
      if (!t) continue;
      const [a, b] = t.textContent.split("->").map((s) => prefixed(s.trim().split("__")[0]));
      edges.push([a, b, g]);
    }
    applyZoom();
    highlight(false);
    if (search.value) runSearch();
    // A drawing wider than the pane opens on the selected node, else on the first input, not on empty corner.
    const focus = groups.get(model.get("selected")) || groups.get(prefixed("v0"));
    if (focus) requestAnimationFrame(() => bringIntoView(focus, true));
  }

  function bringIntoView(g, always) {
    // Bring a node into the pane's view without scrolling the page.
    const pr = pane.getBoundingClientRect();
    const gr = g.getBoundingClientRect();
    if (always || gr.top < pr.top || gr.bottom > pr.bottom)
      pane.scrollTop += gr.top - pr.top - (always ? 20 : pr.height / 2 - gr.height / 2);
    if (always || gr.left < pr.left || gr.right > pr.right)
      pane.scrollLeft += gr.left - pr.left - pr.width / 2 + gr.width / 2;
  }

  // Search: the same fields as GraphView.find in Python.
  let matches = [];
  let matchIndex = -1;
  function searchText(info) {
    const names = (info.outputs || []).map((o) => o.name || "");
    return [info.id, info.label || "", info.op || "", info.created_at || "", ...names].join(" ").toLowerCase();
  }
  function runSearch() {
    const needle = search.value.trim().toLowerCase();
    const nodes = model.get("nodes") || {};
    matches = needle ? Object.values(nodes).filter((n) => searchText(n).includes(needle)).map((n) => n.id) : [];
    matchIndex = -1;
    for (const [id, g] of groups) g.classList.toggle("lucent-gv-match", matches.includes(id));
    found.textContent = needle ? `${matches.length} found` : "";
  }
  search.addEventListener("input", runSearch);
  search.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" || !matches.length) return;
    matchIndex = (matchIndex + 1) % matches.length;
    const id = matches[matchIndex];
    if (model.get("selected") !== id) select(id);
    found.textContent = `${matchIndex + 1} of ${matches.length}`;
  });
  hideBox.addEventListener("change", () => {
    model.set("hide_bookkeeping", hideBox.checked);
    model.save_changes();
  });

  function expandParts() {
    model.set("expand_requests", (model.get("expand_requests") || 0) + 1);
    model.save_changes();
  }
  collapseBox.addEventListener("change", () => {
    if (!collapseBox.checked && model.get("auto_collapsed") && !model.get("collapse_backward")) expandParts();
    else {
      model.set("collapse_backward", collapseBox.checked);
      model.save_changes();
    }
  });
  groupSel.addEventListener("change", () => {
    model.set("group_by", groupSel.value);
    model.save_changes();
  });

  // Fit: tell Python the width available, so it folds the drawing to it.
  let sentWidth = 0;
  let fitTimer = null;
  function sendWidth() {
    if (zoom !== "auto") return;
    const w = Math.round(pane.clientWidth - 12);
    if (w < 200 || Math.abs(w - sentWidth) < 40) return;
    clearTimeout(fitTimer);
    fitTimer = setTimeout(() => {
      sentWidth = w;
      model.set("fit_width", w);
      model.save_changes();
    }, 250);
  }

  function toggleFollow(id, on) {
    const ids = (model.get("follow_ids") || []).filter((x) => x !== id);
    if (on) ids.push(id);
    model.set("follow_ids", ids);
    model.save_changes();
  }

  function drawFollows() {
    followStrip.innerHTML = "";
    const follows = model.get("follows") || {};
    for (const [id, h] of Object.entries(follows)) {
      const item = el("button", "lucent-gv-follow");
      item.dataset.id = id;
      item.title = `${h.label} [${id}]: norm per call; click to select`;
      item.appendChild(el("span", "lucent-gv-follow-label", id.startsWith("o") ? h.label || id : `${h.label}`));
      item.appendChild(sparkline(h.norm || []));
      item.addEventListener("click", () => { if (!id.startsWith("part_")) select(id); });
      followStrip.appendChild(item);
    }
    followStrip.style.display = Object.keys(follows).length ? "" : "none";
  }

  function select(id) {
    model.set("selected", model.get("selected") === id ? "" : id);
    model.save_changes();
  }

  function highlight(scroll) {
    const sel = model.get("selected");
    const nodes = model.get("nodes") || {};
    for (const [id, g] of groups) {
      g.classList.toggle("lucent-gv-sel", id === sel);
      const info = nodes[id];
      g.classList.toggle("lucent-gv-bad", !!(info && info.problems && info.problems.length));
    }
    for (const [a, b, g] of edges) {
      g.classList.toggle("lucent-gv-edge-in", b === sel);
      g.classList.toggle("lucent-gv-edge-out", a === sel);
    }
    const g = groups.get(sel);
    if (scroll && g) bringIntoView(g, false);
  }

  function drawDetails() {
    details.innerHTML = "";
    const nodes = model.get("nodes") || {};
    const sel = model.get("selected");
    const info = sel ? nodes[sel] : null;
    if (!info) {
      const hint = el("div", "lucent-gv-hint");
      hint.appendChild(el("div", "lucent-gv-hint-main", "Click a node to see its details."));
      const flagged = Object.values(nodes).filter((n) => n.problems && n.problems.length);
      if (flagged.length) {
        hint.appendChild(el("div", "lucent-gv-hint-bad", `Nodes with problems (red): ${flagged.length}`));
        const list = el("div", "lucent-gv-chips");
        for (const n of flagged) {
          const chip = el("button", "lucent-gv-chip lucent-gv-chip-bad", `${n.id} ${n.label}`);
          chip.addEventListener("click", () => select(n.id));
          list.appendChild(chip);
        }
        hint.appendChild(list);
      }
      details.appendChild(hint);
      return;
    }
    const head = el("div", "lucent-gv-dhead");
    head.appendChild(el("span", `lucent-gv-kind lucent-gv-kind-${info.kind}`, KIND_NAMES[info.kind] || info.kind));
    head.appendChild(el("span", "lucent-gv-dlabel", info.label));
    head.appendChild(el("span", "lucent-gv-did", info.id));
    if (info.part) head.appendChild(el("span", `lucent-gv-part lucent-gv-part-${info.part}`, info.part));
    const close = el("button", "lucent-gv-close", "×");
    close.title = "Clear the selection";
    close.addEventListener("click", () => select(info.id));
    head.appendChild(close);
    details.appendChild(head);

    if (info.problems && info.problems.length) {
      const s = section(details, "Problems (DebugMode)");
      for (const p of info.problems) {
        const row = el("div", "lucent-gv-problem");
        row.appendChild(el("b", "", p.kind));
        row.appendChild(document.createTextNode(": " + p.summary));
        if (p.path) row.appendChild(el("span", "lucent-gv-muted", ` (${p.path} path)`));
        if (p.step !== undefined && p.step !== null) row.appendChild(el("span", "lucent-gv-step", ` at step t = ${p.step}`));
        s.appendChild(row);
      }
    }

    if (info.opens) {
      const o = section(details, "Inner graph");
      const b = el("button", "lucent-gv-open", `⊞ Open ${info.opens}`);
      b.title = "Show the inner graph, with the values of its last step";
      b.addEventListener("click", () => openNode(info.id));
      o.appendChild(b);
    }
    if (info.branch) {
      const o = section(details, "Branch on the last call");
      o.appendChild(el("div", "lucent-gv-branch", `The ${info.branch.taken} branch ran.`));
      if (info.branch.not_run.length) {
        o.appendChild(el("div", "lucent-gv-muted", "Not run (the other branch):"));
        const list = el("div", "lucent-gv-chips");
        for (const id of info.branch.not_run) {
          const chip = el("button", "lucent-gv-chip", id);
          chip.addEventListener("click", () => select(id));
          list.appendChild(chip);
        }
        o.appendChild(list);
      }
    }
    if (info.not_run) details.appendChild(el("div", "lucent-gv-muted lucent-gv-not-run",
      "Not run on the last call: the ifelse took the other branch."));

    if (info.kind !== "constant" && model.get("can_follow") && !(model.get("inner_path") || []).length) {
      const follows = model.get("follows") || {};
      const followed = Object.prototype.hasOwnProperty.call(follows, info.id);
      const f = section(details, "Across calls");
      const lab = el("label", "lucent-gv-follow-toggle");
      const box = el("input");
      box.type = "checkbox";
      box.checked = followed;
      box.addEventListener("change", () => toggleFollow(info.id, box.checked));
      lab.append(box, el("span", "", " follow: norm, mean and max at every call"));
      f.appendChild(lab);
      if (followed) {
        const h = follows[info.id];
        const t = el("table", "lucent-gv-stats lucent-gv-spark-table");
        for (const k of ["norm", "mean", "max"]) {
          const tr = el("tr");
          const td = el("td");
          td.appendChild(sparkline(h[k] || []));
          tr.append(el("th", "", k), td);
          t.appendChild(tr);
        }
        f.appendChild(t);
        f.appendChild(el("div", "lucent-gv-muted", `${(h.calls || []).length} calls recorded`));
      }
    }

    if (info.composite) {
      const c = section(details, "Fused expression");
      c.appendChild(el("code", "lucent-gv-formula", info.composite.formula));
      c.appendChild(el("pre", "lucent-gv-dprint lucent-gv-tree", info.composite.tree));
    }

    const outs = info.outputs || [];
    const s = section(details, outs.length > 1 ? "Outputs" : info.kind === "apply" ? "Output" : "Value");
    let anyValue = false;
    outs.forEach((o, k) => {
      const line = el("div", "lucent-gv-out");
      if (outs.length > 1) line.appendChild(el("span", "lucent-gv-muted", `${k}: `));
      if (o.name) line.appendChild(el("span", "lucent-gv-name", `'${o.name}' `));
      line.appendChild(el("code", "", o.type_text));
      line.title = o.type;
      s.appendChild(line);
      if (o.summary) {
        anyValue = true;
        s.appendChild(summaryBlock(o.summary));
      }
    });
    if (!anyValue && info.kind !== "constant")
      s.appendChild(el("div", "lucent-gv-muted lucent-gv-novalue", model.get("value_hint")));

    if (info.profile) {
      const p = section(details, "Profile");
      const t = el("table", "lucent-gv-stats");
      const rows = [
        ["time / call", `${info.profile.time_text} median of ${info.profile.timed_calls} call${info.profile.timed_calls === 1 ? "" : "s"}` +
          ` (${info.profile.time_percent.toFixed(1)}% of ${info.profile.percent_of || "node time"})` +
          `${info.profile.noisy ? " · few calls: noisy" : ""}`],
        ["new bytes", info.profile.bytes_text],
        ["runs", info.profile.runs_text || String(info.profile.runs)],
      ];
      if (info.profile.measured) rows.push(["measured", info.profile.measured]);
      if (info.profile.note) rows.push(["note", info.profile.note]);
      for (const [k, v] of rows) {
        const tr = el("tr");
        tr.append(el("th", "", k), el("td", "", v));
        t.appendChild(tr);
      }
      p.appendChild(t);
    }

    if (info.inputs && info.inputs.length) {
      const p = section(details, info.kind === "output" ? "Computed by" : "Inputs");
      for (const inp of info.inputs) {
        const b = el("button", "lucent-gv-link", inp.text);
        b.title = `Select ${inp.id}`;
        b.addEventListener("click", () => select(inp.id));
        p.appendChild(b);
      }
    }
    if (info.aliasing) section(details, "In place / views").appendChild(el("div", "", info.aliasing));
    if (info.created_at) section(details, "Created at").appendChild(el("code", "lucent-gv-trace", info.created_at));
    const d = section(details, "dprint");
    d.appendChild(el("pre", "lucent-gv-dprint", info.dprint || ""));
  }

  function drawHeader() {
    title.textContent = model.get("title") || "Graph";
    status.textContent = model.get("status") || "";
    colorSel.value = model.get("color_by") || "";
    colorLabel.style.display = model.get("has_profile") ? "" : "none";
    hideBox.checked = !!model.get("hide_bookkeeping");
    collapseLabel.style.display = model.get("has_parts") ? "" : "none";
    collapseBox.checked = !!(model.get("collapse_backward") || model.get("auto_collapsed"));
    groupSel.value = model.get("group_by") || "";
    fitNote.textContent = model.get("fit_note") || "";
    fitNote.style.display = model.get("fit_note") ? "" : "none";
  }

  colorSel.addEventListener("change", () => {
    model.set("color_by", colorSel.value);
    model.save_changes();
  });
  zoomIn.addEventListener("click", () => { zoom = Math.min(3, currentScale() * 1.25); applyZoom(); });
  zoomOut.addEventListener("click", () => { zoom = Math.max(0.1, currentScale() / 1.25); applyZoom(); });
  zoomFit.addEventListener("click", () => { zoom = "fit"; applyZoom(); });
  zoomOne.addEventListener("click", () => { zoom = 1; applyZoom(); });

  const onSvg = () => drawSvg();
  const onNodes = () => { highlight(false); drawDetails(); };
  const onSelected = () => { highlight(true); drawDetails(); };
  const onHeader = () => drawHeader();
  const onCrumbs = () => drawCrumbs();
  const crumbKeys = ["inner_path", "crumbs", "inner_note"];
  for (const k of crumbKeys) model.on(`change:${k}`, onCrumbs);
  model.on("change:svg", onSvg);
  model.on("change:nodes", onNodes);
  model.on("change:selected", onSelected);
  const headerKeys = ["title", "status", "color_by", "has_profile", "hide_bookkeeping", "has_parts",
    "collapse_backward", "group_by", "fit_note", "auto_collapsed"];
  for (const k of headerKeys) model.on(`change:${k}`, onHeader);
  const onFollows = () => { drawFollows(); drawDetails(); };
  model.on("change:follows", onFollows);

  const resize = new ResizeObserver(() => { applyZoom(); sendWidth(); });
  resize.observe(pane);

  drawHeader();
  drawCrumbs();
  drawSvg();
  drawDetails();
  drawFollows();
  requestAnimationFrame(() => { highlight(true); sendWidth(); });

  return () => {
    resize.disconnect();
    model.off("change:svg", onSvg);
    model.off("change:nodes", onNodes);
    model.off("change:selected", onSelected);
    for (const k of headerKeys) model.off(`change:${k}`, onHeader);
    for (const k of crumbKeys) model.off(`change:${k}`, onCrumbs);
    model.off("change:follows", onFollows);
    clearTimeout(fitTimer);
  };
}

export default { render };
