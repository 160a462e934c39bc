"""Install a study plugin the honest way for a test: its modules and a ``.dist-info``
folder (``METADATA``, ``entry_points.txt``) in a folder put first on ``sys.path``."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

import pytest


def install_plugin(monkeypatch: pytest.MonkeyPatch, root: Path, distribution: str,
                   version: str, entry_points: Mapping[str, str],
                   modules: Mapping[str, str] | None = None,
                   sources: Path | None = None) -> Path:
    """Write ``modules`` (dotted name → source) and the distribution's metadata under
    ``root``, put ``root`` (and ``sources``, a plugin's source folder) on ``sys.path``,
    and clear the study registry's cache; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for dotted, source in (modules or {}).items():
        path = root.joinpath(*dotted.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    info = root / f"{distribution.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\n"
                                   f"Version: {version}\n", encoding="utf-8")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[foreseen.studies]\n{lines}", encoding="utf-8")
    if sources is not None:
        monkeypatch.syspath_prepend(str(sources))
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    clear_registry()
    return root


def clear_registry() -> None:
    """Forget the discovered studies (the next ``credit`` command discovers again)."""
    from foreseen.credit.studies.registry import installed

    installed.cache_clear()
