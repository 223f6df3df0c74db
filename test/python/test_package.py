"""The package's metadata: one version, written once (python/tile/_version.py),
that pyproject.toml, tile.__version__ and an installed distribution agree on."""

import importlib.metadata
import os
import re

import pytest

import tile
from conftest import REPO

VERSION_FILE = os.path.join(REPO, "python", "tile", "_version.py")


def test_the_version_file_is_one_line_a_regex_reads():
    # CMake reads the version with a regex: exactly one __version__ line.
    with open(VERSION_FILE) as f:
        found = re.findall(r'^__version__ = "(\d+\.\d+\.\d+)"$', f.read(), re.MULTILINE)
    assert found == [tile.__version__]


def test_pyproject_takes_the_version_from_the_package():
    tomllib = pytest.importorskip("tomllib")   # Python 3.11
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "tile._version.__version__"}
    assert project["project"]["dependencies"] == []   # the frontend: standard library only


def test_an_installed_distribution_has_the_same_version():
    try:
        installed = importlib.metadata.version("tile-mlir")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("tile-mlir is not installed (pip install -e . installs it)")
    assert installed == tile.__version__
