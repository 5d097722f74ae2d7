#!/usr/bin/env python3
"""The demo's training run: a small transformer block (token and position embedding, layer norm,
multi-head attention, GELU MLP, output head) trained for a few steps on synthetic data on CPU,
captured with numprobe's own PrecisionDebugger. Run with /usr/bin/python3 and PYTHONPATH naming
a build's python/ folder (scripts/demo.sh does both).

Variants (--variant):
  baseline  the reference run, fp32 throughout.
  target    the same run with one planted precision bug: the MLP's GELU uses the tanh
            approximation instead of the exact erf form (the classic migration difference between
            a framework's default GELU and an accelerator's fused kernel). Its outputs differ from
            the baseline by up to ~1e-3 while its inputs are identical, so it is where the target
            run starts to diverge.
  nan       the baseline run whose attention scale blows up at --nan-step: q and k are each
            multiplied by sqrt(scale), as attention kernels that split the scale do, so both stay
            finite while their product overflows fp32 in the scores matmul; softmax then turns
            the Inf into NaN, and the NaN spreads into the loss and, after the update, the weights.

Each run writes, under --out: dumps/<variant>/ (msprobe's dump tree), weights/<variant>/model.pt
(the final state_dict), configs/<variant>/config.json (the run's hyperparameters, for
config-check) and runs/<variant>.json (what was planted, with the dump entry name numprobe must
report, and the losses).
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# The dump entries that carry the planted faults (msprobe's API naming: prefix, api, per-step call
# count, direction). The block calls F.gelu once and torch.matmul twice per forward (the scores
# first), so these names follow from the model below.
PLANTED_OP = "Functional.gelu.0.forward"
NAN_OP = "Torch.matmul.0.forward"


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = k.reshape(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = v.reshape(b, t, self.heads, self.head_dim).transpose(1, 2)
        s = math.sqrt(self.scale)
        scores = torch.matmul(q * s, (k * s).transpose(-2, -1))
        weights = F.softmax(scores, dim=-1)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(b, t, d)
        return self.proj(out)


class Mlp(nn.Module):
    def __init__(self, dim, approximate):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.approximate = approximate

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate=self.approximate))


class Block(nn.Module):
    def __init__(self, vocab, dim, heads, seq, approximate):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(seq, dim) * 0.02)
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, approximate)
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return self.head(self.ln_f(x))


def synthetic_batches(steps, batch, seq, vocab, seed):
    """Random token sequences; the label of position t is the token at t+1 (cyclically), a task
    that needs attention to solve."""
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        tokens = torch.randint(0, vocab, (batch, seq), generator=g)
        yield tokens, torch.roll(tokens, shifts=-1, dims=1)


class NoDebugger:
    """--no-dump: the debugger's calls, doing nothing."""

    def start(self, model):
        pass

    def stop(self):
        pass

    def step(self):
        pass


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variant", choices=["baseline", "target", "nan"], required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--task", choices=["statistics", "tensor"], default="statistics")
    p.add_argument("--dump-name", help="dump folder name under dumps/ (default: the variant)")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--dump-steps", type=int, help="dump only the first N steps (default: all)")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--nan-step", type=int, default=2)
    p.add_argument("--bench-path",
                   help="an incremental dump against this golden dump (docs/capture.md): tensor "
                        "files only where the run leaves it")
    p.add_argument("--diff-nums", type=int, default=1,
                   help="with --bench-path: how many diverging entries get tensor files (-1: all)")
    p.add_argument("--stop-at-first", action="store_true",
                   help="with --bench-path: stop the run at its first divergence")
    p.add_argument("--no-dump", action="store_true",
                   help="train without the debugger: the loop time that the benchmarks subtract")
    args = p.parse_args(argv)
    if args.variant == "nan" and args.nan_step >= args.steps:
        p.error("--nan-step must be below --steps")

    from numprobe.pytorch import PrecisionDebugger, seed_all

    torch.set_num_threads(1)  # the runs share a 2-core machine; results do not depend on it
    seed_all(args.seed)
    approximate = "tanh" if args.variant == "target" else "none"
    model = Block(args.vocab, args.dim, args.heads, args.seq, approximate)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    name = args.dump_name or args.variant
    dump_path = os.path.join(args.out, "dumps", name)
    dump_steps = list(range(args.dump_steps if args.dump_steps is not None else args.steps))
    config_path = None
    if args.bench_path:
        # The incremental dump's keys live in the task's section of a config file.
        config_path = os.path.join(args.out, "configs", name, "numprobe.json")
        os.makedirs(os.path.dirname(config_path), exist_ok=True)
        with open(config_path, "w") as f:
            json.dump({"task": args.task, "level": "mix", "dump_path": dump_path,
                       "step": dump_steps,
                       args.task: {"bench_path": args.bench_path, "diff_nums": args.diff_nums,
                                   "stop_at_first": args.stop_at_first}}, f, indent=1)
    debugger = NoDebugger() if args.no_dump else PrecisionDebugger(
        config_path=config_path, task=args.task, level="mix", dump_path=dump_path,
        step=dump_steps)

    losses = []
    t0 = time.perf_counter()
    for step, (tokens, labels) in enumerate(
            synthetic_batches(args.steps, args.batch, args.seq, args.vocab, args.seed)):
        if args.variant == "nan" and step == args.nan_step:
            model.attn.scale = 1e40  # the bug: a scale computed from a wrong config value
        debugger.start(model)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), labels.reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        debugger.stop()
        debugger.step()
        losses.append(loss.item())
    train_s = time.perf_counter() - t0  # the training loop with its capture (bench/capture_bench.py)

    # Weights and hyperparameters go to one folder per run under the same file names, so that
    # config-check pairs them by name.
    for sub in ("weights", "configs"):
        os.makedirs(os.path.join(args.out, sub, name), exist_ok=True)
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out, "weights", name, "model.pt"))
    hyper = {"model": {"vocab": args.vocab, "dim": args.dim, "heads": args.heads,
                       "seq": args.seq, "gelu_approximate": approximate},
             "train": {"steps": args.steps, "batch": args.batch, "lr": args.lr,
                       "optimizer": "adam", "seed": args.seed}}
    with open(os.path.join(args.out, "configs", name, "config.json"), "w") as f:
        json.dump(hyper, f, indent=1)
    run = {"variant": args.variant, "task": args.task, "dump": dump_path, "losses": losses,
           "train_s": train_s}
    if args.variant == "target":
        run["planted"] = {"op": PLANTED_OP, "step": 0,
                          "what": "F.gelu(approximate='tanh') instead of the exact erf GELU"}
    if args.variant == "nan":
        run["planted"] = {"op": NAN_OP, "step": args.nan_step,
                          "what": f"attention scale 1e40 from step {args.nan_step}: "
                                  "q*sqrt(scale) @ (k*sqrt(scale))^T overflows fp32"}
    with open(os.path.join(args.out, "runs", name + ".json"), "w") as f:
        json.dump(run, f, indent=1)
    print(f"{name}: {args.steps} steps, loss " + " ".join(f"{v:.4f}" for v in losses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
