"""Every torchvision classification model through ``from_torch`` (issue 27's census, as a test).

Each model is built with its parameters on the ``meta`` device (shapes only: no weights are
allocated, so even ViT-H/14 costs nothing) in eval mode and read at channel level. Then:

- a model is **read**, or refused naming operations that are not positively homogeneous (basis
  paths do not describe it, whatever else it lacks), except the models listed in
  ``NOT_SUPPORTED_YET``, refused for a feature not built and for nothing else (that list is the
  known gap, and shrinks when it is built);
- a read model's m is its own parameter count minus what BatchNorm folding removes, counted
  here from the traced graph by this test's rule (a BatchNorm whose input is a conv or linear
  read by it alone folds: its scale disappears into the weights, its shift and the conv's
  bias become one bias);
- H of one model per family equals an independent count from the model's modules (two rules:
  one per architecture for the chains and ResNets, one from convs, BatchNorms and residual
  blocks for every conv-BatchNorm family);
- the skeleton certifies every model read (``test_every_model_read_is_certified``).
"""

from __future__ import annotations

import contextlib
import functools

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from basispath_graph import from_torch, solve  # noqa: E402
from basispath_graph.torch_fx import TorchImportError  # noqa: E402

NAMES = sorted(torchvision.models.list_models(module=torchvision.models))
#: Refused for a feature not built yet (empty since ShuffleNet-V2's channel shuffle and chunk
#: along channels were built: issue 27).
NOT_SUPPORTED_YET: set[str] = set()
HOMOGENEITY = "not positively homogeneous (basis paths do not describe this network)"


@contextlib.contextmanager
def _weights_on_meta():
    """Every parameter a module registers is moved to the ``meta`` device at once (its storage,
    made by ``torch.empty``, is never touched), while the rest of a constructor runs on the CPU
    (RegNet computes its widths with tensors and reads them back with ``.tolist()``)."""
    register = torch.nn.Module.register_parameter

    def on_meta(module, name, param):
        register(module, name, None if param is None else torch.nn.Parameter(param.to("meta"), param.requires_grad))

    torch.nn.Module.register_parameter = on_meta
    try:
        yield
    finally:
        torch.nn.Module.register_parameter = register


def _meta_model(name: str):
    kwargs = {"aux_logits": False, "init_weights": False} if name in ("googlenet", "inception_v3") else {}
    with _weights_on_meta():
        return torchvision.models.get_model(name, weights=None, **kwargs).eval()


@functools.lru_cache(maxsize=None)
def _read(name: str):
    """(network, None) or (None, the refusal's text); once per model."""
    try:
        return from_torch(_meta_model(name), name=name, max_weights=10**9), None  # AlexNet, VGG: over 50 M
    except TorchImportError as exc:
        return None, str(exc)


def _batchnorms(model) -> list[tuple[object, object]]:
    """(BatchNorm module, the conv or linear it folds into, or None) for every BatchNorm call in
    the fx graph (this test's own rule: it folds when its input is a conv or linear read by it
    alone)."""
    traced = torch.fx.symbolic_trace(model)
    modules = dict(traced.named_modules())
    found = []
    for node in traced.graph.nodes:
        mod = modules.get(node.target) if node.op == "call_module" else None
        if not isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
            continue
        src = node.args[0]
        before = modules.get(src.target) if getattr(src, "op", None) == "call_module" else None
        folds = isinstance(before, (torch.nn.Conv2d, torch.nn.Linear)) and len(src.users) == 1
        found.append((mod, before if folds else None))
    return found


def _folded_away(model) -> int:
    """Parameters BatchNorm folding removes: per folded BatchNorm its C scales, and the C biases
    of the conv before it when it has them."""
    return sum(bn.num_features + (conv.bias.numel() if conv.bias is not None else 0)
               for bn, conv in _batchnorms(model) if conv is not None)


def test_there_are_80_classification_models():
    assert len(NAMES) == 80


@pytest.mark.parametrize("name", NAMES)
def test_read_with_exact_m_or_refused_as_not_homogeneous(name):
    net, refusal = _read(name)
    if name in NOT_SUPPORTED_YET:
        assert net is None and "not supported yet" in refusal and HOMOGENEITY not in refusal, refusal
        return
    if net is None:  # it may lack features too (permute, einsum): it is not describable either way
        assert HOMOGENEITY in refusal, refusal
        return
    model = _meta_model(name)
    params = sum(p.numel() for p in model.parameters())
    assert net.m == params - _folded_away(model)


def test_how_many_are_read():
    read = [name for name in NAMES if _read(name)[0] is not None]
    assert len(read) == 42  # every positively homogeneous one


def _classes_resnet(model) -> int:
    """ResNet (basic and bottleneck blocks): the stem's channels, each block's inner convs, and a
    new class for a block's output only where a projection shortcut (downsample) makes one; an
    identity shortcut joins the output to the block's input class."""
    h = model.conv1.out_channels
    for layer in (model.layer1, model.layer2, model.layer3, model.layer4):
        for block in layer:
            convs = [m for n, m in block.named_children() if n.startswith("conv")]
            h += sum(c.out_channels for c in convs[:-1])
            if block.downsample is not None:
                h += convs[-1].out_channels
    return h + 0  # the classifier's outputs are outputs


def _classes_plain(model) -> int:
    """A chain of convs and linear layers (VGG, AlexNet): every output channel or feature but the
    last layer's is a hidden class."""
    layers = [m for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    return sum(m.out_channels if isinstance(m, torch.nn.Conv2d) else m.out_features for m in layers[:-1])


def _classes_squeezenet(model) -> int:
    """Every conv's output channels are hidden except the classifier conv's (its output is
    pooled into the logits: an output)."""
    convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    return sum(c.out_channels for c in convs[:-1])


def _residual_outputs(model) -> int:
    """Channels of every residual block's output: a sum with the block's input (identity) or with
    a projection of it, which makes no class of its own (identity) or one class of two convs'
    outputs (projection)."""
    from torchvision.models import mnasnet, regnet, resnet
    total = 0
    for m in model.modules():
        if isinstance(m, (resnet.BasicBlock, resnet.Bottleneck)):
            total += [c for n, c in m.named_children() if n.startswith("conv")][-1].out_channels
        elif isinstance(m, regnet.ResBottleneckBlock):
            total += m.f.c[0].out_channels
        elif isinstance(m, mnasnet._InvertedResidual) and m.apply_residual:
            total += m.layers[-2].out_channels
    return total


def _classes_by_modules(model) -> int:
    """Any conv-BatchNorm network: every conv's output channels, every BatchNorm that does not
    fold (a per-channel scale of its own: over a concatenation, DenseNet), less the outputs of
    residual blocks (``_residual_outputs``). Channel shuffles and chunks make no neurons."""
    convs = sum(m.out_channels for m in model.modules() if isinstance(m, torch.nn.Conv2d))
    unfolded = sum(bn.num_features for bn, conv in _batchnorms(model) if conv is None)
    return convs + unfolded - _residual_outputs(model)


@pytest.mark.parametrize("name,count", [
    ("densenet121", _classes_by_modules), ("googlenet", _classes_by_modules), ("inception_v3", _classes_by_modules),
    ("regnet_x_400mf", _classes_by_modules), ("mnasnet0_5", _classes_by_modules), ("shufflenet_v2_x0_5", _classes_by_modules),
    ("resnet50", _classes_by_modules), ("resnext50_32x4d", _classes_by_modules),
    ("vgg11", _classes_plain), ("alexnet", _classes_plain), ("resnet18", _classes_resnet), ("resnet50", _classes_resnet),
    ("resnext50_32x4d", _classes_resnet), ("wide_resnet50_2", _classes_resnet), ("squeezenet1_1", _classes_squeezenet),
])
def test_H_matches_an_independent_count(name, count):
    net, refusal = _read(name)
    assert refusal is None
    assert net.H == count(_meta_model(name))


def test_every_model_read_is_certified():
    """The skeleton certifies every model read (shapes only: the network needs no weights)."""
    for name in NAMES:
        net, _ = _read(name)
        if net is not None:
            result = solve(net, engine="skeleton")
            assert result.certified and result.basis_size == net.m - net.H, name


@pytest.mark.parametrize("name", NAMES)
def test_deah_complete_certifies_every_model_read_with_no_repair(name):
    """deah-complete certifies every model the skeleton reads, raw, with no repair (issue 28): a
    layered core (ResNet, VGG, Wide ResNet) by the paper's Steps 1-3 on it, any other (DenseNet,
    Inception, GoogLeNet, SqueezeNet, RegNet, ResNeXt, MNASNet, ShuffleNet) as a layer DAG."""
    net, _ = _read(name)
    if net is None:
        pytest.skip("not read (refused as not positively homogeneous)")
    result = solve(net, engine="deah-complete")
    assert result.certified and result.basis_size == net.m - net.H
    if result.dag is None:
        assert result.core.raw_verdict.certified and result.core.repairs == []
    else:  # p_0 and the ears keep m - H of the core (every core weight once, every hidden core layer once)
        core = result.dag.decomposition.core
        hidden = [l for l in core.layers if l not in (core.source, core.sink)]
        assert result.parts["kept"] == sum(net.connection_weights(net.connections[k]) for k in core.connections) - sum(
            net.layers[l].size for l in hidden)
        assert len(result.dag.ears) == len(core.connections) - len(core.layers) + 2
