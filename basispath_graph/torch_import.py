"""Read the layer structure of a PyTorch model into a network spec (``basispath spec from-torch``).

A factory (``MODULE:FACTORY`` or ``path/to/file.py:FACTORY``) is called without arguments to
get an ``nn.Module``, which is traced with ``torch.fx.symbolic_trace``. The traced graph may
contain only:

* one input placeholder -- layer 0, whose width is the ``in_features`` of the first
  ``nn.Linear`` that reads it;
* ``nn.Linear`` modules -- each call is one new layer (1, 2, ..., in order of execution)
  of width ``out_features``;
* ReLU: the ``nn.ReLU`` module, ``torch.relu`` / ``torch.nn.functional.relu`` and the
  ``.relu()`` method (in-place variants too);
* ``torch.cat`` (``torch.concat``, ``torch.concatenate``) of feature tensors along the last
  dimension (``dim=-1``, or ``dim=1`` which assumes inputs of shape (batch, features)):
  DenseNet-style concatenation. An ``nn.Linear`` reading a concatenation of layers
  a1, a2, ... is connected from each of them, and its ``in_features`` must equal the sum of
  their widths;
* ``nn.Dropout``, ``torch.nn.functional.dropout`` and ``nn.Identity``, which are passed
  through (they do not change which weights a path can use);
* the output, which must be the output (after ReLU or not) of the last ``nn.Linear``.

Layers must form a chain: layer l must read layer l-1 (possibly among others); the pair
(l-1, l) is the consecutive pair and every other layer read becomes a skip (a, l).
Biases are ignored: basis paths are over weights only. A Linear module called twice (shared
weights) is refused. Anything else -- convolutions, a residual sum ``x + f(x)``, batch norm,
reshapes, other activations -- is not layered: :func:`model_spec` refuses it by name
(``unsupported operation <op> in <source>``), and :func:`convert_module` reads it at channel level.

**Channel level.** A model with anything else that the channel-level rules know -- convolutions
(groups = 1), BatchNorm, pooling, flatten, residual sums, biases -- is read instead into a general
spec by :mod:`basispath_graph.general.torch_channels` (the rules shared with ``spec from-onnx``);
``general=True`` (``--general``) asks for that form for a plain MLP too (whose biases then count).
An operation neither reader knows is refused by name.

PyTorch is an optional dependency (``pip install torch``; extra ``[torch]``); it is imported
only when a model is read, and its absence raises :class:`TorchMissing`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .torch_fx import TorchImportError, TorchMissing, UnsupportedOperation, import_torch, one_line, op_name, trace
from .network import Network
from .spec import DEFAULT_MAX_WEIGHTS, parse_spec, resolve_max_weights

__all__ = [
    "TorchImportError",
    "TorchMissing",
    "UnsupportedOperation",
    "TorchModel",
    "convert_module",
    "import_torch",
    "load_factory",
    "model_spec",
    "network_from_module",
    "network_from_torch",
    "read_torch_model",
]


@dataclass
class TorchModel:
    """The converted model: a spec dict plus which module made each layer."""

    spec: dict
    layer_modules: list[str] = field(default_factory=list)  # "input" for layer 0, then module names (layered only)
    general: bool = False  # a general (channel-level) spec: layers + connections


# ---------------------------------------------------------------------------------------
# Finding the factory


def load_factory(target: str):
    """The callable named by ``MODULE:FACTORY`` or ``path/to/file.py:FACTORY`` (FACTORY may be
    dotted, e.g. ``Model.small``). A module name is looked up with the current folder first on
    sys.path; a file is run as a fresh module with its own folder on sys.path."""
    module_part, sep, attr = target.rpartition(":")
    if not sep or not module_part or not attr or not all(p.isidentifier() for p in attr.split(".")):
        raise TorchImportError(f"expected MODULE:FACTORY or path/to/file.py:FACTORY, got {target!r}")
    is_file = module_part.endswith(".py") or "/" in module_part or os.sep in module_part
    with contextlib.redirect_stdout(sys.stderr):  # the spec may go to stdout: keep user prints off it
        module = _import_file(module_part) if is_file else _import_module(module_part)
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TorchImportError(f"{module_part} has no attribute {attr!r}") from None
        except Exception as exc:  # noqa: BLE001 - a property of the user's code
            raise TorchImportError(f"cannot get {attr!r} from {module_part}: {one_line(exc)}") from None
    if not callable(obj):
        raise TorchImportError(f"{target} is not callable (a factory returning an nn.Module is needed)")
    return obj


def _import_module(name: str):
    if not all(p.isidentifier() for p in name.split(".")):
        raise TorchImportError(f"{name!r} is neither a module name nor a path to a .py file")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as exc:
        raise TorchImportError(f"cannot import module {name}: {one_line(exc)}") from None


def _import_file(path_text: str):
    path = Path(path_text).expanduser()
    if not path.is_file():
        what = "is not a file" if path.exists() else "file not found"
        raise TorchImportError(f"cannot import {path_text}: {what}")
    mod_name = f"_basispath_user_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise TorchImportError(f"cannot import {path_text}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the file can import its neighbours
    sys.modules[mod_name] = module  # dataclasses and the like look themselves up here
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(mod_name, None)
        raise TorchImportError(f"cannot import {path_text}: {one_line(exc)}") from None
    return module


# ---------------------------------------------------------------------------------------
# Converting a traced graph


def model_spec(module, source: str = "<model>", name: str = "") -> TorchModel:
    """Trace ``module`` (an nn.Module) and convert it; ``source`` names it in messages."""
    torch = import_torch()
    nn = torch.nn
    F = torch.nn.functional
    traced = trace(module, source)

    relu_functions = {torch.relu, torch.relu_, F.relu, F.relu_}
    dropout_functions = {F.dropout}
    cat_functions = {torch.cat, getattr(torch, "concat", torch.cat), getattr(torch, "concatenate", torch.cat)}
    pass_modules = (nn.ReLU, nn.Dropout, nn.Identity)

    widths: list[int | None] = []  # widths[l]; layer 0's is known once a Linear reads it
    modules: list[str] = []
    inputs: list[tuple[int, ...]] = []  # the layers each layer reads (empty for layer 0)
    feats: dict = {}  # fx node -> tuple of layers whose outputs it concatenates
    used_linears: set[str] = set()
    output_layers = None

    placeholders = [n for n in traced.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != 1:
        names = ", ".join(str(n.target) for n in placeholders) or "none"
        raise TorchImportError(
            f"{source}: the model must take exactly one input tensor, its forward() takes {len(placeholders)} ({names})"
        )

    def feature_arg(node, value):
        if not isinstance(value, torch.fx.Node) or value not in feats:
            raise UnsupportedOperation(op_name(node), source, f" (its input {value!r} is not a feature tensor)")
        return feats[value]

    def no_other_nodes(node, args, kwargs):
        for v in list(args) + list(kwargs.values()):
            if isinstance(v, torch.fx.Node) or (isinstance(v, (list, tuple)) and any(isinstance(x, torch.fx.Node) for x in v)):
                raise UnsupportedOperation(op_name(node), source, " (with more than one tensor input)")

    def layer_label(l: int) -> str:
        return "the input (layer 0)" if l == 0 else f"layer {l} ({modules[l]!r})"

    for node in traced.graph.nodes:
        op = node.op
        if op == "placeholder":
            widths.append(None)
            modules.append("input")
            inputs.append(())
            feats[node] = (0,)
        elif op == "call_module":
            mod = traced.get_submodule(node.target)
            if isinstance(mod, nn.Linear):
                if not node.args:
                    raise UnsupportedOperation(op_name(node), source, " (called without an input)")
                read = feature_arg(node, node.args[0])
                no_other_nodes(node, node.args[1:], node.kwargs)
                if node.target in used_linears:
                    raise TorchImportError(
                        f"{source}: nn.Linear {node.target!r} is called more than once (shared weights are not supported)"
                    )
                used_linears.add(node.target)
                fan_in, fan_out = int(mod.in_features), int(mod.out_features)
                if fan_in < 1 or fan_out < 1:
                    raise TorchImportError(
                        f"{source}: nn.Linear {node.target!r} has in_features={fan_in}, out_features={fan_out};"
                        " both must be >= 1 (an uninitialised lazy module?)"
                    )
                known = sum(widths[l] for l in read if widths[l] is not None)
                if widths[0] is None and 0 in read:
                    rest = fan_in - known
                    if rest < 1:
                        raise TorchImportError(
                            f"{source}: nn.Linear {node.target!r} has in_features={fan_in}, but the layers it reads"
                            f" besides the input already have {known} features"
                        )
                    widths[0] = rest
                elif known != fan_in:
                    parts = " + ".join(str(widths[l]) for l in read)
                    desc = ", ".join(layer_label(l) for l in read)
                    raise TorchImportError(
                        f"{source}: nn.Linear {node.target!r} has in_features={fan_in}, but its input has"
                        f" {known} features ({desc}: {parts})"
                    )
                new = len(widths)
                if new - 1 not in read:
                    desc = ", ".join(layer_label(l) for l in read)
                    raise TorchImportError(
                        f"{source}: layers must form a chain, but layer {new} ({node.target!r}) does not read"
                        f" {layer_label(new - 1)}; it reads {desc}"
                    )
                widths.append(fan_out)
                modules.append(str(node.target))
                inputs.append(tuple(read))
                feats[node] = (new,)
            elif isinstance(mod, pass_modules):
                feats[node] = feature_arg(node, node.args[0] if node.args else None)
                no_other_nodes(node, node.args[1:], node.kwargs)
            else:
                raise UnsupportedOperation(op_name(node), source)
        elif op == "call_function":
            target = node.target
            if target in relu_functions or target in dropout_functions:
                feats[node] = feature_arg(node, node.args[0] if node.args else node.kwargs.get("input"))
                no_other_nodes(node, node.args[1:], {k: v for k, v in node.kwargs.items() if k != "input"})
            elif target in cat_functions:
                tensors = node.args[0] if node.args else node.kwargs.get("tensors")
                dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", node.kwargs.get("axis", 0))
                if not isinstance(tensors, (list, tuple)) or not tensors:
                    raise UnsupportedOperation(op_name(node), source, " (not of a list of tensors)")
                if dim not in (-1, 1):
                    raise UnsupportedOperation(
                        op_name(node), source, f" along dim={dim!r} (only the feature dimension: dim=-1, or dim=1)"
                    )
                joined: list[int] = []
                for t in tensors:
                    joined.extend(feature_arg(node, t))
                dup = sorted({l for l in joined if joined.count(l) > 1})
                if dup:
                    raise TorchImportError(
                        f"{source}: {layer_label(dup[0])} appears more than once in a concatenation"
                    )
                feats[node] = tuple(joined)
            else:
                raise UnsupportedOperation(op_name(node), source)
        elif op == "call_method":
            if node.target in ("relu", "relu_"):
                feats[node] = feature_arg(node, node.args[0])
                no_other_nodes(node, node.args[1:], node.kwargs)
            else:
                raise UnsupportedOperation(op_name(node), source)
        elif op == "output":
            result = node.args[0] if node.args else None
            if not isinstance(result, torch.fx.Node):
                raise TorchImportError(f"{source}: the model must return one tensor, the output of its last nn.Linear")
            output_layers = feature_arg(node, result)
        else:  # get_attr: a parameter or buffer used directly
            raise UnsupportedOperation(op_name(node), source)

    L = len(widths) - 1
    if L < 1:
        raise TorchImportError(f"{source}: the model has no nn.Linear layer")
    if output_layers != (L,):
        got = "a concatenation of " + ", ".join(layer_label(l) for l in output_layers) if len(output_layers or ()) > 1 else (
            layer_label(output_layers[0]) if output_layers else "nothing"
        )
        raise TorchImportError(
            f"{source}: the output must be the output of the last nn.Linear, layer {L} ({modules[L]!r}), but it is {got}"
        )
    skips = sorted((a, l) for l in range(1, L + 1) for a in inputs[l] if a != l - 1)
    spec = {"name": name, "widths": [int(w) for w in widths], "skips": [[a, b] for a, b in skips]}
    return TorchModel(spec=spec, layer_modules=modules)


def convert_module(module, source: str = "<model>", name: str = "", general: bool = False,
                   input_shape: tuple[int, ...] | None = None) -> TorchModel:
    """A layered spec when the model is only nn.Linear, ReLU and torch.cat (and ``general`` is
    false), else the general spec at channel level."""
    from .general.torch_channels import general_spec_from_module

    if not general:
        try:
            return model_spec(module, source, name)
        except UnsupportedOperation:
            pass  # beyond a layered network: read at channel level (which names what it cannot read)
        except TorchImportError as layered_error:
            try:  # a model the channel level refuses by op name: that name is the clearer message
                general_spec_from_module(module, source, name, input_shape)
            except UnsupportedOperation as exc:
                raise exc from None
            except TorchImportError:
                raise layered_error from None
            raise TorchImportError(f"{layered_error} (it reads as a general spec with --general)") from None
    spec = general_spec_from_module(module, source, name, input_shape)
    return TorchModel(spec=spec, layer_modules=[l["name"] for l in spec["layers"]], general=True)


def _parse(model: TorchModel, source: str, max_weights: int | None):
    if model.general:
        from .spec import parse_general

        return parse_general(model.spec, source, resolve_max_weights(max_weights))
    return parse_spec(model.spec, source, resolve_max_weights(max_weights))


def network_from_module(
    module, source: str = "<model>", name: str = "", max_weights: int | None = DEFAULT_MAX_WEIGHTS,
    general: bool = False, input_shape: tuple[int, ...] | None = None,
):
    """The :class:`Network` of an nn.Module, or a :class:`GeneralNetwork` when it is read at
    channel level (see the module docstring for what is supported)."""
    return _parse(convert_module(module, source, name, general, input_shape), source, max_weights)


def read_torch_model(target: str, name: str | None = None, general: bool = False,
                     input_shape: tuple[int, ...] | None = None) -> TorchModel:
    """Import ``MODULE:FACTORY``, call the factory and convert the model it returns.
    ``name`` defaults to the factory's name."""
    import_torch()  # before the user's module, which surely imports torch itself
    factory = load_factory(target)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            module = factory()
    except (Exception, SystemExit) as exc:
        raise TorchImportError(f"{target}() raised {one_line(exc)}") from None
    torch = import_torch()
    if not isinstance(module, torch.nn.Module):
        raise TorchImportError(f"{target}() returned {type(module).__name__}, not a torch.nn.Module")
    if name is None:
        name = target.rpartition(":")[2].rsplit(".", 1)[-1]
    return convert_module(module, target, name, general, input_shape)


def network_from_torch(
    target: str, name: str | None = None, max_weights: int | None = DEFAULT_MAX_WEIGHTS,
    general: bool = False, input_shape: tuple[int, ...] | None = None,
):
    """The network of ``MODULE:FACTORY`` (a limit on the weights as in ``load_spec``):
    a :class:`Network`, or a :class:`GeneralNetwork` when read at channel level."""
    return _parse(read_torch_model(target, name, general, input_shape), target, max_weights)
