"""The executor interface: results in submission order, errors surface, no stray workers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from foreseen.core import parallel, worker
from foreseen.core.errors import UserInputError
from foreseen.core.parallel import (
    DaskExecutor,
    Executor,
    LocalProcessExecutor,
    SerialExecutor,
    make_executor,
    parse_executor,
)

from support.jobs import context_size, fails_on_three, read_context, slow_square


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


# --- sessions: one pool, a shared context sent once per worker, the code digest ---

def test_a_session_keeps_one_pool_and_gives_every_job_the_context() -> None:
    context = {"blocks": list(range(1000)), "name": "ctx"}
    with LocalProcessExecutor(2).session(context) as pool:
        first = pool.map(read_context, ["name"] * 6)
        second = pool.map(read_context, ["blocks"] * 6)
    assert [value for value, _ in first] == ["ctx"] * 6
    assert all(value == list(range(1000)) for value, _ in second)
    pids = {pid for _, pid in first} | {pid for _, pid in second}
    assert os.getpid() not in pids and len(pids) <= 2  # the same two workers for both maps
    with SerialExecutor().session({"name": "here"}) as pool:
        assert pool.map(read_context, ["name"]) == [("here", os.getpid())]
    # outside a session a job sees no context, and sessions do not leak into each other
    assert SerialExecutor().map(context_size, [0]) == [0]
    assert parallel.shared_context() == {}


def test_a_worker_with_other_code_refuses_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    job = parallel.Job(read_context, "name", "no-session", "f" * 64)
    with pytest.raises(UserInputError, match=r"runs foreseen code .* install the same foreseen"):
        parallel.run_job(job)
    # through a pool: the driver's digest is patched, the fresh workers compute their own
    monkeypatch.setattr(parallel, "package_digest", lambda: "0" * 64)
    with pytest.raises(UserInputError, match="the driver sent jobs for 000000000000"):
        LocalProcessExecutor(2).map(read_context, ["a", "b"])


def test_package_digest_changes_with_any_source_file(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "foreseen"
    (root / "core").mkdir(parents=True)
    (root / "core" / "a.py").write_text("x = 1\n")
    (root / "b.py").write_text("y = 2\n")
    monkeypatch.setattr(worker, "PACKAGE_ROOT", root)
    worker.package_digest.cache_clear()
    try:
        before = worker.package_digest()
        worker.package_digest.cache_clear()
        (root / "core" / "a.py").write_text("x = 2\n")
        assert worker.package_digest() != before
    finally:
        worker.package_digest.cache_clear()


def test_executor_specs() -> None:
    assert isinstance(parse_executor("local:1"), SerialExecutor)
    assert parse_executor("local:2").max_workers == 2
    assert parse_executor("local").max_workers == (os.cpu_count() or 1)
    dask = parse_executor("dask")
    assert isinstance(dask, DaskExecutor) and dask.address is None and dask.max_workers == 2
    remote = parse_executor("dask:tcp://10.0.0.5:8786")
    assert isinstance(remote, DaskExecutor) and remote.address == "tcp://10.0.0.5:8786"
    for bad in ("ray", "local:x", "local:-2", ""):
        with pytest.raises(UserInputError):
            parse_executor(bad)


def test_dask_local_cluster_gives_the_serial_results_in_order_with_the_context() -> None:
    items = [(i, 0.02 * (5 - i)) for i in range(6)]
    with DaskExecutor(workers=2).session({"name": "dask"}) as pool:
        squares = pool.map(slow_square, items)
        seen = pool.map(read_context, ["name"] * 4)
        with pytest.raises(ValueError, match="three"):
            pool.map(fails_on_three, [1, 3])
    assert [r[:2] for r in squares] == [(i, i * i) for i in range(6)]
    assert [value for value, _ in seen] == ["dask"] * 4
    assert os.getpid() not in {pid for _, pid in seen}
