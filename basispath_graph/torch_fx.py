"""PyTorch basics shared by both readers of a model (``torch_import``: layered, and
``general/torch_channels``: channel level): importing torch, tracing with torch.fx, naming an
fx node's operation, and the errors a refusal raises."""

from __future__ import annotations

import contextlib
import sys

from .errors import BadInput

__all__ = ["TorchImportError", "TorchMissing", "UnsupportedOperation", "UnsupportedOperations", "import_torch", "one_line", "op_name", "trace"]


class TorchImportError(BadInput):
    """A model that cannot be read or converted; str() is one line."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class TorchMissing(TorchImportError):
    """PyTorch cannot be imported."""


_SUM_OPS = {"operator.add", "operator.iadd", "torch.add", "Tensor.add", "Tensor.add_"}


class UnsupportedOperation(TorchImportError):
    """The traced graph uses an operation that has no place in a layered ReLU network."""

    def __init__(self, op: str, source: str, detail: str = ""):
        self.op = op
        if not detail and op in _SUM_OPS:
            detail = " (a residual sum is not a layered network: use torch.cat for skip connections)"
        super().__init__(f"unsupported operation {op} in {source}{detail}")


class UnsupportedOperations(UnsupportedOperation):
    """Every operation of a model that a reader refused, in one line (``ops``: their names)."""

    def __init__(self, message: str, ops: list[str]):
        TorchImportError.__init__(self, message)
        self.op, self.ops = ops[0], ops


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and its message."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def import_torch():
    """``torch`` or TorchMissing (whatever goes wrong importing it)."""
    try:
        import torch  # noqa: F401
        import torch.fx  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - a broken install is as good as none
        raise TorchMissing(f"PyTorch is not available ({one_line(exc)}): pip install torch (a CPU build is enough)") from None
    return torch


def op_name(node) -> str:
    """A readable name of the operation of an fx node, e.g. ``torch.nn.Conv1d (module 'conv')``,
    ``operator.add``, ``Tensor.view``."""
    if node.op == "call_module":
        mod = node.graph.owning_module.get_submodule(node.target)
        cls = type(mod)
        where = cls.__module__
        if where.startswith("torch.nn.modules"):
            where = "torch.nn"
        return f"{where}.{cls.__qualname__} (module {node.target!r})"
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "get_attr":
        return f"attribute access {node.target!r}"
    if node.op == "call_function":
        target = node.target
        mod = getattr(target, "__module__", None)
        name = getattr(target, "__name__", None) or repr(target)
        if mod in ("_operator", "operator"):
            return f"operator.{name}"
        if mod is None or mod == "torch._C._VariableFunctions":
            mod = "torch"
        elif mod == "torch._C._nn":  # C implementations behind torch.nn.functional
            mod = "torch.nn.functional"
        return f"{mod}.{name}"
    return f"{node.op} {node.target!r}"


def trace(module, source: str):
    """``torch.fx.symbolic_trace(module)`` (TorchImportError, one line, if it cannot)."""
    torch = import_torch()
    if not isinstance(module, torch.nn.Module):
        raise TorchImportError(f"{source} is a {type(module).__name__}, not a torch.nn.Module")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return torch.fx.symbolic_trace(module)
    except Exception as exc:  # noqa: BLE001 - tracing runs the user's forward()
        raise TorchImportError(f"cannot trace {source} with torch.fx: {one_line(exc)}") from None
