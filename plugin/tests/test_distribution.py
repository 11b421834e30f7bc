"""reflex-lookout as it would be published: its sdist and wheel, checked against plugin/pyproject.toml.

`python -m build` makes the sdist from a copy of plugin/ and the wheel from that sdist (so the wheel
proves the sdist complete), with this environment's setuptools (`--no-isolation`: no network). The
copy leaves out what earlier builds left behind (`src/*.egg-info`, `build/`, `dist/`): setuptools reads
a stale egg-info's SOURCES.txt back into the sdist, which would hide what the configuration itself says.
Needs `build`, and `wheel<0.46` beside a setuptools older than 70.1; the extra `reflex-lookout[test]`
brings `build` and a newer setuptools.
"""

from __future__ import annotations

import ast
import email
import email.message
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PLUGIN = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((PLUGIN / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
PACKAGE = PLUGIN / "src" / "reflex_lookout"
# The version, as setuptools reads it (pyproject.toml: `dynamic`, from the package's __version__).
VERSION = next(ast.literal_eval(node.value) for node in ast.parse((PACKAGE / "__init__.py").read_text()).body
               if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__version__")
# Left out of the copy that is built, at the top of plugin/ (and `*.egg-info`, `__pycache__` anywhere):
# earlier builds' output and caches.
LEFT_OUT = {"build", "dist", ".pytest_cache"}


@dataclass(frozen=True)
class Built:
    wheel_files: set[str]  # paths inside the wheel
    sdist_files: set[str]  # paths inside the sdist, below its top directory
    wheel_metadata: email.message.Message  # the wheel's METADATA
    sdist_metadata: email.message.Message  # the sdist's PKG-INFO


def _copy_ignoring(directory: str, names: list[str]) -> set[str]:
    top = Path(directory) == PLUGIN
    return {n for n in names if n == "__pycache__" or n.endswith(".egg-info") or (top and n in LEFT_OUT)}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    if find_spec("build") is None:
        pytest.fail("the distribution is built with `build`: pip install 'reflex-lookout[test]' (or `build`)")
    root = tmp_path_factory.mktemp("distribution")
    source, out = root / "plugin", root / "out"
    shutil.copytree(PLUGIN, source, ignore=_copy_ignoring)
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"python -m build failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    [wheel] = out.glob("*.whl")
    [sdist] = out.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        wheel_files = set(archive.namelist())
        [metadata] = [name for name in wheel_files if name.endswith(".dist-info/METADATA")]
        wheel_metadata = email.message_from_bytes(archive.read(metadata))
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.isfile()]
        top = {m.name.split("/", 1)[0] for m in members}
        assert len(top) == 1, f"the sdist has more than one top directory: {sorted(top)}"
        sdist_files = {m.name.split("/", 1)[1] for m in members}
        pkg_info = archive.extractfile(f"{top.pop()}/PKG-INFO")
        assert pkg_info is not None
        sdist_metadata = email.message_from_bytes(pkg_info.read())
    return Built(wheel_files, sdist_files, wheel_metadata, sdist_metadata)


def _both(built: Built) -> list[tuple[str, email.message.Message]]:
    return [("wheel METADATA", built.wheel_metadata), ("sdist PKG-INFO", built.sdist_metadata)]


def test_names_the_release_of_pyproject(built: Built) -> None:
    for where, metadata in _both(built):
        assert canonicalize_name(metadata["Name"]) == canonicalize_name(PROJECT["name"]), where
        assert metadata["Version"] == VERSION, where
        assert metadata["Requires-Python"] == PROJECT["requires-python"], where
        assert set(metadata.get_all("Classifier") or []) == set(PROJECT["classifiers"]), where
        urls = {value.split(",", 1)[0].strip(): value.split(",", 1)[1].strip()
                for value in metadata.get_all("Project-URL") or []}
        assert urls == PROJECT.get("urls", {}), where


def test_requires_ranges_not_pins(built: Built) -> None:
    # An older setuptools (65, as in this repository's venv) leaves Requires-Dist out of the sdist's PKG-INFO (its egg-info's
    # requires.txt has them); the wheel's METADATA, which installers read, always lists them.
    for where, metadata in _both(built):
        if where.startswith("sdist") and not metadata.get_all("Requires-Dist"):
            continue
        required = [Requirement(r) for r in metadata.get_all("Requires-Dist") or []]
        plain = {canonicalize_name(r.name): r for r in required if r.marker is None}
        assert set(plain) == {canonicalize_name(Requirement(d).name) for d in PROJECT["dependencies"]}, where
        reflex = plain[canonicalize_name("reflex")]
        assert any(s.operator == ">=" for s in reflex.specifier), f"{where}: {reflex}"
        pinned = [str(r) for r in plain.values() if any(s.operator in ("==", "===") for s in r.specifier)]
        assert not pinned, f"{where}: exact pins {pinned}"
        assert set(metadata.get_all("Provides-Extra") or []) == set(PROJECT["optional-dependencies"]), where


def test_long_description_is_the_readme(built: Built) -> None:
    readme = (PLUGIN / PROJECT["readme"]).read_text()
    for where, metadata in _both(built):
        assert (metadata["Description-Content-Type"] or "").startswith("text/markdown"), where
        body = metadata.get_payload()
        assert isinstance(body, str) and body.strip() == readme.strip(), where


def test_wheel_holds_the_package_and_its_javascript(built: Built) -> None:
    sources = {p.relative_to(PACKAGE.parent).as_posix() for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    scripts = {p.relative_to(PACKAGE.parent).as_posix() for p in (PACKAGE / "js").glob("*.js")}
    assert scripts, "no js/*.js in the source tree"
    assert scripts <= built.wheel_files, f"missing from the wheel: {sorted(scripts - built.wheel_files)}"
    assert sources <= built.wheel_files, f"missing from the wheel: {sorted(sources - built.wheel_files)}"
    tops = {name.split("/", 1)[0] for name in built.wheel_files}
    assert tops == {"reflex_lookout", f"reflex_lookout-{VERSION}.dist-info"}, tops


def test_sdist_holds_the_sources_and_no_tests(built: Built) -> None:
    expected = {"pyproject.toml", PROJECT["readme"]} | {
        p.relative_to(PLUGIN).as_posix() for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".js")
    }
    assert expected <= built.sdist_files, f"missing from the sdist: {sorted(expected - built.sdist_files)}"


@pytest.mark.parametrize("archive", ["wheel", "sdist"])
def test_nothing_of_the_app_or_the_tests(built: Built, archive: str) -> None:
    files = built.wheel_files if archive == "wheel" else built.sdist_files
    stray = sorted(f for f in files if f.split("/", 1)[0] in ("app", "tests") or "/tests/" in f or "plugin_support" in f)
    assert not stray, f"{archive}: {stray}"


def test_sdist_holds_the_changelog(built: Built) -> None:
    assert "CHANGELOG.md" in built.sdist_files
