"""Run a tutorial notebook headlessly (nbclient) and find the outputs of its tagged cells.

Cells the tests check carry a tag in their metadata (``"tags": ["losses"]``),
so a test asserts on "the output of the losses cell" rather than on a cell
number that moves whenever the tutorial gains a paragraph.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

TUTORIALS = Path(__file__).resolve().parents[2] / "tutorials"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def execute(name, timeout=600, compiledir=None):
    """The executed notebook ``tutorials/<name>.ipynb``, with widget state stored in its metadata."""
    import nbformat
    from nbclient import NotebookClient

    path = TUTORIALS / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    saved = os.environ.get("LUCENT_FLAGS")
    if compiledir is not None:
        flags = [f for f in (saved or "").split(",") if f and not f.startswith("base_compiledir")]
        os.environ["LUCENT_FLAGS"] = ",".join(flags + [f"base_compiledir={compiledir}"])
    try:
        client = NotebookClient(
            nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
            resources={"metadata": {"path": str(TUTORIALS)}},
        )
        client.execute()
    finally:
        if saved is None:
            os.environ.pop("LUCENT_FLAGS", None)
        else:
            os.environ["LUCENT_FLAGS"] = saved
    return nb


def cell(nb, tag):
    """The code cell tagged ``tag`` (exactly one)."""
    found = [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]
    if len(found) != 1:
        raise KeyError(f"expected one cell tagged {tag!r} in the notebook, found {len(found)}")
    return found[0]


def text(nb, tag):
    """Everything the tagged cell printed or returned as text (streams and text/plain)."""
    parts = []
    for out in cell(nb, tag).get("outputs", []):
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif out["output_type"] in ("execute_result", "display_data"):
            parts.append(out.get("data", {}).get("text/plain", ""))
        elif out["output_type"] == "error":
            parts.append(_ANSI.sub("", "\n".join(out["traceback"])))
    return "".join(parts)


def data(nb, tag, mime):
    """The ``mime`` payloads the tagged cell displayed, in order."""
    return [
        out["data"][mime]
        for out in cell(nb, tag).get("outputs", [])
        if out["output_type"] in ("execute_result", "display_data") and mime in out.get("data", {})
    ]


def errors(nb):
    """``[(cell index, ename, evalue)]`` of every error output."""
    return [
        (i, out["ename"], out["evalue"])
        for i, c in enumerate(nb.cells) if c.cell_type == "code"
        for out in c.get("outputs", []) if out["output_type"] == "error"
    ]


def widget_models(nb):
    """``{model_id: state}`` of the widget state saved in the notebook's metadata."""
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    return {mid: m.get("state", {}) for mid, m in state.get("state", {}).items()}
