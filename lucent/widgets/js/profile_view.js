// ProfileView: header numbers, then one row per node with bars for time and
// memory. Clicking a column header sorts (the `sort_by` / `sort_reversed`
// traits, synced back to Python); the order rule matches
// ProfileView.sorted_rows() in profile_view.py. A row with inner rows (a
// loop's body) has a toggle: its path joins or leaves the `expanded` trait,
// and its inner rows follow it, indented and sorted among themselves.

const SORT_KEYS = {
  order: ["position", false],
  op: ["op", false],
  kind: ["kind", false],
  bytes: ["bytes", true],
  live_bytes: ["live_bytes", true],
  time: ["time_median", true],
  runs: ["runs", true],
};

// [sort key or null, heading, cell class, shown in the compact table]
const COLUMNS = [
  ["order", "#", "lucent-pv-num", true],
  ["op", "Op", "lucent-pv-op", true],
  [null, "Output shapes", "lucent-pv-mono", false],
  ["kind", "Kind", "", false],
  ["bytes", "Bytes", "lucent-pv-barcell", true],
  ["live_bytes", "Live bytes", "lucent-pv-barcell", false],
  ["time", "Median / call", "lucent-pv-barcell", true],
  ["time", "% time", "lucent-pv-num", true],
  ["runs", "Runs", "lucent-pv-num", false],
];

function formatBytes(n) {
  if (n === null || n === undefined) return "?";
  if (Math.abs(n) < 1024) return `${n} B`;
  let size = n;
  for (const unit of ["KiB", "MiB", "GiB"]) {
    size /= 1024;
    if (Math.abs(size) < 1024 || unit === "GiB") return `${size.toFixed(1)} ${unit}`;
  }
  return `${n} B`;
}

function formatTime(s) {
  if (s === null || s === undefined) return "?";
  if (s === 0) return "0";
  if (s < 1e-3) return `${(s * 1e6).toFixed(s < 1e-5 ? 2 : 1)} µs`;
  if (s < 1) return `${(s * 1e3).toFixed(2)} ms`;
  return `${s.toFixed(3)} s`;
}

function shapesText(shapes) {
  return (shapes || [])
    .map((s) => (s === null ? "-" : "(" + s.join(", ") + (s.length === 1 ? "," : "") + ")"))
    .join(" ");
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function sortRows(rows, sortBy, reversed) {
  const [key, largestFirst] = SORT_KEYS[sortBy] || SORT_KEYS.time;
  const out = rows.slice().sort((a, b) => {
    const x = a[key], y = b[key];
    let c = x < y ? -1 : x > y ? 1 : 0;
    if (largestFirst) c = -c;
    return c || a.position - b.position;
  });
  return reversed ? out.reverse() : out;
}

// The number, then its bar in a track of its own to the right: a bar never
// lies under the text it measures.
function barCell(text, value, max, cls) {
  const td = el("td", "lucent-pv-barcell");
  const box = el("div", "lucent-pv-barbox");
  const track = el("div", "lucent-pv-bar-track");
  const bar = el("div", `lucent-pv-bar ${cls}`);
  bar.style.width = max > 0 ? `${Math.max(0, (100 * value) / max).toFixed(1)}%` : "0";
  track.appendChild(bar);
  box.append(el("span", "lucent-pv-bar-label", text), track);
  td.appendChild(box);
  return td;
}

// The rows shown: the top-level rows sorted, each expanded row followed by its
// own rows, sorted the same way (as ProfileView.sorted_rows()).
function visibleRows(rows, sortBy, reversed, expanded) {
  const byParent = new Map();
  for (const r of rows) {
    const parent = r.parent ?? null;
    if (!byParent.has(parent)) byParent.set(parent, []);
    byParent.get(parent).push(r);
  }
  const walk = (parent) => {
    const out = [];
    for (const r of sortRows(byParent.get(parent) || [], sortBy, reversed)) {
      out.push(r);
      if (r.has_children && expanded.has(r.path)) out.push(...walk(r.path));
    }
    return out;
  };
  return walk(null);
}

function stat(label, value, title) {
  const d = el("div", "lucent-pv-stat");
  d.append(el("div", "lucent-pv-stat-label", label), el("div", "lucent-pv-stat-value", value));
  if (title) d.title = title;
  return d;
}

function render({ model, el: root }) {
  root.classList.add("lucent-pv");

  function update() {
    const s = model.get("summary") || {};
    const rows = model.get("rows") || [];
    const sortBy = model.get("sort_by");
    const reversed = model.get("sort_reversed");
    root.replaceChildren();

    const header = el("div", "lucent-pv-header");
    const titleLine = el("div", "lucent-pv-titleline");
    titleLine.appendChild(el("span", "lucent-pv-title", model.get("title")));
    if (model.get("live")) {
      const live = el("span", "lucent-pv-live", "live");
      live.title = "refreshes after the function's calls";
      titleLine.appendChild(live);
    }
    header.appendChild(titleLine);
    header.appendChild(el("div", "lucent-pv-how", s.how_measured || ""));
    root.appendChild(header);

    if (!s.calls) {
      const msg = el("div", "lucent-pv-empty",
        "No calls yet: call the function" + (model.get("live") ? "; this view refreshes itself." : ", then refresh() the view."));
      if (s.failed_calls) msg.textContent += ` (${s.failed_calls} failed call${s.failed_calls === 1 ? "" : "s"} not counted)`;
      root.appendChild(msg);
      return;
    }

    const stats = el("div", "lucent-pv-stats");
    stats.append(
      stat("Calls", String(s.calls) + (s.failed_calls ? ` (+${s.failed_calls} failed)` : "")),
      stat("Total time", formatTime(s.call_time)),
      stat("Per call", formatTime(s.call_time_median), `median of ${s.calls} call${s.calls === 1 ? "" : "s"} (mean ${formatTime(s.time_per_call)})`),
      stat("In nodes", `${s.node_time_percent.toFixed(0)}%`, "share of the call time spent in the nodes; the rest is the linker's own work"),
    );
    if (s.compile_time) stats.appendChild(stat("Compile time", formatTime(s.compile_time), "spent compiling during calls, excluded from the times"));
    if (s.peak !== null && s.peak !== undefined) {
      const peak = stat("Peak memory", formatBytes(s.peak), "largest memory in use by intermediates and outputs during the last call (graph inputs not counted)");
      peak.classList.add("lucent-pv-stat-peak");
      if (s.peak_position !== null && s.peak_position !== undefined) {
        const where = el("div", "lucent-pv-stat-sub", `at node ${s.peak_position}`);
        where.title = s.peak_node;
        peak.appendChild(where);
      }
      stats.append(peak, stat("Created / call", formatBytes(s.created), "bytes allocated by one call (views and in-place outputs cost 0)"));
    }
    if (s.calls < (s.few_calls || 5)) {
      const few = el("div", "lucent-pv-few",
        `${s.calls} call${s.calls === 1 ? "" : "s"}: times are noisy`);
      few.title = `medians from fewer than ${s.few_calls || 5} calls; call the function more for typical times`;
      stats.appendChild(few);
    }
    stats.appendChild(stat("Inputs", s.input_bytes === null || s.input_bytes === undefined ? "not recorded" : formatBytes(s.input_bytes), "size of the graph inputs in the last call"));
    root.appendChild(stats);

    const scroller = el("div", "lucent-pv-scroll");
    const table = el("table", "lucent-pv-table");
    const hrow = el("tr");
    const compact = model.get("compact");
    root.classList.toggle("lucent-pv-compact", Boolean(compact));
    const shown = COLUMNS.map((c) => !compact || c[3]);
    COLUMNS.forEach(([key, label, cls], ci) => {
      if (!shown[ci]) return;
      const th = el("th", cls);
      th.appendChild(el("span", "", label));
      if (key) {
        th.classList.add("lucent-pv-sortable");
        th.dataset.sort = key;
        th.title = `sort by ${label.toLowerCase()} (click again to reverse)`;
        if (key === sortBy && !(label === "% time")) {
          th.classList.add("lucent-pv-sorted");
          const down = SORT_KEYS[key][1] !== reversed;
          th.appendChild(el("span", "lucent-pv-arrow", down ? " ▼" : " ▲"));
        }
        th.addEventListener("click", () => {
          if (model.get("sort_by") === key) model.set("sort_reversed", !model.get("sort_reversed"));
          else {
            model.set("sort_by", key);
            model.set("sort_reversed", false);
          }
          model.save_changes();
        });
      }
      hrow.appendChild(th);
    });
    const thead = el("thead");
    thead.appendChild(hrow);
    const tbody = el("tbody");
    const maxTime = Math.max(0, ...rows.map((r) => r.time_median));
    const maxBytes = Math.max(0, ...rows.map((r) => r.bytes));
    const maxLive = Math.max(0, ...rows.map((r) => r.live_bytes));
    const expanded = new Set(model.get("expanded") || []);
    for (const r of visibleRows(rows, sortBy, reversed, expanded)) {
      const depth = r.depth || 0;
      const tr = el("tr", "lucent-pv-row");
      tr.dataset.path = r.path ?? String(r.position);
      tr.dataset.depth = String(depth);
      if (depth) {
        // An inner node: its time is summed over the steps of a call.
        tr.classList.add("lucent-pv-inner");
        tr.dataset.parent = r.parent;
        tr.style.setProperty("--lucent-pv-depth", String(depth));
      }
      if (r.node_id) {
        // Linked to a GraphView (ProfileView.beside_graph): a click selects the node there.
        tr.classList.add("lucent-pv-selectable");
        if (r.node_id === model.get("selected")) tr.classList.add("lucent-pv-selected");
        tr.addEventListener("click", () => {
          model.set("selected", model.get("selected") === r.node_id ? "" : r.node_id);
          model.save_changes();
        });
      }
      // An inner row's is_peak is its step's peak; only the function's peak row is marked.
      const isPeak = r.is_peak && !depth;
      if (isPeak) {
        tr.classList.add("lucent-pv-peak");
        tr.title = "peak memory is reached at this node";
      }
      const pos = el("td", "lucent-pv-num", depth ? r.path : String(r.position));
      if (isPeak) pos.appendChild(el("span", "lucent-pv-peak-tag", "peak"));
      const op = el("td", "lucent-pv-op");
      if (r.has_children) {
        const open = expanded.has(r.path);
        tr.classList.add("lucent-pv-has-inner");
        tr.classList.toggle("lucent-pv-expanded", open);
        const toggle = el("button", "lucent-pv-toggle", open ? "▾" : "▸");
        toggle.type = "button";
        toggle.title = open ? "hide the inner nodes" : "show the inner nodes (times summed over the steps)";
        toggle.setAttribute("aria-expanded", String(open));
        toggle.addEventListener("click", (event) => {
          event.stopPropagation(); // not a row selection
          const now = new Set(model.get("expanded") || []);
          if (now.has(r.path)) now.delete(r.path);
          else now.add(r.path);
          model.set("expanded", [...now]);
          model.save_changes();
        });
        op.appendChild(toggle);
      }
      op.appendChild(el("span", "lucent-pv-op-name", r.op));
      if (r.steps !== null && r.steps !== undefined) {
        const noun = r.inner_unit === "call" ? "run" : "step";
        const steps = el("span", "lucent-pv-steps", `${r.steps} ${noun}${r.steps === 1 ? "" : "s"}`);
        steps.title = `${r.steps} ${noun}s of the inner graph in the last call, ${r.steps_total} in all` +
          (r.inner_peak ? `; one ${noun} keeps ${formatBytes(r.inner_peak)} alive while the loop runs (in the live bytes)` : "");
        op.appendChild(steps);
      }
      op.title = r.node + (r.note ? `\n${r.note}` : "");
      if (r.note) op.appendChild(el("span", "lucent-pv-note", " *"));
      const kinds = [...new Set(r.output_kinds)];
      const kind = el("td", `lucent-pv-kind lucent-pv-kind-${kinds.length === 1 ? kinds[0].replace(/[^a-z]/g, "") : "mixed"}`, kinds.join(", "));
      kind.title = `output kinds: ${r.kind}`;
      const timeCell = barCell(formatTime(r.time_median), r.time_median, maxTime, "lucent-pv-bar-time");
      timeCell.title = `median of ${r.timed_calls} call${r.timed_calls === 1 ? "" : "s"}; mean ${formatTime(r.time_per_call)}`;
      // One cell per entry of COLUMNS, in its order; the compact table leaves some out.
      const cells = [
        pos,
        op,
        el("td", "lucent-pv-mono", shapesText(r.output_shapes)),
        kind,
        barCell(formatBytes(r.bytes), r.bytes, maxBytes, "lucent-pv-bar-bytes"),
        barCell(formatBytes(r.live_bytes), r.live_bytes, maxLive, "lucent-pv-bar-live"),
        timeCell,
        el("td", "lucent-pv-num", `${r.median_percent.toFixed(1)}%`),
        el("td", "lucent-pv-num", String(r.runs)),
      ];
      cells.forEach((cell, ci) => { if (shown[ci]) tr.appendChild(cell); });
      tbody.appendChild(tr);
    }
    table.append(thead, tbody);
    scroller.appendChild(table);
    root.appendChild(scroller);
  }

  update();
  const events = ["change:rows", "change:summary", "change:sort_by", "change:sort_reversed", "change:title", "change:live",
    "change:selected", "change:compact", "change:expanded"];
  for (const e of events) model.on(e, update);
  return () => {
    for (const e of events) model.off(e, update);
  };
}

export default { render };
