"""The package's face in Python: read a network, solve it, certify a basis, compare, store runs.

Everything here is importable from ``basispath_graph`` directly; the CLI is built on the same
functions. docs/python-api.md walks through a notebook session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .analysis.compare import Comparison, column_from_general, column_from_result, column_label
from .analysis.coordinates import coordinates
from .analysis.general_coordinates import general_coordinates
from .errors import BadInput
from .export import basis_paths_of, read_json_file
from .general.blocks import block_general_paths
from .general.described import DescribedBasis, certify_described
from .general.model import from_layered
from .spec import is_general_spec, parse_general
from .general.paths import certify_blocks, certify_general, general_basis_of, path_block, read_any_general_path
from .general.solve import solve_general
from .network import Network, PathBlock, blocks_from_json
from .presets import FAMILIES, preset_network
from .result import Result
from .solver import DEFAULT_ENGINE, solve as solve_layered
from .spec import DEFAULT_MAX_WEIGHTS, load_any_spec, parse_spec, resolve_max_weights
from .torch_import import network_from_module
from .verify import Verdict, read_path
from .verify import certify as _certify_blocks

__all__ = ["load_spec", "load_general", "from_torch", "solve", "solve_general", "default_engine", "preset", "preset_families", "certify", "compare", "express"]


def load_spec(source, *, max_weights: int | None = DEFAULT_MAX_WEIGHTS) -> Network:
    """Read a network spec of any form from a file (JSON or YAML) or from a mapping.

    Parameters
    ----------
    source : str, os.PathLike, mapping or Network
        A spec file, or the spec itself: layered ``{"name", "widths", "skips"}`` or general
        ``{"name", "layers", "connections"}`` (docs/general-networks.md). A Network is returned
        as it is.
    max_weights : int or None
        Refuse networks with more weights (default 50,000,000; None reads
        ``$BASISPATH_MAX_WEIGHTS``).

    Returns
    -------
    Network
        In the form the spec has (``is_layered``).

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
    >>> conv = load_spec({"layers": [{"name": "bias", "size": 1}, {"name": "x", "size": 3}, {"name": "y", "size": 2}],
    ...                   "connections": [{"from": "x", "to": "y", "taps": 9}, {"from": "bias", "to": "y"}]})
    >>> conv.m, conv.H, conv.is_layered
    (56, 0, False)
    >>> load_spec({"widths": [2, 0, 2]})
    Traceback (most recent call last):
    ...
    basispath_graph.spec.SpecError: <spec>: widths[1] must be an integer >= 1, got 0
    """
    if isinstance(source, Network):
        return source
    if not isinstance(source, (Mapping, str, bytes, os.PathLike)):
        raise BadInput(f"a network is a Network, a spec (mapping) or a spec file, got {type(source).__name__}")
    if isinstance(source, Mapping):
        limit = resolve_max_weights(max_weights)
        if is_general_spec(source) and "widths" not in source:
            return parse_general(source, "<spec>", limit)
        return parse_spec(source, "<spec>", limit)
    return load_any_spec(source, max_weights)


def load_general(source, *, max_weights: int | None = DEFAULT_MAX_WEIGHTS) -> Network:
    """``load_spec`` in the general form: a layered spec comes back as layers "0".."L" joined by
    dense connections (same m, H and paths). Kept for older code; ``load_spec`` reads every form.

    Returns
    -------
    Network
        In the general form (``is_layered`` False).

    Examples
    --------
    >>> load_general({"widths": [2, 3, 2]})
    Network(name='', 3 layers, 2 connections, m=12, H=3)
    """
    network = load_spec(source, max_weights=max_weights)
    return network if not network.is_layered else from_layered(network)


def default_engine(network: Network) -> str:
    """The engine ``solve`` uses when none is named: ``deah-complete`` on a layered network (the
    paper's setting), ``skeleton`` on a general one (it reads every general network; the DEAH
    engines read those whose core is in the paper's setting or a layer DAG: name them to use them).

    Returns
    -------
    str

    Examples
    --------
    >>> default_engine(Network([2, 3, 2])), default_engine(load_general({"widths": [2, 3, 2]}))
    ('deah-complete', 'skeleton')
    """
    return DEFAULT_ENGINE if network.is_layered else "skeleton"


def solve(source, engine: str | None = None, seed: int = 0, **options) -> Result:
    """Find a basis path set of any network and certify it exactly (``basispath solve``).

    Parameters
    ----------
    source : Network, mapping or path
        A network, a spec (layered or general) or a spec file (``load_spec`` reads it).
    engine : {"deah-complete", "deah", "skeleton"}, optional
        Default: :func:`default_engine` (deah-complete on a layered network, skeleton on a
        general one). "deah-complete": Steps 1-2 of DEAH, Step 3 by hop ownership, certified
        with no repair (docs/deah-complete.md). "deah": the paper's algorithm, faithfully,
        repaired visibly when its union is not a basis. "skeleton": one designated path per
        weight beyond the hidden neurons (linear time). On a general network the DEAH engines
        run on its layered core, plus the tap lift, the extra layers and the identity forest
        (docs/general-networks.md).
    seed : int
        Seed of the shared choice rule; 0 is the identity order.
    **options
        ``repair`` (deah: False returns the raw union), ``certificates``, ``memory_limit``
        (bytes), ``time_limit`` (seconds), ``max_substructures``, ``on_stage`` (a callback
        given each stage name as it starts).

    Returns
    -------
    Result
        The same type for every network and engine: ``certified``, ``m``, ``H``, ``basis``,
        ``basis_paths``, ``discarded`` (rule and certificate each), ``parts``, ``why(path)``,
        ``express(path)``, ``summary()``, ``export()``.

    Raises
    ------
    BadInput
        an unreadable spec, an unknown engine, or (``UnsupportedFeature``) a general network
        the named DEAH engine does not read.
    LimitExceeded
        an estimate over ``memory_limit`` or ``time_limit``; deah's P^S too large.

    Examples
    --------
    >>> r = solve({"name": "fig1b", "widths": [2, 2, 3, 2, 2], "skips": [[0, 2], [1, 3]]})
    >>> r.certified, r.basis_size, len(r.discarded)
    (True, 23, 9)
    >>> solve(r.network, engine="deah").repairs_needed  # faithful DEAH is not a basis here
    3
    >>> conv = {"layers": [{"name": "bias", "size": 1}, {"name": "x", "size": 2}, {"name": "h", "size": 3},
    ...                    {"name": "y", "size": 2}],
    ...         "connections": [{"from": "x", "to": "h", "taps": 9}, {"from": "h", "to": "y"},
    ...                         {"from": "bias", "to": "h"}, {"from": "bias", "to": "y"}]}
    >>> r = solve(conv, engine="deah-complete")
    >>> r.certified, r.basis_size, r.parts["tap_lift"]
    (True, 62, 48)
    """
    network = load_spec(source)
    engine = engine or default_engine(network)
    if network.is_layered:
        return solve_layered(network, engine, seed, **options)
    return solve_general(network, engine, seed, **options)


def from_torch(model, *, name: str = "", input_shape: tuple[int, ...] | None = None, general: bool = False,
               max_weights: int | None = DEFAULT_MAX_WEIGHTS) -> Network:
    """Read a PyTorch model's weights into a Network (``basispath spec from-torch``; needs torch).

    A model of ``nn.Linear``, ReLU and ``torch.cat`` only reads as a layered network; anything
    with convolutions (kernel taps), biases, BatchNorm (eval mode), pooling, flatten, residual
    adds or concatenations along channels reads at channel level, in the general form
    (docs/general-networks.md); an operation neither reader knows is refused by name.

    Parameters
    ----------
    model : torch.nn.Module
        Traced with ``torch.fx`` (call ``model.eval()`` first when it has BatchNorm).
    name : str
    input_shape : tuple of int, optional
        ``(N, C, H, W)`` or the like: the model is run once on zeros of this shape to learn the
        ranks of its tensors (needed for a Linear after a flatten of feature maps).
    general : bool
        Read an MLP at channel level too (its biases then count as weights).
    max_weights : int or None
        As for :func:`load_spec`.

    Returns
    -------
    Network

    Raises
    ------
    TorchImportError
        (a :class:`~basispath_graph.errors.BadInput`): torch missing, or an operation that
        cannot be read, named with its module.

    Examples
    --------
    >>> import torchvision
    >>> net = from_torch(torchvision.models.resnet18(weights=None).eval(), name="resnet18")
    >>> net.m, net.H, net.is_layered
    (11684712, 2880, False)
    """
    return network_from_module(model, f"<{type(model).__name__}>", name, max_weights, general, input_shape)


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


def _basis_blocks(network: Network, basis) -> list[PathBlock]:
    """Blocks of any form a basis of a layered network comes in (see :func:`certify`)."""
    if isinstance(basis, Result):
        return list(basis.basis)
    if isinstance(basis, (str, os.PathLike)):
        basis = read_json_file(basis)
    if hasattr(basis, "basis_paths"):  # a StoredRun
        basis = basis.basis_paths
    if isinstance(basis, (list, tuple)) and basis and all(isinstance(b, PathBlock) for b in basis):
        return list(basis)
    if isinstance(basis, (list, tuple)):  # text paths ("0:1,1:0,2:1") as [layer, index] pairs
        basis = [[list(q) for q in zip(*read_path(p))] if isinstance(p, str) else p for p in basis]
    return blocks_from_json(basis_paths_of(basis))


def _general_paths(network: Network, basis) -> list:
    """General paths of any form a basis of a general network comes in: a Result, a StoredRun,
    an export document or file, or a list of paths (JSON form, JSON text or tuples)."""
    if isinstance(basis, Result):
        return [p for b in basis.basis for p in block_general_paths(network, b)]
    if hasattr(basis, "basis_paths"):  # a StoredRun
        return list(basis.basis_paths)
    if isinstance(basis, (str, os.PathLike)):
        basis = read_json_file(basis)
    if isinstance(basis, (list, tuple)) and basis and all(isinstance(p, (tuple, str)) for p in basis):
        return [read_any_general_path(network, p) for p in basis]
    return general_basis_of(network, basis, "basis")


def _check_network(network, what: str) -> Network:
    if not isinstance(network, Network):
        raise BadInput(f"{what} needs a Network, got {type(network).__name__}")
    return network


def certify(network: Network, basis) -> Verdict:
    """Decide exactly whether ``basis`` is a basis path set of ``network`` (``basispath verify``).

    Checks, first failure wins: every path is a path of the network, no path twice, exactly
    m - H paths, and independence by exact rank (peeling, then elimination modulo the prime
    2^31 - 1; a shortfall is confirmed modulo a second prime).

    Parameters
    ----------
    network : Network
    basis : Result, StoredRun, export document, file path, or list of paths
        Paths in every form ``Result.why`` takes: for a layered network sequences of (layer,
        index) pairs from layer 0 to layer L or their text ``"0:1,1:0,2:1"``; for a general
        one ``{"nodes", "taps"}`` objects, their JSON text, or ``((layer, index), ...), taps``
        tuples. A file is an export of ``solve --export`` or a bare JSON list of paths.

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
    if not _check_network(network, "certify").is_layered:
        if isinstance(basis, Result) and basis.network == network:  # the engine's blocks, as solve certified them
            if isinstance(basis.basis, DescribedBasis):
                return certify_described(basis.basis)
            return certify_blocks(network, basis.basis)
        return certify_general(network, _general_paths(network, basis))
    return _certify_blocks(network, _basis_blocks(network, basis))


def express(network: Network, basis, path) -> dict:
    """The coordinates of any path of ``network`` over a basis (``basispath express``): integer
    coefficients with path = sum of coef x basis path, weight by weight. This is the path's
    coordinate vector in basis-path space, what G-SGD works with.

    Parameters
    ----------
    network : Network
    basis : Result, StoredRun, export document, file path, or list of paths (as for :func:`certify`)
    path : a path in any form ``Result.why`` takes
        ``"0:1,1:0,2:1"`` or ``[(0, 1), (1, 0), (2, 1)]``; a general path ``{"nodes", "taps"}``.

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
    if not _check_network(network, "express").is_layered:
        if isinstance(basis, Result) and basis.network == network:  # its blocks as solved (a described basis unlisted)
            return basis.express(path)
        return general_coordinates(network, [path_block(network, p) for p in _general_paths(network, basis)],
                                   read_any_general_path(network, path))
    return coordinates(network, _basis_blocks(network, basis), path)


def compare(*results: Result, labels=None) -> Comparison:
    """Solve results side by side: m, H, |B|, substructures, discards by rule, repairs, times.

    For stored runs use :meth:`GraphStore.compare`; a column of a solve result and one of its
    stored run hold the same numbers.

    Parameters
    ----------
    *results : Result
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
        if not isinstance(r, Result):
            raise BadInput(f"compare takes Results, got {type(r).__name__}")
    return Comparison([(column_from_result if r.network.is_layered else column_from_general)(label, r)
                       for label, r in zip(labels, results)])
