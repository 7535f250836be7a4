// ProblemList: the problems of a DebugMode report. Clicking a problem sets
// `selected` to its node id; DebugReportView links that trait to the
// GraphView's with jslink, so the link works in the browser alone. A problem
// inside a loop also sets `inner_selected` (the inner node, "n7/n2"), linked
// to the loop view's `selected`.

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

function render({ model, el: host }) {
  const root = el("div", "lucent-dr");
  host.appendChild(root);

  function select(id) {
    if (!id) return;
    model.set("selected", id);
    model.save_changes();
  }

  function selectInner(p) {
    model.set("selected", p.node_id);
    model.set("inner_selected", p.inner_id);
    model.save_changes();
  }

  function draw() {
    root.innerHTML = "";
    const ok = model.get("ok");
    const head = el("div", "lucent-dr-head " + (ok ? "lucent-dr-ok" : "lucent-dr-bad"));
    head.appendChild(el("span", "lucent-dr-icon", ok ? "✓" : "!"));
    head.appendChild(el("span", "", model.get("headline")));
    root.appendChild(head);

    const problems = model.get("problems") || [];
    const sel = model.get("selected");
    if (problems.length) {
      const list = el("ol", "lucent-dr-list");
      for (const p of problems) {
        const item = el("li", "lucent-dr-item");
        item.dataset.nodeId = p.node_id || "";
        if (p.node_id && p.node_id === sel) item.classList.add("lucent-dr-sel");
        const row = el("div", "lucent-dr-row");
        row.appendChild(el("span", "lucent-dr-num", String(p.index)));
        row.appendChild(el("span", "lucent-dr-kind", p.kind));
        row.appendChild(el("span", "lucent-dr-summary", p.summary));
        if (p.node_id) {
          const link = el("button", "lucent-dr-node", `${p.node_id} · ${p.node_label}`);
          link.title = "Show this node in the graph";
          link.addEventListener("click", (ev) => { ev.stopPropagation(); select(p.node_id); });
          row.appendChild(link);
          row.classList.add("lucent-dr-linked");
          row.addEventListener("click", () => select(p.node_id));
        } else {
          row.appendChild(el("span", "lucent-dr-nolink", "not on a drawn node"));
        }
        if (p.inner_id) {
          // Inside a loop: the step and the inner node, shown opened in the loop view.
          const inner = el("button", "lucent-dr-inner", `${p.loop} ▸ step ${p.step_text} ▸ ${p.inner_id}`);
          inner.title = "Show this node inside the loop, with the values of this step";
          inner.addEventListener("click", (ev) => { ev.stopPropagation(); selectInner(p); });
          row.appendChild(inner);
          row.addEventListener("click", () => selectInner(p));
        }
        item.appendChild(row);
        if (p.sections && p.sections.length) {
          const det = el("details", "lucent-dr-details");
          const sum = el("summary", "", "Details" + (p.path ? ` (${p.path} path)` : ""));
          det.appendChild(sum);
          const table = el("table", "lucent-dr-sections");
          for (const [label, text] of p.sections) {
            const tr = el("tr");
            tr.appendChild(el("th", "", label));
            const td = el("td");
            td.appendChild(el("pre", "", text));
            tr.appendChild(td);
            table.appendChild(tr);
          }
          det.appendChild(table);
          item.appendChild(det);
        }
        list.appendChild(item);
      }
      root.appendChild(list);
    }
    const coverage = model.get("coverage") || [];
    const refOnly = model.get("reference_only") || [];
    if (coverage.length || refOnly.length) {
      const cov = el("div", "lucent-dr-coverage");
      for (const line of coverage) cov.appendChild(el("div", "", line));
      if (refOnly.length) {
        const det = el("details");
        det.appendChild(el("summary", "", `Checked on the reference path only: ${refOnly.length} node(s)`));
        for (const line of refOnly) det.appendChild(el("div", "lucent-dr-mono", line));
        cov.appendChild(det);
      }
      root.appendChild(cov);
    }
  }

  function markSelected() {
    const sel = model.get("selected");
    for (const item of root.querySelectorAll(".lucent-dr-item"))
      item.classList.toggle("lucent-dr-sel", !!sel && item.dataset.nodeId === sel);
  }

  const keys = ["problems", "headline", "coverage", "reference_only", "ok"];
  for (const k of keys) model.on(`change:${k}`, draw);
  model.on("change:selected", markSelected);
  draw();
  return () => {
    for (const k of keys) model.off(`change:${k}`, draw);
    model.off("change:selected", markSelected);
  };
}

export default { render };
