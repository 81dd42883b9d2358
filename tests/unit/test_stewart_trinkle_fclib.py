"""FCLIB loader, cone projection and the Siconos-style friction residual (no solver)."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest

from mcpkit.errors import ProblemFileError
from mcpkit.models.fclib import fclib_ncp, friction_residual, load_fclib, project_cone
from tests.conftest import SHARED_DATA

DATA = SHARED_DATA / "fclib" / "local_problem_test.hdf5"
needs_data = pytest.mark.skipif(not DATA.is_file(), reason="shared FCLIB file not present")
RNG = np.random.default_rng(7)


def test_projection_is_a_projection():
    """Pi_K(z) in K, idempotent, and (z - Pi z) . (Pi z - y) >= 0 for y in K (obtuse angle)."""
    mu = 0.6
    for _ in range(200):
        z = RNG.normal(size=3) * 3
        p = project_cone(z, mu)
        assert np.linalg.norm(p[1:]) <= mu * p[0] + 1e-12
        np.testing.assert_allclose(project_cone(p, mu), p, atol=1e-12)
        y = np.array([1.0, *(RNG.uniform(-1, 1, 2) * 0.4)]) * abs(RNG.normal())
        assert (z - p) @ (p - y) >= -1e-10


def test_residual_zero_at_closed_form_solutions():
    """W = I, one contact. Sticking-free impact q = (-1, 0, 0): r = (1, 0, 0), u = 0.
    Sliding q = (-1, 2, 0), mu = 0.5: r_n = 1 (u_n = 0), r_t = -0.5, u_t = 1.5 (opposite r_t).
    Separation q = (1, 3, 0): r = 0. All have zero residual; perturbed r does not."""
    W = np.eye(3)
    cases = [((-1, 0, 0), (1, 0, 0)), ((-1, 2, 0), (1, -0.5, 0)), ((1, 3, 0), (0, 0, 0))]
    for q, r in cases:
        q, r = np.array(q, float), np.array(r, float)
        assert friction_residual(W, q, np.array([0.5]), r) < 1e-15
        assert friction_residual(W, q, np.array([0.5]), r + [0.1, 0.05, 0]) > 1e-2


def _write(path: Path, **over: object) -> Path:
    data = {
        "fclib_local/W/i": np.array([0, 1, 2], np.int32),
        "fclib_local/W/p": np.array([0, 1, 2, 3], np.int32),
        "fclib_local/W/x": np.ones(3),
        "fclib_local/W/m": np.array([3], np.int32),
        "fclib_local/W/n": np.array([3], np.int32),
        "fclib_local/W/nz": np.array([-1], np.int32),
        "fclib_local/vectors/q": np.array([-1.0, 0, 0]),
        "fclib_local/vectors/mu": np.array([0.5]),
        "fclib_local/spacedim": np.array([3], np.int32),
    }
    data.update(over)
    with h5py.File(path, "w") as f:
        for k, v in data.items():
            if v is not None:
                f[k] = v
    return path


def test_tiny_file_roundtrip(tmp_path):
    prob = load_fclib(_write(tmp_path / "ok.hdf5"))
    np.testing.assert_array_equal(prob.W, np.eye(3))
    assert prob.nc == 1 and prob.r_ref is None


@pytest.mark.parametrize(
    "over",
    [
        {"fclib_local/vectors/mu": None},
        {"fclib_local/W/p": np.array([0, 1, 5, 3], np.int32)},
        {"fclib_local/W/i": np.array([0, 1, 9], np.int32)},
        {"fclib_local/vectors/q": np.array([-1.0, 0.0])},
        {"fclib_local/vectors/mu": np.array([-0.5])},
        {"fclib_local/W/x": np.array([1.0, np.nan, 1.0])},
        {"fclib_local/spacedim": np.array([2], np.int32)},
    ],
)
def test_malformed_files_raise(tmp_path, over):
    with pytest.raises(ProblemFileError):
        load_fclib(_write(tmp_path / "bad.hdf5", **over))


def test_unreadable_files_raise(tmp_path):
    with pytest.raises(ProblemFileError):
        load_fclib(tmp_path / "missing.hdf5")
    junk = tmp_path / "junk.hdf5"
    junk.write_text("not hdf5")
    with pytest.raises(ProblemFileError):
        load_fclib(junk)
    with h5py.File(tmp_path / "empty.hdf5", "w") as f:
        f["x"] = 1
    with pytest.raises(ProblemFileError):
        load_fclib(tmp_path / "empty.hdf5")


@needs_data
def test_shared_file_structure_and_reference():
    """48 contacts, W symmetric, mu = 0.7. The stored 'solution' has r = 0, so u = W r + q
    would equal q (normal entries ~ -4.9e-3 < 0), but the stored u is ~1e-8: the pair does not
    satisfy u = W r + q and, with u recomputed, r = 0 has residual ||Pi(-q^)||/||q|| ~ 1."""
    prob = load_fclib(DATA)
    assert prob.nc == 48 and prob.W.shape == (144, 144)
    np.testing.assert_allclose(prob.W, prob.W.T, atol=1e-10)
    assert np.all(prob.r_ref == 0.0)
    assert np.abs(prob.W @ prob.r_ref + prob.q - prob.u_ref).max() > 1e-3
    assert friction_residual(prob.W, prob.q, prob.mu, prob.r_ref) > 0.5
    mcp, s_r, s_u = fclib_ncp(prob)
    assert mcp.n == 48 * 4 + 144
    json.dumps({"s_r": s_r, "s_u": s_u})
