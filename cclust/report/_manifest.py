"""The reproducibility manifest: versions, parameters, seeds and SHA-256 of the inputs.

A manifest is a JSON object. Its ``format`` and ``format_version`` say how to read it; a
reader refuses a manifest of another format or of a newer version instead of guessing. The
labels a run produced are kept as SHA-256 digests of their int64 bytes, so a replay can say
whether it gave the same labels without the manifest holding one number per object.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from importlib import metadata
from typing import Any

import numpy as np

from cclust.errors import ValidationError

#: the value of a manifest's ``format`` field
FORMAT = "cclust-report-manifest"

#: the newest manifest layout this cclust reads and the one it writes
FORMAT_VERSION = 1

#: distributions whose versions a manifest records (the ones whose code decides the labels or
#: the figures); those not installed are recorded as None
DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "pandas", "matplotlib", "anndata", "threadpoolctl")

#: how a manifest sits inside the HTML report: a JSON block no browser runs
_HTML_BLOCK = re.compile(r'<script type="application/json" id="cclust-manifest">(.*?)</script>', re.S)


def versions():
    """{name: version} of Python, cclust and :data:`DEPENDENCIES` (None: not installed)."""
    import cclust

    found = {"python": platform.python_version(), "cclust": cclust.__version__,
             "platform": f"{platform.system()} {platform.machine()}"}
    for name in DEPENDENCIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def file_sha256(path):
    """SHA-256 (hex) of the bytes of the file at ``path``, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def array_sha256(values):
    """SHA-256 (hex) of an array's values: its dtype, shape and C-order bytes, so the same
    numbers give the same digest whatever the memory layout they arrived in."""
    values = np.ascontiguousarray(values)
    digest = hashlib.sha256(f"{values.dtype.str}{values.shape}".encode())
    digest.update(values.tobytes())
    return digest.hexdigest()


def labels_sha256(labels):
    """SHA-256 of labels as int64 (the digest a manifest records for each labelling)."""
    return array_sha256(np.asarray(labels, dtype=np.int64))


def to_json(manifest):
    """The manifest as indented JSON text."""
    return json.dumps(manifest, indent=2, sort_keys=False) + "\n"


def html_block(manifest):
    """The manifest as the JSON block embedded in the HTML report (``</`` escaped so that no
    value can close the block)."""
    text = to_json(manifest).replace("</", "<\\/")
    return f'<script type="application/json" id="cclust-manifest">{text}</script>'


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a manifest from its ``.json`` file or from the HTML report that embeds it.

    Raises
    ------
    ValidationError
        The file cannot be read, holds no manifest, is not valid JSON, is another format, or
        was written by a newer cclust (a newer ``format_version``).
    """
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ValidationError(f"manifest {path}: cannot read it ({exc.strerror or exc}).") from None
    except UnicodeDecodeError:
        raise ValidationError(f"manifest {path}: not a text file; give the .json manifest or the .html report "
                              "that `cclust report` wrote.") from None
    if not text.lstrip().startswith("{"):
        found = _HTML_BLOCK.search(text)
        if found is None:
            raise ValidationError(f"manifest {path}: neither a JSON manifest nor an HTML report holding one; give the "
                                  ".json manifest or the .html report that `cclust report` wrote.")
        text = found.group(1)  # as written: "</" escaped as "<\/", which JSON reads back as "</"
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"manifest {path}: not valid JSON ({exc.msg} at line {exc.lineno}).") from None
    check_manifest(manifest, path)
    return manifest


def check_manifest(manifest, where="manifest"):
    """Refuse a manifest of another format, of a newer version, or missing a field a replay needs."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise ValidationError(f"{where}: not a cclust report manifest (its format is {got!r}, expected {FORMAT!r}).")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValidationError(f"{where}: format_version must be a positive integer, got {version!r}.")
    if version > FORMAT_VERSION:
        made_by = (manifest.get("versions") or {}).get("cclust", "a newer cclust")
        raise ValidationError(f"{where}: manifest format version {version} was written by cclust {made_by}; this "
                              f"cclust reads up to version {FORMAT_VERSION}: upgrade cclust to replay it.")
    for key in ("parameters", "inputs", "results"):
        if not isinstance(manifest.get(key), dict):
            raise ValidationError(f"{where}: the field {key!r} is missing or not an object; the manifest is damaged "
                                  "(write it again with `cclust report`).")


def check_data(manifest, X, where="data"):
    """Refuse features that are not the ones the manifest was made from (SHA-256 of the values)."""
    recorded = manifest["inputs"].get("data_sha256")
    found = array_sha256(np.asarray(X, dtype=np.float64))
    if recorded != found:
        shape = manifest["inputs"].get("shape")
        raise ValidationError(
            f"{where}: its values are not those the manifest was made from (SHA-256 {found[:12]}... of a "
            f"{'x'.join(map(str, np.shape(X)))} array, the manifest records {str(recorded)[:12]}... of "
            f"{'x'.join(map(str, shape or ['?']))}); replaying on other data would give other labels.")


def python_version_note(manifest):
    """A sentence when the manifest's cclust or NumPy differs from this one's, else ""."""
    now = versions()
    then = manifest.get("versions") or {}
    changed = [f"{name} {then.get(name)} -> {now.get(name)}" for name in ("cclust", "numpy", "scipy")
               if then.get(name) != now.get(name)]
    return f"versions differ from the recorded ones ({', '.join(changed)})" if changed else ""
