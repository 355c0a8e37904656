"""conftest.py: shared fixtures for the gradscope Python suite (run by `meson test --suite
python`, with PYTHONPATH pointing at the built extension).

Every test starts with zeroed scope counters and must leave no tensor alive that it made: the
`no_leaks` fixture checks the live count before and after, so a handle the module forgets to
dispose fails the test that leaked it."""
import gc

import pytest

import gradscope as gs


@pytest.fixture(autouse=True)
def no_leaks():
    gc.collect()
    before = gs.live_tensor_count()
    gs.reset_scope_stats()
    yield
    gc.collect()
    assert gs.live_tensor_count() == before, "the test left tensors alive"
