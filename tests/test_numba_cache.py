"""numba's cache of flexmb's kernels is flushed when any kernel source changes (flexmb/numba_cache.py):
numba keys a cached function on its own file only, so a kernel whose callee in another file changed
would keep running the former machine code without an error."""
from __future__ import annotations

from pathlib import Path

from flexmb import numba_cache


def test_kernel_sources_cover_every_compiled_module():
    root = Path(numba_cache.__file__).resolve().parent
    names = {p.relative_to(root).as_posix() for p in numba_cache.kernel_sources()}
    # callers and callees across files (fused newton -> fused element -> fused joints / kernels -> the laws:
    # joint_law, force_law, rigid_kernels -> kernels; refactor_lu, layout, newton)
    assert {"dynamics/kernels.py", "dynamics/solve/fused_newton.py", "dynamics/solve/fused_element.py",
            "dynamics/solve/fused_joints.py", "dynamics/solve/fused_kernels.py", "dynamics/elements/joint_law.py",
            "dynamics/elements/force_law.py", "dynamics/bodies/rigid_kernels.py", "dynamics/node/kernels.py",
            "dynamics/march/kernels.py", "dynamics/solve/refactor_lu.py", "dynamics/layout.py",
            "dynamics/solve/newton.py", "rotations/kernels.py", "rotations/so3.py", "rotations/coeffs.py"} <= names


def test_stale_cache_files_are_removed_when_a_source_changes(tmp_path):
    a, b = tmp_path / "alpha.py", tmp_path / "beta.py"
    a.write_text("from numba import njit\n")
    b.write_text("from numba import njit\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    stale = [cache / "alpha.f-3.py311.nbi", cache / "alpha.f-3.py311.1.nbc", cache / "beta.g-7.py311.nbi"]
    other = cache / "gamma.h-1.py311.nbi"  # not one of the checked modules: kept
    for f in stale + [other]:
        f.write_bytes(b"x")
    assert numba_cache.refresh_files([a, b]) == 3  # no stamp yet: whatever is there may be stale
    assert not any(f.exists() for f in stale) and other.exists()
    assert (cache / numba_cache.STAMP).is_file()
    fresh = cache / "alpha.f-3.py311.nbi"
    fresh.write_bytes(b"x")
    assert numba_cache.refresh_files([a, b]) == 0 and fresh.exists()  # sources unchanged: cache kept
    b.write_text("from numba import njit\nX = 1\n")  # a callee changed
    assert numba_cache.refresh_files([a, b]) == 1 and not fresh.exists()
