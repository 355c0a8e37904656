"""What torch.profiler hands back, over gradscope's event log: FunctionEvent (one op call or
named range), FunctionEventAvg (a key_averages row) and EventList (key_averages, table,
export_chrome_trace), with torch 1.13's field names and table layout.

Times are microseconds, as torch's. The events themselves are made from the log by
gradscope.profiler_events; nothing here reads a clock.
"""
import json

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList"]


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_share(us, total_us):
    return "NaN" if total_us == 0 else f"{us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} b"


class _TimeFields:
    """The *_str forms and CUDA zeros torch's rows have (gradscope runs on the CPU only)."""
    cuda_time_total = 0.0
    self_cuda_time_total = 0.0
    cuda_memory_usage = 0
    self_cuda_memory_usage = 0
    cuda_time = 0.0
    is_async = False
    is_remote = False
    is_legacy = False
    node_id = -1
    flops = 0
    scope = 0
    device_type = "CPU"

    @property
    def cpu_time(self):
        """Average CPU time of one call, in us."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    @property
    def cuda_time_str(self):
        return _format_time(0.0)

    @property
    def cuda_time_total_str(self):
        return _format_time(0.0)

    @property
    def self_cuda_time_total_str(self):
        return _format_time(0.0)


class Interval:
    """A span of time in us: start, end and elapsed_us()."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start}, end={self.end})"


class FunctionEvent(_TimeFields):
    """One op call or named range of the profiled run: its name, thread, time_range (us from
    the log's start), its children and parent, memory it allocated (bytes, freed bytes
    negative), and the shapes and call site the log gives for it."""

    count = 1

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None,
                 sequence_nr=-1):
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.fwd_thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.sequence_nr = sequence_nr
        self.cpu_children = []
        self.cpu_parent = None
        self.self_cpu_memory_usage = 0
        self.kernels = []
        self.trace_name = name

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return max(0.0, self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children))

    @property
    def cpu_memory_usage(self):
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={self.cpu_time_total_str} start_us={self.time_range.start:.3f} "
                f"end_us={self.time_range.end:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_TimeFields):
    """The events of one key added up (a key_averages row): count, totals and memory."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.cpu_children = None
        self.cpu_parent = None

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.cpu_parent = other.cpu_parent
        elif other.key != self.key:
            raise AssertionError(f"FunctionEventAvg.add: expected an event with key "
                                 f"{self.key!r}, got {other.key!r}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of FunctionEvent (or, from key_averages, FunctionEventAvg) with torch's
    summaries."""

    def __init__(self, *args, profile_memory=False, with_stack=False, **kwargs):
        kwargs.pop("use_cuda", None)
        kwargs.pop("with_flops", None)
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory
        self._with_stack = with_stack

    @property
    def self_cpu_time_total(self):
        """Self CPU time of every event, in us (the table's footer)."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One FunctionEventAvg per key (and per input shapes, per the first
        group_by_stack_n stack entries, when asked), in the order keys first appear."""
        rows = {}
        for e in self:
            key = (e.key,)
            if group_by_input_shape:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            rows.setdefault(key, FunctionEventAvg()).add(e)
        for row in rows.values():  # as torch: shapes and stacks only where grouped by them
            row.stack = list(row.stack or [])[:group_by_stack_n]
            if not group_by_input_shape:
                row.input_shapes = ""
        return EventList(rows.values(), profile_memory=self._profile_memory,
                         with_stack=self._with_stack)

    def total_average(self):
        """Every event added into one FunctionEventAvg keyed "Total"."""
        total = FunctionEventAvg()
        for e in self:
            total.key = None
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """torch's summary table: a row per event sorted by the attribute sort_by
        (descending), with "Self CPU time total:" below."""
        return _build_table(self, sort_by, row_limit, max_name_column_width,
                            max_shapes_column_width, header, self._profile_memory,
                            top_level_events_only)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Writes the events as Chrome trace JSON (chrome://tracing, Perfetto), as torch 1.13
        without Kineto writes it: a list of complete ("X") events with name, ts and dur in
        us, tid, and pid "CPU functions"."""
        trace = []
        for e in self:
            if not isinstance(e, FunctionEvent):
                raise TypeError("export_chrome_trace: expected the events of a run "
                                "(prof.events()), got key averages")
            item = {"name": e.trace_name, "ph": "X", "ts": e.time_range.start,
                    "dur": e.cpu_time_total, "tid": e.thread, "pid": "CPU functions",
                    "args": {}}
            if e.input_shapes:
                item["args"]["Input Dims"] = e.input_shapes
            if e.stack:
                item["args"]["Call stack"] = ";".join(e.stack)
            trace.append(item)
        with open(path, "w") as f:
            json.dump(trace, f)


def _build_table(events, sort_by, row_limit, max_name_width, max_shapes_width, header,
                 profile_memory, top_level_only):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_width is not None:
        shapes_width = min(shapes_width, max_shapes_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    separator = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    total = sum(e.self_cpu_time_total for e in events)
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[:max_name_width - 3] + "..."
        row = [name, _format_share(e.self_cpu_time_total, total), e.self_cpu_time_total_str,
               _format_share(e.cpu_time_total, total), e.cpu_time_total_str, e.cpu_time_str]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        lines.append(row_format.format(*row))
    lines += [separator, f"Self CPU time total: {_format_time(total)}"]
    return "\n".join(lines) + "\n"
