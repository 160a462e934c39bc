"""Backend options that do not fit the constructor: one line from its signature, never
Python's own TypeError words (credit.backends.registry.build_backend)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from foreseen.core.errors import ConfigError
from foreseen.credit.backends.registry import build_backend, register_backend, unregister_backend


def test_an_unknown_option_lists_what_the_backend_accepts() -> None:
    with pytest.raises(ConfigError) as caught:
        build_backend("zero", {"bogus": 1})
    assert str(caught.value) == ("backend 'zero': unknown option bogus; it accepts point, lower,"
                                 " upper, direction_probability, name")


def test_a_missing_option_is_named() -> None:
    with pytest.raises(ConfigError, match=r"missing option argv; it accepts argv, timeout_s"):
        build_backend("command", {})
    with pytest.raises(ConfigError, match=r"unknown options a, b; missing option argv"):
        build_backend("command", {"a": 1, "b": 2})


@pytest.fixture()
def broken() -> Iterator[str]:
    def factory(**options: Any) -> Any:
        return len(options["x"])  # a TypeError inside the backend's own code

    register_backend("broken-for-test", factory)
    yield "broken-for-test"
    unregister_backend("broken-for-test")


def test_a_type_error_inside_a_backend_is_not_worded_as_python(broken: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build_backend(broken, {"x": 3})
    assert str(caught.value) == "backend 'broken-for-test': its options do not fit (x given)"
    assert "len()" not in str(caught.value)
