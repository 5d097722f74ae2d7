"""The planted-bug corpus (planted.py): every case captured by numprobe's debugger in four
configurations (statistics and tensor task, levels L1 and mix) and compared both as numprobe's
dump trees (with the casts.json side record) and as msprobe writes them (without): numprobe's
first divergence must be the planted op in every variant, name the cast where the side record
has it, and say why in its sentence; the control cases must give no divergence.

Run by ctest (corpus.verdict). Environment: NUMPROBE_BIN, PYTHONPATH with the build's python/
folder. The corpus is written to a tmpfs (/dev/shm) when there is one: the capture makes many
small files, each synced to disk.
"""
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_corpus  # noqa: E402
import planted  # noqa: E402
import score  # noqa: E402

VARIANTS = [(c.name, config, fmt) for c in planted.CASES for config in make_corpus.CONFIGS
            for fmt in score.FORMATS]


def scratch_dir():
    for base in (os.environ.get("NUMPROBE_CORPUS_TMP"), "/dev/shm"):
        if base and os.path.isdir(base) and os.access(base, os.W_OK):
            return tempfile.mkdtemp(prefix="numprobe_corpus_", dir=base)
    return tempfile.mkdtemp(prefix="numprobe_corpus_")


@pytest.fixture(scope="module")
def verdicts():
    numprobe_bin = os.environ.get("NUMPROBE_BIN")
    if not numprobe_bin or not os.path.exists(numprobe_bin):
        pytest.fail("NUMPROBE_BIN must name the numprobe binary (ctest sets it)")
    root = scratch_dir()
    try:
        corpus = os.path.join(root, "corpus")
        make_corpus.make(corpus, planted.CASES, make_corpus.CONFIGS)
        found = score.score_corpus(numprobe_bin, corpus, jobs=2)
        yield {(v.case, v.config, v.fmt): v for v in found}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_corpus_covers_fifteen_kinds_of_bug_and_controls():
    bugs = [c for c in planted.CASES if c.op is not None]
    controls = [c for c in planted.CASES if c.op is None]
    assert len(bugs) >= 15
    assert len({c.model for c in controls}) == len({c.model for c in planted.CASES})
    assert len({c.name for c in planted.CASES}) == len(planted.CASES)


@pytest.mark.parametrize("case,config,fmt", VARIANTS, ids=["/".join(v) for v in VARIANTS])
def test_the_planted_op_is_named(verdicts, case, config, fmt):
    v = verdicts[(case, config, fmt)]
    assert not v.problems, f"{v.label}: {'; '.join(v.problems)}\n{v.stdout}"
    if v.expect["op"] is None:
        assert v.first is None and v.rc == 0, v.stdout
        return
    assert v.rc == 1
    assert v.first["op_name"] == v.expect["op"]
    assert v.first["direction"] == "forward"
    assert v.first["rule"]
    # The user's line: inside the corpus' own code, never torch's or numprobe's.
    assert "tests/corpus/" in v.first["at"], v.first["at"]
    assert f"first divergence: {v.expect['op']}" in v.stdout
    assert f"at: {v.first['at']}" in v.stdout
    if fmt == "numprobe" and v.expect["cast"]:
        assert v.first["cast"]["name"] == v.expect["cast"]
        assert "tests/corpus/planted.py" in v.first["cast"]["at"]
    if fmt == "msprobe":
        assert v.first["cast"] is None  # nothing to name it from
