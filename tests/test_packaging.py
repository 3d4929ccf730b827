"""What gets built and shipped: the docs build from the ``docs`` extra alone (and CI proves it),
the hypothesis strategies import without hypothesis, and the wheel carries no sources."""
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_command(marker):
    block = re.search(rf"<!-- {marker} -->\n```bash\n(.*?)```\n<!-- /{marker} -->", README, re.S)
    assert block, f"README.md has no {marker} block"
    return block.group(1).strip()


# -- the documentation build -------------------------------------------------------------------

def test_readme_docs_command_installs_the_docs_extra_only():
    command = _readme_command("docs-command")
    installs = re.findall(r"pip install (\S+)", command)
    assert installs == ['".[docs]"'], installs
    assert "python -m sphinx -W -b html docs docs/_build/html" in command


def test_ci_runs_the_docs_command_in_its_own_venv():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'in_fresh_venv "$test_cmd"' in ci and 'in_fresh_venv "$docs_cmd"' in ci
    assert "readme_command docs-command" in ci
    done = subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_strategies_import_without_hypothesis():
    """The docs document cclust.testing.strategies from the docs extra, without hypothesis: the
    module imports, shows each strategy's own signature, and says what to install when drawn."""
    code = textwrap.dedent("""
        import inspect, sys
        sys.modules["hypothesis"] = None   # as if it were not installed
        from cclust.testing import strategies
        for name in ("ensembles", "label_columns", "degenerate_ensembles", "labellings"):
            params = inspect.signature(getattr(strategies, name)).parameters
            assert "draw" not in params and params, (name, params)
        assert strategies.PROFILES["cclust-ci"]["derandomize"] is True
        for call in (lambda: strategies.ensembles(max_n=5), lambda: strategies.labellings(3),
                     strategies.profile):
            try:
                call()
            except ImportError as exc:
                assert "pip install hypothesis" in str(exc), exc
            else:
                raise AssertionError("no ImportError without hypothesis")
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_strategies_draw_with_hypothesis():
    hypothesis = pytest.importorskip("hypothesis")
    import inspect

    from cclust.testing.strategies import ensembles, profile

    assert list(inspect.signature(ensembles).parameters) == [
        "min_n", "max_n", "max_partitions", "max_k", "min_partitions", "missing", "weights"]
    seen = []

    @hypothesis.settings(profile(), max_examples=5)
    @hypothesis.given(ensembles(max_n=4, missing=True))
    def draw(ensemble):
        seen.append(ensemble.n_samples)

    draw()
    assert seen and max(seen) <= 4
