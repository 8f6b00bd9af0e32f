"""Compile (cold cache) or load the kernels of a modal run: the FE reduction of a small hex20 bar and a
flexible pendulum on it (``stiffening="full"``, p = 2).  Started by ``conftest._warm_kernels`` in a process of
its own while the controller warms a rigid run, so that on a clean clone (CI) the two halves of the kernels
compile on the two cores at once, before the workers start and would each compile them."""
from __future__ import annotations


def main() -> None:
    import flexmb as fm
    from flexmb.fe.mesh import Material
    from flexmb.fe.mesh.structured import structured_box
    from flexmb.fe.reduction.body_data import build_flexible_body

    mesh = structured_box((1.0, 0.05, 0.05), (4, 1, 1), "hexahedron20", origin=(0.0, -0.025, -0.025),
                          material=Material(E=7e8, nu=0.3, rho=3000.0))
    data = build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=3, method="craig-bampton")
    body = fm.FlexibleBody("F", data, stiffening="full", damping=0.0, modes=[0, 1])
    pin = fm.Revolute("pin", "ground", ("F", "xmin"), axis=(0, 0, 1))
    fm.simulate(fm.Model([body], [pin], [fm.Gravity((0, -9.81, 0))]), 0.03, 0.01, p=2, show_progress=False)


if __name__ == "__main__":
    main()
