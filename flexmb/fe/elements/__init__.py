"""The FE element library (:mod:`.solid`: reference nodes, shape functions and quadrature of the
solid cells) and its vectorized assembly into stiffness, mass and geometric stiffness
(:mod:`.assembly`).  The element library's public names are re-exported here (``from
flexmb.fe.elements import ELEMENTS, get_element`` keeps working)."""
from __future__ import annotations

from flexmb.fe.elements.solid import ELEMENTS as ELEMENTS
from flexmb.fe.elements.solid import Element as Element
from flexmb.fe.elements.solid import Quadrature as Quadrature
from flexmb.fe.elements.solid import get_element as get_element
from flexmb.fe.elements.solid import isoparametric_map as isoparametric_map
