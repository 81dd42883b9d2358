"""Friction geometry: contact patches, limit surfaces, the configuration-space friction cone, LuGre.

Papers: S. Goyal, A. Ruina and J. Papadopoulos, *Limit Surface and Moment Function Descriptions of
Planar Sliding* ("Goyal et al."); M. Erdmann, *A Configuration Space Friction Cone*; G. Arslan
Waltersson and Y. Karayiannidis, *Planar Friction Modelling with LuGre Dynamics and Limit
Surfaces* ("the LuGre paper").
"""

from mcpkit.models.friction.cspace_cone import Ambiguity, ContactMode, CSpaceContact  # noqa: E402,F401
from mcpkit.models.friction.limit_surface import PointContacts, sample_limit_surface  # noqa: E402,F401
from mcpkit.models.friction.lugre import DistributedLuGre  # noqa: E402,F401
from mcpkit.models.friction.lugre_params import LUGRE_P0, LUGRE_P1, TABLE_III, LuGreParams  # noqa: E402,F401
from mcpkit.models.friction.lugre_reduced import ReducedLuGre, ReducedMode  # noqa: E402,F401
from mcpkit.models.friction.patch import ContactPatch, LoadMethod  # noqa: E402,F401
from mcpkit.models.friction.two_point_bar import two_point_bar  # noqa: E402,F401
