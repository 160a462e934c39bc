"""The executor interface: results in submission order, errors surface, no stray workers."""

from __future__ import annotations

import os

import pytest

from foreseen.core.errors import UserInputError
from foreseen.core.parallel import (
    Executor,
    LocalProcessExecutor,
    SerialExecutor,
    make_executor,
)

from support.jobs import fails_on_three, slow_square


def test_serial_and_process_results_in_submission_order() -> None:
    # Early items sleep longest, so workers finish them last: order must still be kept.
    items = [(i, 0.05 * (5 - i)) for i in range(6)]
    expected = [(i, i * i) for i in range(6)]
    serial: Executor = SerialExecutor()
    pooled: Executor = LocalProcessExecutor(2)
    serial_out = serial.map(slow_square, items)
    pooled_out = pooled.map(slow_square, items)
    assert [r[:2] for r in serial_out] == expected
    assert [r[:2] for r in pooled_out] == expected
    assert {r[2] for r in serial_out} == {os.getpid()}
    assert os.getpid() not in {r[2] for r in pooled_out}  # really ran in worker processes


def test_process_executor_reraises_the_job_error() -> None:
    with pytest.raises(ValueError, match="three"):
        LocalProcessExecutor(2).map(fails_on_three, [1, 2, 3, 4])
    with pytest.raises(ValueError, match="three"):
        SerialExecutor().map(fails_on_three, [3])


def test_empty_and_single_item_inputs() -> None:
    assert LocalProcessExecutor(2).map(fails_on_three, []) == []
    assert LocalProcessExecutor(2).map(fails_on_three, iter([5])) == [5]
    assert SerialExecutor().map(fails_on_three, iter([1, 2])) == [1, 2]


def test_worker_counts_and_factory() -> None:
    with pytest.raises(UserInputError):
        LocalProcessExecutor(0)
    with pytest.raises(UserInputError):
        make_executor(-1)
    assert isinstance(make_executor(1), SerialExecutor)
    two = make_executor(2)
    assert isinstance(two, LocalProcessExecutor) and two.max_workers == 2
    assert make_executor(0).max_workers == (os.cpu_count() or 1)
    assert SerialExecutor().max_workers == 1
