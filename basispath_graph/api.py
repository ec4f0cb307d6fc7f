"""The package's face in Python: read a network, solve it, certify a basis, compare, store runs.

Everything here is importable from ``basispath_graph`` directly; the CLI is built on the same
functions. docs/python-api.md walks through a notebook session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .analysis.compare import Comparison, column_from_result, column_label
from .analysis.coordinates import coordinates as _coordinates
from .errors import BadInput
from .export import basis_paths_of, read_basis_file, read_json_file
from .network import Network, PathBlock, blocks_from_json
from .presets import FAMILIES, preset_network
from .solver import SolveResult
from .general.blocks import block_general_paths
from .general.model import GeneralNetwork, from_layered, is_general_spec, parse_general
from .general.paths import certify_general, general_basis_of
from .general.solve import GeneralResult
from .spec import DEFAULT_MAX_WEIGHTS, load_any_spec, parse_spec, resolve_max_weights
from .spec import load_spec as _load_spec_file
from .verify import Verdict
from .verify import certify as _certify_blocks

__all__ = ["load_spec", "load_general", "preset", "preset_families", "certify", "compare", "express"]


def load_spec(source, *, max_weights: int | None = DEFAULT_MAX_WEIGHTS) -> Network:
    """Read a network spec from a file (JSON or YAML) or from a mapping.

    Parameters
    ----------
    source : str, os.PathLike or mapping
        A spec file, or the spec itself: ``{"name": ..., "widths": [...], "skips": [[a, b], ...]}``.
    max_weights : int or None
        Refuse networks with more weights (default 50,000,000; None reads
        ``$BASISPATH_MAX_WEIGHTS``).

    Returns
    -------
    Network

    Raises
    ------
    SpecError
        (a :class:`~basispath_graph.errors.BadInput`) with the one-line message
        ``basispath`` prints, naming the file (or ``<spec>`` for a mapping).

    Examples
    --------
    >>> net = load_spec({"name": "fig1b", "widths": [2, 2, 3, 2, 2], "skips": [[0, 2], [1, 3]]})
    >>> net.m, net.H
    (30, 7)
    >>> load_spec({"widths": [2, 0, 2]})
    Traceback (most recent call last):
    ...
    basispath_graph.spec.SpecError: <spec>: widths[1] must be an integer >= 1, got 0
    """
    if isinstance(source, Mapping):
        return parse_spec(source, "<spec>", max_weights)
    return _load_spec_file(source, max_weights=max_weights)


def load_general(source, *, max_weights: int | None = DEFAULT_MAX_WEIGHTS) -> GeneralNetwork:
    """Read any spec as a general network (docs/general-networks.md): a general spec (layers,
    connections) from a file or a mapping, or a layered one (widths, skips) as its general form.

    Parameters
    ----------
    source : str, os.PathLike or mapping
        A spec file (JSON or YAML) or the spec itself.
    max_weights : int or None
        Refuse networks with more weights (default 50,000,000; None reads ``$BASISPATH_MAX_WEIGHTS``).

    Returns
    -------
    GeneralNetwork
        ``m``, ``H``, ``basis_size``, ``layers``, ``connections``; solve it with ``solve_general``.

    Raises
    ------
    SpecError
        (a :class:`~basispath_graph.errors.BadInput`) the one-line message ``basispath`` prints.

    Examples
    --------
    >>> net = load_general({"layers": [{"name": "bias", "size": 1}, {"name": "x", "size": 3}, {"name": "y", "size": 2}],
    ...                     "connections": [{"from": "x", "to": "y", "taps": 9}, {"from": "bias", "to": "y"}]})
    >>> net.m, net.H, net.basis_size
    (56, 0, 56)
    >>> load_general({"widths": [2, 3, 2]}).m
    12
    """
    if isinstance(source, Mapping):
        limit = resolve_max_weights(max_weights)
        if is_general_spec(source) and "widths" not in source:
            return parse_general(source, "<spec>", limit)
        return from_layered(parse_spec(source, "<spec>", limit))
    network = load_any_spec(source, max_weights)
    return network if isinstance(network, GeneralNetwork) else from_layered(network)


def preset(
    family: str,
    depth: int,
    width: int,
    *,
    in_width: int | None = None,
    out_width: int | None = None,
    stride: int | None = None,
    max_weights: int | None = DEFAULT_MAX_WEIGHTS,
) -> Network:
    """A network of a named family (``basispath spec preset``): see :func:`preset_families`.

    Widths are ``[in_width] + [width] * (depth - 1) + [out_width]`` (in and out default to
    ``width``); the family decides the skips.

    Returns
    -------
    Network
        named ``<family>-<depth>x<width>``.

    Raises
    ------
    PresetError
        (a :class:`~basispath_graph.errors.BadInput`) for an unknown family or a bad size.

    Examples
    --------
    >>> net = preset("resnet", 4, 3)
    >>> net
    Network(name='resnet-4x3', widths=(3, 3, 3, 3, 3), skips=((0, 2), (1, 3), (2, 4)))
    """
    return preset_network(
        family, depth, width, in_width=in_width, out_width=out_width, stride=stride, max_weights=max_weights
    )


def preset_families() -> dict[str, str]:
    """The preset families and what their skips are.

    Returns
    -------
    dict
        family name -> one-line description.

    Examples
    --------
    >>> sorted(preset_families())
    ['densenet', 'mlp', 'resnet', 'stride', 'unet']
    """
    return {name: family.description for name, family in FAMILIES.items()}


def _basis_blocks(basis) -> list[PathBlock]:
    """Blocks of any form a basis comes in (see :func:`certify`)."""
    if isinstance(basis, SolveResult):
        return list(basis.basis)
    if isinstance(basis, (str, os.PathLike)):
        return blocks_from_json(read_basis_file(basis))
    if hasattr(basis, "basis_paths"):  # a StoredRun
        basis = basis.basis_paths
    if isinstance(basis, (list, tuple)) and basis and all(isinstance(b, PathBlock) for b in basis):
        return list(basis)
    return blocks_from_json(basis_paths_of(basis))


def certify(network: Network, basis) -> Verdict:
    """Decide exactly whether ``basis`` is a basis path set of ``network`` (``basispath verify``).

    Checks, first failure wins: every path is a path of the network, no path twice, exactly
    m - H paths, and independence by exact rank (peeling, then elimination modulo the prime
    2^31 - 1; a shortfall is confirmed modulo a second prime).

    Parameters
    ----------
    network : Network or GeneralNetwork
    basis : SolveResult, StoredRun, export document, file path, or list of paths
        A path is a sequence of (layer, index) pairs from layer 0 to layer L. A file is an
        export of ``solve --export`` or a bare JSON list of paths. For a GeneralNetwork: a
        GeneralResult, a StoredRun of it, an export, or general paths (JSON form or tuples).

    Returns
    -------
    Verdict
        ``certified`` (bool), ``defect`` (None or what is wrong), ``size``, ``expected``
        (m - H) and ``rank``.

    Raises
    ------
    BadInput
        when ``basis`` is not in one of those forms.

    Notes
    -----
    Linear in the number of weight entries for the peeled part, plus sparse elimination on
    what peeling leaves.

    Examples
    --------
    >>> net = Network([1, 2, 1])
    >>> certify(net, [[(0, 0), (1, 0), (2, 0)], [(0, 0), (1, 1), (2, 0)]])
    Verdict(certified=True, defect=None, size=2, expected=2, rank=2)
    >>> certify(net, [[(0, 0), (1, 0), (2, 0)]]).defect
    'size 1 != m - H = 2'
    """
    if isinstance(network, GeneralNetwork):
        return certify_general(network, _general_paths(network, basis))
    if not isinstance(network, Network):
        raise BadInput(f"certify needs a Network, got {type(network).__name__}")
    return _certify_blocks(network, _basis_blocks(basis))


def _general_paths(network: GeneralNetwork, basis) -> list:
    """General paths of any form a basis of a general network comes in: a GeneralResult, a
    StoredRun, an export document or file, or a list of paths (JSON form or tuples)."""
    if isinstance(basis, GeneralResult):
        return [p for b in basis.blocks for p in block_general_paths(network, b)]
    if hasattr(basis, "basis_paths"):  # a StoredRun
        return list(basis.basis_paths)
    if isinstance(basis, (str, os.PathLike)):
        basis = read_json_file(basis)
    if isinstance(basis, (list, tuple)) and basis and all(isinstance(p, tuple) for p in basis):
        return list(basis)
    return general_basis_of(network, basis, "basis")


def express(network: Network, basis, path) -> dict:
    """The coordinates of any path of ``network`` over a basis (``basispath express``): integer
    coefficients with path = sum of coef x basis path, weight by weight. This is the path's
    coordinate vector in basis-path space, what G-SGD works with.

    Parameters
    ----------
    network : Network
    basis : SolveResult, StoredRun, export document, file path, or list of paths (as for :func:`certify`)
    path : str or sequence of (layer, index) pairs
        ``"0:1,1:0,2:1"`` or ``[(0, 1), (1, 0), (2, 1)]``.

    Returns
    -------
    dict
        ``{"path", "text", "coordinates": [{"coef", "path", "index"}, ...], "verified"}``:
        non-zero coefficients only, ``index`` the basis path's position in ``basis``;
        ``verified`` is the re-check by vector addition.

    Raises
    ------
    BadInput
        the path is not a path of the network (InvalidPathError) or cannot be read.
    NotCertified
        the basis paths are dependent (DependentBasisError).
    ExpressError
        the path is not in the span of the basis (NotInSpanError: too few paths) or its
        coefficients are not integers (NonIntegralError).

    Examples
    --------
    >>> net = load_spec({"widths": [2, 2, 2]})
    >>> basis = [[(0, 0), (1, 0), (2, 0)], [(0, 1), (1, 0), (2, 0)], [(0, 0), (1, 1), (2, 0)],
    ...          [(0, 0), (1, 0), (2, 1)], [(0, 0), (1, 1), (2, 1)], [(0, 1), (1, 1), (2, 1)]]
    >>> answer = express(net, basis, "0:1,1:0,2:1")
    >>> [(t["coef"], t["index"]) for t in answer["coordinates"]], answer["verified"]
    ([(-1, 0), (1, 1), (1, 3)], True)
    """
    if not isinstance(network, Network):
        raise BadInput(f"express needs a Network, got {type(network).__name__}")
    return _coordinates(network, _basis_blocks(basis), path)


def compare(*results: SolveResult, labels=None) -> Comparison:
    """Solve results side by side: m, H, |B|, substructures, discards by rule, repairs, times.

    For stored runs use :meth:`GraphStore.compare`; a column of a solve result and one of its
    stored run hold the same numbers.

    Parameters
    ----------
    *results : SolveResult
    labels : sequence of str, optional
        Column names (default: ``"<network name> (<engine>)"``; labels two columns share get
        their source and column number appended).

    Returns
    -------
    Comparison
        ``rows()`` as data, ``to_markdown()`` (a notebook shows it as a table), ``to_json()``,
        ``plot(path)``.

    Examples
    --------
    >>> from basispath_graph import solve
    >>> table = compare(solve(preset("mlp", 3, 4)), solve(preset("resnet", 3, 4)))
    >>> dict(table.rows())["|B|"]
    [40, 72]
    """
    if labels is None:
        labels = [column_label(r.network.name or "network", r.engine) for r in results]
    labels = list(labels)
    if len(labels) != len(results):
        raise BadInput(f"{len(labels)} labels for {len(results)} results")
    for r in results:
        if not isinstance(r, SolveResult):
            raise BadInput(f"compare takes SolveResults, got {type(r).__name__}")
    return Comparison([column_from_result(label, r) for label, r in zip(labels, results)])
