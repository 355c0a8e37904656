"""gradscope.save and gradscope.load (torch.save and torch.load under gradscope.as_torch):
tensors, state dicts and plain containers of them in PyTorch's zip format, so that PyTorch
loads what gradscope saved and gradscope loads what PyTorch saved.

The format (PyTorch 1.6 and later, torch/serialization.py): a zip archive, stored (not
compressed), whose entries sit under one folder (``archive/`` for a file object, the file's
stem for a path):
- ``data.pkl``: the object, pickled (protocol 2); a tensor is the call
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
  and its storage a persistent id ``('storage', torch.FloatStorage, key, 'cpu', numel)``;
- ``data/<key>``: each storage's bytes, little-endian, once however many views use it;
- ``version``: ``3``.

Saving pickles with the standard library's Python pickler, which writes the torch names as
plain GLOBAL opcodes without importing torch. Loading never runs code from the file:
find_class answers only an allow-list (the rebuild functions, storage types, OrderedDict,
torch.Size and dtypes), as torch.load(weights_only=True); any other global is refused by name.

Loaded tensors view their storage's bytes as saved (offset and strides kept), so views saved
together share memory after loading too; each gets its own storage id in the engine. Storages
of dtypes the engine lacks load widened, values unchanged: float16 and bfloat16 as float32.
"""
import io
import os
import pickle
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np

import gradscope
from gradscope import _gradscope

FORMAT_VERSION = 3
PICKLE_PROTOCOL = 2  # torch.serialization.DEFAULT_PROTOCOL

# Storage class -> (the element as numpy reads it from the file, the dtype it loads as).
_STORAGE_TYPES = {
    "FloatStorage": ("<f4", gradscope.float32),
    "DoubleStorage": ("<f8", gradscope.float64),
    "LongStorage": ("<i8", gradscope.int64),
    "BoolStorage": ("|b1", gradscope.bool),
    "IntStorage": ("<i4", gradscope.int32),
    "ShortStorage": ("<i2", gradscope.int16),
    "CharStorage": ("|i1", gradscope.int8),
    "ByteStorage": ("|u1", gradscope.uint8),
    "HalfStorage": ("<f2", gradscope.float32),
    "BFloat16Storage": ("<u2", gradscope.float32),  # the high half of a float32
}
# The engine's dtypes -> the storage class they are saved as.
_SAVED_AS = {gradscope.float32: "FloatStorage", gradscope.float64: "DoubleStorage",
             gradscope.int64: "LongStorage", gradscope.bool: "BoolStorage",
             gradscope.int32: "IntStorage", gradscope.int16: "ShortStorage",
             gradscope.int8: "CharStorage", gradscope.uint8: "ByteStorage"}


def _numpy_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]  # gradscope.float32 -> float32, as numpy names it


# ---- saving --------------------------------------------------------------------------------

class _Global:
    """A torch name (torch._utils._rebuild_tensor_v2, torch.FloatStorage) that the pickle
    refers to: written as a GLOBAL opcode, never imported."""

    __slots__ = ("module", "name")
    _cache = {}

    def __new__(cls, module, name):
        key = (module, name)
        if key not in cls._cache:
            g = super().__new__(cls)
            g.module, g.name = module, name
            cls._cache[key] = g
        return cls._cache[key]

    def __call__(self, *args):  # the pickler asks reduce functions to be callable
        raise TypeError(f"{self.module}.{self.name} is a name in a saved file, not a function")


class _Storage:
    """A storage being saved: its key in the archive, its type and its bytes."""

    __slots__ = ("key", "type_name", "numel", "data")

    def __init__(self, key, type_name, numel, data):
        self.key, self.type_name, self.numel, self.data = key, type_name, numel, data


class _TensorData:
    """t as a plain tensor, for the data of a saved Parameter (as torch's param.data)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


class _Pickler(pickle._Pickler):
    """The standard library's Python pickler with PyTorch's tensors and storages."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file):
        super().__init__(file, protocol=PICKLE_PROTOCOL)
        self.storages = {}  # engine storage id -> _Storage

    def save_torch_global(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    def save_dtype(self, obj):
        self.save_torch_global(_Global("torch", str(obj).rsplit(".", 1)[-1]))

    dispatch[_Global] = save_torch_global
    dispatch[gradscope.dtype] = save_dtype

    def persistent_id(self, obj):
        if type(obj) is _Storage:
            return ("storage", _Global("torch", obj.type_name), obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, gradscope.Tensor):
            if _gradscope._is_parameter(obj):
                return (_Global("torch._utils", "_rebuild_parameter"),
                        (_TensorData(obj), obj.requires_grad, OrderedDict()))
            return self.reduce_tensor(obj, obj.requires_grad)
        if type(obj) is _TensorData:
            return self.reduce_tensor(obj.tensor, False)
        if isinstance(obj, gradscope.Size):
            return (_Global("torch", "Size"), (tuple(obj),))
        if isinstance(obj, gradscope.nn.Module):
            raise pickle.PicklingError(
                f"gradscope.save: a whole module ({obj._get_name()}) cannot be saved; save its "
                "state_dict() and load it into a new module with load_state_dict()")
        if isinstance(obj, gradscope.nn.utils.rnn.PackedSequence):
            raise pickle.PicklingError("gradscope.save: a PackedSequence cannot be saved; save "
                                       "the padded tensor and the lengths")
        return NotImplemented

    def reduce_tensor(self, t, requires_grad):
        storage = self.storages.get(t.storage_id())
        if storage is None:
            _, data = _gradscope._storage_bytes(t)
            if sys.byteorder != "little":
                data = np.frombuffer(data, _numpy_name(t.dtype)).astype(
                    _STORAGE_TYPES[_SAVED_AS[t.dtype]][0]).tobytes()
            storage = _Storage(str(len(self.storages)), _SAVED_AS[t.dtype],
                               len(data) // t.element_size(), data)
            self.storages[t.storage_id()] = storage
        args = (storage, t.storage_offset(), tuple(t.shape), tuple(t.stride()),
                bool(requires_grad), OrderedDict())
        return (_Global("torch._utils", "_rebuild_tensor_v2"), args)


def _archive_name(f):
    """PyTorch names the folder inside the zip after the file's stem ("archive" otherwise)."""
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        return stem or "archive"
    return "archive"


def _write_zip(f, archive, records):
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        for name, data in records:
            info = zipfile.ZipInfo(f"{archive}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            # Padding in the local header's extra field puts the data on a 64-byte boundary,
            # as PyTorch's writer does (so a reader can map it in place).
            header = 30 + len(info.filename.encode("utf-8")) + 4
            pad = -(z.start_dir + header) % 64
            info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
            z.writestr(info, data)


def save(obj, f, pickle_module=None, pickle_protocol=PICKLE_PROTOCOL,
         _use_new_zipfile_serialization=True):
    """Saves obj (a tensor, a state dict, or dicts, lists and tuples of them, numbers and
    strings) to f (a path or a binary file object) in PyTorch's zip format."""
    if pickle_module not in (None, pickle):
        raise ValueError("gradscope.save: pickle_module must be the standard pickle module")
    if pickle_protocol != PICKLE_PROTOCOL:
        raise ValueError(f"gradscope.save: only pickle_protocol={PICKLE_PROTOCOL} (PyTorch's "
                         f"default) is written, not {pickle_protocol}")
    if not _use_new_zipfile_serialization:
        raise ValueError("gradscope.save: only PyTorch's zip format is written "
                         "(_use_new_zipfile_serialization=True)")
    buf = io.BytesIO()
    pickler = _Pickler(buf)
    pickler.dump(obj)
    records = [("data.pkl", buf.getvalue())]
    records += [(f"data/{s.key}", s.data) for s in pickler.storages.values()]
    records.append(("version", f"{FORMAT_VERSION}\n".encode()))
    _write_zip(f, _archive_name(f), records)


# ---- loading -------------------------------------------------------------------------------

class UnsupportedGlobalError(pickle.UnpicklingError):
    """A saved file names a global that gradscope.load does not run."""


class _StorageType:
    """torch.FloatStorage and the like, as find_class answers them."""

    def __init__(self, name):
        self.name = name
        self.file_dtype, self.dtype = _STORAGE_TYPES[name]


class _LoadedStorage:
    """One storage of the file, read once, as a 1-D array of the dtype it loads as."""

    def __init__(self, array, key):
        self.array, self.key = array, key

    def view(self, offset, size, stride):
        """The tensor (offset, size, stride) into this storage, sharing its memory."""
        size, stride = _int_tuple(size, "size"), _int_tuple(stride, "stride")
        if not isinstance(offset, int) or offset < 0 or len(size) != len(stride) or \
                any(n < 0 for n in size) or any(s < 0 for s in stride):
            raise RuntimeError(f"gradscope.load: storage {self.key}: a tensor with offset "
                               f"{offset}, size {size} and stride {stride} is not valid "
                               "(corrupt file)")
        numel = len(self.array)
        end = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if offset > numel or (all(size) and end > numel):
            raise RuntimeError(f"gradscope.load: storage {self.key} holds {numel} elements, "
                               f"but a tensor with offset {offset}, size {size} and stride "
                               f"{stride} reaches element {end - 1} (corrupt file)")
        item = self.array.itemsize
        view = np.lib.stride_tricks.as_strided(self.array[offset:], shape=size,
                                               strides=[s * item for s in stride])
        return gradscope.from_numpy(view)


def _int_tuple(values, what):
    if not isinstance(values, (tuple, list)) or not all(isinstance(v, int) for v in values):
        raise RuntimeError(f"gradscope.load: a tensor's {what} is {values!r}, not a tuple of "
                           "ints (corrupt file)")
    return tuple(values)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    if not isinstance(storage, _LoadedStorage):
        raise RuntimeError("gradscope.load: a tensor's storage is not one of the file's "
                           "(corrupt file)")
    t = storage.view(storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    if not isinstance(data, gradscope.Tensor):
        raise RuntimeError("gradscope.load: a Parameter's data is not a tensor (corrupt file)")
    return gradscope.nn.Parameter(data, requires_grad=bool(requires_grad))


def _size(values):
    return gradscope.Size(_int_tuple(values, "torch.Size"))


_ALLOWED = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("collections", "OrderedDict"): OrderedDict,
    ("torch", "Size"): _size,
    ("torch", "float32"): gradscope.float32,
    ("torch", "float64"): gradscope.float64,
    ("torch", "int64"): gradscope.int64,
    ("torch", "bool"): gradscope.bool,
    ("torch", "int32"): gradscope.int32,
    ("torch", "int16"): gradscope.int16,
    ("torch", "int8"): gradscope.int8,
    ("torch", "uint8"): gradscope.uint8,
}


def _is_cpu(location):
    return str(location).split(":")[0] == "cpu"


class _Unpickler(pickle.Unpickler):
    def __init__(self, data, archive, prefix, map_location, source):
        super().__init__(io.BytesIO(data))
        self.archive, self.prefix, self.source = archive, prefix, source
        self.map_location = map_location
        self.storages = {}

    def find_class(self, module, name):
        if module == "torch" and name in _STORAGE_TYPES:
            return _StorageType(name)
        found = _ALLOWED.get((module, name))
        if found is None:
            hint = ""
            if module.startswith("torch.nn.modules."):
                hint = ("; the file holds a whole module (torch.save(model)): save "
                        "model.state_dict() instead and load it with load_state_dict()")
            raise UnsupportedGlobalError(
                f"gradscope.load: {self.source} needs the global {module}.{name}, which "
                "gradscope does not load: it loads tensors, state dicts and dicts, lists and "
                "tuples of them, numbers and strings, and never runs other code from a file "
                f"(as torch.load(weights_only=True)){hint}")
        return found

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")):
            raise RuntimeError(f"gradscope.load: {self.source}: unknown persistent id {pid!r} "
                               "(expected ('storage', type, key, location, numel))")
        _, storage_type, key, location, numel = pid
        key = key.decode("ascii") if isinstance(key, bytes) else str(key)
        location = location.decode("ascii") if isinstance(location, bytes) else str(location)
        if not isinstance(storage_type, _StorageType):
            raise RuntimeError(f"gradscope.load: {self.source}: storage {key} has type "
                               f"{storage_type!r}; gradscope reads "
                               f"{', '.join('torch.' + n for n in _STORAGE_TYPES)}")
        if key not in self.storages:
            self.storages[key] = self.read_storage(storage_type, key, location, numel)
        storage = self.storages[key]
        return self.map_storage(storage, location)

    def read_storage(self, storage_type, key, location, numel):
        name = f"{self.prefix}data/{key}"
        try:
            raw = self.archive.read(name)
        except KeyError:
            raise RuntimeError(f"gradscope.load: {self.source} has no record {name} for "
                               f"storage {key} (truncated or corrupt file)") from None
        file_dtype = np.dtype(storage_type.file_dtype)
        if not isinstance(numel, int) or len(raw) != numel * file_dtype.itemsize:
            raise RuntimeError(f"gradscope.load: {self.source}: record {name} holds {len(raw)} "
                               f"bytes, but storage {key} ({storage_type.name}) has {numel} "
                               f"elements of {file_dtype.itemsize} bytes (corrupt file)")
        array = np.frombuffer(bytearray(raw), dtype=file_dtype)
        if storage_type.name == "BFloat16Storage":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        array = array.astype(_numpy_name(storage_type.dtype), copy=False)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        return _LoadedStorage(array, key)

    def map_storage(self, storage, location):
        """map_location as torch.load's, for a machine with only a CPU."""
        m = self.map_location
        if callable(m) and not isinstance(m, (str, dict)):
            mapped = m(storage, location)
            if mapped is not storage:
                raise RuntimeError("gradscope.load: a map_location function must return the "
                                   "storage it is given (gradscope keeps tensors on the CPU)")
            return storage
        if isinstance(m, dict):
            target = m.get(location, location)
        else:
            target = location if m is None else m
        if not _is_cpu(target):
            raise RuntimeError(f"gradscope.load: storage {storage.key} was saved on {location} "
                               f"and maps to {target}, but gradscope runs on the CPU only: pass "
                               "map_location='cpu'")
        return storage


def _source_name(f):
    return repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file object"


def _open_archive(f, source):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            head = fh.read(4)
    else:
        pos = f.tell()
        head = f.read(4)
        f.seek(pos)
    if head[:2] == b"\x80\x02" or head[:1] == b"\x80":
        raise RuntimeError(f"gradscope.load: {source} is in torch.save's legacy format "
                           "(_use_new_zipfile_serialization=False), which gradscope does not "
                           "read; save it again with torch.save's default (zip) format")
    try:
        return zipfile.ZipFile(f)
    except zipfile.BadZipFile as e:
        raise RuntimeError(f"gradscope.load: {source} is not a file torch.save wrote (a zip "
                           f"archive with data.pkl): {e}; the file may be truncated") from None


def load(f, map_location=None, pickle_module=None, *, weights_only=False, **pickle_load_args):
    """Loads what torch.save (or gradscope.save) wrote to f (a path or a binary file object):
    tensors, state dicts and plain containers of them. Whatever weights_only says, loading is
    what torch.load(weights_only=True) does: only an allow-list of globals is ever looked up,
    and a file that needs another fails naming it."""
    if pickle_module not in (None, pickle):
        raise ValueError("gradscope.load: pickle_module must be the standard pickle module")
    if pickle_load_args:
        raise TypeError(f"gradscope.load: unexpected arguments {sorted(pickle_load_args)}")
    source = _source_name(f)
    archive = _open_archive(f, source)
    with archive:
        names = archive.namelist()
        pickles = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
        if not pickles:
            raise RuntimeError(f"gradscope.load: {source} is a zip archive but has no "
                               "<folder>/data.pkl: it is not a file torch.save wrote")
        prefix = pickles[0][: -len("data.pkl")]
        try:
            version = int(archive.read(prefix + "version").decode("ascii").strip() or "0")
        except KeyError:
            version = None
        except (ValueError, UnicodeDecodeError, zipfile.BadZipFile):
            raise RuntimeError(f"gradscope.load: {source}: the record {prefix}version is not "
                               "a number (corrupt file)") from None
        if version is not None and version > FORMAT_VERSION:
            raise RuntimeError(f"gradscope.load: {source} is format version {version}; "
                               f"gradscope reads up to {FORMAT_VERSION}")
        try:
            data = archive.read(pickles[0])
            return _Unpickler(data, archive, prefix, map_location, source).load()
        except UnsupportedGlobalError:
            raise
        except (pickle.UnpicklingError, EOFError, zipfile.BadZipFile, struct.error,
                ValueError, TypeError, IndexError, AttributeError) as e:
            raise RuntimeError(f"gradscope.load: {source} is corrupt: {type(e).__name__}: "
                               f"{e}") from e
