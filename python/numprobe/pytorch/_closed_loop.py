"""The closed loop at the end of a run, for a config written in the closed-loop dialect (sections
dump / overflow_check / compare / config_check; docs/config-dialect.md). The overflow check runs
while recording (the Dumper reports the first NaN/Inf output at its step); at stop() this module

  - config_check: collects this run's snapshot into dump_path/config_snapshot.json and compares
    the baseline's (base_config) with it, result files in dump_path/config_check/;
  - compare: compares dump_path against base_path (the library's CompareDumpTrees, result files in
    dump_path/compare/), prints the first divergence in one paragraph, writes dump_path/report.html
    (the report `numprobe report` writes) and prints its path.

A baseline that does not exist yet (the baseline run itself, with the same config) is said so in
one line; a failure is printed as an error and does not end the training script.
"""
import os
import sys
import textwrap
import time

from .. import _numprobe

SNAPSHOT_NAME = "config_snapshot.json"
COMPARE_DIR = "compare"
CONFIG_CHECK_DIR = "config_check"
REPORT_NAME = "report.html"


def _say(text, stream=None):
    stream = stream or sys.stdout
    stream.write(text + "\n")
    stream.flush()


def _error(what, err):
    _say(f"numprobe: {what} failed: {err}", sys.stderr)


def _metric_text(metrics, cells):
    """'cosine 0.71, mae 3.2' for the metrics the table has (a tensor metric of a statistics-mode
    compare is left out)."""
    columns = _numprobe.compare_metric_columns()
    parts = []
    for name in metrics:
        column = columns.get(name)
        if column is not None and cells.get(column, "") != "":
            parts.append(f"{name} {cells[column]}")
    return ", ".join(parts)


def divergence_paragraph(result, dump_path, base_path, metrics):
    """The end-of-run paragraph: what was compared, the counts, and the first divergence."""
    ranks = result["ranks"]
    totals = {}
    rows = 0
    for rank in ranks:
        rows += rank["rows"]
        for verdict, n in rank["counts"].items():
            totals[verdict] = totals.get(verdict, 0) + n
    modes = sorted({rank["mode"] for rank in ranks})
    counts = ", ".join(f"{totals.get(v, 0)} {v}" for v in ("pass", "warning", "error", "unmatched"))
    text = (f"numprobe: compared {dump_path} (this run) with {base_path} (base_path): "
            f"{len(ranks)} step/rank folder pair(s), {'/'.join(modes)} mode, {rows} rows: "
            f"{counts}.")
    if result["missing"]:
        text += " Not compared: " + "; ".join(result["missing"]) + "."
    if result["earliest"] < 0:
        return text + " No divergence: every compared tensor is within its dtype's tolerance."
    rank = ranks[result["earliest"]]
    first = rank["first"]
    where = f" in {' > '.join(first['module_path'])}" if first["module_path"] else ""
    at = f" at {' '.join(first['at'].split())}" if first["at"] else ""  # the user's frame
    text += (f" First divergence ({rank['label']}): {first['op_name']}{where}{at}. "
             f"{first['reason']}")
    if not text.endswith("."):
        text += "."
    if first["cast"] and first["cast"].split()[0] not in first["reason"]:
        text += f" Cast: {first['cast']}."
    shown = _metric_text(metrics, first["cells"])
    if first["worst_output"]:
        text += f" Worst output {first['worst_output']} ({first['dtype_pair']})"
        text += f": {shown}." if shown else "."
    if rank["next"]:
        text += " Next by error growth: " + ", ".join(rank["next"]) + "."
    return text


class ClosedLoop:
    def __init__(self, config):
        self.dump_path = config.dump_path
        self.loop = config.loop
        self.pending = False  # recorded since the last finish()

    def finish(self, model=None):
        """The end of the run: config_check, then compare and report.html. Returns the report's
        path, or None when none was written."""
        self.pending = False
        if self.loop["config_check"]:
            self._config_check(model)
        if self.loop["compare"]:
            return self._compare()
        return None

    def _config_check(self, model):
        from .. import config_check

        os.makedirs(self.dump_path, exist_ok=True)
        snapshot = os.path.join(self.dump_path, SNAPSHOT_NAME)
        try:
            config_check.collect(snapshot, model=model)
        except (_numprobe.Error, OSError) as err:
            _error("config_check", err)
            return
        base = self.loop["config_base"]
        if not os.path.exists(base):
            _say(f"numprobe: config_check: wrote {snapshot}; the baseline {base} does not exist yet "
                 "(a baseline run with this config writes it as its config_snapshot.json)")
            return
        out_dir = os.path.join(self.dump_path, CONFIG_CHECK_DIR)
        try:
            result = _numprobe.compare_snapshot_files(base, snapshot, out_dir,
                                                      time.strftime("%Y%m%d%H%M%S"))
        except _numprobe.Error as err:
            _error("config_check", err)
            return
        if not result["differs"]:
            _say(f"numprobe: config_check: this run's configuration matches {base} "
                 f"({result['csv']})")
            return
        items = result["items"]
        shown = "; ".join(
            f"{i['category']}.{i['name']}: {i['a']} (base) -> {i['b']} ({i['level']})"
            for i in items[:8])
        more = f"; and {len(items) - 8} more" if len(items) > 8 else ""
        _say(textwrap.fill(
            f"numprobe: config_check: {len(items)} item(s) differ from {base}: {shown}{more} "
            f"(all in {result['csv']})", width=100, break_long_words=False, break_on_hyphens=False))

    def _compare(self):
        base = self.loop["compare_base"]
        if not os.path.exists(base):
            _say(f"numprobe: compare: the baseline base_path {base} does not exist yet; nothing "
                 "compared (a baseline run with this config writes its dump tree at its dump_path)")
            return None
        out_dir = os.path.join(self.dump_path, COMPARE_DIR)
        try:
            result = _numprobe.compare_dump_trees(self.dump_path, base, out_dir,
                                                  time.strftime("%Y%m%d%H%M%S"))
        except _numprobe.Error as err:
            _error("compare", err)
            return None
        for warning in result["warnings"]:
            _say(f"numprobe: warning: {warning}", sys.stderr)
        _say(textwrap.fill(divergence_paragraph(result, self.dump_path, base, self.loop["metrics"]),
                           width=100, break_long_words=False, break_on_hyphens=False))
        report = os.path.join(self.dump_path, REPORT_NAME)
        try:
            _numprobe.write_html_report(out_dir, report)
        except _numprobe.Error as err:
            _error("report.html", err)
            return None
        _say(f"numprobe: report written to {report}")
        return report
