"""basispath-graph: basis path sets of ReLU networks (Algorithm DEAH), certified exactly."""

__version__ = "0.1.0"
