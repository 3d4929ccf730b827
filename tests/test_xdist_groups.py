"""Under pytest-xdist, tests marked ``xdist_group`` run on one worker (tests/conftest.py).

A module fixture or a per-process cache (the Sphinx build, the bad-input catalogue's child
processes, a quality cell's ensembles) is built by every worker that runs one of its tests; the
suite keeps those tests on one worker by switching xdist's default "load" scheduling to
"loadgroup". This runs a small suite of its own with ``-n 2`` and this directory's conftest.
"""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("xdist")

HERE = Path(__file__).resolve().parent

GROUPED = textwrap.dedent("""
    import os
    from pathlib import Path

    import pytest

    OUT = Path(__file__).with_name("workers")


    def _record(name):
        with OUT.open("a") as f:
            f.write(f"{name} {os.environ['PYTEST_XDIST_WORKER']}\\n")


    @pytest.mark.xdist_group("shared")
    @pytest.mark.parametrize("i", range(6))
    def test_grouped(i):
        _record(f"grouped{i}")


    @pytest.mark.parametrize("i", range(6))
    def test_free(i):
        _record(f"free{i}")
""")


def _workers(tmp_path, *options):
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "workers").unlink(missing_ok=True)
    # only xdist among the installed plugins: three pytest processes start faster without the rest
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "xdist.plugin", "-p", "no:cacheprovider", "-n", "2",
         *options, "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    seen = {}
    for line in (tmp_path / "workers").read_text().splitlines():
        name, worker = line.split()
        seen[name] = worker
    return seen


def _workers_of_the_group(seen):
    assert len(seen) == 12
    return {seen[f"grouped{i}"] for i in range(6)}


def test_a_group_runs_on_one_worker_by_default(tmp_path):
    # xdist's own loadgroup first: some pytest releases lose the group suffix it adds to the
    # test ids (pytest 9.2 with xdist 3.8), and then no conftest can keep a group together
    if len(_workers_of_the_group(_workers(tmp_path, "--dist", "loadgroup"))) > 1:
        import xdist

        pytest.skip(f"pytest {pytest.__version__} with pytest-xdist {xdist.__version__} runs an "
                    "xdist_group on several workers even under --dist loadgroup")
    seen = _workers(tmp_path)
    assert len(_workers_of_the_group(seen)) == 1, seen

