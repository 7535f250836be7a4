// GraphView: the Graphviz SVG of a graph, clickable, with a details panel.
//
// Everything shown comes from the model (svg, nodes, selected, color_by,
// title, status), so the view is rebuilt identically after a reconnect or
// from saved widget state. Graphviz names each node group by its id in
// the group's <title> (n3, v0, o1); clicks map back through it.

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
  tools.append(search, found, hideLabel, colorLabel, zoomOut, zoomFit, zoomOne, zoomIn);
  header.append(title, status, tools);

  const body = el("div", "lucent-gv-body");
  const pane = el("div", "lucent-gv-pane");
  const canvas = el("div", "lucent-gv-canvas");
  pane.appendChild(canvas);
  const details = el("div", "lucent-gv-details");
  body.append(pane, details);
  root.append(header, body);
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
      const id = t.textContent.trim();
      t.remove(); // the inner tooltip (op and types) is the one to show on hover
      g.dataset.id = id;
      groups.set(id, g);
      g.addEventListener("click", (ev) => {
        ev.stopPropagation();
        select(id);
      });
    }
    for (const g of svg.querySelectorAll("g.edge")) {
      const t = g.querySelector(":scope > title");
      if (!t) continue;
      const [a, b] = t.textContent.split("->").map((s) => s.trim());
      edges.push([a, b, g]);
    }
    applyZoom();
    highlight(false);
    if (search.value) runSearch();
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
    if (scroll && g) {
      // Bring the node into the pane's view without scrolling the page.
      const pr = pane.getBoundingClientRect();
      const gr = g.getBoundingClientRect();
      if (gr.top < pr.top || gr.bottom > pr.bottom)
        pane.scrollTop += gr.top - pr.top - pr.height / 2 + gr.height / 2;
      if (gr.left < pr.left || gr.right > pr.right)
        pane.scrollLeft += gr.left - pr.left - pr.width / 2 + gr.width / 2;
    }
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
        s.appendChild(row);
      }
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
          ` (${info.profile.time_percent.toFixed(1)}% of node time)${info.profile.noisy ? " · few calls: noisy" : ""}`],
        ["new bytes", info.profile.bytes_text],
        ["runs", String(info.profile.runs)],
      ];
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
  model.on("change:svg", onSvg);
  model.on("change:nodes", onNodes);
  model.on("change:selected", onSelected);
  for (const k of ["title", "status", "color_by", "has_profile", "hide_bookkeeping"]) model.on(`change:${k}`, onHeader);

  const resize = new ResizeObserver(() => applyZoom());
  resize.observe(pane);

  drawHeader();
  drawSvg();
  drawDetails();
  requestAnimationFrame(() => highlight(true));

  return () => {
    resize.disconnect();
    model.off("change:svg", onSvg);
    model.off("change:nodes", onNodes);
    model.off("change:selected", onSelected);
    for (const k of ["title", "status", "color_by", "has_profile", "hide_bookkeeping"]) model.off(`change:${k}`, onHeader);
  };
}

export default { render };
