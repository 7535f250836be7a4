// RewriteView: one replacement at a time, its before and after drawn side
// by side. Everything comes from the model (steps, index, whole, detail,
// before_html, after_html, note); the drawings are made in Python for the
// step shown, so moving sets `index` (or `whole`) and waits for them.
// Inner graphs (loop bodies, OpFromGraph graphs) have their own steps: the
// selector sets `graph_index` (one of `graphs`) and Python sends that
// graph's steps and drawings.
// Stable class names: lucent-rw-prev, lucent-rw-next, lucent-rw-slider,
// lucent-rw-whole, lucent-rw-before, lucent-rw-after, lucent-rw-graph (the
// graph selector), lucent-rw-inner (step into a step's inner graph).

const VERDICT_TEXT = {
  kept: "kept the values",
  changed: "CHANGED the values",
  unchecked: "not checkable",
  "not yet": "not checked yet (call the function)",
  stopped: "not checked on the last call",
  undone: "undone",
};

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

function pane(cls, label, markup) {
  const box = el("div", `lucent-rw-pane ${cls}`);
  box.appendChild(el("div", "lucent-rw-pane-label", label));
  const body = el("div", "lucent-rw-drawing");
  body.innerHTML = markup || "";
  box.appendChild(body);
  return box;
}

function render({ model, el: root }) {
  root.classList.add("lucent-rw");

  function go(index) {
    const n = (model.get("steps") || []).length;
    model.set("whole", false);
    model.set("index", Math.max(0, Math.min(n - 1, index)));
    model.save_changes();
  }

  function showGraph(k) {
    model.set("graph_index", k);
    model.save_changes();
  }

  function graphSelector() {
    const graphs = model.get("graphs") || [];
    if (graphs.length < 2) return null;
    const select = el("select", "lucent-rw-graph");
    select.title = "whose rewrites to step through";
    graphs.forEach((g, k) => {
      const option = el("option", "", `${g.label} (${g.rewrites} rewrite${g.rewrites === 1 ? "" : "s"})`);
      option.value = String(k);
      select.appendChild(option);
    });
    select.value = String(model.get("graph_index") || 0);
    select.addEventListener("change", () => showGraph(Number(select.value)));
    return select;
  }

  function update() {
    const steps = model.get("steps") || [];
    const index = model.get("index");
    const whole = model.get("whole");
    const d = model.get("detail") || {};
    root.replaceChildren();

    const header = el("div", "lucent-rw-header");
    header.appendChild(el("span", "lucent-rw-title", model.get("title")));
    const note = model.get("note");
    const selector = graphSelector();
    if (selector) header.appendChild(selector);
    if (note) header.appendChild(el("span", "lucent-rw-note", note));
    root.appendChild(header);
    if (!steps.length) return;

    const controls = el("div", "lucent-rw-controls");
    const prev = el("button", "lucent-rw-prev", "◀ previous");
    prev.disabled = !whole && index <= 0;
    prev.addEventListener("click", () => go(model.get("whole") ? model.get("index") : model.get("index") - 1));
    const counter = el("span", "lucent-rw-counter", `${index + 1} / ${steps.length}`);
    const slider = el("input", "lucent-rw-slider");
    slider.type = "range";
    slider.min = "1";
    slider.max = String(steps.length);
    slider.value = String(index + 1);
    slider.title = "replacement number";
    // Dragging only moves the counter; the step is drawn when the slider is released.
    slider.addEventListener("input", () => { counter.textContent = `${slider.value} / ${steps.length}`; });
    slider.addEventListener("change", () => go(Number(slider.value) - 1));
    const next = el("button", "lucent-rw-next", "next ▶");
    next.disabled = !whole && index >= steps.length - 1;
    next.addEventListener("click", () => go(model.get("whole") ? model.get("index") : model.get("index") + 1));
    const toggle = el("button", "lucent-rw-whole" + (whole ? " lucent-rw-active" : ""),
      whole ? "back to the step" : "whole graph: before / after rewriting");
    toggle.addEventListener("click", () => {
      model.set("whole", !model.get("whole"));
      model.save_changes();
    });
    controls.append(prev, slider, next, counter, toggle);
    root.appendChild(controls);

    const info = el("div", "lucent-rw-info");
    if (whole) {
      info.appendChild(el("div", "lucent-rw-name", "The whole graph before and after rewriting"));
    } else {
      const s = steps[index] || {};
      const line = el("div", "lucent-rw-name");
      line.append(el("span", "lucent-rw-step", `${s.step}.`), el("span", "lucent-rw-rewrite", s.rewrite));
      if (s.verdict) {
        const v = el("span", `lucent-rw-verdict lucent-rw-verdict-${s.verdict.replace(/[^a-z]/g, "")}`,
          s.verdict === "undone" ? "undone: a feature rejected the change"
            : `DebugMode: ${VERDICT_TEXT[s.verdict] || s.verdict}`);
        line.appendChild(v);
      }
      info.appendChild(line);
      const texts = el("div", "lucent-rw-texts");
      texts.append(el("code", "", s.replaced), el("span", "lucent-rw-arrow", " → "), el("code", "", s.by));
      info.appendChild(texts);
      for (const c of s.changes || []) info.appendChild(el("div", "lucent-rw-change", c));
      const graphs = model.get("graphs") || [];
      if (s.inner !== undefined && s.inner >= 0 && graphs[s.inner]) {
        const into = el("button", "lucent-rw-inner", `step through the ${graphs[s.inner].label}'s rewrites ▸`);
        into.addEventListener("click", () => showGraph(s.inner));
        info.appendChild(into);
      }
    }
    const counts = el("div", "lucent-rw-counts");
    if (d.before_nodes !== undefined) {
      counts.textContent = `graph: ${d.before_nodes} → ${d.after_nodes} nodes · ${d.removed} removed · ${d.added} added`
        + (d.rewired ? ` · ${d.rewired} rewired` : "");
    }
    info.appendChild(counts);
    root.appendChild(info);

    const panes = el("div", "lucent-rw-panes");
    panes.append(
      pane("lucent-rw-before", whole ? "before rewriting" : "before", model.get("before_html")),
      pane("lucent-rw-after", whole ? "after rewriting" : "after", model.get("after_html")),
    );
    root.appendChild(panes);
    const legend = el("div", "lucent-rw-legend");
    legend.append(
      el("span", "lucent-rw-key lucent-rw-key-removed", "removed"),
      el("span", "lucent-rw-key lucent-rw-key-added", "new"),
      el("span", "lucent-rw-key lucent-rw-key-rewired", "input rewired"),
    );
    root.appendChild(legend);
  }

  update();
  const events = ["change:steps", "change:index", "change:whole", "change:detail", "change:before_html",
    "change:after_html", "change:note", "change:title", "change:graphs", "change:graph_index"];
  for (const e of events) model.on(e, update);
  return () => {
    for (const e of events) model.off(e, update);
  };
}

export default { render };
