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


def test_readme_scikit_learn_section_runs():
    pytest.importorskip("sklearn")
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Like scikit-learn\n\n```python\n(.*?)```", readme, re.S).group(1)
    # Same code, no change: with fewer resamples than the default (10) the iris answer can be K = 1
    assert "select_k(X, range(1, 7), random_state=0)" in block
    namespace = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["labels"].shape == (150,)
    assert namespace["choice"].best_k in range(2, 7)


def _modules():
    names = ["cclust"]
    for info in pkgutil.walk_packages(cclust.__path__, "cclust."):
        if "._ext" not in info.name and not info.name.startswith("cclust.cli"):
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0


def test_the_plugin_guide_numbers_its_sections_in_order():
    text = (ROOT / "docs" / "plugins.md").read_text()
    numbers = re.findall(r"^## (\S+)\. ", text, flags=re.MULTILINE)
    assert numbers == [str(i) for i in range(1, len(numbers) + 1)], numbers
    # every "(section N)" points at a section that exists
    cited = {int(n) for n in re.findall(r"\(section (\d+)\)", text)}
    assert cited <= set(range(1, len(numbers) + 1)), cited
    titles = dict(re.findall(r"^## (\d+)\. (.+)$", text, flags=re.MULTILINE))
    assert "conformance kit" in titles[re.search(r"conformance kit \(section (\d+)\)", text).group(1)]
