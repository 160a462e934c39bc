"""The documentation: the site builds with warnings as errors, its generated pages cover
every command, the exit-code table matches the error classes, and no output of the package
cites a document that is not shipped."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core import errors

from support.paths import REPO, SRC

sys.path.insert(0, str(REPO / "tools"))
import docs_hooks

DOCS = REPO / "docs"
PACKAGE = SRC / "foreseen"

# --- no output cites a document that is not shipped --------------------------------------

#: names of documents that exist only outside this repository
UNSHIPPED = re.compile(r"spec\s+(?:teams|credit)\.md|\.\./shared|shared/(?:spec|design)"
                       r"|design\.md|\bspec\s+§|specification,\s*§")
#: a section citation: "teams §3", "credit §5.1", "teams §3-§5"
SECTION = re.compile(r"\b(teams|credit) §(\d+(?:\.\d+)?)(?:\s*[-–]\s*§(\d+(?:\.\d+)?))?")
DOC_PATH = re.compile(r"docs/([\w.-]+\.md)")
SPEC_PAGE = "docs/spec.md"


def _anchor(instrument: str, section: str) -> str:
    return "{#" + f"{instrument}-{section.replace('.', '-')}" + "}"


def citation_problems(text: str, docs: Path = DOCS) -> list[str]:
    """What is wrong with the document citations of one output text (empty: nothing).

    A citation must name a shipped page: no unshipped file name; a section
    citation ("teams §3") only beside ``docs/spec.md`` and only of a section
    that page has; every ``docs/X.md`` named must exist.
    """
    problems = [f"cites an unshipped document: {m.group(0)!r}" for m in UNSHIPPED.finditer(text)]
    spec = (docs / "spec.md").read_text(encoding="utf-8")
    for match in SECTION.finditer(text):
        if SPEC_PAGE not in text:
            problems.append(f"{match.group(0)!r} without naming {SPEC_PAGE}")
        for section in filter(None, match.group(2, 3)):
            if _anchor(match.group(1), section) not in spec:
                problems.append(f"{match.group(1)} §{section} is not in {SPEC_PAGE}")
    if "§" in text and not SECTION.search(text):
        problems.append("a § citation that names no instrument (teams or credit)")
    problems += [f"names {m.group(0)}, which does not exist" for m in DOC_PATH.finditer(text)
                 if not (docs / m.group(1)).is_file()]
    return problems


def _docstring_nodes(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                found.add(id(body[0].value))
    return found


def output_strings(path: Path) -> Iterator[tuple[int, str]]:
    """Every string literal of a module that can reach a user: all but docstrings, except in
    ``cli/``, whose docstrings are the commands' help."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if "cli" in path.relative_to(PACKAGE).parts else _docstring_nodes(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in skip):
            yield node.lineno, node.value


def test_no_output_of_the_package_cites_an_unshipped_document() -> None:
    found = [f"{path.relative_to(SRC)}:{line}: {problem}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for line, text in output_strings(path)
             for problem in citation_problems(text)]
    found += [f"{path.relative_to(SRC)}: {problem}"
              for path in sorted((PACKAGE / "data").rglob("*.md"))
              for problem in citation_problems(path.read_text(encoding="utf-8"))]
    assert found == []


@pytest.mark.parametrize(("text", "expected"), [
    ("see spec teams.md §5", ["unshipped", "names no instrument"]),
    ("(spec credit.md)", ["unshipped"]),
    ("rule 4 of ../shared/spec/teams.md", ["unshipped"]),
    ("protocol (spec §5 step 3)", ["unshipped", "names no instrument"]),
    ("(teams §5 in docs/spec.md)", []),
    ("(teams §3-§5 in docs/spec.md)", []),
    ("(teams §5.1 in docs/spec.md)", []),
    ("(teams §9 in docs/spec.md)", ["teams §9 is not in"]),
    ("(teams §3-§9 in docs/spec.md)", ["teams §9 is not in"]),
    ("(credit §14 in docs/spec.md)", ["credit §14 is not in"]),
    ("(teams §3)", ["without naming"]),
    ("see docs/glossary.md", []),
    ("see docs/nowhere.md", ["does not exist"]),
    ("a plain sentence", []),
])
def test_the_citation_check_refuses_what_it_exists_to_catch(text: str,
                                                            expected: list[str]) -> None:
    problems = citation_problems(text)
    assert len(problems) == len(expected), problems
    for problem, fragment in zip(problems, expected, strict=True):
        assert fragment in problem


def test_the_scan_reads_string_literals_and_skips_docstrings_outside_the_cli(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "foreseen"
    (package / "cli").mkdir(parents=True)
    source = '"""Module (spec teams.md §1)."""\nX = f"caption (spec {1} credit.md §2)"\n'
    (package / "core.py").write_text(source)
    (package / "cli" / "command.py").write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert {line for line, _ in output_strings(package / "core.py")} == {2}
    assert {line for line, _ in output_strings(package / "cli" / "command.py")} == {1, 2}


#: "teams §5", "credit §5, §10", "credit §5–§8": an instrument and its sections
CITED = re.compile(r"\b(teams|credit) (§\d+(?:\.\d+)?(?:\s*(?:,|–|-|and)\s*§\d+(?:\.\d+)?)*)")


def cited_sections(text: str) -> set[tuple[str, str]]:
    """Every (instrument, section) a text cites, lists and ranges' ends included."""
    return {(match.group(1), number) for match in CITED.finditer(text)
            for number in re.findall(r"§(\d+(?:\.\d+)?)", match.group(2))}


def test_every_section_the_code_cites_is_on_the_spec_page() -> None:
    """Docstrings, comments and the schemas' descriptions cite "teams §3" / "credit §7":
    sections of docs/spec.md."""
    spec = (DOCS / "spec.md").read_text(encoding="utf-8")
    cited: dict[tuple[str, str], str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not UNSHIPPED.search(text), f"{path.relative_to(SRC)} cites an unshipped file"
        for key in cited_sections(text):
            cited.setdefault(key, str(path.relative_to(SRC)))
    for path in sorted((DOCS / "schemas").glob("*.json")):  # descriptions come from docstrings
        text = path.read_text(encoding="utf-8")
        assert not UNSHIPPED.search(text), f"{path.name} cites an unshipped file"
        for key in cited_sections(text):
            cited.setdefault(key, path.name)
    assert len(cited) > 15
    missing = {f"{i} §{n} ({where})" for (i, n), where in cited.items()
               if _anchor(i, n) not in spec}
    assert missing == set()


def test_cited_sections_reads_lists_and_ranges() -> None:
    assert cited_sections("(credit §5, §10; teams §3-§5 and teams §5.1)") == {
        ("credit", "5"), ("credit", "10"), ("teams", "3"), ("teams", "5"), ("teams", "5.1")}
    assert cited_sections("see §4 of the paper") == set()


# --- the exit-code table ------------------------------------------------------------------

ROW = re.compile(r"^\| (\d+) \| `(\w+)` \|", re.MULTILINE)


def _error_classes() -> dict[str, type[errors.ForeseenError]]:
    """Every error class of the package's error modules, by name."""
    found: dict[str, type[errors.ForeseenError]] = {}
    for module_name in ("foreseen.core.errors", "foreseen.core.ledger.lock"):
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, errors.ForeseenError)
                    and value.__module__ == module_name):
                found[name] = value
    return found


def test_the_exit_code_table_gives_every_error_kind_its_real_code() -> None:
    table = {name: int(code) for code, name in
             ROW.findall((DOCS / "errors.md").read_text(encoding="utf-8"))}
    classes = _error_classes()
    assert set(table) == set(classes)
    assert {name: classes[name].exit_code for name in table} == table
    assert {table["UserInputError"], table["RunHalted"], table["RequestRejected"]} == {2, 3, 4}


# --- the generated pages ------------------------------------------------------------------

BOX_COMMAND = re.compile(r"^│ ([a-z][a-z0-9-]*)\s")


def _listed_commands(words: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The commands ``foreseen WORDS --help`` lists in its Commands box (the user's view)."""
    with pytest.raises(SystemExit):
        main([*words, "--help"])
    lines = capsys.readouterr().out.splitlines()
    if not any("Commands" in line for line in lines):
        return []
    start = next(i for i, line in enumerate(lines) if "Commands" in line)
    box = lines[start + 1:]
    box = box[:next(i for i, line in enumerate(box) if line.startswith("╰"))]
    return [m.group(1) for line in box if (m := BOX_COMMAND.match(line))]


def test_the_cli_reference_has_every_command_the_help_lists(
        capsys: pytest.CaptureFixture[str]) -> None:
    page = docs_hooks.cli_markdown()
    pending: list[list[str]] = [[]]
    seen = []
    while pending:
        words = pending.pop()
        seen.append(" ".join(["foreseen", *words]))
        pending += [[*words, name] for name in _listed_commands(words, capsys)]
    assert len(seen) > 30  # the teams and credit commands, the nested groups
    headings = set(re.findall(r"^#+ `(foreseen[a-z0-9 -]*)`$", page, re.MULTILINE))
    assert headings == set(seen)
    analyze = page.split("# `foreseen teams analyze`\n", 1)[1].split("\n#", 1)[0]
    assert "`--seed`" in analyze and "`20261009`" in analyze and "`--no-html`" in analyze


def test_the_schema_index_lists_every_shipped_schema() -> None:
    page = docs_hooks.schemas_markdown()
    shipped = sorted(p.name for p in (DOCS / "schemas").glob("*.schema.json"))
    assert shipped and re.findall(r"^\| \[([\w.-]+)\]\(schemas/\1\)", page, re.MULTILINE) == shipped


def test_the_home_page_is_the_readme_with_site_links() -> None:
    page = docs_hooks.index_markdown()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "](docs/" in readme and "](docs/" not in page
    assert page.startswith(readme.replace("](docs/", "](").rstrip("\n"))
    assert "(cli.md)" in page and "(api.md)" in page


# --- the site -----------------------------------------------------------------------------

def _mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, env=env, timeout=600, check=False)


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    built = _mkdocs(REPO / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stderr
    site = tmp_path / "site"
    cli = (site / "cli.html").read_text(encoding="utf-8")
    assert "foreseen credit study" in cli and "foreseen teams analyze" in cli
    api = (site / "api.html").read_text(encoding="utf-8")
    assert "IntegrityError" in api and "load_matrix" in api
    assert (site / "img" / "teams-coverage-curve.svg").is_file()
    assert (site / "schemas" / "credit-report.schema.json").is_file()
    for page in site.glob("*.html"):  # the site fetches nothing from elsewhere
        assert not re.search(r"<(?:script|link)[^>]+(?:src|href)=\"https?://",
                             page.read_text(encoding="utf-8")), page.name


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# home\n\nSee [the guide](guide.md).\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: broken\ntheme:\n  name: mkdocs\n  highlightjs: false\n")
    built = _mkdocs(config, tmp_path / "site")
    assert built.returncode != 0 and "guide.md" in built.stderr
    (tmp_path / "docs" / "guide.md").write_text("# guide\n")
    assert _mkdocs(config, tmp_path / "site").returncode == 0


# --- the glossary -------------------------------------------------------------------------

GLOSSARY = DOCS / "glossary.md"


def undefined_notation(report: str, glossary: str) -> set[str]:
    """The notations a credit ``report.md`` prints that the glossary does not define:
    context ids (``kind@map`` defined as ``kind@m``, ``kind@name`` or itself), reason codes
    (in parentheses or before a colon in a gate's reasons), contrast kinds."""
    undefined = set()
    for kind, qualifier in set(re.findall(r"\b([a-z_]+)@([a-z_]+)\b", report)):
        if not any(f"`{kind}@{q}`" in glossary for q in ("m", "name", qualifier)):
            undefined.add(f"{kind}@{qualifier}")
    codes = set(re.findall(r"\(([a-z]+(?:_[a-z]+)+)\)", report))
    codes |= set(re.findall(r"\b([a-z]+(?:_[a-z]+)+):(?:delta|drift)", report))
    codes |= set(re.findall(r"^\| (delta_[a-z]+|drift_reduction) \|", report, re.MULTILINE))
    undefined |= {code for code in codes if f"`{code}`" not in glossary}
    return undefined


def test_the_glossary_defines_every_notation_a_shipped_report_prints() -> None:
    glossary = GLOSSARY.read_text(encoding="utf-8")
    reports = sorted((REPO / "examples" / "runs").glob("*/report.md"))
    assert reports
    for path in reports:
        assert undefined_notation(path.read_text(encoding="utf-8"), glossary) == set(), path


def test_the_glossary_check_finds_what_is_missing() -> None:
    report = ("| delta_desc | x |\n| drift_reduction | y |\n"
              "- reasons: too_few_clusters:delta_desc/a\n"
              "estimate 1 (no_such_reason) via donor_card@seed_swap and signal@exact and "
              "novel@map\n")
    glossary = "`delta_desc` `too_few_clusters` `donor_card@m` `signal@name`"
    assert undefined_notation(report, glossary) == {"drift_reduction", "no_such_reason",
                                                    "novel@map"}
