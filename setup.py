"""The one step pyproject.toml cannot state: build the compiled core (_nkic) with the
project's CMake build and put it into the wheel next to the Python packages.

Only the library and the module are built (no tests), in a CMake build directory of its
own under build/setuptools/, configured for the Python that runs the build. ccache is used
when it is installed; CMAKE_BUILD_PARALLEL_LEVEL sets the number of compile jobs.
NKIC_CMAKE_BUILD_DIR names an already configured build tree to build and take the module
from instead (e.g. build/ after scripts/setup.sh, for the same Python version)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
# egg_info needs its output directory to exist (a fresh clone has no build/).
(ROOT / "build" / "setuptools").mkdir(parents=True, exist_ok=True)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        reuse = os.environ.get("NKIC_CMAKE_BUILD_DIR")
        build_dir = Path(reuse).resolve() if reuse else Path(self.build_temp).resolve() / "cmake"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                     f"-DPython3_EXECUTABLE={sys.executable}", "-DNKIC_BUILD_TESTS=OFF"]
        if not (build_dir / "CMakeCache.txt").exists() and shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        if shutil.which("ccache"):
            configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        if not reuse:
            subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_nkic", "-j", jobs], check=True)
        built = build_dir / "python" / os.path.basename(self.get_ext_filename(ext.name))
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, dest)


setup(
    ext_modules=[Extension("_nkic", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own build tree stays out of the CMake build directory of the README.
    options={"build": {"build_base": "build/setuptools"}, "egg_info": {"egg_base": "build/setuptools"}},
)
