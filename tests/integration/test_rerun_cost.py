"""The long-lived heap is frozen out of Streamlit's per-rerun full collection
(ui.server.housekeeping.freeze_long_lived, issue 23 part 4): what it freezes, when, and that
nothing it froze is kept for good (models by reference counting, cyclic garbage at the next
refreeze)."""

from __future__ import annotations

import gc
import sys
import types
import weakref

import pytest

from ui.server import housekeeping as resources


@pytest.fixture
def heap(monkeypatch):
    monkeypatch.setattr(resources, "_frozen", {"modules": 0, "at": float("-inf")})
    yield resources
    gc.unfreeze()


class Node:
    pass


def _cycle(dead: list) -> Node:
    a, b = Node(), Node()
    a.other, b.other = b, a
    weakref.finalize(a, dead.append, "cycle")
    return a


def test_freezes_when_modules_grew_or_the_interval_passed(heap, monkeypatch):
    assert heap.freeze_long_lived(now=100.0)
    frozen = gc.get_freeze_count()
    assert frozen > 10_000  # pytest, torch, streamlit...: the whole heap at that moment
    assert len(gc.get_objects()) < frozen / 10  # what a rerun's gc.collect(2) still walks
    assert not heap.freeze_long_lived(now=100.0 + heap.REFREEZE_S - 1)  # nothing new
    monkeypatch.setitem(sys.modules, "planted_module_for_the_test", types.ModuleType("x"))
    assert heap.freeze_long_lived(now=101.0)  # a page imported something: freeze again
    assert not heap.freeze_long_lived(now=102.0)
    assert heap.freeze_long_lived(now=101.0 + heap.REFREEZE_S)  # the interval passed


def test_cyclic_garbage_frozen_is_collected_at_the_next_refreeze(heap):
    dead: list = []
    session = [_cycle(dead)]  # alive when frozen (a session that has not ended yet)...
    assert heap.freeze_long_lived(now=0.0)
    session.clear()  # ...then it ends: garbage, in a cycle
    gc.collect()
    assert dead == []  # the frozen cycle is out of the collector's reach...
    assert heap.freeze_long_lived(now=heap.REFREEZE_S)
    assert dead == ["cycle"]  # ...until the refreeze collects it


def test_a_frozen_model_is_freed_by_reference_counting(heap, tiny_model_dir):
    from analysis.core.models import load_model

    loaded = load_model(str(tiny_model_dir()))
    dead: list = []
    weakref.finalize(loaded.model, dead.append, "model")
    assert heap.freeze_long_lived(now=0.0)
    del loaded
    assert dead == ["model"]  # no collection ran: the weights go as soon as nothing holds them
