"""torch.profiler on gradscope's event log: profile (a context manager, or start/step/stop
with a schedule and on_trace_ready), record_function, schedule and tensorboard_trace_handler.

The profiler does not time anything itself. While it records, the engine's event log is on
(a temporary file the profiler opens, or the file GS_TRACE already records to), and the
recording is bounded by two marks in it; when it stops, the log is read back and its events
become torch's FunctionEvents (gradscope.profiler_events says how). record_function writes a
named range into the log (range_begin/range_end), which the inspector lists too.
"""
import enum
import itertools
import os
import socket
import tempfile
import time
import warnings
from contextlib import ContextDecorator

from gradscope import _gradscope
from gradscope.profiler_events import events_from_log
from gradscope.profiler_util import EventList

__all__ = ["ProfilerActivity", "ProfilerAction", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """What to profile: CPU (gradscope's ops; CUDA is accepted and ignored, with a warning)."""
    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    """What a schedule says a step does: nothing, warm up, record, or record then hand the
    trace to on_trace_ready."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    """The activities gradscope profiles: {ProfilerActivity.CPU}."""
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """A schedule for profile(schedule=...): after skip_first steps, cycles of wait steps
    doing nothing, warmup steps, and active steps recorded (the last of each cycle hands the
    trace to on_trace_ready); repeat cycles, or without end when repeat is 0."""
    for name, value in (("wait", wait), ("warmup", warmup), ("active", active),
                        ("repeat", repeat), ("skip_first", skip_first)):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"schedule: expected {name} to be an int >= 0, got {value!r}")
    if active < 1:
        raise ValueError(f"schedule: expected at least one active step, got active={active}")
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < 0:
            raise ValueError(f"schedule: expected a step number >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _record_always(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready that writes each trace into dir_name as Chrome trace JSON, named
    WORKER.MILLISECONDS.pt.trace.json (WORKER: host_pid unless worker_name is given)."""
    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = os.path.join(dir_name, f"{worker}.{int(time.time() * 1000)}.pt.trace.json")
        if use_gzip:
            import gzip
            plain = name + ".tmp"
            prof.export_chrome_trace(plain)
            with open(plain, "rb") as src, gzip.open(name + ".gz", "wb") as dst:
                dst.write(src.read())
            os.unlink(plain)
        else:
            prof.export_chrome_trace(name)
    return handler_fn


class record_function(ContextDecorator):
    """A named range of the program (a context manager or a decorator): the profiler shows it
    as a row with the ops inside it as its children; the event log holds it as range_begin and
    range_end, which the inspector lists."""

    def __init__(self, name, args=None):
        if not isinstance(name, str) or not name:
            raise TypeError(f"record_function: expected a non-empty name (str), got {name!r}")
        self.name = name
        self.args = args
        self._open = False

    def __enter__(self):
        _gradscope._trace_range_begin(self.name)
        self._open = True
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self._open:
            _gradscope._trace_range_end(self.name)  # raises, and stays open, out of order
            self._open = False
        return False


_recordings = itertools.count(1)
_recording_now = 0  # recordings under way (optimizers show their steps as ranges meanwhile)


def _is_recording():
    return _recording_now > 0


def _log_being_recorded():
    """The file GS_TRACE records to, which the profiler can read back; else an error."""
    dest = os.environ.get("GS_TRACE", "")
    if dest and not dest.startswith(("unix:", "fd:")) and not os.environ.get("GS_TRACE_RING"):
        return dest
    where = f"GS_TRACE={dest}" if dest else "a log this program opened"
    if os.environ.get("GS_TRACE_RING"):
        where += " as a flight recorder (GS_TRACE_RING)"
    raise RuntimeError(f"torch.profiler: the event log is already recording ({where}) and the "
                       f"profiler reads its events back from a file: record to a plain file "
                       f"(GS_TRACE=run.gstrace) or leave the log off, and the profiler records "
                       f"its own")


class _Recording:
    """One recording window of the event log, bounded by two marks."""

    def __init__(self):
        n = next(_recordings)
        self.begin_mark = f"torch.profiler: recording {n} begins"
        self.end_mark = f"torch.profiler: recording {n} ends"
        if _gradscope._trace_enabled():
            self.path, self.own = _log_being_recorded(), False
        else:
            fd, self.path = tempfile.mkstemp(prefix="gradscope-profile-", suffix=".gstrace")
            os.close(fd)
            _gradscope._trace_open(self.path)
            self.own = True
        _gradscope.trace_mark(self.begin_mark)
        global _recording_now
        _recording_now += 1

    def finish(self, record_shapes, profile_memory, with_stack):
        global _recording_now
        _recording_now -= 1
        _gradscope.trace_mark(self.end_mark)
        if self.own:
            _gradscope.trace_close()
        else:
            _gradscope._trace_flush()
        try:
            return events_from_log(self.path, self.begin_mark, self.end_mark, record_shapes,
                                   profile_memory, with_stack)
        finally:
            if self.own:
                os.unlink(self.path)


class _Profile:
    """What torch's profilers share: one recording at a time, its events and summaries."""

    def __init__(self, record_shapes, profile_memory, with_stack):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self._recording = None
        self._events = None

    def _start_trace(self):
        if self._recording is None:
            self._recording = _Recording()

    def _stop_trace(self):
        if self._recording is not None:
            recording, self._recording = self._recording, None
            self._events = recording.finish(self.record_shapes, self.profile_memory,
                                            self.with_stack)

    def events(self):
        """The recorded FunctionEvents (EventList) of the last recording."""
        if self._events is None:
            raise RuntimeError("profiler: no recording has finished yet: events are there once "
                               "the profile has stopped (or a scheduled cycle has ended)")
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The events added up per op or range name (and per input shapes when asked)."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Writes the events as Chrome trace JSON (chrome://tracing, Perfetto)."""
        return self.events().export_chrome_trace(path)


class profile(_Profile):
    """torch.profiler.profile: records gradscope's ops and record_function ranges, as a
    context manager or with start(), step() and stop(); schedule and on_trace_ready as
    torch's (ProfilerStep#N ranges mark the steps when a schedule is given)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, use_cuda=None):
        super().__init__(record_shapes, profile_memory, with_stack)
        activities = set(activities) if activities is not None else supported_activities()
        for a in activities:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile: expected activities from ProfilerActivity, got {a!r}")
        if ProfilerActivity.CUDA in activities or use_cuda:
            warnings.warn("CUDA is not available, disabling CUDA profiling")
        if schedule is not None and not callable(schedule):
            raise TypeError(f"profile: expected schedule to be callable (torch.profiler."
                            f"schedule(...)), got {schedule!r}")
        self.activities = activities
        self.schedule = schedule or _record_always
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._step_range = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.stop()
        return False

    def _open_step_range(self, step):
        if self.record_steps:
            self._step_range = record_function(f"ProfilerStep#{step}")
            self._step_range.__enter__()

    def _close_step_range(self):
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def start(self):
        """Starts profiling (recording at once unless the schedule says otherwise)."""
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step_range(self.step_num)

    def stop(self):
        """Stops profiling; a recording under way is finished and handed to on_trace_ready."""
        self._close_step_range()
        self._transit(self.current_action, None)

    def step(self):
        """The next step begins: the schedule decides what it does."""
        self._close_step_range()
        previous, done = self.current_action, self.step_num
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._open_step_range(done + 1)

    def _trace_ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit(self, previous, current):
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if previous == ProfilerAction.RECORD_AND_SAVE or (previous in recording and
                                                          current is None):
            self._stop_trace()
            self._trace_ready()
        elif previous == ProfilerAction.RECORD and current not in recording:
            warnings.warn(f"Incorrect schedule: RECORD followed by {current.name}")
            self._stop_trace()
        if current in recording and (previous not in recording or
                                     previous == ProfilerAction.RECORD_AND_SAVE):
            self._start_trace()
