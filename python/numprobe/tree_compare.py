"""numprobe.compare: `numprobe compare -tp TARGET -gp GOLDEN` from Python. The same library call
(CompareDumpTrees) compares the dump trees rank by rank and finds the first divergence; the result
is a mapping row name -> metrics with msprobe's column names and short aliases. See
docs/python-api.md.
"""
from __future__ import annotations

import html
import math
import os
from collections.abc import Mapping
from typing import Any, Dict, Iterator, List, Optional, Union

from . import _numprobe
from .analysis import file_timestamp

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["METRIC_ALIASES", "CompareResult", "compare"]

# Short names -> msprobe's (and numprobe's) column names. A row's metrics dict holds both
# spellings for the columns of its compare mode (statistics mode has no Cosine, for example).
METRIC_ALIASES: Dict[str, str] = {
    # tensor mode (msprobe)
    "cosine": "Cosine",
    "euclidean": "EucDist",
    "mae": "MaxAbsErr",
    "max_abs_err": "MaxAbsErr",
    "relative": "MaxRelativeErr",
    "max_relative_err": "MaxRelativeErr",
    "one_thousandth": "One Thousandth Err Ratio",
    "five_thousandths": "Five Thousandths Err Ratio",
    # statistics mode (msprobe)
    "max_diff": "Max diff",
    "min_diff": "Min diff",
    "mean_diff": "Mean diff",
    "l2norm_diff": "L2norm diff",
    "min_relative": "MinRelativeErr",
    "mean_relative": "MeanRelativeErr",
    "norm_relative": "NormRelativeErr",
    # tensor mode (numprobe's columns)
    "mean_abs_err": "Mean AbsErr",
    "mean_rel_err": "Mean RelErr",
    "rmse": "RMSE",
    "sqnr": "SQNR(dB)",
    "max_ulp": "Max ULP",
    "mean_ulp": "Mean ULP",
    "allclose_ratio": "Allclose Ratio",
    # numprobe's judgment
    "error": "Rel Error",
    "tolerance": "Dtype Tolerance",
}

# Columns whose cells are numbers (the metrics); the others are text (names, dtypes, verdicts).
_NUMERIC = set(METRIC_ALIASES.values()) | {
    "NPU max", "NPU min", "NPU mean", "NPU l2norm", "Bench max", "Bench min", "Bench mean",
    "Bench l2norm", "NaN Mismatch", "+Inf Mismatch", "-Inf Mismatch", "Worst Index"}
_TEXT_KEYS = {"result": "Result", "judgment": "Judgment", "match": "Match",
              "err_message": "Err_message"}


def _number(cell: str) -> Optional[float]:
    """A CSV cell as a number: percentages ("12.5%") as fractions; None for "N/A" and other text
    that is not a number."""
    text = cell.strip()
    scale = 1.0
    if text.endswith("%"):
        text, scale = text[:-1], 0.01
    try:
        return float(text) * scale
    except ValueError:
        return None


class CompareResult(Mapping):
    """The result of `numprobe compare`: a mapping row name ("Functional.conv2d.0.forward.output.0";
    "LABEL/NAME", LABEL = "step0/rank1", when more than one rank is compared) -> metrics dict.

    rows: every row as a dict of all the CSV's columns (text, as written), plus "rank".
    first_divergence: the earliest first divergence across ranks (a dict) or None.
    missing: ranks or steps present on one side only.
    threshold: the cosine threshold given to compare(); ``below_threshold()`` lists the rows
        under it.
    """

    def __init__(self, handle: Any, target: str, golden: str, threshold: Optional[float]) -> None:
        self._handle = handle
        self.target = target
        self.golden = golden
        self.threshold = threshold
        self.ranks: List[Dict[str, Any]] = handle.ranks
        self.missing: List[str] = handle.missing
        # Ranks skipped (dump.json {}), then each rank's (tensor files that could not be read).
        self.warnings: List[str] = handle.warnings + [w for r in self.ranks for w in r["warnings"]]
        multi = len(self.ranks) > 1
        self.rows: List[Dict[str, Any]] = []
        self._metrics: Dict[str, Dict[str, Any]] = {}
        for rank in self.ranks:
            header = rank["header"]
            for cells in rank["rows"]:
                row = dict(zip(header, cells))
                row["rank"] = rank["label"]
                self.rows.append(row)
                key = f"{rank['label']}/{row['NPU Name']}" if multi else row["NPU Name"]
                self._metrics[key] = self._row_metrics(row)

    @staticmethod
    def _row_metrics(row: Dict[str, Any]) -> Dict[str, Any]:
        metrics: Dict[str, Any] = {}
        for column, cell in row.items():
            if column in _NUMERIC:
                metrics[column] = _number(cell)
        for alias, column in METRIC_ALIASES.items():
            if column in metrics:
                metrics[alias] = metrics[column]
        for key, column in _TEXT_KEYS.items():
            if column in row:
                metrics[key] = row[column]
        return metrics

    # Mapping: row name -> metrics
    def __getitem__(self, key: str) -> Dict[str, Any]:
        return self._metrics[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._metrics)

    def __len__(self) -> int:
        return len(self._metrics)

    def iter_rows(self) -> Iterator[Dict[str, Any]]:
        """Every row (all columns), in rank then execution order."""
        return iter(self.rows)

    @property
    def first_divergence(self) -> Optional[Dict[str, Any]]:
        """The earliest first divergence across ranks: op_name, rank (its label), backward, entry,
        rule, reason, worst_output, input_error, output_error, tolerance, growth, dtype_pair,
        non_finite, module_path, stack, at (the user's frame); None when no rank diverges."""
        index = self._handle.earliest
        if index < 0:
            return None
        rank = self.ranks[index]
        return dict(rank["first"], rank=rank["label"])

    @property
    def findings(self) -> bool:
        """A divergence, or ranks on one side only (the command exits 1)."""
        return self._handle.earliest >= 0 or bool(self.missing)

    def below_threshold(self, threshold: Optional[float] = None) -> List[str]:
        """The rows whose cosine is below `threshold` (default: the one given to compare())."""
        limit = self.threshold if threshold is None else threshold
        if limit is None:
            raise _numprobe.UsageError("below_threshold() needs a threshold (none was given)")
        out = []
        for key, m in self._metrics.items():
            c = m.get("cosine")
            if c is not None and (math.isnan(c) or c < limit):
                out.append(key)
        return out

    def summary(self) -> str:
        """A few lines: per rank its mode and verdict counts, the first divergence, what is
        missing, and with a threshold the rows below it."""
        lines = [f"numprobe compare: {self.target} (target) vs {self.golden} (golden)"]
        for rank in self.ranks:
            counts: Dict[str, int] = {}
            for cells in rank["rows"]:
                verdict = dict(zip(rank["header"], cells)).get("Result", "")
                counts[verdict] = counts.get(verdict, 0) + 1
            text = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("pass", "warning", "error",
                                                                     "unmatched"))
            lines.append(f"{rank['label']}: {rank['mode']} mode, {len(rank['rows'])} rows: {text}")
        first = self.first_divergence
        if first is None:
            lines.append("no divergence: every compared row within its dtype tolerance")
        else:
            lines.append(f"first divergence: {first['rank']} {first['op_name']} "
                         f"({'backward' if first['backward'] else 'forward'}, "
                         f"rule {first['rule']})")
            lines.append(f"  {first['reason']}")
            if first["module_path"]:
                lines.append("  in: " + " > ".join(first["module_path"]))
        lines.extend(f"{m}; not compared" for m in self.missing)
        if self.threshold is not None:
            below = self.below_threshold()
            lines.append(f"{len(below)} rows with cosine below {self.threshold:g}"
                         + (f": {', '.join(below[:5])}" + (" ..." if len(below) > 5 else "")
                            if below else ""))
        return "\n".join(lines)

    def to_pandas(self):
        """The rows as a pandas DataFrame: every CSV column (metric columns as numbers) plus
        "rank"; indexed by row name."""
        import pandas

        frame = pandas.DataFrame(self.rows)
        for column in frame.columns:
            if column in _NUMERIC:
                frame[column] = [_number(c) for c in frame[column]]
        frame.index = list(self._metrics)
        return frame

    def save(self, dir: PathLike = "./output", *, xlsx: bool = False, diff_analyze: bool = False,
             timestamp: Optional[str] = None) -> List[str]:
        """Writes the files `numprobe compare -o dir` writes: per rank
        SCOPE/compare_result_{rank}_{ts}.csv (.xlsx with xlsx=True) and its .json twin, then
        divergence_{ts}.json (and diff_analyze_{ts}.json with diff_analyze=True); returns their
        paths."""
        paths = self._handle.save(os.fspath(dir), timestamp or file_timestamp(), xlsx,
                                  diff_analyze)
        return [os.fspath(p) for p in paths]

    def _repr_html_(self) -> str:
        first = self.first_divergence
        head = html.escape(self.summary()).replace("\n", "<br>")
        columns = ["rank", "NPU Name", "Cosine", "MaxAbsErr", "MaxRelativeErr", "EucDist",
                   "Max diff", "Result"]
        shown = [c for c in columns if any(c in r for r in self.rows)]
        if len(self.ranks) < 2:
            shown.remove("rank")
        colors = {"error": "#fdd", "warning": "#ffd"}
        out = [f"<div><p style='font-family:monospace'>{head}</p><table>",
               "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in shown) + "</tr>"]
        limit = 200
        for row in self.rows[:limit]:
            style = colors.get(row.get("Result", ""), "")
            if (first is not None and row["rank"] == first["rank"]
                    and row["NPU Name"].startswith(first["op_name"] + ".")):
                style = "#fbb"
            attr = f" style='background:{style}'" if style else ""
            out.append(f"<tr{attr}>" + "".join(
                f"<td>{html.escape(str(row.get(c, '')))}</td>" for c in shown) + "</tr>")
        out.append("</table>")
        if len(self.rows) > limit:
            out.append(f"<p>{len(self.rows) - limit} more rows (to_pandas() has them all)</p>")
        out.append("</div>")
        return "".join(out)

    def __repr__(self) -> str:
        first = self.first_divergence
        return (f"<numprobe.CompareResult {len(self)} rows over {len(self.ranks)} rank(s), "
                f"first divergence {first['op_name'] if first else 'none'}>")


def compare(target: PathLike, golden: PathLike, *, fuzzy_match: bool = False,
            data_mapping: Optional[PathLike] = None,
            cell_mapping: Union[None, bool, PathLike] = None,
            api_mapping: Union[None, bool, PathLike] = None,
            layer_mapping: Optional[PathLike] = None, align: bool = True,
            threshold: Optional[float] = None) -> CompareResult:
    """`numprobe compare -tp TARGET -gp GOLDEN`: the target dump against the golden (the
    reference), rank by rank, with the first divergence. TARGET and GOLDEN: a dump.json, a rank
    folder, a step folder or a dump root, laid out alike.

    fuzzy_match (-fm), data_mapping (-dm YAML), cell_mapping (-cm: True, or the YAML of cell
    renames), api_mapping (-am: True, or the YAML of argument mappings), layer_mapping (-lm YAML),
    align=False (--no_align). threshold: a cosine threshold for below_threshold() and summary()
    (it does not change the rows' verdicts, which are msprobe's).
    Nothing is written until result.save(dir).
    """
    def mapping_arg(value):
        if value is None or value is False:
            return None
        return "" if value is True else os.fspath(value)

    handle = _numprobe._compare_trees(
        os.fspath(target), os.fspath(golden), fuzzy_match,
        None if data_mapping is None else os.fspath(data_mapping), mapping_arg(cell_mapping),
        mapping_arg(api_mapping), None if layer_mapping is None else os.fspath(layer_mapping),
        align)
    return CompareResult(handle, os.fspath(target), os.fspath(golden), threshold)
