"""Frame 0 of the paper's teddy grasp against pydrake's own geometry (skips without the optional ``drake``).

Drake parses the bubbles and the teddy from an sdf holding the links of Drake's ``models/bubbles.sdf`` and
``models/deformable_teddy.sdf`` (poses, materials as there; the meshes shipped with ipcsim: ``bubble.vtk`` as Drake
loads it, the teddy already scaled by 0.15), and its DeformableModel gives the vertices at t = 0; mapped by
``drake_to_ipcsim`` they are ipcsim's frame 0 to 1e-9 m (measured with drake 1.51.1: 5.6e-17 m).
"""
import numpy as np
import pytest

from ipcsim.demos.teddy_grasp import GraspParameters, teddy_grasp
from ipcsim.demos.grasp_paper import bubble_mesh_path, drake_to_ipcsim, teddy_mesh_path

LINKS = (("left", "-0.185 -0.09 0.06 1.5707 3.1416 0", "bubble", 1e4, 10.0),
         ("right", "-0.185 0.09 0.06 -1.5707 3.1416 0", "bubble", 1e4, 10.0),
         ("teddy", "-0.17 0 0 1.5707 0 -1.5707", "teddy", 5e4, 1000.0))


def _sdf() -> str:
    links = []
    for name, pose, mesh, youngs, density in LINKS:
        path = bubble_mesh_path() if mesh == "bubble" else teddy_mesh_path()
        links.append(f"""<link name='{name}'><pose>{pose}</pose>
  <collision name='collision'><geometry><mesh><uri>file://{path}</uri></mesh></geometry>
    <drake:proximity_properties><drake:mu_dynamic>1.0</drake:mu_dynamic></drake:proximity_properties></collision>
  <drake:deformable_properties><drake:youngs_modulus>{youngs}</drake:youngs_modulus>
    <drake:poissons_ratio>0.45</drake:poissons_ratio><drake:stiffness_damping>0.05</drake:stiffness_damping>
    <drake:mass_density>{density}</drake:mass_density></drake:deformable_properties></link>""")
    return ('<?xml version="1.0"?><sdf xmlns:drake="http://drake.mit.edu" version="1.8"><model name="grasp">'
            + "".join(links) + "</model></sdf>")


def test_frame0_matches_pydrakes_geometry():
    pytest.importorskip("pydrake")
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import AddMultibodyPlant, MultibodyPlantConfig
    from pydrake.systems.framework import DiagramBuilder

    plant, _ = AddMultibodyPlant(MultibodyPlantConfig(time_step=0.01), DiagramBuilder())
    (instance,) = Parser(plant).AddModelsFromString(_sdf(), "sdf")
    plant.Finalize()
    deformable = plant.deformable_model()
    context = plant.CreateDefaultContext()
    drake = {name: deformable.GetPositions(context, body).T
             for (name, *_), body in zip(LINKS, deformable.GetBodyIds(instance))}
    sim, _ = teddy_grasp(GraspParameters(mode="full"))
    x = sim.state.x  # nodes: teddy (410), left bubble (67), right bubble (67)
    assert len(x) == 410 + 2 * 67
    for name, block in (("teddy", x[:410]), ("left", x[410:477]), ("right", x[477:])):
        assert np.abs(block - drake_to_ipcsim(drake[name])).max() < 1e-9, name
