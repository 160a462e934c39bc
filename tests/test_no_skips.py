"""A skip anywhere in the suite fails the run (tests/support/no_skips.py)."""

from __future__ import annotations

import pytest

PLUGIN = "from support.no_skips import pytest_make_collect_report, pytest_runtest_makereport\n"


def _run(pytester: pytest.Pytester, source: str) -> pytest.RunResult:
    pytester.makeconftest(PLUGIN)
    pytester.makepyfile(test_sample=source)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider")


def test_a_passing_test_still_passes(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "def test_ok():\n    assert True\n")
    result.assert_outcomes(passed=1)
    assert result.ret == 0


@pytest.mark.parametrize("source", [
    "import pytest\n\ndef test_s():\n    pytest.skip('no tool')\n",
    "import pytest\n\n@pytest.mark.skipif(True, reason='no tool')\ndef test_s():\n    pass\n",
    "import pytest\n\n@pytest.mark.skip(reason='no tool')\ndef test_s():\n    pass\n",
    "import pytest\n\n@pytest.fixture\ndef f():\n    pytest.skip('no tool')\n\n"
    "def test_s(f):\n    pass\n",
    "import pytest\n\n@pytest.mark.xfail(reason='no tool')\ndef test_s():\n    assert False\n",
], ids=["call", "skipif", "skip_mark", "fixture", "xfail"])
def test_a_skipped_test_fails_the_run(pytester: pytest.Pytester, source: str) -> None:
    result = _run(pytester, source)
    outcomes = result.parseoutcomes()
    # a skip while running the test is a failure; one while setting it up, an error
    assert outcomes.get("failed", 0) + outcomes.get("errors", 0) == 1
    assert set(outcomes) <= {"failed", "errors"}
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*skipped tests fail this suite*no tool*"])


def test_a_module_level_skip_fails_the_run(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "import pytest\n\npytest.importorskip('no_such_module_here')\n\n"
                            "def test_never():\n    pass\n")
    assert result.ret != pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*skipped tests fail this suite*no_such_module_here*"])
    assert "skipped" not in result.stdout.lines[-1]
