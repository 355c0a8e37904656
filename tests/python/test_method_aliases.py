"""torch's other spellings (gradscope/method_aliases.py) against Debian's torch 1.13: the NumPy
names give the same values, the in-place forms write what their ops give (or refuse a result
that does not cast, with torch's message), and a CPU tensor's predicates answer as torch's.
meson registers this file only when torch imports (tests/python/meson.build)."""
import numpy as np
import pytest

import gradscope as gs

torch = pytest.importorskip("torch")


def data(m, seed=0, shape=(3, 4), lo=-0.9, hi=0.9):
    return m.tensor(np.random.RandomState(seed).uniform(lo, hi, shape).tolist(),
                    dtype=m.float64)


CALLS = {
    "arc_functions": lambda m: [getattr(m, n)(data(m)) for n in ("absolute", "arccos", "arcsin",
                                                                  "arctan", "arcsinh",
                                                                  "arctanh")]
    + [m.arccosh(data(m, 1, lo=1.5, hi=3)), m.arctan2(data(m, 1), data(m, 2))],
    "comparison_names": lambda m: [getattr(data(m, 1), n)(data(m, 2)) for n in
                                   ("greater", "greater_equal", "less", "less_equal",
                                    "not_equal")] + [m.less(data(m, 3), 0.1)],
    "ger_broadcast_to": lambda m: [m.ger(data(m, 1, (3,)), data(m, 2, (2,))),
                                   m.broadcast_to(data(m, 3, (1, 4)), (3, 4)),
                                   data(m, 4, (3, 1)).broadcast_to((3, 5))],
    "in_place_comparisons": lambda m: [getattr(data(m, 1), n + "_")(data(m, 2)) for n in
                                       ("eq", "ne", "lt", "le", "gt", "ge", "greater",
                                        "less_equal")],
    "in_place_ops": lambda m: [data(m, 1).cumsum_(1), data(m, 2).cumprod_(0),
                               data(m, 3, (2, 2)).addmm_(data(m, 4, (2, 3)), data(m, 5, (3, 2))),
                               data(m, 6).sinc_(), data(m, 7).deg2rad_(),
                               data(m, 8).hypot_(data(m, 9)), data(m, 10).remainder_(0.3),
                               data(m, 11).copysign_(data(m, 12)), data(m, 13).sgn_(),
                               data(m, 14).arccos_(), data(m, 15).absolute_(),
                               data(m, 16).fix_(), data(m, 17).float_power_(2), data(m, 18).float_power_(data(m, 19, (4,))),
                               m.tensor([6, 4]).gcd_(m.tensor([4, 6])),
                               m.tensor([5, 3]).bitwise_xor_(m.tensor([3, 3])),
                               m.tensor([True, False]).logical_not_()],
    "method_forms": lambda m: [data(m, 1).rot90(1, [0, 1]), data(m, 2, (6,)).histc(3, -1, 1),
                               data(m, 3, (2,)).diag_embed(),
                               data(m, 4, (5, 2)).split_with_sizes([2, 3]),
                               data(m, 5).narrow_copy(1, 1, 2), data(m, 6).ndimension(),
                               data(m, 7).unsafe_chunk(2, 1), data(m, 8).mH, data(m, 9).H,
                               data(m, 10).real],
    "legacy_new": lambda m: [data(m).new([1, 2]), data(m).new(2, 3).shape,
                             data(m).new(m.Size([4])).shape, data(m).new().shape],
    "predicates": lambda m: [data(m).is_cpu, data(m).is_cuda, data(m).is_sparse,
                             data(m).is_quantized, data(m).is_meta, data(m).get_device(),
                             data(m).is_signed(), m.tensor([1], dtype=m.uint8).is_signed(),
                             data(m).is_same_size(data(m, 1)), data(m).is_conj(),
                             data(m).is_neg(), data(m).is_inference(), repr(data(m).layout),
                             data(m).layout == m.strided],
}


def compare(a, b, name):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), name
        for x, y in zip(a, b):
            compare(x, y, name)
    elif isinstance(a, torch.Tensor):
        assert tuple(a.shape) == tuple(b.shape), name
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], name
        np.testing.assert_allclose(np.asarray(b.tolist(), dtype=float),
                                   np.asarray(a.tolist(), dtype=float), rtol=1e-12, atol=1e-14,
                                   err_msg=name)
    else:
        assert a == b, name


@pytest.mark.parametrize("name", sorted(CALLS))
def test_same_as_torch(name):
    compare(CALLS[name](torch), CALLS[name](gs), name)


@pytest.mark.parametrize("call", [
    lambda m: m.tensor([1, 2]).sinc_(),
    lambda m: m.tensor([1.0, 2.0]).float_power_(2),
    lambda m: m.zeros(3, 4).split_with_sizes([1, 1]),
    lambda m: m.zeros(2, 3, 4).H,
    lambda m: m.zeros(2).imag,
    lambda m: m.zeros(1).cumsum_(0) + m.tensor([1, 2]).deg2rad_(),
])
def test_errors_as_torch(call):
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(gs)
    assert str(got.value) == str(want.value)


def test_in_place_forms_keep_the_tensor_and_bump_its_version():
    t = gs.zeros(3)
    before = t._version
    assert t.eq_(gs.zeros(3)) is t
    assert t.tolist() == [1.0, 1.0, 1.0] and t._version > before
