"""The documentation's code runs: the README's first look and every docstring example."""
import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import cclust

ROOT = Path(__file__).resolve().parents[1]


def test_readme_first_look_runs():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## A first look\n\n```python\n(.*?)```", readme, re.S).group(1)
    namespace = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["result"].n_clusters == 3


def _modules():
    names = ["cclust"]
    for info in pkgutil.walk_packages(cclust.__path__, "cclust."):
        if "._ext" not in info.name and not info.name.endswith("cli"):
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
