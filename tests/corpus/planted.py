"""The planted-bug corpus: small models trained one step on CPU, each case the golden run with one
precision bug planted, and the dump entry numprobe's first-divergence analysis must name.

Two models:
  lm    a one-block transformer language model (embedding + position, LayerNorm, two-head
        attention with dropout, GELU MLP, a custom autograd Swish, output head, cross-entropy)
        trained with AdamW; lm_autocast is the same run with the forward pass under CPU bf16
        autocast (the golden of a bug inside a bf16 run);
  pool  an RMSNorm over large activations and a mean over a long sequence axis, then a linear
        head (MSE loss, SGD): the fp16 cases.

Each Case names the kind of bug, the model, the dump entry that must be named first (`op`), and,
where a narrowing cast causes it, the cast entry that numprobe's side record (casts.json) must
name (`cast`: the name msprobe would give the cast at risk_level ALL). `says` is a phrase the
verdict's sentence must contain. Cases with op None must give no divergence at all.

Runners take a `seed` (0 for the corpus) that changes the initialisation and the data, to check
that the verdicts do not depend on one draw. Run with Debian's /usr/bin/python3 (torch 1.13) and
numprobe's Python package on PYTHONPATH.
"""
import contextlib
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Case:
    def __init__(self, name, kind, model, op, cast=None, says=None, bug=""):
        self.name = name
        self.kind = kind
        self.model = model
        self.op = op
        self.cast = cast
        self.says = says
        self.bug = name if bug == "" else bug  # the flag the model's code checks


CASES = [
    Case("softmax_bf16", "attention softmax computed in bfloat16, the rest fp32", "lm",
         "Functional.softmax.0.forward", cast="Tensor.bfloat16.0.forward",
         says="torch.bfloat16"),
    Case("matmul_bf16", "attention scores matmul computed in bfloat16", "lm",
         "Torch.matmul.0.forward", cast="Tensor.bfloat16.0.forward", says="torch.bfloat16"),
    Case("loss_bf16_logits", "cross-entropy computed on bfloat16 logits", "lm",
         "Functional.cross_entropy.0.forward", cast="Tensor.bfloat16.0.forward",
         says="torch.bfloat16"),
    Case("layer_bf16", "the output head kept in bfloat16 (weights and input)", "lm",
         "Functional.linear.4.forward", cast="Tensor.bfloat16.0.forward", says="torch.bfloat16"),
    Case("cast_wrong_place", "attention output round-tripped through float16 before the residual",
         "lm", "Tensor.__add__.1.forward", cast="Tensor.to.0.forward", says="torch.float16"),
    Case("autocast_region", "attention run inside a CPU bfloat16 autocast region", "lm",
         "Functional.linear.0.forward", says="torch.bfloat16"),
    Case("layernorm_eps", "LayerNorm eps 1e-2 instead of 1e-5", "lm",
         "Functional.layer_norm.0.forward", says="eps: 0.01 vs 1e-05"),
    Case("attention_scale", "attention scaled by 1/sqrt(model dim) instead of 1/sqrt(head dim)",
         "lm", "Tensor.__mul__.0.forward", says="0.25 vs 0.3535"),
    Case("dropout_on", "attention dropout left on (training=True)", "lm",
         "Functional.dropout.0.forward", says="training: True vs False"),
    Case("softmax_wrong_dim", "attention softmax over the query axis (dim -2)", "lm",
         "Functional.softmax.0.forward", says="dim: -2 vs -1"),
    Case("gelu_tanh", "GELU with the tanh approximation instead of erf", "lm",
         "Functional.gelu.0.forward", says="approximate: 'tanh' vs 'none'"),
    Case("loss_reduction_sum", "cross-entropy with reduction='sum' instead of 'mean'", "lm",
         "Functional.cross_entropy.0.forward", says="reduction: 'sum' vs 'mean'"),
    Case("init_one_layer", "the MLP's first linear initialised differently", "lm",
         "Functional.linear.2.forward", says="weight"),
    Case("data_batch", "a different data batch (one sequence of tokens differs)", "lm",
         "Functional.embedding.0.forward", says="input"),
    Case("optimizer_eps", "AdamW eps 1e-6 instead of 1e-8", "lm", "Tensor.add_.1.forward",
         says="1e-06 vs 1e-08"),
    Case("optimizer_lr", "AdamW learning rate 2e-3 instead of 1e-3", "lm", "Tensor.mul_.0.forward",
         says="vs 0.99999"),
    Case("custom_backward", "a custom autograd Swish whose backward has a wrong constant", "lm",
         "Tensor.__rsub__.0.forward", says="0.5 vs 1.0"),
    Case("fp16_overflow", "RMSNorm's mean square computed in float16: x^2 overflows to inf",
         "pool", "Tensor.pow.0.forward", cast="Tensor.half.0.forward", says="has Inf only in the target"),
    Case("fp16_long_reduction", "mean over a 2048-long axis computed in float16", "pool",
         "Tensor.mean.1.forward", cast="Tensor.half.0.forward", says="torch.float16"),
    Case("bf16_model", "the whole model cast to bfloat16 (model.bfloat16())", "lm",
         "Functional.embedding.0.forward", says="torch.bfloat16"),
    Case("gelu_in_bf16_run", "a bug inside a bfloat16 autocast run (the golden run is the same "
         "autocast run): GELU's tanh approximation, smaller than bf16 rounding", "lm_autocast",
         "Functional.gelu.0.forward", says="approximate: 'tanh' vs 'none'", bug="gelu_tanh"),
    Case("identical", "control: the golden run again", "lm", None, bug=None),
    Case("identical_autocast", "control: the bf16 autocast run again", "lm_autocast", None,
         bug=None),
    Case("identical_pool", "control: the golden run of the pool model again", "pool", None,
         bug=None),
]

# ---------------------------------------------------------------------------------------------
# lm: a one-block transformer language model

VOCAB, DIM, HEADS, SEQ, BATCH = 32, 16, 2, 8, 2


class SwishFn(torch.autograd.Function):
    """x * sigmoid(x) with a hand-written backward; `wrong` plants a typo in the derivative."""

    @staticmethod
    def forward(ctx, x, wrong):
        s = torch.sigmoid(x)
        ctx.save_for_backward(x, s)
        ctx.one = 0.5 if wrong else 1.0
        return x * s

    @staticmethod
    def backward(ctx, grad):
        x, s = ctx.saved_tensors
        return grad * (s * (1 + x * (ctx.one - s))), None


class Attention(nn.Module):
    def __init__(self, bug):
        super().__init__()
        self.bug = bug
        self.head_dim = DIM // HEADS
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)

    def forward(self, x):
        b, t, d = x.shape
        bug = self.bug
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, t, HEADS, self.head_dim).transpose(1, 2)
        k = k.reshape(b, t, HEADS, self.head_dim).transpose(1, 2)
        v = v.reshape(b, t, HEADS, self.head_dim).transpose(1, 2)
        kt = k.transpose(-2, -1)
        if bug == "matmul_bf16":
            scores = torch.matmul(q.bfloat16(), kt.bfloat16()).float()
        else:
            scores = torch.matmul(q, kt)
        scale = (d if bug == "attention_scale" else self.head_dim) ** -0.5
        scores = scores * scale
        if bug == "softmax_bf16":
            weights = F.softmax(scores.bfloat16(), dim=-1).float()
        else:
            weights = F.softmax(scores, dim=-2 if bug == "softmax_wrong_dim" else -1)
        weights = F.dropout(weights, p=0.1, training=bug == "dropout_on")
        out = torch.matmul(weights, v).transpose(1, 2).reshape(b, t, d)
        return self.proj(out)


class Mlp(nn.Module):
    def __init__(self, bug):
        super().__init__()
        self.approximate = "tanh" if bug == "gelu_tanh" else "none"
        self.fc1 = nn.Linear(DIM, 2 * DIM)
        self.fc2 = nn.Linear(2 * DIM, DIM)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate=self.approximate))


class Lm(nn.Module):
    def __init__(self, bug):
        super().__init__()
        self.bug = bug
        self.embed = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.randn(SEQ, DIM) * 0.1)
        self.ln1 = nn.LayerNorm(DIM, eps=1e-2 if bug == "layernorm_eps" else 1e-5)
        self.attn = Attention(bug)
        self.ln2 = nn.LayerNorm(DIM)
        self.mlp = Mlp(bug)
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)
        if bug == "layer_bf16":
            self.head.to(torch.bfloat16)

    def forward(self, tokens):
        bug = self.bug
        x = self.embed(tokens) + self.pos
        region = (torch.autocast("cpu", dtype=torch.bfloat16) if bug == "autocast_region"
                  else contextlib.nullcontext())
        with region:
            h = self.attn(self.ln1(x))
        if bug == "cast_wrong_place":
            h = h.to(torch.float16).to(torch.float32)
        x = x + h.to(x.dtype)
        x = x + self.mlp(self.ln2(x))
        x = SwishFn.apply(x, bug == "custom_backward")
        x = self.ln_f(x)
        if bug == "layer_bf16":
            return self.head(x.bfloat16()).float()
        return self.head(x)


def lm_batch(bug, seed):
    g = torch.Generator().manual_seed(5 + 100 * seed)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
    if bug == "data_batch":
        other = torch.Generator().manual_seed(6 + 100 * seed)
        tokens[1] = torch.randint(0, VOCAB, (SEQ,), generator=other)
    return tokens, torch.roll(tokens, shifts=-1, dims=1)


def run_lm(bug, debugger, seed=0, autocast=False):
    """One AdamW step; `autocast`: the forward pass under CPU bf16 autocast, the loss in fp32."""
    torch.manual_seed(seed)
    model = Lm(bug)
    if bug == "bf16_model":
        model.to(torch.bfloat16)
    if bug == "init_one_layer":
        g = torch.Generator().manual_seed(1 + 100 * seed)
        with torch.no_grad():
            w = model.mlp.fc1.weight
            w.copy_(torch.randn(w.shape, generator=g) * math.sqrt(2.0 / DIM))
    optimizer = torch.optim.AdamW(model.parameters(),
                                  lr=2e-3 if bug == "optimizer_lr" else 1e-3,
                                  eps=1e-6 if bug == "optimizer_eps" else 1e-8,
                                  weight_decay=0.01)
    tokens, labels = lm_batch(bug, seed)
    torch.manual_seed(1 + seed)  # the same random stream for dropout in every case
    debugger.start(model)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        logits = model(tokens).reshape(-1, VOCAB)
    if autocast:
        logits = logits.float()
    if bug == "loss_bf16_logits":
        logits = logits.bfloat16()
    loss = F.cross_entropy(logits, labels.reshape(-1),
                           reduction="sum" if bug == "loss_reduction_sum" else "mean")
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    debugger.stop()
    debugger.step()
    return float(loss)


# ---------------------------------------------------------------------------------------------
# pool: RMSNorm over large activations, then a mean over a long axis

POOL_T, POOL_D = 2048, 8


class Pool(nn.Module):
    def __init__(self, bug):
        super().__init__()
        self.bug = bug
        self.norm_weight = nn.Parameter(torch.ones(POOL_D))
        self.fc = nn.Linear(POOL_D, 4)

    def forward(self, x):
        if self.bug == "fp16_overflow":
            mean_square = x.half().pow(2).mean(-1, keepdim=True).float()
        else:
            mean_square = x.pow(2).mean(-1, keepdim=True)
        y = x * torch.rsqrt(mean_square + 1e-6) * self.norm_weight
        if self.bug == "fp16_long_reduction":
            pooled = y.half().mean(dim=1).float()
        else:
            pooled = y.mean(dim=1)
        return self.fc(pooled)


def run_pool(bug, debugger, seed=0):
    torch.manual_seed(seed)
    model = Pool(bug)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(3 + 100 * seed)
    x = torch.randn(2, POOL_T, POOL_D, generator=g) * 200 + 50
    target = torch.randn(2, 4, generator=g)
    debugger.start(model)
    loss = F.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    debugger.stop()
    debugger.step()
    return float(loss)


RUNNERS = {
    "lm": run_lm,
    "lm_autocast": lambda bug, debugger, seed=0: run_lm(bug, debugger, seed, autocast=True),
    "pool": run_pool,
}
