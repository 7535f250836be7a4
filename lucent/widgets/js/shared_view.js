// SharedView: one row per shared variable, with its statistics, a small
// histogram and a sparkline of recent values. Rows are updated in place
// (keyed by `key`) so a row whose value changed can flash briefly.

const SVG = "http://www.w3.org/2000/svg";

function fmt(x) {
  if (x === null || x === undefined) return "–";
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) return x.toExponential(2);
  return String(Number(x.toPrecision(4)));
}

function shapeText(shape) {
  if (!shape) return "";
  if (shape.length === 0) return "scalar";
  return "(" + shape.join(", ") + (shape.length === 1 ? "," : "") + ")";
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// A line through the finite points; a null point breaks the line.
function sparkline(points, capacity) {
  const w = 120, h = 26, pad = 3;
  const s = svg("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, class: "lucent-sv-spark" });
  const finite = points.filter((p) => p !== null && p !== undefined);
  if (finite.length === 0) return s;
  let lo = Math.min(...finite), hi = Math.max(...finite);
  if (lo === hi) { lo -= 1; hi += 1; }
  const n = Math.max(points.length, 2);
  const x = (i) => pad + (i * (w - 2 * pad)) / (n - 1);
  const y = (v) => h - pad - ((v - lo) * (h - 2 * pad)) / (hi - lo);
  let segment = [];
  const lines = [];
  points.forEach((p, i) => {
    if (p === null || p === undefined) {
      if (segment.length) lines.push(segment);
      segment = [];
    } else segment.push(`${x(i).toFixed(1)},${y(p).toFixed(1)}`);
  });
  if (segment.length) lines.push(segment);
  for (const seg of lines) {
    if (seg.length === 1) {
      const [cx, cy] = seg[0].split(",");
      s.appendChild(svg("circle", { cx, cy, r: 1.5, class: "lucent-sv-spark-line-dot" }));
    } else s.appendChild(svg("polyline", { points: seg.join(" "), class: "lucent-sv-spark-line" }));
  }
  const last = points[points.length - 1];
  if (last !== null && last !== undefined) {
    s.appendChild(svg("circle", { cx: x(points.length - 1), cy: y(last), r: 2.5, class: "lucent-sv-spark-last" }));
  }
  const title = svg("title", {});
  title.textContent = `${points.length} of the last ${capacity} values: min ${fmt(Math.min(...finite))}, max ${fmt(Math.max(...finite))}`;
  s.appendChild(title);
  return s;
}

function histogram(hist) {
  const w = 64, h = 26;
  const s = svg("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, class: "lucent-sv-hist" });
  if (!hist) return s;
  const counts = hist.counts, top = Math.max(...counts, 1), bw = w / counts.length;
  counts.forEach((c, i) => {
    const bh = c > 0 ? Math.max(1, (c * (h - 2)) / top) : 0;
    s.appendChild(svg("rect", { x: i * bw + 0.5, y: h - bh, width: Math.max(bw - 1, 1), height: bh }));
  });
  const title = svg("title", {});
  const e = hist.edges;
  title.textContent = `histogram of the finite entries, ${counts.length} bins from ${fmt(e[0])} to ${fmt(e[e.length - 1])}`;
  s.appendChild(title);
  return s;
}

const COLUMNS = [
  ["name", "Name"], ["dtype", "dtype"], ["shape", "Shape"], ["min", "Min"], ["max", "Max"],
  ["mean", "Mean"], ["std", "Std"], ["norm", "L2 norm"], ["bad", "NaN / Inf"],
  ["hist", "Distribution"], ["spark", "Recent values"],
];

function fillRow(tr, row, capacity) {
  tr.replaceChildren();
  const name = el("td", "lucent-sv-name");
  name.appendChild(el("span", "lucent-sv-varname", row.name));
  if (row.updated) {
    const tag = el("span", "lucent-sv-tag", "updated");
    tag.title = "the function's updates change this variable";
    name.appendChild(tag);
  }
  name.title = `${row.name}: ${row.type}, ${row.changes} change${row.changes === 1 ? "" : "s"} seen`;
  tr.appendChild(name);
  if (row.kind !== "array") {
    tr.appendChild(el("td", "lucent-sv-mono", row.type));
    const td = el("td", "lucent-sv-text", row.text || "");
    td.colSpan = COLUMNS.length - 2;
    tr.appendChild(td);
    return;
  }
  tr.appendChild(el("td", "lucent-sv-mono", row.dtype));
  tr.appendChild(el("td", "lucent-sv-mono", shapeText(row.shape)));
  for (const key of ["min", "max", "mean", "std", "norm"]) {
    const td = el("td", "lucent-sv-num", fmt(row[key]));
    if (row[key] !== null) td.title = String(row[key]);
    tr.appendChild(td);
  }
  const bad = el("td", "lucent-sv-num");
  if (row.nan > 0 || row.inf > 0) {
    if (row.nan > 0) bad.appendChild(el("span", "lucent-sv-bad", `${row.nan} NaN`));
    if (row.inf > 0) bad.appendChild(el("span", "lucent-sv-bad", `${row.inf} Inf`));
    tr.classList.add("lucent-sv-has-bad");
  } else {
    bad.appendChild(el("span", "lucent-sv-zero", "0"));
    tr.classList.remove("lucent-sv-has-bad");
  }
  tr.appendChild(bad);
  const hist = el("td", "lucent-sv-chart");
  if (row.size > 1) hist.appendChild(histogram(row.histogram)); // a single value has no distribution
  tr.appendChild(hist);
  const spark = el("td", "lucent-sv-chart lucent-sv-sparkcell");
  spark.appendChild(sparkline(row.history || [], capacity));
  const nonFinite = row.latest === null && (row.nan > 0 || row.inf > 0);
  const latest = el("span", "lucent-sv-latest" + (nonFinite ? " lucent-sv-latest-bad" : ""), nonFinite ? "not finite" : fmt(row.latest));
  latest.title = row.history_of === "value" ? "latest value" : "latest L2 norm";
  spark.appendChild(latest);
  tr.appendChild(spark);
}

function render({ model, el: root }) {
  root.classList.add("lucent-sv");
  const header = el("div", "lucent-sv-header");
  const live = el("span", "lucent-sv-live");
  live.title = "updates by itself when a value changes";
  const title = el("span", "lucent-sv-title");
  const counts = el("span", "lucent-sv-counts");
  header.append(live, title, counts);
  const scroller = el("div", "lucent-sv-scroll");
  const table = el("table", "lucent-sv-table");
  const thead = el("thead");
  const hrow = el("tr");
  for (const [key, label] of COLUMNS) {
    const th = el("th", `lucent-sv-col-${key}`, label);
    if (key === "spark") th.title = "value of a scalar, L2 norm of an array; the dot is the latest";
    hrow.appendChild(th);
  }
  thead.appendChild(hrow);
  const tbody = el("tbody");
  table.append(thead, tbody);
  scroller.appendChild(table);
  const empty = el("div", "lucent-sv-empty", "No shared variables to show.");
  root.append(header, scroller, empty);

  const trs = new Map(); // key -> {tr, changes}
  let lastUpdates = null;

  function update() {
    const rows = model.get("rows") || [];
    const capacity = model.get("history");
    const updates = model.get("updates");
    title.textContent = model.get("title");
    counts.textContent = `${rows.length} variable${rows.length === 1 ? "" : "s"} · ${updates} update${updates === 1 ? "" : "s"}`;
    if (lastUpdates !== null && updates !== lastUpdates) {
      live.classList.remove("lucent-sv-pulse");
      void live.offsetWidth; // restart the animation
      live.classList.add("lucent-sv-pulse");
    }
    lastUpdates = updates;
    empty.style.display = rows.length ? "none" : "";
    scroller.style.display = rows.length ? "" : "none";
    const keys = new Set(rows.map((r) => r.key));
    for (const [key, item] of trs) {
      if (!keys.has(key)) { item.tr.remove(); trs.delete(key); }
    }
    rows.forEach((row, i) => {
      let item = trs.get(row.key);
      const fresh = item === undefined;
      if (fresh) {
        item = { tr: el("tr"), changes: row.changes };
        trs.set(row.key, item);
      }
      if (tbody.children[i] !== item.tr) tbody.insertBefore(item.tr, tbody.children[i] || null);
      fillRow(item.tr, row, capacity);
      if (!fresh && row.changes !== item.changes) {
        item.tr.classList.remove("lucent-sv-flash");
        void item.tr.offsetWidth;
        item.tr.classList.add("lucent-sv-flash");
      }
      item.changes = row.changes;
    });
  }

  update();
  model.on("change:rows", update);
  model.on("change:updates", update);
  model.on("change:title", update);
  return () => {
    model.off("change:rows", update);
    model.off("change:updates", update);
    model.off("change:title", update);
  };
}

export default { render };
