"""Following a node's value across calls: the part of ``GraphView`` that records a history per call.

A training loop's question is not "what is this value" but "where is it
going": the loss going down, a gradient's norm exploding, an activation
saturating. ``follow(node)`` records the norm, mean and maximum of a node's
value after every call of the function, and the view draws them as
sparklines (the synced ``follows`` trait); ``follow_outputs()`` gives the
loss curve of a training step without a loop that appends to a list.

Outputs come free: the call returns them (``lucent.compile.watch`` hands the
result to the view). An inner node's value exists only in a replay on the
Python path, so while one is followed every call is replayed; the history
is pushed to the browser at most every ``min_interval`` seconds and after
each cell (``lucent.widgets.live.Throttle``).
"""

from __future__ import annotations

from lucent.graph.basic import Variable
from lucent.widgets.value_summary import safe_summarize as _summary

#: Statistics recorded per call for a followed node.
FOLLOW_STATS = ("norm", "mean", "max")

#: Calls kept in a followed node's history (the oldest are dropped).
FOLLOW_KEEP = 1000


class FollowCalls:
    """``follow``, ``follow_outputs``, ``unfollow`` and ``history`` of ``GraphView`` (a mixin).

    It uses the view's ``_fn``, ``_static``, ``_values``, ``_history``,
    ``_pending``, ``_replay``, ``_follow_push`` and the ``follows`` and
    ``follow_ids`` traits.
    """

    def follow(self, node_or_id):
        """Record the norm, mean and max of a node's value at every call from now on; returns its id.

        ``node_or_id`` is an Apply node, a variable, a node id or a graph
        output (a Variable of ``fn.maker.fgraph.outputs`` or ``"o0"``):
        following an output costs nothing, an inner node costs a replay of
        each call on the Python path. The view draws a sparkline per
        followed node; ``history(node)`` returns the numbers.
        """
        if self._fn is None:
            raise ValueError("follow needs a GraphView of a compiled Function: values come from its calls")
        ident = self._follow_id(node_or_id)
        if self._static[ident]["kind"] in ("constant",):
            raise ValueError(f"{ident} is a constant: its value does not change from call to call")
        if ident not in self._history:
            self._history[ident] = {"calls": [], **{k: [] for k in FOLLOW_STATS}}
        self._follow_push.follow_cells()
        self._follow_push.flush()
        return ident

    def follow_outputs(self):
        """Follow every output of the function (not its updates): a loss curve without a loop of your own."""
        fgraph = self._fn.maker.fgraph if self._fn is not None else None
        if fgraph is None:
            raise ValueError("follow_outputs needs a GraphView of a compiled Function")
        n = len(fgraph.outputs) - len(getattr(fgraph, "update_mapping", None) or {})
        return [self.follow(f"o{j}") for j in range(n)]

    def unfollow(self, node_or_id):
        """Stop following a node (its history is dropped)."""
        ident = self._follow_id(node_or_id)
        self._history.pop(ident, None)
        self._follow_push.flush()

    def history(self, node_or_id):
        """``{"calls": [...], "norm": [...], "mean": [...], "max": [...]}`` of a followed node."""
        ident = self._follow_id(node_or_id)
        if ident not in self._history:
            raise KeyError(f"{ident} is not followed; call follow({ident!r}) first")
        return {k: list(v) for k, v in self._history[ident].items()}

    def _follow_id(self, node_or_id):
        if isinstance(node_or_id, Variable) and self._fn is not None:
            outs = self._fn.maker.fgraph.outputs
            for j, var in enumerate(outs):
                if var is node_or_id:
                    return f"o{j}"
        return self.node_id(node_or_id)

    def _record_follows(self, result):
        """Add this call's statistics to the history of every followed node."""
        outputs = self._output_summaries(result)
        inner = [i for i in self._history if not i.startswith("o")]
        if inner and self._pending is not None:
            # An inner node's value exists only in a replay: followed nodes cost one per call.
            pending, self._pending = self._pending, None
            self._replay(*pending)
            self._values_dirty = True
        for ident, history in self._history.items():
            if ident.startswith("o"):
                summary = outputs.get(ident)
                if summary is not None:
                    self._values[ident] = [summary]
            else:
                summary = (self._values.get(ident) or [None])[0] if self._call_replayed == self._calls_seen else None
            stats = _stats(summary)
            history["calls"].append(self._calls_seen)
            for k in FOLLOW_STATS:
                history[k].append(None if stats is None else stats[k])
            if len(history["calls"]) > FOLLOW_KEEP:
                for values in history.values():
                    del values[0]
        self._follow_push.changed()

    def _output_summaries(self, result):
        """``{"o<j>": summary}`` of the function outputs a call returned (updates are not returned)."""
        fgraph = self._fn.maker.fgraph
        n = len(fgraph.outputs) - len(getattr(fgraph, "update_mapping", None) or {})
        if isinstance(result, dict):
            values = list(result.values())
        elif isinstance(result, (list, tuple)) and len(result) == n and not getattr(self._fn, "unpack_single", False):
            values = list(result)
        else:
            values = [result]
        return {f"o{j}": _summary(v) for j, v in enumerate(values[:n])}

    def _push_follows(self):
        self.follows = {
            ident: dict({k: list(v) for k, v in history.items()}, label=self._follow_label(ident))
            for ident, history in self._history.items()
        }
        if self._history and self.follow_ids != list(self._history):
            self.set_trait("follow_ids", list(self._history))

    def _follow_label(self, ident):
        entry = self._static.get(ident, {})
        return entry.get("label", ident)

    def _on_follow_ids(self, change):
        wanted = list(change["new"])
        for ident in list(self._history):
            if ident not in wanted:
                self.unfollow(ident)
        for ident in wanted:
            if ident not in self._history and ident in self._static:
                self.follow(ident)



def _stats(summary):
    """``{norm, mean, max}`` of a value summary (None for what has no numbers)."""
    if not summary or summary.get("kind") != "array":
        return None
    return {k: summary.get(k) for k in FOLLOW_STATS}


__all__ = ["FollowCalls", "FOLLOW_STATS", "FOLLOW_KEEP"]
