"""G-SGD: train a ReLU network in the space of a certified basis path set (docs/gsgd.md).

``GSGD`` is the ``torch.optim.Optimizer``; ``PathSpace`` its functional core (free and fixed
weights from a peeling order, the path gradient and the weight allocation as triangular solves);
``ParameterMap`` ties the network's weight ids to the model's parameter elements.
"""

from .optimizer import GSGD
from .parameters import GSGDError, ParameterMap
from .path_space import PathSpace

__all__ = ["GSGD", "GSGDError", "ParameterMap", "PathSpace"]
