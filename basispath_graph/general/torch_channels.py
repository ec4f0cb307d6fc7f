"""Read a PyTorch model at channel level into a general spec (``spec from-torch``, general form).

The torch.fx front end of :mod:`basispath_graph.general.channel_graph` (the rules, shared with
``spec from-onnx``): this module maps the traced graph's modules, functions and methods onto its
calls. Channels are the neurons; BatchNorm is read as in eval mode.

=================================================  ==========================================
fx node                                            rule (channel_graph)
=================================================  ==========================================
the input placeholder                              an input layer; its channels from
                                                   ``input_shape[1]`` or its first reader
``nn.Conv1d/2d/3d`` (groups = 1)                   ``conv``: prod(kernel_size) taps; bias
``nn.Conv*d`` grouped (1 < groups)                 ``grouped_conv``: ``grouped``, kernel taps
                                                   (depthwise, groups = in = out: ``diagonal``)
``nn.Linear``                                      ``dense_from_features``: S taps after a
                                                   flatten of C channels (in_features = C*S)
``nn.BatchNorm1d/2d/3d`` (affine, running stats)   ``batchnorm``: folds or diagonal + bias
ReLU (module, function, method), dropout,          pass through (channel-wise, no weights)
``nn.Identity``, max/avg/adaptive pooling
``nn.Flatten``, ``torch.flatten``, ``.flatten``,   ``flatten`` (from dimension 1 only)
``.view/.reshape(n, -1)``
``+``, ``torch.add``, ``.add``                     ``add`` (a parameter operand: ``add_bias``)
``torch.cat`` along dimension 1                    ``concat``
``x * gamma`` (a per-channel parameter)            ``scale``: folds, or ``diagonal``
``stochastic_depth(..., training=False)``          pass through (eval)
``x[:, :, ::2, ::2]`` (spatial slices)              pass through
``F.pad`` with zeros                                spatial: pass through; on channels:
                                                   ``pad_channels`` (option-A shortcut)
``x.view(n, g, C // g, ...)``, ``transpose(1, 2)``,  ``permute_channels`` (a channel shuffle)
``view`` back to ``n, C, ...``
``chunk`` / ``split`` along channels, ``x[:, a:b]``  ``select_channels`` (a layer held in part
                                                   is split into two layers)
=================================================  ==========================================

Anything else (GELU, LayerNorm, attention, grouped or transposed conv, ...) is refused by its
op name: ``unsupported operation torch.nn.GELU (module 'act') in SOURCE; not positively homogeneous
(basis paths do not describe this network)``. The walk goes on past a refusal (the refused node's
result stands for its input's channels), so every blocker is named in one line, grouped as not
positively homogeneous (``NOT_HOMOGENEOUS``) or not supported yet; a model traced in training mode
that builds an object of auxiliary outputs is told to call ``.eval()``. ``torch._assert`` and the
nodes that only feed it (shape checks) are skipped.
"""

from __future__ import annotations

import contextlib
import math
import operator
import sys

from ..torch_fx import TorchImportError, UnsupportedOperation, UnsupportedOperations, import_torch, op_name, trace
from .channel_graph import ChannelGraph, SplitChannels, per_channel

__all__ = ["general_spec_from_module", "read_module"]

_POOLS = ("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
          "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
          "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d")
_DROPOUTS = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
#: Arithmetic on sizes (``num_channels // groups``): a size again, only good as a view's shape.
_SIZE_ARITHMETIC = {operator.floordiv: operator.floordiv, operator.mul: operator.mul, operator.add: operator.add,
                    operator.sub: operator.sub}


#: Operations that are not positively homogeneous (f(t x) != t f(x) for t > 0), by the last part
#: of their name: basis paths do not describe a network that uses them, whatever the importer.
NOT_HOMOGENEOUS = {
    "GELU", "gelu", "SiLU", "silu", "Sigmoid", "sigmoid", "Tanh", "tanh", "Softmax", "softmax", "LogSoftmax", "log_softmax",
    "LayerNorm", "layer_norm", "GroupNorm", "group_norm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "instance_norm",
    "LocalResponseNorm", "local_response_norm", "Hardswish", "hardswish", "Hardsigmoid", "hardsigmoid", "ReLU6", "relu6",
    "Hardtanh", "hardtanh", "ELU", "elu", "SELU", "selu", "CELU", "celu", "Mish", "mish", "Softplus", "softplus",
    "MultiheadAttention", "scaled_dot_product_attention", "mul", "mul_", "matmul", "bmm", "exp", "log", "sqrt", "rsqrt", "pow",
    "div", "truediv",
}
HOMOGENEITY = "not positively homogeneous (basis paths do not describe this network)"  # the group's name


def _not_homogeneous(op: str) -> bool:
    """Whether ``op`` (``op_name``: ``torch.nn.GELU (module 'act')``, ``operator.mul``) is one of
    ``NOT_HOMOGENEOUS``."""
    return op.split(" (module")[0].rsplit(".", 1)[-1] in NOT_HOMOGENEOUS


def _channel_shape(param) -> list[int]:
    """A parameter's shape without the leading ones (they broadcast over the batch)."""
    shape = list(param.shape)
    while len(shape) > 1 and shape[0] == 1:
        shape.pop(0)
    return shape


def _entry(key: str, places: list[str]) -> str:
    """An operation refused once (its own text) or several times: how often, and where."""
    if len(places) == 1:
        return places[0] if not places[0].startswith("'") else key.replace(":", f" (module {places[0]}):", 1) \
            if ":" in key else f"{key} (module {places[0]})"
    shown = ", ".join(p for p in places[:3] if p.startswith("'"))
    more = ", ..." if len(places) > 3 else ""
    return f"{key} x{len(places)}" + (f" (modules {shown}{more})" if shown else "")


def _tensor_nodes(value, fx) -> list:
    """The fx nodes inside an argument (nested lists/tuples/dicts)."""
    found = []
    fx.node.map_arg(value, lambda n: found.append(n) or n)
    return found


class _Reader:
    def __init__(self, module, source: str, name: str, input_shape: tuple[int, ...] | None, fold: bool = True):
        self.torch = torch = import_torch()
        self.nn, self.F = torch.nn, torch.nn.functional
        self.source = source
        self.training = bool(getattr(module, "training", False))  # BatchNorm is read as in eval mode either way
        self.traced = trace(module, source)
        self.g = ChannelGraph(name, TorchImportError, fold)
        self.input_shape = input_shape
        self.rank: dict[str, int] = {}
        self.spatial: set[str] = set()  # tensors known to keep spatial dimensions (N x C x ...)
        self.params: dict[str, object] = {}  # get_attr nodes: constants
        self.sizes: set[str] = set()  # .size() / .shape values (only as shapes of a view)
        self.values: dict[str, object] = {}  # what each size node gave on the sample input (input_shape)
        self.shapes: dict[str, tuple[int, ...]] = {}  # each tensor's shape on the sample input
        self.channel_parts: dict[str, tuple[str, list[tuple[int, int]]]] = {}  # chunk/split -> (source, ranges)
        if input_shape is not None:
            self._propagate_shapes(input_shape)
        for node in self.traced.graph.nodes:
            if self._is_size(node):
                self.sizes.add(node.name)
        self.checks = self._shape_checks()
        for node in self.traced.graph.nodes:
            self.g.labels[node.name] = str(node.target) if node.op == "call_module" else node.name
            if node.name in self.sizes or node.name in self.checks:
                continue  # x.size(0) in x.view(x.size(0), -1) does not read x's values; nor does an assert
            for used in _tensor_nodes((node.args, node.kwargs), torch.fx):
                self.g.readers[used.name] = self.g.readers.get(used.name, 0) + 1
        F = self.F
        self.relus = {torch.relu, torch.relu_, F.relu, F.relu_}
        self.pools = {getattr(F, n) for n in _POOLS if hasattr(F, n)} | {getattr(torch, n) for n in _POOLS if hasattr(torch, n)}
        self.dropouts = {getattr(F, n) for n in _DROPOUTS if hasattr(F, n)}
        self.cats = {torch.cat, getattr(torch, "concat", torch.cat), getattr(torch, "concatenate", torch.cat)}
        self.adds = {operator.add, operator.iadd, torch.add}
        nn = self.nn
        self.pool_modules = (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d, nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d,
                             nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d,
                             nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d, nn.AdaptiveMaxPool3d)
        dropouts = tuple(getattr(nn, n) for n in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout") if hasattr(nn, n))
        self.pass_modules = (nn.ReLU, nn.Identity, *dropouts, *self.pool_modules)

    def _propagate_shapes(self, shape: tuple[int, ...]) -> None:
        """Run the traced model once on zeros of ``shape`` (eval mode, no grad), noting the rank of
        every tensor it makes."""
        torch, rank, values, shapes = self.torch, self.rank, self.values, self.shapes
        shown = "x".join(map(str, shape))
        if len(shape) < 2 or any(d < 1 for d in shape):
            raise TorchImportError(f"input shape {shown}: need N x C x ... with every dimension >= 1")

        class Ranks(torch.fx.Interpreter):
            def run_node(self, n):
                result = super().run_node(n)
                if isinstance(result, torch.Tensor):
                    rank[n.name] = result.dim()
                    shapes[n.name] = tuple(result.shape)
                elif isinstance(result, int) or (isinstance(result, tuple) and all(isinstance(v, int) for v in result)):
                    values[n.name] = tuple(result) if isinstance(result, tuple) else result
                return result

        was = self.traced.training
        try:
            self.traced.eval()
            with contextlib.redirect_stdout(sys.stderr), torch.no_grad():
                first = next(self.traced.parameters(), None)  # a float64 or a GPU model runs on its own kind
                Ranks(self.traced).run(torch.zeros(shape) if first is None else torch.zeros(shape, dtype=first.dtype, device=first.device))
        except Exception as exc:  # noqa: BLE001 - running the user's forward()
            first = (str(exc).strip().splitlines() or [""])[0]  # fx adds "While executing ..." lines
            raise TorchImportError(f"cannot run {self.source} on an input of shape {shown}: {type(exc).__name__}: {first}") from None
        finally:
            self.traced.train(was)

    def _shape_checks(self) -> set[str]:
        """``torch._assert`` and the nodes that only feed one (``torch._assert(x.dim() == 4, ...)``,
        ViT's shape checks): they compute no part of the network's function and are skipped."""
        asserts = {getattr(self.torch, "_assert", None), getattr(self.torch, "_assert_async", None)} - {None}
        checks: set[str] = set()
        for node in reversed(list(self.traced.graph.nodes)):
            if node.op == "call_function" and node.target in asserts:
                checks.add(node.name)
            elif node.op in ("call_function", "call_method") and node.users and all(u.name in checks for u in node.users):
                checks.add(node.name)
        return checks

    # -- helpers ----------------------------------------------------------------------------

    def where(self, node) -> str:
        return f"{op_name(node)} in {self.source}"

    def refuse(self, node, detail: str = "") -> UnsupportedOperation:
        return UnsupportedOperation(op_name(node), self.source, detail)

    def tensor(self, node, value) -> str:
        """The key of a tensor argument (refused if it is not a tensor an earlier node made)."""
        if not isinstance(value, self.torch.fx.Node) or value.name in self.params or value.name in self.sizes:
            raise self.refuse(node, f" (its input {value!r} is not a computed tensor)")
        if value.name in self.channel_parts:
            raise self.refuse(node, " of the parts of a chunk or split (only taking one part may read them)")
        return value.name

    def only(self, node, *extra_ok: str) -> str:
        """The one tensor input of a node (its first argument); any other tensor argument is refused."""
        first = node.args[0] if node.args else node.kwargs.get("input")
        rest = [v for k, v in node.kwargs.items() if k not in ("input", *extra_ok)]
        # a size (F.avg_pool2d(x, x.size()[3])) is a number, not a second tensor
        if [n for n in _tensor_nodes((list(node.args[1:]), rest), self.torch.fx) if n.name not in self.sizes]:
            raise self.refuse(node, " (with more than one tensor input)")
        return self.tensor(node, first)

    def arg(self, node, k: int, key: str, default):
        if len(node.args) > k:
            return node.args[k]
        return node.kwargs.get(key, default)

    # -- the walk -------------------------------------------------------------------------------

    def run(self) -> dict:
        placeholders = [n for n in self.traced.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != 1:
            names = ", ".join(str(n.target) for n in placeholders) or "none"
            raise TorchImportError(f"{self.source}: the model must take exactly one input tensor, its forward() takes"
                                   f" {len(placeholders)} ({names})")
        outputs: list[str] = []
        blockers: list[UnsupportedOperation] = []  # every refused operation, named at the end
        blocked: set[str] = set()  # what a refused operation made, and everything computed from it
        for node in self.traced.graph.nodes:
            if node.name in self.checks:
                continue
            downstream = any(n.name in blocked for n in _tensor_nodes((node.args, node.kwargs), self.torch.fx))
            if node.op == "output":
                if not downstream:
                    outputs = self._outputs(node)
                continue
            if downstream:  # computed from a refused operation: its shapes are a stand-in's
                blocked.add(node.name)
            try:
                self._node(node)
            except UnsupportedOperation as exc:
                blockers.append((node, exc))  # judged on: every blocker is named, not only the first
                blocked.add(node.name)
                self._stand_in(node)
            except (TorchImportError, KeyError):
                if not downstream:
                    raise
                self._stand_in(node)  # a shape that only a stand-in made wrong: not the model's fault
        if blockers:
            raise self._refusal(blockers)
        for node in self.traced.graph.nodes:  # a result nothing reads would silently drop its weights
            if node.op in ("call_module", "call_function", "call_method") and node.name in self.g.tensors \
                    and not self.g.readers.get(node.name):
                raise TorchImportError(f"{self.where(node)}: its result is not used (not a part of the network's function)")
        return self.g.finish(outputs, f"the output of {self.source}")

    def _refusal(self, blockers: list) -> UnsupportedOperations:
        """One line naming every refused operation, grouped: not positively homogeneous, or not
        supported yet; with the hint to call .eval() where the model, traced in training mode,
        builds an object of auxiliary outputs (GoogLeNet, Inception)."""
        hint = ""
        if self.training and any(isinstance(node.target, type) for node, _ in blockers):
            hint = "; the model is in training mode, where it returns auxiliary outputs: call .eval() first"
        ops = [exc.op for _, exc in blockers]
        if len(blockers) == 1:
            exc = blockers[0][1]
            extra = f"; {HOMOGENEITY}" if _not_homogeneous(exc.op) else ""
            return UnsupportedOperations(f"{exc}{extra}{hint}", ops)
        groups: dict[str, dict[str, list[str]]] = {HOMOGENEITY: {}, "not supported yet": {}}
        for node, exc in blockers:  # one entry per operation and detail, its modules listed
            text = str(exc).replace("unsupported operation ", "", 1).replace(f" in {self.source}", "", 1)
            key = text.replace(f" (module {node.target!r})", "") if node.op == "call_module" else text
            where = repr(node.target) if node.op == "call_module" else None
            groups[HOMOGENEITY if _not_homogeneous(exc.op) else "not supported yet"].setdefault(key, []).append(where or text)
        parts = [f"{what}: {'; '.join(_entry(key, places) for key, places in entries.items())}"
                 for what, entries in groups.items() if entries]
        return UnsupportedOperations(f"{len(blockers)} unsupported operations in {self.source}; {' | '.join(parts)}{hint}", ops)

    def _node(self, node) -> None:
        if node.op == "placeholder":
            self.g.input(node.name, self.input_shape[1] if self.input_shape else None)
        elif node.op == "get_attr":
            self.params[node.name] = self.traced.get_parameter(node.target) if self._is_param(node) else None
        elif node.op == "call_module":
            self._module(node, self.traced.get_submodule(node.target))
        elif node.op == "call_function":
            self._function(node)
        elif node.op == "call_method":
            self._method(node)
        elif node.op != "output":
            raise self.refuse(node)

    def _stand_in(self, node) -> None:
        """After a refusal: the node's result stands for its first tensor input's channels, so
        the operations after it are judged too (their own refusals named as well)."""
        for n in _tensor_nodes((node.args, node.kwargs), self.torch.fx):
            if n.name in self.g.tensors and node.name not in self.g.tensors:
                with contextlib.suppress(TorchImportError, KeyError):
                    self.g.pass_through(node.name, n.name, self.where(node))
                    self._inherit(node.name, n.name)
                return

    def _outputs(self, node) -> list[str]:
        """The keys of the model's outputs (counted as readers: the output node's arguments)."""
        result = node.args[0] if node.args else None
        results = list(result) if isinstance(result, (list, tuple)) else [result]
        if not results or not all(isinstance(r, self.torch.fx.Node) for r in results):
            hint = ": the model is in training mode, where it may return auxiliary outputs: call .eval() first" if self.training else ""
            raise TorchImportError(f"{self.source}: the model must return a tensor (or a tuple of tensors){hint}")
        return [self.tensor(node, r) for r in results]

    def _is_size(self, node) -> bool:
        """x.size(...), x.shape, x.shape[k] (only good as the shape of a view)."""
        if node.op == "call_method" and node.target == "size":
            return True
        if node.op == "call_function" and node.target is getattr and node.args[1:] == ("shape",):
            return True
        if node.op == "call_function" and node.target in _SIZE_ARITHMETIC:
            fx = self.torch.fx
            args = list(node.args)
            return (any(isinstance(a, fx.Node) and a.name in self.sizes for a in args) and not node.kwargs
                    and all((isinstance(a, int) and not isinstance(a, bool)) or (isinstance(a, fx.Node) and a.name in self.sizes)
                            for a in args))
        return (node.op == "call_function" and node.target is operator.getitem and isinstance(node.args[0], self.torch.fx.Node)
                and node.args[0].name in self.sizes)

    def _dims(self, key: str):
        """The shape of tensor ``key``: ints from the sample input, else the channel count at
        axis 1 and ("dim", key, axis) for the others (equal only to themselves); None when its
        rank is not known."""
        if key in self.shapes:
            return self.shapes[key]
        rank = self.rank.get(key)
        if rank is None or key not in self.g.tensors:
            return None
        return tuple(self.g.tensors[key].channels if axis == 1 else ("dim", key, axis) for axis in range(rank))

    def _value(self, arg):
        """What a shape argument is: an int, a symbolic dimension (``_dims``), a tuple of them,
        or None (not known)."""
        fx = self.torch.fx
        if isinstance(arg, int) and not isinstance(arg, bool):
            return arg
        if not isinstance(arg, fx.Node):
            return None
        if arg.name in self.values:
            return self.values[arg.name]
        if arg.op == "call_method" and arg.target == "size" and isinstance(arg.args[0], fx.Node):
            dims, axis = self._dims(arg.args[0].name), self.arg(arg, 1, "dim", None)
            return dims if axis is None or dims is None else dims[axis]
        if arg.op == "call_function" and arg.target is getattr and arg.args[1:] == ("shape",):
            return self._dims(arg.args[0].name)
        if arg.op == "call_function" and arg.target is operator.getitem:
            whole, k = self._value(arg.args[0]), arg.args[1]
            return whole[k] if isinstance(whole, tuple) and isinstance(k, int) and -len(whole) <= k < len(whole) else None
        if arg.op == "call_function" and arg.target in _SIZE_ARITHMETIC:
            a, b = (self._value(v) for v in arg.args)
            return _SIZE_ARITHMETIC[arg.target](a, b) if isinstance(a, int) and isinstance(b, int) else None
        return None

    def _is_param(self, node) -> bool:
        try:
            self.traced.get_parameter(node.target)
            return True
        except AttributeError:
            return False

    def _module(self, node, mod) -> None:
        nn, g, out, where = self.nn, self.g, node.name, self.where(node)
        if isinstance(mod, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            src = self.only(node)
            params = (f"{node.target}.weight", f"{node.target}.bias")
            if mod.groups > 1:  # block g of the outputs reads block g of the inputs (depthwise: a diagonal)
                g.grouped_conv(out, src, where, int(mod.in_channels), int(mod.out_channels), int(mod.groups),
                               math.prod(mod.kernel_size), mod.bias is not None, params)
            else:
                g.conv(out, src, where, int(mod.in_channels), int(mod.out_channels), math.prod(mod.kernel_size), mod.bias is not None,
                       params)
            self.spatial.add(out)
            self.rank.setdefault(out, len(mod.kernel_size) + 2)  # N x C x one axis per kernel dimension
        elif isinstance(mod, nn.Linear):
            self._linear(node, self.only(node), int(mod.in_features), int(mod.out_features), mod.bias is not None,
                         (f"{node.target}.weight", f"{node.target}.bias"))
        elif isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)):
            if not mod.affine or not mod.track_running_stats:
                raise self.refuse(node, ": BatchNorm without affine=True and running statistics is not a trainable"
                                        " per-channel scale and shift")
            src = self.only(node)
            g.batchnorm(out, src, where, int(mod.num_features))
            self._inherit(out, src)
        elif isinstance(mod, nn.Flatten):
            if (mod.start_dim, mod.end_dim) != (1, -1):
                raise self.refuse(node, f" with start_dim={mod.start_dim}, end_dim={mod.end_dim}: only from dimension 1 to the end")
            g.flatten(out, self.only(node), where)
        elif isinstance(mod, self.pass_modules):
            src = self.only(node)
            g.pass_through(out, src, where)
            self._inherit(out, src)
            if isinstance(mod, self.pool_modules):
                self.spatial.add(out)
        else:
            raise self.refuse(node)

    def _linear(self, node, src: str, in_f: int, out_f: int, has_bias: bool, params: tuple[str, str]) -> None:
        rank = self.rank.get(src)
        if (rank is not None and rank != 2) or (rank is None and src in self.spatial):
            shown = f"rank {rank}" if rank is not None else "spatial dimensions"
            raise TorchImportError(f"{self.where(node)} on a tensor of {shown}: only N x features (flatten first)")
        self.g.dense_from_features(node.name, src, self.where(node), in_f, out_f, has_bias, params)
        self.rank.setdefault(node.name, 2)  # N x features

    def _inherit(self, out: str, src: str) -> None:
        if src in self.spatial:
            self.spatial.add(out)
        if src in self.rank:
            self.rank.setdefault(out, self.rank[src])

    def _per_channel(self, param, key: str) -> int | None:
        """C when ``param`` holds one value per channel of tensor ``key`` (``channel_graph.per_channel``)."""
        return per_channel(param.shape, self.rank.get(key), key in self.spatial)

    def _function(self, node) -> None:
        torch, g, out, where, target = self.torch, self.g, node.name, self.where(node), node.target
        if target in self.relus or target in self.dropouts or target in self.pools:
            src = self.only(node)
            g.pass_through(out, src, where)
            self._inherit(out, src)
            if target in self.pools:
                self.spatial.add(out)
        elif target is torch.flatten:
            self._flatten(node, self.arg(node, 1, "start_dim", 0), self.arg(node, 2, "end_dim", -1))
        elif target in self.cats:
            self._cat(node)
        elif target is torch.mean:
            self._mean(node)
        elif target in self.adds:
            self._add(node)
        elif getattr(target, "__name__", "") == "stochastic_depth" and self.arg(node, 3, "training", True) is False:
            src = self.only(node, "p", "mode", "training")  # torchvision.ops: the identity in eval
            g.pass_through(out, src, where)
            self._inherit(out, src)
        elif target in (operator.mul, operator.imul, torch.mul) and self._scale(node):
            pass  # x * gamma: layer scale
        elif target is operator.getitem and self._take_part(node):
            pass  # x1, x2 = x.chunk(2, dim=1)
        elif target is operator.getitem and self._slice(node):
            pass  # x[:, :, ::2, ::2], x[:, a:b]
        elif target in (torch.transpose, getattr(torch, "swapaxes", None), getattr(torch, "permute", None)) and self._swap(node):
            pass  # a channel shuffle's transpose
        elif target in (torch.chunk, torch.split):
            self._parts(node)
        elif target is self.F.pad:
            self._pad(node)
        elif node.name in self.sizes:
            pass  # x.shape[0]: a shape, see _is_size
        else:
            raise self.refuse(node)

    def _method(self, node) -> None:
        name, g = node.target, self.g
        src = node.args[0] if node.args else None
        if name == "contiguous" and self._split(src) is not None:
            g.tensors[node.name] = g.tensors[src.name]
        elif name in ("transpose", "swapaxes", "permute") and self._swap(node):
            pass  # a channel shuffle's transpose
        elif name in ("chunk", "split"):
            self._parts(node)
        elif name in ("view", "reshape") and self._channel_view(node):
            pass  # a channel shuffle's views
        elif name in ("relu", "relu_", "contiguous"):
            src = self.only(node)
            g.pass_through(node.name, src, self.where(node))
            self._inherit(node.name, src)
        elif node.name in self.sizes:
            pass  # x.size(0): a shape, see _is_size
        elif name == "flatten":
            self._flatten(node, self.arg(node, 1, "start_dim", 0), self.arg(node, 2, "end_dim", -1))
        elif name in ("view", "reshape"):
            shape = list(node.args[1:]) if not (len(node.args) == 2 and isinstance(node.args[1], (list, tuple))) else list(node.args[1])
            if len(shape) != 2 or node.kwargs or not (shape[1] == -1 or (isinstance(shape[1], int) and shape[1] >= 1)):
                raise self.refuse(node, ": only to N x features (a flatten: x.view(x.size(0), -1))")
            self.g.flatten(node.name, self.tensor(node, node.args[0]), self.where(node))
        elif name in ("add", "add_"):
            self._add(node)
        elif name in ("mul", "mul_") and self._scale(node):
            pass  # x.mul(gamma): layer scale
        elif name == "mean":
            self._mean(node)
        else:
            raise self.refuse(node)

    def _scale(self, node) -> bool:
        """x * gamma with gamma a trainable parameter of one value per channel (layer scale:
        shape (C, 1, ...) on maps, (C,) on N x C): a per-channel scale. False for anything else
        (a product of two computed tensors is not positively homogeneous: refused by the caller)."""
        if len(node.args) != 2 or node.kwargs:
            return False
        a, b = node.args
        params = [v for v in (a, b) if isinstance(v, self.torch.fx.Node) and self.params.get(v.name) is not None]
        if len(params) != 1:
            return False
        other = b if a is params[0] else a
        if not isinstance(other, self.torch.fx.Node) or other.name in self.params or other.name in self.sizes:
            return False
        channels = self._per_channel(self.params[params[0].name], other.name)
        if channels is None:
            return False
        self.g.scale(node.name, self.tensor(node, other), self.where(node), int(channels), str(params[0].target))
        self._inherit(node.name, other.name)
        return True

    def _slice(self, node) -> bool:
        """``x[:, :, ::2, ::2]`` (every channel, a subsampling of the spatial axes: channel-wise, no
        weights) and ``x[:, a:b, ...]`` (channels a .. b - 1: ``select_channels``). False for any
        other index (refused by the caller)."""
        src, index = node.args[0], node.args[1]
        if not isinstance(src, self.torch.fx.Node) or src.name not in self.g.tensors or not isinstance(index, tuple):
            return False
        full = slice(None, None, None)
        if len(index) < 2 or index[0] != full or not all(isinstance(i, slice) for i in index[1:]):
            return False
        key, channels = self.tensor(node, src), index[1]
        if channels == full:
            self.g.pass_through(node.name, key, self.where(node))
        else:
            if channels.step not in (None, 1) or not all(v is None or isinstance(v, int) for v in (channels.start, channels.stop)):
                return False
            first, stop, _ = channels.indices(self.g.view(key, self.where(node)).channels)
            self.g.select_channels(node.name, key, self.where(node), first, stop - first)
        self._inherit(node.name, src.name)
        return True

    def _channel_axis(self, node, dim, key: str) -> bool:
        rank = self.rank.get(key)
        return isinstance(dim, int) and not isinstance(dim, bool) and (dim == 1 or (rank is not None and dim == 1 - rank))

    def _parts(self, node) -> None:
        """``x.chunk(k, dim=1)``, ``torch.split(x, size or sizes, dim=1)``: the channel ranges of
        the parts, each taken by a getitem (``_take_part``)."""
        key = self.tensor(node, node.args[0] if node.args else node.kwargs.get("input", node.kwargs.get("tensor")))
        how = self.arg(node, 1, "chunks" if "chunk" in op_name(node) else "split_size_or_sections", None)
        if how is None:
            how = node.kwargs.get("split_size", node.kwargs.get("sections"))
        dim = self.arg(node, 2, "dim", 0)
        if not self._channel_axis(node, dim, key):
            raise self.refuse(node, f" along dim={dim!r}: only along channels (dim=1)")
        channels = self.g.view(key, self.where(node)).channels
        if "chunk" in op_name(node) and isinstance(how, int) and how >= 1:
            size = -(-channels // how)
            sizes = [min(size, channels - at) for at in range(0, channels, size)]
        elif isinstance(how, int) and how >= 1:
            sizes = [min(how, channels - at) for at in range(0, channels, how)]
        elif isinstance(how, (list, tuple)) and all(isinstance(v, int) and v >= 0 for v in how) and sum(how) == channels:
            sizes = list(how)
        else:
            raise self.refuse(node, f" into {how!r}: only a constant number of parts or sizes adding up to {channels} channels")
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        self.channel_parts[node.name] = (key, list(zip(starts, sizes)))

    def _take_part(self, node) -> bool:
        """Part k of a chunk or split: its channels (``select_channels``)."""
        whole, k = node.args[0], node.args[1]
        if not isinstance(whole, self.torch.fx.Node) or whole.name not in self.channel_parts:
            return False
        key, ranges = self.channel_parts[whole.name]
        if not isinstance(k, int) or not -len(ranges) <= k < len(ranges):
            raise self.refuse(node, f" [{k!r}] of {len(ranges)} parts")
        first, count = ranges[k]
        if count == 0:
            raise self.refuse(node, ": an empty part")
        self.g.select_channels(node.name, key, self.where(node), first, count)
        self._inherit(node.name, key)
        return True

    def _split(self, node):
        """The ``SplitChannels`` a node made (the first view of a channel shuffle), else None."""
        value = self.g.tensors.get(getattr(node, "name", None))
        return value if isinstance(value, SplitChannels) else None

    def _channel_view(self, node) -> bool:
        """The views of a channel shuffle: ``x.view(n, g, C // g, *spatial)`` splits the channel
        axis in two (``split_channel_axis``), and ``view(n, C, *spatial)`` of such a tensor joins
        them again (``join_channel_axes``), a permutation of the channels when a transpose swapped
        them. False for any other view (the caller goes on)."""
        fx = self.torch.fx
        src = node.args[0] if node.args else None
        if not isinstance(src, fx.Node) or node.kwargs:
            return False
        shape = list(node.args[1]) if len(node.args) == 2 and isinstance(node.args[1], (list, tuple)) else list(node.args[1:])
        values = [self._value(v) for v in shape]
        split = self._split(src)
        if split is not None:
            dims = self._dims(split.source)
            if dims is None or len(values) != len(dims) or values[1] not in (split.channels, -1) or list(values[2:]) != list(dims[2:]):
                raise self.refuse(node, f" to {tuple(values)!r} of a channel axis split in two: only back to the shape it had")
            self.g.join_channel_axes(node.name, src.name, self.where(node))
            self._inherit(node.name, split.source)
            return True
        if src.name not in self.g.tensors or src.name in self.channel_parts:
            return False
        dims = self._dims(src.name)
        if dims is None or len(values) != len(dims) + 1 or len(dims) < 3:
            return False
        groups, per_group = values[1], values[2]
        if not (isinstance(groups, int) and isinstance(per_group, int) and groups >= 1 and per_group >= 1
                and groups * per_group == dims[1] and list(values[3:]) == list(dims[2:]) and values[0] in (dims[0], -1)):
            return False
        self.g.split_channel_axis(node.name, self.tensor(node, src), self.where(node), groups)
        return True

    def _swap(self, node) -> bool:
        """``transpose(1, 2)`` (or ``permute(0, 2, 1, ...)``) of a channel axis split in two."""
        src = node.args[0] if node.args else None
        split = self._split(src)
        if split is None:
            return False
        rank = len(self._dims(split.source) or ()) + 1
        axes = [a % rank if isinstance(a, int) else a for a in
                (list(node.args[1]) if len(node.args) == 2 and isinstance(node.args[1], (list, tuple)) else list(node.args[1:]))]
        name = op_name(node).rsplit(".", 1)[-1]
        if not ((name in ("transpose", "swapaxes") and sorted(axes) == [1, 2]) or (name == "permute" and axes == [0, 2, 1, *range(3, rank)])):
            raise self.refuse(node, f" with axes {tuple(axes)!r} of a channel axis split in two: only swapping the two (1, 2)")
        self.g.swap_channel_axes(node.name, src.name, self.where(node))
        return True

    def _pad(self, node) -> None:
        """``F.pad(x, (..., c_before, c_after))`` with zeros: channels of zeros around x when the
        pad reaches the channel axis (the CIFAR ResNet's option-A shortcut), else the spatial
        axes only (the channels pass through). Needs the input's rank (``input_shape``) unless it
        comes from a conv (whose kind tells it)."""
        src = self.only(node, "pad", "mode", "value")
        pad = list(self.arg(node, 1, "pad", ()))
        mode, value = self.arg(node, 2, "mode", "constant"), self.arg(node, 3, "value", None)
        rank = self.rank.get(src)
        if mode != "constant" or value not in (None, 0, 0.0) or len(pad) % 2 or not all(isinstance(p, int) for p in pad):
            raise self.refuse(node, ": only zero padding (mode 'constant') by constant sizes")
        if rank is None:
            raise self.refuse(node, ": the rank of its input is not known (give a sample input shape: --input-shape)")
        axes = len(pad) // 2  # from the last axis backwards
        if axes > rank - 1:
            raise self.refuse(node, ": padding the batch axis")
        if axes == rank - 1 and (pad[-2] or pad[-1]):
            self.g.pad_channels(node.name, src, self.where(node), pad[-2], pad[-1])
        else:
            self.g.pass_through(node.name, src, self.where(node))
        self._inherit(node.name, src)

    def _mean(self, node) -> None:
        """``x.mean((2, 3))`` / ``torch.mean(x, dim)`` over the spatial axes: global average
        pooling (channel-wise, positively homogeneous), flat (N x C) unless ``keepdim``."""
        dims = self.arg(node, 1, "dim", None)
        dims = [dims] if isinstance(dims, int) else list(dims) if isinstance(dims, (list, tuple)) else None
        src = self.tensor(node, node.args[0])
        rank = self.rank.get(src)
        if rank is not None:
            dims = sorted(d % rank for d in dims) if dims else None
        # without an input shape the ranks are unknown: the dims are taken as all the spatial axes
        if not dims or any(isinstance(d, bool) or not isinstance(d, int) or d in (0, 1) for d in dims) or \
                (rank is None and src not in self.spatial):
            raise self.refuse(node, f" over dim={self.arg(node, 1, 'dim', None)!r}: only over the spatial axes of N x C x ... maps"
                                    " (a global average pool)")
        keep = self.arg(node, 2, "keepdim", False)
        if keep or (rank is not None and len(dims) < rank - 2):
            self.g.pass_through(node.name, src, self.where(node))
            self.spatial.add(node.name)
        else:
            self.g.flatten(node.name, src, self.where(node))

    def _flatten(self, node, start, end) -> None:
        src = node.args[0] if node.args else None
        split = self._split(src)
        if split is not None and (start, end) == (1, 2):
            self.g.join_channel_axes(node.name, src.name, self.where(node))
            self._inherit(node.name, split.source)
            return
        if (start, end) != (1, -1):
            raise self.refuse(node, f" with start_dim={start}, end_dim={end}: only from dimension 1 to the end")
        self.g.flatten(node.name, self.only(node, "start_dim", "end_dim"), self.where(node))

    def _cat(self, node) -> None:
        tensors = node.args[0] if node.args else node.kwargs.get("tensors")
        dim = self.arg(node, 1, "dim", node.kwargs.get("axis", 0))
        if not isinstance(tensors, (list, tuple)) or not tensors:
            raise self.refuse(node, " (not of a list of tensors)")
        keys = [self.tensor(node, t) for t in tensors]
        ranks = {self.rank.get(k) for k in keys}
        features = ranks <= {2, None} and not any(k in self.spatial for k in keys)  # N x features (None: not known)
        if dim != 1 and not (dim == -1 and features):
            raise self.refuse(node, f" along dim={dim!r}: only along channels (dim=1, or dim=-1 of N x features)")
        self.g.concat(node.name, keys, self.where(node))
        for k in keys:
            self._inherit(node.name, k)

    def _add(self, node) -> None:
        if len(node.args) != 2 or set(node.kwargs) - {"alpha"} or node.kwargs.get("alpha", 1) != 1:
            raise self.refuse(node, " (only a + b of two tensors)")
        a, b = node.args
        consts = [v for v in (a, b) if isinstance(v, self.torch.fx.Node) and v.name in self.params]
        if consts:
            param = self.params[consts[0].name]
            other = b if a is consts[0] else a
            if param is None or not isinstance(other, self.torch.fx.Node):
                raise self.refuse(node, " (only a trainable parameter of one value per channel can be added)")
            shape = _channel_shape(param)
            # on N x C x ... one value per channel is C x 1 x ...; on N x features it is (C,)
            per_channel = self._per_channel(param, other.name) is not None
            if not per_channel and other.name in self.spatial and len(shape) == 1:
                raise self.refuse(node, f" (a parameter of shape {tuple(param.shape)} adds along the last axis of"
                                        " N x C x ... maps, not per channel: shape (C, 1, ...) is a bias)")
            self.g.add_bias(node.name, self.tensor(node, other), self.where(node), int(param.numel()), per_channel,
                            str(consts[0].target))
            self._inherit(node.name, other.name)
            return
        if not all(isinstance(v, self.torch.fx.Node) for v in (a, b)):
            raise self.refuse(node, " (adds a constant: only a + b of two computed tensors or a per-channel parameter)")
        ka, kb = self.tensor(node, a), self.tensor(node, b)
        self.g.add(node.name, ka, kb, self.where(node))
        for k in (ka, kb):
            if k in self.rank:
                self.rank.setdefault(node.name, self.rank[k])
        if ka in self.spatial or kb in self.spatial:
            self.spatial.add(node.name)


def general_spec_from_module(module, source: str = "<model>", name: str = "",
                             input_shape: tuple[int, ...] | None = None) -> dict:
    """The general (channel-level) spec of an nn.Module; ``input_shape`` (N, C, ...) gives the
    input's channels and lets shapes be checked (ranks of what nn.Linear and torch.cat read)."""
    return read_module(module, source, name, input_shape)[0]


def read_module(module, source: str = "<model>", name: str = "",
                input_shape: tuple[int, ...] | None = None, fold: bool = True) -> tuple[dict, list]:
    """The general spec and, per connection of it, the model parameters its weights come from
    (a list of ``channel_graph.WeightSource``) or why they come from none (a string): what
    G-SGD reads (``gsgd/parameters.py``, with ``fold=False``: a per-channel scale parameter is a
    diagonal connection of its own, not folded into the conv before it)."""
    reader = _Reader(module, source, name, input_shape, fold)
    return reader.run(), list(reader.g.sources)
