"""torch.return_types: the named tuples torch's ops return, such as sort's (values, indices) or
slogdet's (sign, logabsdet). Each is a tuple with named fields whose repr is torch's
(``torch.return_types.max(`` then one ``field=value`` per line), so a program that prints one
prints the same lines on both. The C extension builds sort, topk, max, min, median, cummax and
cummin results from here too (gsp_values_indices), so every op's result has its own name."""
import collections

__all__ = []


def _structseq(name, fields, doc):
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        shown = ",\n".join(f"{field}={value!r}" for field, value in zip(fields, self))
        return f"torch.return_types.{name}(\n{shown})"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__,
                               "__doc__": doc, "__module__": __name__})
    globals()[name] = cls
    __all__.append(name)
    return cls


for _name in ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode",
              "cummax", "cummin"):
    _structseq(_name, ["values", "indices"], f"{_name}'s result: (values, indices).")
_structseq("aminmax", ["min", "max"], "aminmax's result: (min, max).")
_structseq("frexp", ["mantissa", "exponent"], "frexp's result: (mantissa, exponent).")
_structseq("histogram", ["hist", "bin_edges"], "histogram's result: (hist, bin_edges).")
_structseq("slogdet", ["sign", "logabsdet"], "torch.slogdet's result: (sign, logabsdet).")
_structseq("linalg_slogdet", ["sign", "logabsdet"],
           "linalg.slogdet's result: (sign, logabsdet).")
_structseq("linalg_eigh", ["eigenvalues", "eigenvectors"],
           "linalg.eigh's result: (eigenvalues, eigenvectors).")
_structseq("linalg_svd", ["U", "S", "Vh"], "linalg.svd's result: (U, S, Vh).")
_structseq("svd", ["U", "S", "V"], "torch.svd's result: (U, S, V).")
_structseq("linalg_qr", ["Q", "R"], "linalg.qr's result: (Q, R).")
_structseq("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"],
           "linalg.lstsq's result: (solution, residuals, rank, singular_values).")
del _name
