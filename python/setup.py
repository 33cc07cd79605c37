# SPDX-License-Identifier: BSD-3-Clause
"""Build step of the wirespeed Python package: find or build libwirespeed.

The package binds the C library with ctypes, so the only thing to compile is the library
itself. Where it comes from is chosen by WIRESPEED_BUILD:

  auto (default)  an installed wirespeed that pkg-config finds (PKG_CONFIG_PATH), else cmake
  pkg-config      only an installed one; an error when pkg-config does not know wirespeed
  cmake           build it from the repository this directory belongs to, with CMake, for the
                  MPI of the compiler wrapper in MPICC (mpi4py's variable; default mpicc) and
                  its launcher (MPIEXEC; default the wrapper's name with mpiexec for mpicc)

WIRESPEED_LIBRARY=/path/libwirespeed.so skips both and uses that file. A built library is copied
into the package (wirespeed/lib/); an installed one is used where it is, and its path is written
into wirespeed/_build.py with the MPI it was built for. The repository's netlab package and
report package (python/wsp_report) are copied in as wirespeed._netlab and wirespeed._report, so
that wirespeed-lab and wirespeed-report run from the installed package.
"""
import os
import re
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


class BuildError(Exception):
    pass


def run(cmd, **kw):
    print("wirespeed build:", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, **kw)
    if r.returncode != 0:
        raise BuildError(f"{cmd[0]} failed with exit status {r.returncode}")


def flavor_of(lib):
    """The MPI the library was built for, from its build description."""
    import ctypes
    try:
        info = ctypes.CDLL(lib).wsp_build_info
    except OSError as e:
        raise BuildError(f"cannot load {lib}: {e}") from e
    info.restype = ctypes.c_char_p
    text = info().decode()
    for word in text.split(";"):
        word = word.strip()
        if word.startswith("MPI "):
            return word.split()[1].rstrip(",")
    return "other"


def from_pkg_config():
    """The installed library's path, or None when pkg-config does not know wirespeed."""
    if shutil.which("pkg-config") is None:
        return None
    r = subprocess.run(["pkg-config", "--variable=libdir", "wirespeed"],
                       capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        return None
    path = os.path.normpath(os.path.join(r.stdout.strip(), "libwirespeed.so"))
    if not os.path.exists(path):
        raise BuildError(f"pkg-config names {r.stdout.strip()} but it holds no libwirespeed.so")
    return path


def from_cmake():
    """Builds the shared library from the repository; returns the built file. The build tree
    (python/build/cmake-<wrapper>) is kept, so that installing again rebuilds only changes."""
    src = REPO
    if not os.path.exists(os.path.join(src, "CMakeLists.txt")) or \
            not os.path.exists(os.path.join(src, "include", "wirespeed.h")):
        raise BuildError(f"{src} is not the wirespeed repository (no CMakeLists.txt and "
                         "include/wirespeed.h): install wirespeed and set PKG_CONFIG_PATH, or "
                         "WIRESPEED_LIBRARY")
    if shutil.which("cmake") is None:
        raise BuildError("cmake is not installed (needed to build libwirespeed; or install "
                         "wirespeed first and set PKG_CONFIG_PATH)")
    mpicc = os.environ.get("MPICC", "mpicc")
    if shutil.which(mpicc) is None:
        raise BuildError(f"MPICC = {mpicc!r} is not an MPI compiler wrapper on PATH")
    # The launcher of the same MPI (mpicc.mpich -> mpiexec.mpich): the build tells the MPIs
    # apart by it. MPIEXEC overrides.
    mpiexec = shutil.which(os.environ.get("MPIEXEC") or
                           os.path.basename(mpicc).replace("mpicc", "mpiexec"))
    build = os.path.join(HERE, "build", "cmake-" + os.path.basename(mpicc))
    cmd = ["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
           "-DWSP_BUILD_TESTS=OFF", "-DWSP_BUILD_TOOLS=OFF",
           f"-DMPI_C_COMPILER={shutil.which(mpicc)}"]
    if mpiexec:
        cmd.append(f"-DMPIEXEC_EXECUTABLE={mpiexec}")
    if shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    run(cmd)
    run(["cmake", "--build", build, "--target", "wirespeed_shared", "--parallel",
         str(os.cpu_count() or 2)])
    lib = os.path.join(build, "libwirespeed.so")
    if not os.path.exists(lib):
        raise BuildError(f"the build made no {lib}")
    return os.path.realpath(lib)


class BuildPy(build_py):
    """build_py, plus the library, _build.py and the copied lab and report modules."""

    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "wirespeed")
        try:
            self.add_library(pkg)
        except BuildError as e:
            sys.exit(f"error: wirespeed: {e}")
        self.copy_tree_py(os.path.join(REPO, "lab", "netlab"), os.path.join(pkg, "_netlab"))
        self.copy_tree_py(os.path.join(HERE, "wsp_report"), os.path.join(pkg, "_report"))

    def add_library(self, pkg):
        how = os.environ.get("WIRESPEED_BUILD", "auto")
        if how not in ("auto", "cmake", "pkg-config"):
            raise BuildError(f"WIRESPEED_BUILD = {how!r} is not auto, cmake or pkg-config")
        lib, bundled = os.environ.get("WIRESPEED_LIBRARY"), False
        if lib:
            if not os.path.exists(lib):
                raise BuildError(f"WIRESPEED_LIBRARY = {lib!r} does not exist")
            lib, source = os.path.abspath(lib), "WIRESPEED_LIBRARY"
        elif how != "cmake" and (lib := from_pkg_config()):
            source = "pkg-config"
        elif how == "pkg-config":
            raise BuildError("WIRESPEED_BUILD=pkg-config, but pkg-config does not find "
                             "wirespeed (set PKG_CONFIG_PATH to <prefix>/lib/pkgconfig)")
        else:
            lib, source, bundled = from_cmake(), "cmake", True
        flavor = flavor_of(lib)
        if bundled:
            os.makedirs(os.path.join(pkg, "lib"), exist_ok=True)
            shutil.copyfile(lib, os.path.join(pkg, "lib", "libwirespeed.so"))
        with open(os.path.join(pkg, "_build.py"), "w") as f:
            f.write('"""Written by setup.py: where libwirespeed came from."""\n')
            f.write(f"LIBRARY = {None if bundled else lib!r}  # None: lib/ in this package\n")
            f.write(f"FLAVOR = {flavor!r}\n")
            f.write(f"SOURCE = {source!r}\n")
        print(f"wirespeed build: library from {source} ({flavor}): {lib}", flush=True)

    @staticmethod
    def copy_tree_py(src, dst):
        if not os.path.isdir(src):
            return
        os.makedirs(dst, exist_ok=True)
        for name in sorted(os.listdir(src)):
            # netlab's delay line is C source that netlab compiles when a lab asks for it
            if name.endswith(".py") or name == "delayline.c":
                shutil.copyfile(os.path.join(src, name), os.path.join(dst, name))


class BinaryDistribution(Distribution):
    """The wheel holds a shared library for one platform and one MPI."""

    def has_ext_modules(self):
        return True


def version():
    """The version, from the one place it is written: include/wirespeed.h."""
    with open(os.path.join(REPO, "include", "wirespeed.h")) as f:
        v = dict(re.findall(r"^#define WSP_VERSION_(MAJOR|MINOR|PATCH) ([0-9]+)$", f.read(), re.M))
    return "%s.%s.%s" % (v["MAJOR"], v["MINOR"], v["PATCH"])


setup(version=version(), cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)
