"""torch.autograd.profiler on gradscope's event log: profile (the older context manager,
whose results are the same FunctionEvents as torch.profiler's), record_function, and the
classes its results are made of.
"""
from gradscope.profiler import _Profile, record_function
from gradscope.profiler_util import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "emit_nvtx", "EventList", "FunctionEvent",
           "FunctionEventAvg"]


class profile(_Profile):
    """torch.autograd.profiler.profile: records gradscope's ops and record_function ranges
    while the block runs (enabled=False records nothing); then function_events,
    key_averages(), table() and export_chrome_trace() as torch's. use_cuda is refused: gradscope
    runs on the CPU."""

    def __init__(self, enabled=True, *, use_cuda=False, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False,
                 use_cpu=True, experimental_config=None):
        if use_cuda:
            raise AssertionError("Torch not compiled with CUDA enabled")
        super().__init__(record_shapes, profile_memory, with_stack)
        self.enabled = enabled
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start_trace()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self.enabled:
            self._stop_trace()
        return False

    @property
    def function_events(self):
        """The recorded FunctionEvents (EventList)."""
        return self.events() if self._events is not None else None

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """torch's summary table of the recorded events."""
        return self.events().table(sort_by, row_limit, max_src_column_width,
                                   max_name_column_width, max_shapes_column_width, header,
                                   top_level_events_only)

    def total_average(self):
        """Every event added into one row keyed "Total"."""
        return self.events().total_average()

    @property
    def self_cpu_time_total(self):
        """Self CPU time of every event, in us."""
        return self.events().self_cpu_time_total

    def __str__(self):
        return self.table() if self._events is not None else "<unfinished profiler>"


class emit_nvtx:
    """torch.autograd.profiler.emit_nvtx: NVTX ranges for NVIDIA's tools, which need CUDA.
    As torch built without CUDA, entering it (enabled) raises AssertionError."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if self.enabled:
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return False
