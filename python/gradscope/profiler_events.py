"""The profiler's events, made from gradscope's event log: no second timing mechanism.

The engine stamps each public call's events with one clock read, taken at the call's start
(doc/design.md, engine/trace). So a call is the run of events of one thread that share a time,
and it lasted until that thread's next call began: that span is the call's CPU time (the
Python between two calls is charged to the first, as torch charges an op's dispatch to it).
Each tensor a call makes (tensor_create: an op, a view, a clone) and each in-place write is an
op event, named as torch's aten ops are ("addmm" -> "aten::addmm"); a call that makes several
is its last op with the others as children. In a backward pass each node's run is one call,
shown as torch shows it ("autograd::engine::evaluate_function: AddmmBackward0") with the ops
of its formula inside. Named ranges (record_function, ProfilerStep#N) are range_begin and
range_end events. Memory is the storages allocated (storage_alloc: charged to the op whose
tensor needed them) and freed (storage_free: charged to the call or range that freed them).

What the log does not say: an op's inputs are not recorded, only its output and, for a view or
clone, its source, and for an op with a graph node, the tensors its inputs' nodes belong to. So
input_shapes lists a view's source, an in-place write's tensor, and a differentiable op's
inputs that require grad; an input needing no grad shows as [].
"""
from collections import namedtuple

from gradscope import _gradscope
from gradscope.profiler_util import EventList, FunctionEvent

# One event of the log as _gradscope._trace_events gives it (python/trace-read.c says which
# kinds and fields): name and op are text, shape and inputs tuples.
LogEvent = namedtuple("LogEvent", "kind seq time_ns thread name op tensor storage nbytes shape "
                                  "origin source node inputs site")

# The engine's op names whose aten name differs (the rest are "aten::" + the engine's name).
ATEN_NAMES = {
    "mul_scalar": "mul", "add_scalar": "add", "sub_scalar": "sub", "div_scalar": "div",
    "rsub_scalar": "rsub", "pow_scalar": "pow", "add_scaled": "add", "add_scaled_": "add_",
    "mul_scalar_": "mul_", "add_scalar_": "add_", "div_scalar_": "div_", "sum_to": "sum",
    "sum_dims": "sum", "mean_dims": "mean", "fill": "fill_", "contiguous": "clone",
}


def aten_name(op, in_backward=False):
    """torch's name for an engine op; a backward formula's matmul is torch's mm there."""
    if in_backward and op == "matmul":
        return "aten::mm"
    return "aten::" + ATEN_NAMES.get(op, op)


def _node_name(kind):
    """torch 1.13's name for a backward node kind the log gives ("AddmmBackward0")."""
    return kind if kind[-1:].isdigit() else kind + "0"


def _is_op(e):
    """A tensor_create or inplace_write the program's call made, not a backward node's
    alias of its gradient (those are named after the node: "AddmmBackward", "backward")."""
    op = e.op
    return bool(op) and not op.endswith("Backward") and op != "backward"


class _Index:
    """What events before and inside the window say about tensors, nodes, storages and
    sites, for shapes, names and freed bytes."""

    def __init__(self):
        self.shapes = {}         # tensor id -> shape
        self.node_tensor = {}    # node id -> the tensor it belongs to
        self.storage_bytes = {}  # storage id -> bytes
        self.sites = {}          # site id -> "function (file:line)"

    def learn(self, e):
        kind = e.kind
        if kind == "tensor_create":
            self.shapes[e.tensor] = list(e.shape)
        elif kind == "node_create":
            self.node_tensor[e.node] = e.tensor
        elif kind == "storage_alloc":
            self.storage_bytes[e.storage] = e.nbytes
        elif kind == "site" and e.name:
            self.sites[e.site] = e.name


def _groups(events):
    """Splits one thread's events into calls: runs that share one time. A graph node's event
    is written late (once its op has saved its tensors, engine/trace) with a later time: it
    belongs to the call before it, not a call of its own."""
    groups = []
    for e in events:
        if groups and (e.time_ns == groups[-1][0].time_ns or e.kind == "node_create"):
            groups[-1].append(e)
        else:
            groups.append([e])
    return groups


class _Builder:
    def __init__(self, index, record_shapes, profile_memory, with_stack):
        self.index = index
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.events = []
        self.node_of = {}  # tensor id -> the node_create of the node that made it

    def event(self, name, thread, start_ns, end_ns, site=0):
        stack = []
        if self.with_stack and site in self.index.sites:
            stack = [self.index.sites[site]]
        e = FunctionEvent(len(self.events), name, thread, start_ns / 1000.0, end_ns / 1000.0,
                          stack=stack)
        self.events.append(e)
        return e

    def input_shapes(self, e, group):
        if not self.record_shapes:
            return []
        shapes = self.index.shapes
        if e.kind == "inplace_write":
            return [shapes.get(e.tensor, [])]
        if e.origin != 0:  # a view, detach or clone: its source
            return [shapes.get(e.source, [])]
        n = self.node_of.get(e.tensor)
        if n is None:
            return []
        return [shapes.get(self.index.node_tensor.get(i), []) if i else [] for i in n.inputs]

    def thread(self, thread, events, end_ns):
        """The events of one thread, in order, up to end_ns (the window's end)."""
        for e in events:
            if e.kind == "node_create":
                self.node_of.setdefault(e.tensor, e)
        open_ranges = []  # FunctionEvents of the ranges begun and not yet ended
        in_backward = 0
        groups = _groups(events)
        for k, group in enumerate(groups):
            start = group[0].time_ns
            end = groups[k + 1][0].time_ns if k + 1 < len(groups) else max(end_ns, start)
            parent = open_ranges[-1] if open_ranges else None
            # a node's run: inside a backward pass, not the call that began it
            node_run = in_backward > 0
            freed = 0
            ops = []
            for e in group:
                self.index.learn(e)
                kind = e.kind
                if kind == "range_begin":
                    # torch adds its steps up as one key: "ProfilerStep*" (trace_name keeps #N)
                    step = e.name.startswith("ProfilerStep#")
                    r = self.event("ProfilerStep*" if step else e.name, thread, start, start,
                                   e.site)
                    r.trace_name = e.name
                    self._adopt(parent, r)
                    open_ranges.append(r)
                    parent = r
                elif kind == "range_end":
                    for depth in range(len(open_ranges) - 1, -1, -1):
                        if open_ranges[depth].trace_name == e.name:
                            open_ranges[depth].time_range.end = start / 1000.0
                            del open_ranges[depth:]
                            break
                    parent = open_ranges[-1] if open_ranges else None
                elif kind == "backward_begin":
                    in_backward += 1
                elif kind == "backward_end":
                    in_backward = max(0, in_backward - 1)
                elif kind == "storage_free":
                    freed += self.index.storage_bytes.pop(e.storage, 0)
                elif kind in ("tensor_create", "inplace_write") and _is_op(e):
                    ops.append(e)
            self._call(thread, group, ops, parent, start, end, node_run, freed)
        for r in open_ranges:  # still open at the window's end
            r.time_range.end = max(end_ns, r.time_range.start * 1000.0) / 1000.0

    def _adopt(self, parent, child):
        if parent is not None:
            parent.append_cpu_child(child)
            child.set_cpu_parent(parent)

    def _call(self, thread, group, ops, parent, start, end, in_backward, freed):
        site = next((e.site for e in group if e.site), 0)
        allocated = {}
        for e in group:
            if e.kind == "storage_alloc":
                allocated[e.seq] = allocated.get(e.seq, 0) + e.nbytes
        outer = None
        nodes = [e.op for e in group if e.kind == "tensor_create" and e.op.endswith("Backward")]
        accumulates = any(e.kind == "grad_accumulate" for e in group)
        if in_backward and (ops or nodes or accumulates):
            # A node's run: named by its kind where its formula's aliases show it, else by
            # what it did (a gradient accumulated into a leaf is AccumulateGrad's work)
            name = "autograd::engine::evaluate_function"
            if nodes:
                name += ": " + _node_name(nodes[0])
            elif accumulates:
                name += ": torch::autograd::AccumulateGrad"
            outer = self.event(name, thread, start, end, site)
            self._adopt(parent, outer)
        children = []
        for i, e in enumerate(ops):
            spans = outer is None and i == len(ops) - 1
            ev = self.event(aten_name(e.op, in_backward), thread, start, end if spans else start,
                            site)
            ev.input_shapes = self.input_shapes(e, group)
            if self.profile_memory and e.kind == "tensor_create":
                ev.self_cpu_memory_usage = allocated.get(e.seq, 0)
            if spans:
                outer = ev
            else:
                children.append(ev)
        for c in children:
            self._adopt(outer, c)
        if outer is not None and outer.cpu_parent is None and outer is not parent:
            self._adopt(parent, outer)
        if self.profile_memory and freed:
            holder = outer if outer is not None else parent
            if holder is not None:
                holder.self_cpu_memory_usage -= freed


def events_from_log(path, begin_mark, end_mark, record_shapes=False, profile_memory=False,
                    with_stack=False):
    """The FunctionEvents of the log at path between the marks begin_mark and end_mark (the
    profiler writes them where its recording starts and stops), as an EventList."""
    log = [LogEvent._make(t) for t in _gradscope._trace_events(path)]
    index = _Index()
    begin = end = None
    for i, e in enumerate(log):
        if e.kind == "mark" and e.name == begin_mark:
            begin = i
        elif e.kind == "mark" and e.name == end_mark and begin is not None:
            end = i
            break
    if begin is None or end is None:
        raise RuntimeError(f"profiler: the event log {path} does not hold the marks "
                           f"{begin_mark!r} and {end_mark!r} that bound the recording")
    for e in log[:begin]:
        index.learn(e)
    builder = _Builder(index, record_shapes, profile_memory, with_stack)
    threads = {}
    for e in log[begin + 1:end]:
        threads.setdefault(e.thread, []).append(e)
    end_ns = log[end].time_ns
    for thread, events in sorted(threads.items()):
        builder.thread(thread, events, end_ns)
    events = sorted(builder.events,
                    key=lambda e: (e.time_range.start, -e.time_range.end, e.id))
    for i, e in enumerate(events):
        e.id = i
    return EventList(events, profile_memory=profile_memory, with_stack=with_stack)
