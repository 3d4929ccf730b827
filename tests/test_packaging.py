"""What gets built and shipped: the docs build from the ``docs`` extra alone (CI's test run builds them),
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


def test_ci_runs_the_readme_test_command_which_builds_the_docs():
    """CI runs README's test command in a fresh venv; the docs build is one of its tests
    (tests/test_sphinx_docs.py), run as from the ``docs`` extra alone."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'in_fresh_venv "$test_cmd"' in ci and "readme_command test-command" in ci
    assert "pytest" in _readme_command("test-command")
    sphinx_test = (ROOT / "tests" / "test_sphinx_docs.py").read_text(encoding="utf-8")
    assert "without=_test_only_modules()" in sphinx_test and '"-W"' in sphinx_test
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


# -- what the wheel carries ----------------------------------------------------------------------

SOURCE_SUFFIXES = (".pyx", ".pxd", ".pxi", ".cpp", ".hpp", ".h", ".c")


def test_wheel_configuration_ships_no_sources():
    tomllib = pytest.importorskip("tomllib")
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    # Nothing rides along from the sdist's file list: the wheel gets exactly package-data.
    assert setuptools["include-package-data"] is False
    assert setuptools["packages"]["find"]["namespaces"] is False
    patterns = [p for globs in setuptools["package-data"].values() for p in globs]
    shipped = {path for pattern in patterns for path in (ROOT / "cclust").glob(pattern)}
    assert shipped, patterns
    assert not [p for p in shipped if p.suffix in SOURCE_SUFFIXES], shipped
    assert {p.name for p in shipped} >= {"py.typed", "iris.npz", "wine.npz"}
    excluded = setuptools["exclude-package-data"]["*"]
    assert {f"*{suffix}" for suffix in SOURCE_SUFFIXES} <= set(excluded)


def test_sdist_manifest_keeps_the_sources():
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    lines = {line.strip() for line in manifest.splitlines() if line.strip() and not line.startswith("#")}
    assert {"include cclust/_ext/*.pyx cclust/_ext/*.pxd cclust/_ext/*.pxi", "graft cclust/_ext/include",
            "graft cclust/_ext/src", "exclude cclust/_ext/_*.cpp", "graft plugins"} <= lines
    # every hand-written source is where the manifest looks for it
    assert list((ROOT / "cclust" / "_ext").glob("*.pyx")) and list((ROOT / "cclust" / "_ext" / "src").glob("*.cpp"))


def test_installed_cclust_carries_no_sources():
    """The installed distribution's file list (RECORD) is the wheel's: in CI, where cclust is
    installed from a wheel built by pip, it must hold no Cython or C++ sources."""
    from importlib import metadata

    files = [str(f) for f in (metadata.files("cclust") or [])]
    if "cclust/__init__.py" not in files:
        pytest.skip("cclust is installed in editable mode (or not at all): no wheel to inspect")
    sources = [f for f in files if f.startswith("cclust/") and f.endswith(SOURCE_SUFFIXES)]
    assert not sources, sources
    for needed in ("cclust/py.typed", "cclust/datasets/iris.npz", "cclust/datasets/wine.npz"):
        assert needed in files
    assert [f for f in files if f.startswith("cclust/_ext/_contingency") and not f.endswith(".py")]


# -- the wheels ----------------------------------------------------------------------------------

def _pyproject():
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_cibuildwheel_builds_every_supported_cpython():
    pyproject = _pyproject()
    cibw = pyproject["tool"]["cibuildwheel"]
    oldest = re.fullmatch(r">=3\.(\d+)", pyproject["project"]["requires-python"])
    assert oldest, pyproject["project"]["requires-python"]
    minors = sorted(int(re.fullmatch(r"cp3(\d+)-\*", pattern).group(1)) for pattern in cibw["build"])
    # from the oldest Python the package admits, none skipped
    assert minors[0] == int(oldest.group(1)) and minors == list(range(minors[0], minors[-1] + 1)), minors
    assert cibw["archs"] == ["auto64"]
    # the serial build on macOS is asked for by a switch setup.py reads
    assert cibw["macos"]["environment"]["CCLUST_NO_OPENMP"] == "1"
    assert 'os.environ.get("CCLUST_NO_OPENMP") == "1"' in (ROOT / "setup.py").read_text(encoding="utf-8")


def test_cibuildwheel_test_command_names_tests_that_exist():
    """Every wheel is tested from a directory holding only test-sources: each must exist, and so
    must each test file and test function the command names."""
    cibw = _pyproject()["tool"]["cibuildwheel"]
    for source in cibw["test-sources"]:
        assert (ROOT / source).exists(), source
    commands = cibw["test-command"]
    assert "cclust run iris" in commands
    pytest_commands = [c for c in commands if c.startswith("pytest ")]
    assert len(pytest_commands) == 1, commands
    targets = [arg for arg in pytest_commands[0].split()[1:] if not arg.startswith("-") and arg != "no:cacheprovider"]
    assert targets, pytest_commands
    for target in targets:
        path, _, function = target.partition("::")
        assert path.split("/")[0] in cibw["test-sources"], target
        assert (ROOT / path).is_file(), target
        if function:
            assert re.search(rf"^def {function}\(", (ROOT / path).read_text(encoding="utf-8"), re.M), target
    assert any(t.endswith("::test_installed_cclust_carries_no_sources") for t in targets), targets


def test_local_wheel_check_runs_the_cibuildwheel_test_command():
    script = ROOT / "tools" / "check_wheel.sh"
    text = script.read_text(encoding="utf-8")
    # the command cibuildwheel runs on every wheel, read from pyproject.toml, not a copy of it
    assert '["tool"]["cibuildwheel"]' in text and '"test-command"' in text and '"test-sources"' in text
    assert "auditwheel show" in text and "build --sdist" in text and "build --wheel" in text
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_wheels_workflow_builds_each_platform_and_checks_the_sdist():
    if not (ROOT / ".github").is_dir():
        pytest.skip("no .github: a test run from the unpacked sdist, which carries no CI files")
    workflow = (ROOT / ".github" / "workflows" / "wheels.yml").read_text(encoding="utf-8")
    assert re.search(r"uses: pypa/cibuildwheel@v\d", workflow)
    runners = re.search(r"os: \[(.*)\]", workflow).group(1).split(", ")
    assert {r.split("-")[0] for r in runners} == {"ubuntu", "macos", "windows"}, runners
    assert len([r for r in runners if r.startswith("macos")]) == 2, runners  # x86_64 and arm64
    assert "tools/check_wheel.sh" in workflow
