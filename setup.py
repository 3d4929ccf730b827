"""Build the compiled cores. All metadata lives in pyproject.toml.

Environment switches:

* ``CCLUST_CYTHON_CHECKS=1`` turns Cython's bounds/wraparound checks back on (debugging).
* ``CCLUST_NO_OPENMP=1`` builds the serial fallback even where OpenMP is available.
* ``CCLUST_SANITIZE=address,undefined`` builds with those sanitizers (GCC and Clang).
* ``CCLUST_DEBUG_INFO=1`` keeps debug information (``-g``) in the extensions. Release builds
  drop it (``-g0`` after the ``-g`` that Python's own build flags add, GCC and Clang): it is
  most of each module's size and of the compile time, and only a debugger reads it. A
  sanitizer build always keeps it.

On Windows the extensions are built with MSVC, the compiler CPython itself is built with there,
which takes its own flags and has OpenMP 2.0 (``/openmp``, runtime ``vcomp140.dll``) built in.
"""
import os
import subprocess
import sys
import tempfile

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


MSVC = sys.platform == "win32"


def _compiler_has_openmp():
    if os.environ.get("CCLUST_NO_OPENMP") == "1":
        return False
    if MSVC:
        # Every parallel loop is an OpenMP 2.0 one (signed index, canonical form), which is
        # all MSVC's /openmp implements.
        return True
    source = "#include <omp.h>\nint main(){return omp_get_max_threads() > 0 ? 0 : 1;}\n"
    cxx = os.environ.get("CXX", "c++")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.cpp")
        with open(path, "w") as handle:
            handle.write(source)
        try:
            done = subprocess.run(
                [cxx, "-fopenmp", path, "-o", os.path.join(tmp, "probe")],
                capture_output=True,
            )
        except OSError:
            return False
        return done.returncode == 0


OPENMP = _compiler_has_openmp()
if MSVC:
    # /fp:precise (MSVC's default, spelled out) contracts no multiply-add since Visual Studio
    # 2022, as -ffp-contract=off below does for GCC and Clang. /O2, /W3 and /EHsc come from
    # setuptools.
    compile_args = ["/std:c++17", "/fp:precise"]
    link_args = []
    if OPENMP:
        compile_args.append("/openmp")  # the linker pulls in vcomp from the object files
else:
    # -ffp-contract=off: no fused multiply-adds, so results are bitwise the same on every target.
    compile_args = ["-std=c++17", "-O3", "-ffp-contract=off", "-Wall", "-Wextra",
                    "-Wno-unused-function", "-Wno-unreachable-code", "-Wno-unused-parameter"]
    link_args = []
    if OPENMP:
        compile_args.append("-fopenmp")
        link_args.append("-fopenmp")
    if os.environ.get("CCLUST_DEBUG_INFO") != "1" and not os.environ.get("CCLUST_SANITIZE"):
        # sysconfig's CFLAGS carry -g; the extra arguments come after them, and the last -g wins
        compile_args.append("-g0")
sanitize = os.environ.get("CCLUST_SANITIZE")
if sanitize:
    if MSVC:
        sys.exit("CCLUST_SANITIZE needs GCC or Clang; the MSVC build has no sanitizer switch here")
    compile_args += [f"-fsanitize={sanitize}", "-fno-omit-frame-pointer", "-g", "-O1"]
    link_args += [f"-fsanitize={sanitize}"]

EXT = "cclust/_ext"
# module name -> the C++ sources it needs
MODULES = {
    "_contingency": ["contingency.cpp", "overlaps.cpp"],
    "_kmeans": ["rows.cpp", "lookup_simd.cpp", "engine.cpp", "centres.cpp", "lloyd.cpp", "blocks.cpp",
                "gkcc_candidates.cpp", "dense_bounded.cpp"],
    "_voting": ["voting.cpp"],
    "_addremadd": ["addremadd.cpp"],
    "_bayesian": ["bayesian.cpp"],
    "_crowd_agreement": ["crowd_agreement.cpp"],
    "_hartigan_wong": ["hartigan_wong.cpp"],
    "_uspec": ["uspec.cpp"],
    "_distances": ["distances.cpp"],
}

extensions = [
    Extension(
        f"cclust._ext.{name}",
        sources=[f"{EXT}/{name}.pyx"] + [f"{EXT}/src/{src}" for src in sources],
        include_dirs=[f"{EXT}/include", numpy.get_include()],
        language="c++",
        extra_compile_args=compile_args,
        extra_link_args=link_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION"),
                       ("CCLUST_OPENMP", "1" if OPENMP else "0")],
    )
    for name, sources in MODULES.items()
    if os.path.exists(f"{EXT}/{name}.pyx")
]



class ParallelBuildExt(build_ext):
    """Compile the extension modules side by side, one per core (``pip install`` passes no ``-j``);
    the modules are independent, so the result is the same as a serial build."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1


checks = os.environ.get("CCLUST_CYTHON_CHECKS") == "1"
setup(
    cmdclass={"build_ext": ParallelBuildExt},
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": checks,
            "wraparound": checks,
            "initializedcheck": checks,
            "cdivision": not checks,
            "embedsignature": True,
        },
        compile_time_env={"CCLUST_OPENMP": OPENMP},
    ),
)
