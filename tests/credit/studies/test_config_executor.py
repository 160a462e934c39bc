"""The run configuration's ``executor`` field and the ``--executor``/``--workers`` flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreseen.core.errors import ConfigError
from foreseen.core.parallel import DaskExecutor, LocalProcessExecutor, SerialExecutor
from foreseen.credit.studies.config import RunConfig, load_config, parse_config
from foreseen.credit.studies.overrides import Overrides, apply_overrides


def test_executor_field_is_read_from_toml_and_checked(tmp_path: Path) -> None:
    file = tmp_path / "run.toml"
    file.write_text('study = "controlled"\nexecutor = "dask:tcp://scheduler:8786"\n')
    config = load_config(file)
    executor = config.build_executor()
    assert isinstance(executor, DaskExecutor) and executor.address == "tcp://scheduler:8786"
    with pytest.raises(ConfigError, match=r"^run\.toml: executor: --executor 'ray'"):
        file.write_text('study = "controlled"\nexecutor = "ray"\n')
        load_config(file)


def test_executor_wins_over_workers_and_workers_alone_means_local() -> None:
    both = parse_config({"study": "controlled", "workers": 1, "executor": "local:2"})
    assert isinstance(both.build_executor(), LocalProcessExecutor)
    assert isinstance(parse_config({"study": "controlled", "workers": 1}).build_executor(),
                      SerialExecutor)
    assert RunConfig(study="controlled").build_executor().max_workers >= 1


def test_flags_decide_where_the_build_runs() -> None:
    file_config = parse_config({"study": "controlled", "executor": "dask"})
    by_workers = apply_overrides(file_config, Overrides(workers=1))
    assert by_workers.executor is None and isinstance(by_workers.build_executor(),
                                                      SerialExecutor)
    by_executor = apply_overrides(file_config, Overrides(workers=1, executor="local:2"))
    assert by_executor.executor == "local:2"
    kept = apply_overrides(file_config, Overrides(replicates=200))
    assert kept.executor == "dask"
    with pytest.raises(ConfigError, match="command line: executor"):
        apply_overrides(file_config, Overrides(executor="local:many"))
