"""G-SGD (basispath_graph.gsgd): the path gradient, invariance under rescaling, exact allocation.

Every check here is computed by the test's own code from the basis paths (weight ids of the
materialised blocks) and the model's parameters, not by the optimizer's solves:

- the path gradient satisfies the inverse chain rule on **every** weight, the H fixed ones too
  (the solve used only the m - H equations of the free weights; the others hold only because the
  loss is invariant under rescaling), and matches central finite differences of the loss;
- G-SGD from a randomly rescaled copy of the initial weights computes the same function after
  k steps on the same batches (SGD does not);
- after every step the products over the basis paths are the updated path values, and the
  fixed weights are bit-identical to their start.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from basispath_graph import from_torch, open_store, solve  # noqa: E402
from basispath_graph.general.blocks import block_weight_ids  # noqa: E402
from basispath_graph.gsgd import GSGD, GSGDError, ParameterMap  # noqa: E402
from basispath_graph.gsgd.models import PlainCNN, ResNet20, SkipMLP  # noqa: E402

from .pages import run_page  # noqa: E402


class _Extras(nn.Module):
    """Every other way a weight enters: a depthwise conv (diagonal, taps), a per-channel scale
    parameter and a bias parameter added, a grouped conv, an identity shortcut."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.dw = nn.Conv2d(4, 4, 3, padding=1, groups=4)
        self.gamma = nn.Parameter(torch.rand(4, 1, 1) + 0.5)
        self.beta = nn.Parameter(torch.randn(4, 1, 1))
        self.grouped = nn.Conv2d(4, 4, 1, groups=2)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = torch.relu(self.conv(x))
        d = torch.relu(self.dw(h) * self.gamma + self.beta)
        y = torch.relu(torch.relu(self.grouped(d)) + h)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


class _FeaturesOut(nn.Module):
    """Returns its hidden features beside the logits: the feature layer is an output (H counts
    only the layer inside), though a Linear reads it too."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(3, 4), nn.Linear(4, 3), nn.Linear(3, 2)

    def forward(self, x):
        h = self.a(x)
        return torch.cat([self.c(torch.relu(self.b(torch.relu(h)))), h], 1)


class _OptionA(nn.Module):
    """A CIFAR ResNet block with an option-A shortcut (subsample, pad with zero channels): the
    block's output layer is split where the shortcut's channels start and end."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(2, 2, 3, padding=1)
        self.conv1 = nn.Conv2d(2, 4, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        short = nn.functional.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, 1, 1))
        y = torch.relu(self.conv2(torch.relu(self.conv1(x))) + short)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


class _Shuffle(nn.Module):
    """ShuffleNet-V2 without BatchNorm: torchvision's channel shuffle (view, transpose, view),
    ``chunk`` along channels (a layer split in two after the fact), and a depthwise conv over a
    shuffled concatenation of several layers (one diagonal connection each, its weights at a
    stride in the conv's parameter)."""

    def __init__(self):
        super().__init__()
        from torchvision.models.shufflenetv2 import channel_shuffle

        self.shuffle = channel_shuffle
        self.stem = nn.Conv2d(2, 4, 3, padding=1)
        self.down1 = self._down(4, 4)
        self.same1, self.same2 = self._branch(2), self._branch(2)
        self.down2 = self._down(4, 4)
        self.fc = nn.Linear(4, 2)

    @staticmethod
    def _branch(c):
        return nn.Sequential(nn.Conv2d(c, c, 1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False),
                             nn.Conv2d(c, c, 1), nn.ReLU())

    def _down(self, c, out):
        half = out // 2
        return nn.ModuleList([
            nn.Sequential(nn.Conv2d(c, c, 3, stride=2, padding=1, groups=c, bias=False), nn.Conv2d(c, half, 1), nn.ReLU()),
            nn.Sequential(nn.Conv2d(c, half, 1), nn.ReLU(), nn.Conv2d(half, half, 3, stride=2, padding=1, groups=half, bias=False),
                          nn.Conv2d(half, half, 1), nn.ReLU())])

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = self.shuffle(torch.cat([self.down1[0](x), self.down1[1](x)], 1), 2)
        for branch in (self.same1, self.same2):
            x1, x2 = x.chunk(2, dim=1)
            x = self.shuffle(torch.cat((x1, branch(x2)), 1), 2)
        x = self.shuffle(torch.cat([self.down2[0](x), self.down2[1](x)], 1), 2)
        return self.fc(x.mean((2, 3)))


MODELS = {
    "skip_mlp": (lambda: SkipMLP(in_features=5, widths=(4, 3, 3), classes=2), (6, 5)),
    "plain_cnn": (lambda: PlainCNN(in_channels=2, channels=(3, 4), classes=2), (4, 2, 6, 6)),
    "resnet": (lambda: ResNet20(in_channels=2, width=3, blocks=1, classes=2, residual_scale=0.5), (4, 2, 8, 8)),
    "extras": (_Extras, (4, 2, 5, 5)),
    "features_out": (_FeaturesOut, (5, 3)),
    "option_a": (_OptionA, (3, 2, 6, 6)),
    "shuffle": (_Shuffle, (3, 2, 8, 8)),
}
CASES = [(name, engine) for name in MODELS for engine in ("skeleton", "deah-complete")
         if (name, engine) not in (("extras", "deah-complete"), ("features_out", "deah-complete"), ("option_a", "deah-complete"),
                                   ("shuffle", "deah-complete"))]


def _model(name: str, seed: int = 0):
    torch.manual_seed(seed)
    make, shape = MODELS[name]
    return make().double(), shape


def _batches(shape, k: int, seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=g, dtype=torch.float64), torch.randn(shape[0], 2 if len(shape) else 2, generator=g,
                                                                            dtype=torch.float64)) for _ in range(k)]


def _loss(model, x, target):
    out = model(x)
    return (out[:, : target.shape[1]] - target).square().mean()


def _basis(model, shape, engine):
    net = ParameterMap.of_model(model, input_shape=shape).network
    return solve(net, engine=engine)


def _paths(result) -> list[np.ndarray]:
    """Weight ids of every basis path, basis index order (the test's own listing)."""
    rows = []
    for block in result.basis:
        rows.extend(block_weight_ids(result.network, block))
    return rows


def _weights(opt) -> np.ndarray:
    pm = opt.parameter_map
    return pm.gather(pm.params, torch.float64).numpy()


def _products(paths, w) -> np.ndarray:
    return np.array([np.prod(w[p]) for p in paths])


@pytest.mark.parametrize("name,engine", CASES)
def test_path_gradient_satisfies_the_chain_rule_on_every_weight(name, engine):
    model, shape = _model(name)
    result = _basis(model, shape, engine)
    opt = GSGD(model, basis=result, lr=0.1, input_shape=shape)
    (x, t), = _batches(shape, 1)
    _loss(model, x, t).backward()
    d = opt.path_gradient().numpy()
    w = _weights(opt)
    g = opt.parameter_map.gather([p.grad for p in opt.parameter_map.params], torch.float64).numpy()
    paths = _paths(result)
    assert len(paths) == result.network.m - result.network.H == len(d)
    v = _products(paths, w)
    # g_j * w_j = sum over the basis paths b through j of dL/dv_b * v_b, for all m weights
    lhs = np.zeros(len(w))
    for b, p in enumerate(paths):
        lhs[p] += d[b] * v[b]
    scale = np.abs(g * w).max()
    assert np.abs(lhs - g * w).max() <= 1e-9 * scale
    fixed = opt.space.fixed
    assert len(fixed) == result.network.H and np.abs(lhs[fixed] - (g * w)[fixed]).max() <= 1e-9 * scale


@pytest.mark.parametrize("name,engine", CASES)
def test_path_gradient_matches_finite_differences(name, engine):
    model, shape = _model(name)
    opt = GSGD(model, engine=engine, lr=0.1, input_shape=shape)
    (x, t), = _batches(shape, 1)
    loss = _loss(model, x, t)
    loss.backward()
    d = opt.path_gradient()
    v = opt.path_values()
    w = opt.parameter_map.gather(opt.parameter_map.params, torch.float64)
    rng = np.random.default_rng(0)
    picked = rng.choice(len(v), size=min(25, len(v)), replace=False)
    for b in picked:  # move v_b alone: the other path values stay (allocation keeps them)
        h = 1e-5 * abs(float(v[b]))  # relative: a path value never crosses 0 (the activations would change)
        values = []
        for sign in (1, -1):
            moved = v.clone()
            moved[b] += sign * h
            opt.parameter_map.write(opt.space.allocate(moved, w))
            with torch.no_grad():
                values.append(float(_loss(model, x, t)))
        opt.parameter_map.write(w)
        fd = (values[0] - values[1]) / (2 * h)
        assert abs(fd - float(d[b])) <= 1e-3 * max(1.0, abs(fd)), (b, fd, float(d[b]))


def _rescaled(model, shape, seed: int = 7):
    """A copy of ``model`` with every hidden rescaling class scaled by its own factor in
    [0.2, 5]: weights into the class times c, out of it divided by c (computed from the
    network's classes here, not by G-SGD)."""
    twin = copy.deepcopy(model)
    pm = ParameterMap.of_model(twin, input_shape=shape)
    net = pm.network
    rng = np.random.default_rng(seed)
    classes = net.classes
    factor = np.exp(rng.uniform(np.log(0.2), np.log(5), len(classes)))
    touches = np.zeros(len(classes), dtype=bool)
    for layer in (*net.inputs, *net.outputs):
        touches[classes[net.neuron_offset[layer]:net.neuron_offset[layer + 1]]] = True
    factor[touches] = 1.0  # classes holding an input or output neuron are not hidden
    c_of = factor[classes]  # per neuron: its class's factor
    w = pm.gather(pm.params, torch.float64).numpy().copy()
    for k, c in enumerate(net.connections):
        if not c.trainable:
            continue
        n = net.connection_weights(c)
        i, j, _ = net.weight_ends(c, np.arange(n))
        ids = net.connection_offsets[k] + np.arange(n)
        w[ids] *= c_of[net.neuron_offset[c.target] + j] / c_of[net.neuron_offset[c.source] + i]
    pm.write(torch.as_tensor(w))
    return twin


def _train(model, make_opt, batches):
    opt = make_opt(model)
    for x, t in batches:
        opt.zero_grad()
        _loss(model, x, t).backward()
        opt.step()
    return model


def _stable_lr(model, shape, engine, batch, change: float = 1e-2) -> float:
    """A learning rate that moves no basis path value by more than ``change`` of itself on the
    first step: G-SGD's step on v_b is lr * dL/dv_b, and path values of deep nets span many orders
    of magnitude (docs/gsgd.md). Computed from invariant quantities (v and dL/dv)."""
    probe = copy.deepcopy(model)
    opt = GSGD(probe, engine=engine, input_shape=shape)
    _loss(probe, *batch).backward()
    return change / float((opt.path_gradient() / opt.path_values()).abs().max())


@pytest.mark.parametrize("name,engine", CASES)
def test_gsgd_is_invariant_to_rescaling_the_initial_weights_sgd_is_not(name, engine):
    model, shape = _model(name)
    twin = _rescaled(model, shape)
    probe, = [x for x, _ in _batches(shape, 1, seed=99)]
    with torch.no_grad():
        assert torch.allclose(model(probe), twin(probe), rtol=1e-10, atol=1e-12)  # the same function
    batches = _batches(shape, 5)
    lr = _stable_lr(model, shape, engine, batches[0])
    gsgd = lambda m: GSGD(m, engine=engine, lr=lr, momentum=0.5, weight_decay=1e-3, input_shape=shape)  # noqa: E731
    a, b = _train(copy.deepcopy(model), gsgd, batches), _train(copy.deepcopy(twin), gsgd, batches)
    sgd = lambda m: torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.5, weight_decay=1e-3)  # noqa: E731
    sa, sb = _train(copy.deepcopy(model), sgd, batches), _train(copy.deepcopy(twin), sgd, batches)
    with torch.no_grad():
        size = float(model(probe).abs().max())
        assert (a(probe) - model(probe)).abs().max() > 1e-5 * size  # training changed the function
        assert (a(probe) - b(probe)).abs().max() <= 1e-9 * size
        assert (sa(probe) - sb(probe)).abs().max() > 1e-5 * size


@pytest.mark.parametrize("name,engine", CASES)
def test_every_step_sets_the_path_values_exactly_and_keeps_the_fixed_weights(name, engine):
    model, shape = _model(name)
    result = _basis(model, shape, engine)
    batches = _batches(shape, 3)
    lr, momentum, decay = _stable_lr(model, shape, engine, batches[0], 0.1), 0.9, 1e-2
    opt = GSGD(model, basis=result, lr=lr, momentum=momentum, weight_decay=decay, input_shape=shape)
    paths = _paths(result)
    start = opt.parameter_map.gather(opt.parameter_map.params, torch.float64)
    fixed = torch.as_tensor(opt.space.fixed)
    buf = None
    for x, t in batches:
        opt.zero_grad()
        _loss(model, x, t).backward()
        v = _products(paths, _weights(opt))
        d = opt.path_gradient().numpy() + decay * v
        buf = d if buf is None else momentum * buf + d
        opt.step()
        after = _products(paths, _weights(opt))
        expected = v - lr * buf
        assert np.abs(after - expected).max() <= 1e-10 * np.abs(expected).max()
        now = opt.parameter_map.gather(opt.parameter_map.params, torch.float64)
        assert torch.equal(now[fixed], start[fixed])  # bit-identical
    assert not torch.equal(now, start)


def test_float32_model_fixed_weights_bit_identical():
    torch.manual_seed(0)
    model = PlainCNN(in_channels=1, channels=(3, 4), classes=2)
    opt = GSGD(model, lr=0.01, input_shape=(2, 1, 6, 6))
    before = [p.detach().clone() for p in model.parameters()]
    pm = opt.parameter_map
    start = pm.gather(pm.params, torch.float32)
    for _ in range(3):
        opt.zero_grad()
        model(torch.randn(2, 1, 6, 6)).square().mean().backward()
        opt.step()
    now = pm.gather(pm.params, torch.float32)
    fixed = torch.as_tensor(opt.space.fixed)
    assert torch.equal(now[fixed], start[fixed])
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_dense_core_of_a_deah_basis():
    """The deah-complete basis of a ResNet leaves paths that do not peel: solved densely, with
    free weights independent mod 2 (the chain-rule and exactness tests above cover it too)."""
    model, shape = _model("resnet")
    opt = GSGD(model, engine="deah-complete", lr=0.1, input_shape=shape)
    assert opt.space.n_core > 0
    assert len(opt.space.fixed) == opt.network.H


def test_stored_run_basis(tmp_path):
    model, shape = _model("skip_mlp")
    net = ParameterMap.of_model(model, input_shape=shape).network
    with open_store(str(tmp_path / "store"), create=True) as store:
        run = store.run(net, engine="skeleton")
        loaded = store.load(run.id)
    opt = GSGD(model, basis=loaded, lr=0.1, input_shape=shape)
    assert opt.basis_source == {"engine": "skeleton", "run": run.id}
    direct = GSGD(copy.deepcopy(model), lr=0.1, input_shape=shape)
    assert torch.allclose(opt.path_values().sort().values, direct.path_values().sort().values)


# -- refusals ---------------------------------------------------------------------------------


def test_batchnorm_is_refused_by_name():
    model = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))
    with pytest.raises(GSGDError) as err:
        GSGD(model, input_shape=(1, 1, 4, 4))
    assert str(err.value) == ("G-SGD cannot train Sequential: it has BatchNorm ('1'); with batch statistics the output is not a"
                              " sum over paths, so basis path values do not describe it (train a BatchNorm-free model)")


def test_zero_weight_the_solves_divide_by_is_refused():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = GSGD(model)
    where = opt.parameter_map.describe(int(opt.space.divisors()[0]))
    name, index = where.split("[")
    with torch.no_grad():
        model.get_parameter(name)[tuple(int(i) for i in index[:-1].split(", "))] = 0.0
    with pytest.raises(GSGDError, match=rf"^weight {re.escape(where)} is 0 \(1 such weight\) and the path coordinates divide by it"):
        GSGD(model)


def test_basis_of_another_network_uncertified_or_not_a_basis():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    other = solve(from_torch(nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2)), general=True))
    with pytest.raises(GSGDError, match="^the basis is of network"):
        GSGD(model, basis=other)
    with pytest.raises(GSGDError, match="^basis must be None, a Result or a StoredRun, got list"):
        GSGD(model, basis=[])
    with pytest.raises(GSGDError, match=r"^lr must be a number >= 0, got -1"):
        GSGD(model, lr=-1)


def test_shared_module_and_frozen_parameter_are_refused():
    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 2)

        def forward(self, x):
            return self.b(torch.relu(self.a(torch.relu(self.a(x)))))

    with pytest.raises(GSGDError, match="holds the weights of two connections"):
        GSGD(Twice())
    frozen = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    frozen[0].bias.requires_grad_(False)
    with pytest.raises(GSGDError, match=r"parameter 0\.bias is frozen"):
        GSGD(frozen)


def test_docs_gsgd_notebook_session_runs_as_written(tmp_path, monkeypatch):
    pytest.importorskip("sklearn")
    monkeypatch.chdir(tmp_path)  # the session writes a store in its folder
    assert run_page(Path(__file__).resolve().parent.parent / "docs" / "gsgd.md") > 20


def test_a_layer_returned_and_read_inside_is_an_output():
    """The feature layer of _FeaturesOut reaches the output through a concatenation and is read
    by a Linear: only the layer after it is hidden (rescaling the feature layer changes the
    output, so it must not count)."""
    model, shape = _model("features_out")
    assert from_torch(model, general=True).H == 3
    assert GSGD(model).network.H == 3


def test_zero_biases_train_with_the_skeleton_basis():
    torch.manual_seed(0)
    model = PlainCNN(in_channels=1, channels=(3, 4), classes=2)
    for m in model.modules():
        if getattr(m, "bias", None) is not None:
            nn.init.zeros_(m.bias)
    opt = GSGD(model, lr=1e-3, input_shape=(1, 1, 6, 6))
    model(torch.randn(2, 1, 6, 6)).square().mean().backward()
    opt.step()
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert any(bool((m.bias != 0).any()) for m in model.modules() if getattr(m, "bias", None) is not None)


def test_a_step_that_would_make_weights_not_finite_is_refused_and_changes_nothing():
    model, shape = _model("skip_mlp")
    opt = GSGD(model, input_shape=shape)
    where = opt.parameter_map.describe(int(opt.space.divisors()[0]))
    name, index = where.split("[")
    with torch.no_grad():  # zeroed after the optimizer was made (a re-initialisation, say)
        model.get_parameter(name)[tuple(int(i) for i in index[:-1].split(", "))] = 0.0
    _loss(model, *_batches(shape, 1)[0]).backward()
    before = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(GSGDError, match="^this step would make weights that are not finite, and was not taken"):
        opt.step()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_state_dict_round_trip_and_refusals():
    model, shape = _model("skip_mlp")
    opt = GSGD(model, lr=1e-4, momentum=0.9, input_shape=shape)
    _loss(model, *_batches(shape, 1)[0]).backward()
    opt.step()
    saved = copy.deepcopy(opt.state_dict())
    again = GSGD(model, lr=1e-4, momentum=0.9, input_shape=shape)
    again.load_state_dict(saved)
    assert torch.equal(again.state["path_values"]["momentum_buffer"], opt.state["path_values"]["momentum_buffer"])
    other = GSGD(model, engine="deah-complete", lr=1e-4, momentum=0.9, input_shape=shape)
    with pytest.raises(GSGDError, match="^the optimizer state was saved by a G-SGD over another basis"):
        other.load_state_dict(saved)
    with pytest.raises(GSGDError, match="^G-SGD takes one parameter group"):
        opt.add_param_group({"params": [nn.Parameter(torch.zeros(2))]})
    opt._device = torch.device("meta")  # as if the model had moved after the optimizer was made
    with pytest.raises(GSGDError, match="^the model is on cpu now, G-SGD was made for it on meta"):
        opt.step()


def test_tied_parameters_and_unreadable_models_are_refused_as_gsgd_errors():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 3)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(torch.relu(self.a(x)))

    with pytest.raises(GSGDError, match=r"^G-SGD cannot train <Tied>: b\.weight \(the weights of a -> b\) is tied to another"):
        GSGD(Tied())
    with pytest.raises(GSGDError, match=r"^G-SGD cannot read <Sequential>: .*torch\.nn\.GELU"):
        GSGD(nn.Sequential(nn.Linear(3, 3), nn.GELU(), nn.Linear(3, 2)))
