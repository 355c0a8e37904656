"""What the package's modules share: re-exporting the C extension's names, and the error a
name that gradscope does not have yet raises.

A PyTorch program run on gradscope (gradscope.as_torch) reaches for names gradscope may not
have yet. Each module of the package ends with ``__getattr__ = unsupported(__name__)``, so such
a name fails where it is used with an error that names it and says it is not supported yet,
instead of an AttributeError from somewhere inside. NotSupportedError is an AttributeError, so
``hasattr`` and ``getattr(m, name, default)`` keep working as Python code expects.
"""


class NotSupportedError(AttributeError):
    """A name PyTorch has and gradscope does not have yet."""

    __module__ = "gradscope"


def not_supported(qualified_name):
    return NotSupportedError(f"{qualified_name} is not supported by gradscope yet")


def unsupported(module_name):
    """A module-level __getattr__ for module_name: dunder names stay plain AttributeErrors
    (Python's own machinery probes them), every other missing name is not supported yet."""

    def __getattr__(name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise not_supported(f"{module_name}.{name}")

    return __getattr__


def reexport(c_module, namespace):
    """Binds the C module's public names (and its underscored helpers, which tests use) in a
    package module's namespace: the same objects, so the two can never disagree."""
    for name, value in vars(c_module).items():
        if not (name.startswith("__") and name.endswith("__")):
            namespace.setdefault(name, value)
