"""test_torch_random: after manual_seed(s) gradscope draws torch 1.13's random numbers, bit for
bit: rand, randn (the element-wise sampler below 16 values, the 16-wide fill and its tail
above), randint, randperm, the in-place samplers, dropout masks, Linear/Conv2d initialisation,
the in-process DataLoader's shuffled order, Generator objects and the state bytes."""
import numpy as np
import pytest
import torch

import gradscope as gs

SEEDS = (0, 1, 42, 1234, 2 ** 31 + 5)
SIZES = (1, 7, 15, 16, 17, 100, 1000)


def both(seed, draw):
    """draw(module) under torch and gradscope after manual_seed(seed), as flat arrays."""
    out = []
    for m in (torch, gs):
        m.manual_seed(seed)
        parts = draw(m)
        if not isinstance(parts, (list, tuple)):
            parts = [parts]
        out.append(np.concatenate([np.ravel(np.asarray(p.tolist() if hasattr(p, "tolist")
                                                       else p)) for p in parts]))
    return out


def assert_same_bits(seed, draw):
    want, got = both(seed, draw)
    assert want.shape == got.shape
    assert want.dtype == got.dtype or want.dtype.kind == got.dtype.kind
    differ = np.nonzero(want != got)[0]
    assert differ.size == 0, f"seed {seed}: first differences at {differ[:5]}: " \
                             f"torch {want[differ[:5]]}, gradscope {got[differ[:5]]}"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_rand_randn_normal_uniform(seed, n, dtype):
    assert_same_bits(seed, lambda m: [m.rand(n, dtype=getattr(m, dtype)),
                                      m.randn(n, dtype=getattr(m, dtype)),
                                      m.randn(n, dtype=getattr(m, dtype))])
    assert_same_bits(seed, lambda m: [m.empty(n, dtype=getattr(m, dtype)).normal_(0.3, 2.0),
                                      m.empty(n, dtype=getattr(m, dtype)).uniform_(-0.7, 1.3)])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_integers_and_permutations(seed, n):
    assert_same_bits(seed, lambda m: [m.randint(0, 10, (n,)), m.randint(-2 ** 40, 2 ** 40, (n,)),
                                      m.randperm(n), m.empty(n, dtype=m.int64).random_(),
                                      m.empty(n).random_(3, 17),
                                      m.empty(n, dtype=m.int32).random_()])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", (1, 7, 16, 17, 100))
def test_bernoulli_dropout_exponential(seed, n):
    assert_same_bits(seed, lambda m: [m.empty(n).bernoulli_(0.3),
                                      m.empty(n).bernoulli_(m.full((n,), 0.4)),
                                      m.bernoulli(m.full((n,), 0.6, dtype=m.float64)),
                                      m.nn.functional.dropout(m.ones(n, 3), 0.25),
                                      m.empty(n).exponential_(2.0)])


@pytest.mark.parametrize("seed", SEEDS)
def test_module_initialisation(seed):
    assert_same_bits(seed, lambda m: [m.nn.Linear(3, 2).weight, m.nn.Linear(40, 30).bias,
                                      m.nn.Conv2d(3, 8, 3).weight, m.nn.Conv2d(3, 8, 3).bias,
                                      m.nn.init.xavier_uniform_(m.empty(30, 20)),
                                      m.nn.init.kaiming_normal_(m.empty(30, 20))])


@pytest.mark.parametrize("seed", SEEDS)
def test_dataloader_shuffle_in_process(seed):
    def order(m):
        data = [float(i) for i in range(20)]
        batches = [b for b in m.utils.data.DataLoader(data, batch_size=4, shuffle=True)]
        return batches + [m.rand(2)]
    assert_same_bits(seed, order)


@pytest.mark.parametrize("seed", SEEDS)
def test_dataloader_shuffle_engine(seed):
    def order(m):  # a TensorDataset goes to gradscope's engine loader: two epochs
        loader = m.utils.data.DataLoader(m.utils.data.TensorDataset(m.arange(20.)),
                                         batch_size=4, shuffle=True)
        return [b[0] for _ in range(2) for b in loader] + [m.rand(2)]
    assert_same_bits(seed, order)


@pytest.mark.parametrize("seed", SEEDS)
def test_unshuffled_loaders_draw_torchs_base_seed_too(seed):
    def order(m):  # a validation loader iterated between shuffled epochs ("nn really")
        ds = m.utils.data.TensorDataset(m.arange(20.))
        train = m.utils.data.DataLoader(ds, batch_size=4, shuffle=True)
        valid = m.utils.data.DataLoader(ds, batch_size=8)
        plain = m.utils.data.DataLoader([float(i) for i in range(6)], batch_size=3)
        out = []
        for _ in range(3):
            out += [b[0] for b in train] + [b[0] for b in valid] + list(plain)
        return out + [m.rand(2)]
    assert_same_bits(seed, order)


@pytest.mark.parametrize("seed", SEEDS)
def test_generator_objects(seed):
    def draws(m):
        g = m.Generator().manual_seed(seed + 1)
        return [m.rand(5, generator=g), m.randn(20, generator=g),
                m.randperm(9, generator=g), m.rand(3)]
    assert_same_bits(seed, draws)


@pytest.mark.parametrize("seed", SEEDS)
def test_rng_state_bytes(seed):
    assert_same_bits(seed, lambda m: [m.rand(5), m.randn(3), m.get_rng_state()])
    torch.manual_seed(seed)
    torch.randn(3)  # leaves a cached normal in the state
    gs.set_rng_state(torch.get_rng_state())
    assert gs.randn(5, dtype=gs.float64).tolist() == torch.randn(5, dtype=torch.float64).tolist()


LAYOUTS = {  # tensors torch's kernels walk in memory order, not index order
    "transposed": lambda m, dt: m.zeros(5, 7, dtype=dt).t(),
    "permuted": lambda m, dt: m.zeros(4, 6, 5, dtype=dt).permute(2, 0, 1),
    "strided": lambda m, dt: m.zeros(40, dtype=dt)[::2],
    "channels_last": lambda m, dt: m.zeros(2, 3, 4, 5, dtype=dt).to(
        memory_format=m.channels_last),
    "sliced": lambda m, dt: m.zeros(5, 5, dtype=dt)[1:, 1:],
    "small_transposed": lambda m, dt: m.zeros(2, 3, dtype=dt).t(),
}


@pytest.mark.parametrize("seed", (42,))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("method", ("normal_", "uniform_", "exponential_", "bernoulli_",
                                    "random_", "random_10", "init_normal_"))
def test_in_place_samplers_on_non_contiguous_tensors(seed, layout, dtype, method):
    """An in-place sampler on a transposed, permuted, strided or channels-last tensor puts
    torch's draws where torch puts them (its kernels walk memory order, and a non-contiguous
    tensor's normal values are drawn one by one), and leaves the generator where torch's does:
    the next draw is the same too."""
    def draw(m):
        t = LAYOUTS[layout](m, getattr(m, dtype))
        if method == "random_10":
            t.random_(0, 10)
        elif method == "init_normal_":
            m.nn.init.normal_(t, 0.5, 2.0)
        else:
            getattr(t, method)()
        return [t, m.rand(3)]
    assert_same_bits(seed, draw)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_dtype_conversion_keeps_a_dense_layout(layout):
    """t.to(dtype) lays the copy out as torch's preserve_format does: a dense tensor keeps its
    strides (a permuted one stays permuted), a sparse-strided one becomes contiguous, and
    memory_format=contiguous_format always gives row-major strides."""
    for target in ("float64", "int64"):
        got = [(LAYOUTS[layout](m, m.float32).to(getattr(m, target)).stride(),
                LAYOUTS[layout](m, m.float32).to(dtype=getattr(m, target)).stride(),
                LAYOUTS[layout](m, m.float32).to(getattr(m, target),
                                                 memory_format=m.contiguous_format).stride())
               for m in (torch, gs)]
        assert got[0] == got[1]
