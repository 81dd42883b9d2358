"""Write the tiny example problem files of this folder (``python examples/make_examples.py``).

Each file is one format ``mcpkit solve FILE`` reads (see the README, "Problem files"); each has
a solution written here in closed form, so the files double as a check of the readers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import casadi as ca
import h5py
import numpy as np

from mcpkit.formats.io import save_lcp_json, save_lcp_npz
from mcpkit.formats.mcp_file import save_mcp_file

HERE = Path(__file__).resolve().parent


def lcp_files() -> None:
    """Box LCP 0 <= z1, -1 <= z2 <= 1 ⟂ M z + q: solution z = (1/3, 1/3), F = 0."""
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    q = np.array([-1.0, -1.0])
    save_lcp_json(HERE / "lcp.json", M, q, lb=[0.0, -1.0], ub=[math.inf, 1.0])
    save_lcp_npz(HERE / "lcp.npz", M, q, lb=[0.0, -1.0], ub=[math.inf, 1.0])


def nonlinear_mcp_file() -> None:
    """0 <= z0 ⟂ z0^2 + z1 - p >= 0, z1 free ⟂ z1 - z0 = 0; with p = 2: z = (1, 1)."""
    z, p = ca.SX.sym("z", 2), ca.SX.sym("p", 1)
    F = ca.Function("F", [z, p], [ca.vertcat(z[0] ** 2 + z[1] - p[0], z[1] - z[0])], ["z", "p"], ["F"])
    meta = {"source": "examples/make_examples.py", "known_solutions": [[1.0, 1.0]]}
    save_mcp_file(HERE / "mcp_nonlinear.json", F, [0.0, -math.inf], [math.inf, math.inf], [0.5, 0.0], [2.0],
                  meta=meta, name="mcp_nonlinear")  # fmt: skip


def mpcc_file() -> None:
    """min (x0 - 1)^2 + (x1 - 1)^2 s.t. x0 + x1 <= 3, 0 <= x0 ⟂ x1 >= 0: x = (1, 0) or (0, 1), f = 1."""
    w = ca.SX.sym("w", 2)

    def fun(name: str, expr: ca.SX) -> str:
        return ca.Function(name, [w], [expr]).serialize()

    doc = {
        "w": w.serialize(),
        "w0": [1.0, 0.5],
        "lbw": [0.0, 0.0],
        "ubw": [10.0, 10.0],
        "f_fun": fun("f", (w[0] - 1) ** 2 + (w[1] - 1) ** 2),
        "g_fun": fun("g", w[0] + w[1]),
        "lbg": [-1e20],  # AMPL's infinity, as MPECLib conversions write it
        "ubg": [3.0],
        "G_fun": fun("G", w[0]),
        "H_fun": fun("H", w[1]),
    }
    (HERE / "mpcc.json").write_text(json.dumps(doc) + "\n")


def fclib_file() -> None:
    """Two contacts, W = I, mu = 0.5: q = (-1, 0.2, 0) sticks (r = (1, -0.2, 0), u = 0);
    q = (-1, 1, 0) slides (r = (1, -0.5, 0), u = (0, 0.5, 0))."""
    W = np.eye(6)
    q = np.array([-1.0, 0.2, 0.0, -1.0, 1.0, 0.0])
    mu = np.array([0.5, 0.5])
    csc = [np.flatnonzero(W[:, j]) for j in range(6)]
    with h5py.File(HERE / "fclib_2contacts.hdf5", "w") as f:
        g = f.create_group("fclib_local")
        g.create_dataset("spacedim", data=np.array([3], dtype=np.int32))
        Wg = g.create_group("W")  # compressed column (nz = -1), as FCLIB writes it
        Wg.create_dataset("m", data=np.array([6], dtype=np.int32))
        Wg.create_dataset("n", data=np.array([6], dtype=np.int32))
        Wg.create_dataset("nz", data=np.array([-1], dtype=np.int32))
        Wg.create_dataset("nzmax", data=np.array([6], dtype=np.int32))
        Wg.create_dataset("p", data=np.cumsum([0] + [c.size for c in csc]).astype(np.int32))
        Wg.create_dataset("i", data=np.concatenate(csc).astype(np.int32))
        Wg.create_dataset("x", data=np.concatenate([W[c, j] for j, c in enumerate(csc)]))
        v = g.create_group("vectors")
        v.create_dataset("q", data=q)
        v.create_dataset("mu", data=mu)
        info = g.create_group("info")
        info.create_dataset("title", data=np.bytes_("two contacts"))
        info.create_dataset("description", data=np.bytes_("mcpkit example: one sticking, one sliding"))
        info.create_dataset("math_info", data=np.bytes_(""))


if __name__ == "__main__":
    lcp_files()
    nonlinear_mcp_file()
    mpcc_file()
    fclib_file()
    print(
        "wrote", ", ".join(sorted(p.name for p in HERE.iterdir() if p.suffix in (".json", ".npz", ".hdf5")))
    )
