"""Studies are plugins: found through the ``foreseen.studies`` entry-point group.

Every installed distribution may declare studies in its metadata::

    [project.entry-points."foreseen.studies"]
    NAME = "package.module:Definition"

where ``Definition`` is a :class:`~foreseen.credit.studies.base.StudyDefinition`
subclass (instantiated without arguments), a zero-argument callable returning
one, or an instance. foreseen's own studies are declared the same way in its
``pyproject.toml``, so nothing outside a study's own package names it.

Rules:

* **cheap**: metadata is read when a ``credit`` command asks for the studies,
  never on ``foreseen --help`` or a ``teams`` command; each entry point is
  loaded (its module imported) then, and a study's heavy dependencies are
  imported only when it is built;
* **a broken plugin is one line**: an entry point that cannot be imported, or
  does not give a ``StudyDefinition`` named like the entry point, becomes an
  :class:`InstalledStudy` with ``problem`` set (naming the entry point and its
  distribution), never a traceback, and never hides the other studies;
* **foreseen's own studies first, then the first declaration of a name wins**: a plugin
  cannot shadow a shipped study whatever the order of ``sys.path``; a later declaration
  with another target is
  reported as a problem;
* **old installs**: when no entry point of the group comes from foreseen's own
  distribution (an editable install made before the group existed), the
  group's entries are read from the source tree's ``pyproject.toml`` beside
  ``src/`` (:func:`shipped_entry_points`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from foreseen.credit.studies.base import StudyDefinition
from foreseen.version import __version__

GROUP = "foreseen.studies"
#: foreseen's own distribution name (its entry points declare the shipped studies)
OWN_DISTRIBUTION = "foreseen"
#: the source tree's project file (an editable install's package sits in ``src/foreseen``)
SOURCE_PYPROJECT = Path(__file__).resolve().parents[4] / "pyproject.toml"


@dataclass(frozen=True)
class InstalledStudy:
    """One entry point of the group: its study, or the one-line reason it cannot be used."""

    name: str
    target: str
    distribution: str
    version: str
    definition: StudyDefinition | None = None
    problem: str | None = None

    def describe(self) -> str:
        """``name = target`` as written in the distribution's metadata."""
        return f"{self.name} = {self.target}"


@dataclass(frozen=True)
class _Declared:
    entry_point: metadata.EntryPoint
    distribution: str
    version: str


def _declared() -> list[_Declared]:
    found = []
    for entry in metadata.entry_points(group=GROUP):
        dist = entry.dist
        name = dist.metadata["Name"] if dist is not None else "unknown"
        version = dist.version if dist is not None else "unknown"
        found.append(_Declared(entry, str(name), str(version)))
    return found


def shipped_entry_points(pyproject: Path = SOURCE_PYPROJECT) -> list[metadata.EntryPoint]:
    """The group's entries in foreseen's source ``pyproject.toml`` (empty when absent)."""
    if not pyproject.is_file():
        return []
    project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    if project.get("name") != OWN_DISTRIBUTION:
        return []
    table = project.get("entry-points", {}).get(GROUP, {})
    return [metadata.EntryPoint(name=name, value=str(value), group=GROUP)
            for name, value in table.items()]


def _with_shipped(declared: list[_Declared],
                  shipped: Iterable[metadata.EntryPoint]) -> list[_Declared]:
    """``declared`` with foreseen's own entries first (a plugin cannot shadow a shipped
    study, whatever the order of ``sys.path``), plus the shipped studies when foreseen's
    metadata lacks the group."""
    own = [d for d in declared if _normal(d.distribution) == OWN_DISTRIBUTION]
    others = [d for d in declared if _normal(d.distribution) != OWN_DISTRIBUTION]
    if not own:
        own = [_Declared(entry, OWN_DISTRIBUTION, __version__) for entry in shipped]
    return own + others


def _normal(name: str) -> str:
    return name.lower().replace("_", "-")


def load_entry(declared: _Declared) -> InstalledStudy:
    """Load one entry point into an :class:`InstalledStudy` (a problem line on failure)."""
    entry = declared.entry_point
    base = InstalledStudy(entry.name, entry.value, declared.distribution, declared.version)
    where = f"study plugin {entry.name!r} ({base.describe()}, from {declared.distribution})"
    try:
        loaded = entry.load()
        definition = loaded() if callable(loaded) and not isinstance(
            loaded, StudyDefinition) else loaded
    except Exception as error:  # a plugin's import or constructor may raise anything
        text = str(error).splitlines()[0] if str(error) else ""
        return _broken(base, f"{where} cannot be loaded: {type(error).__name__}: {text}")
    if not isinstance(definition, StudyDefinition):
        return _broken(base, f"{where} gives a {type(definition).__name__}, not a"
                             " foreseen StudyDefinition")
    name = getattr(definition, "name", None)
    if name != entry.name:
        return _broken(base, f"{where} defines a study named {name!r}; the entry point's"
                             " name must equal it")
    return InstalledStudy(base.name, base.target, base.distribution, base.version, definition)


def _broken(base: InstalledStudy, problem: str) -> InstalledStudy:
    return InstalledStudy(base.name, base.target, base.distribution, base.version,
                          problem=problem)


def discover(shipped: Sequence[metadata.EntryPoint] | None = None) -> tuple[InstalledStudy, ...]:
    """Every study of the group in declaration order, the shipped ones first when they
    come from the fallback; the first declaration of a name wins (a different later
    target is a problem entry)."""
    declared = _with_shipped(_declared(),
                             shipped_entry_points() if shipped is None else shipped)
    chosen: dict[str, InstalledStudy] = {}
    clashes: list[InstalledStudy] = []
    for entry in declared:
        name, value = entry.entry_point.name, entry.entry_point.value
        if name in chosen:
            if chosen[name].target != value:
                clashes.append(_broken(
                    InstalledStudy(name, value, entry.distribution, entry.version),
                    f"study plugin {name!r} ({name} = {value}, from {entry.distribution})"
                    f" is ignored: {chosen[name].distribution} already declares {name!r}"))
            continue
        chosen[name] = load_entry(entry)
    return (*chosen.values(), *clashes)
