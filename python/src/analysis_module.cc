// The analysis half of _numprobe: scan, diff, inspect and load, each calling the library function
// its `numprobe` subcommand calls (tools/numprobe/cmd_*.cc) and keeping the C++ report, so that
// save() writes the subcommand's files with the subcommand's writers. The Python package
// (numprobe/analysis.py) wraps these handles in the documented result classes.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "numprobe/diff.h"
#include "numprobe/dtype.h"
#include "numprobe/enum_names.h"
#include "numprobe/float_convert.h"
#include "numprobe/app/inspect.h"
#include "numprobe/scan.h"
#include "numprobe/tensor_file.h"

#include "py_errors.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace numprobe {
namespace {

// ---- scan ----

py::dict ScanTensorDict(const ScanTensor& t) {
  py::dict d;
  d["name"] = t.name;
  d["is_tensor"] = t.is_tensor;
  d["dtype"] = t.dtype;
  d["shape"] = t.shape;
  d["max"] = t.has_max ? py::object(py::float_(t.max)) : py::object(py::none());
  d["min"] = t.has_min ? py::object(py::float_(t.min)) : py::object(py::none());
  d["nonfinite"] = t.nonfinite;
  d["exact"] = t.exact;
  d["nan_count"] = t.nan_count;
  d["inf_count"] = t.inf_count;
  return d;
}

py::list ScanTensorList(const std::vector<ScanTensor>& tensors) {
  py::list out;
  for (const ScanTensor& t : tensors) out.append(ScanTensorDict(t));
  return out;
}

py::dict AnomalyDict(const AnomalyNode& n) {
  py::dict d;
  d["kind"] = std::string(EnumName(n.kind));
  d["op_name"] = n.op_name;
  d["scope"] = n.scope;
  d["step"] = n.step;
  d["rank_folder"] = n.rank_folder;
  d["rank"] = n.rank;
  d["entry_index"] = n.entry_index;
  d["module_path"] = n.module_path;
  d["stack"] = n.stack;
  d["inputs"] = ScanTensorList(n.inputs);
  d["outputs"] = ScanTensorList(n.outputs);
  return d;
}

py::dict HitDict(const WatchpointHit& h) {
  py::dict d;
  d["watchpoint"] = std::string(EnumName(h.watchpoint));
  d["tensor"] = h.tensor;
  d["op_name"] = h.op_name;
  d["scope"] = h.scope;
  d["step"] = h.step;
  d["rank_folder"] = h.rank_folder;
  d["rank"] = h.rank;
  d["condition"] = h.condition;
  d["actual"] = h.actual;
  d["threshold"] = h.threshold;
  d["exact"] = h.exact;
  d["detail"] = h.detail;
  return d;
}

py::list LayerList(const std::vector<LayerHeadroom>& layers) {
  py::list out;
  for (const LayerHeadroom& l : layers) {
    py::dict d;
    d["layer"] = l.layer;
    d["tensors"] = l.tensors;
    d["max_abs"] = l.max_abs;
    d["worst_headroom_log2"] = l.worst_headroom_log2;
    d["worst_tensor"] = l.worst_tensor;
    out.append(d);
  }
  return out;
}

py::dict HeadroomDict(const HeadroomSummary& s) {
  py::dict d;
  d["target"] = std::string(HeadroomTargetName(s.target));
  d["tensors"] = s.tensors;
  d["overflow"] = s.overflow;
  d["underflow"] = s.underflow;
  d["subnormal"] = s.subnormal;
  d["min_unknown"] = s.min_unknown;
  d["keep_higher"] = LayerList(s.keep_higher);
  d["underflowing"] = LayerList(s.underflowing);
  return d;
}

// The options of `numprobe scan`, parsed with the same rules and messages.
ScanOptions MakeScanOptions(const std::optional<std::string>& dtype,
                            const std::optional<std::vector<std::string>>& watch, bool no_tensors,
                            const py::dict& thresholds,
                            const std::optional<std::pair<double, double>>& act_range) {
  ScanOptions options;
  if (dtype) {
    const auto target = ParseHeadroomTarget(*dtype);
    if (!target) {
      ThrowIfError(Status::InvalidArgument("dtype " + *dtype +
                                           ": expected fp16, bf16, fp8_e4m3 or fp8_e5m2"));
    }
    options.targets = {*target};
  }
  if (watch) {
    options.watch.fill(false);
    for (const std::string& name : *watch) {
      if (name == "none") continue;
      const auto w = EnumFromName<Watchpoint>(name);
      if (!w) {
        ThrowIfError(Status::InvalidArgument("watch: unknown watchpoint \"" + name +
                                             "\" (see docs/scan.md)"));
      }
      options.watch[static_cast<size_t>(*w)] = true;
    }
  }
  options.read_tensor_files = !no_tensors;
  ScanThresholds& th = options.thresholds;
  const std::pair<const char*, double*> fields[] = {
      {"grad_norm_min", &th.grad_norm_min},       {"grad_norm_max", &th.grad_norm_max},
      {"weight_rtol", &th.weight_rtol},           {"weight_atol", &th.weight_atol},
      {"update_ratio_max", &th.update_ratio_max}, {"update_ratio_min", &th.update_ratio_min},
      {"tensor_max", &th.tensor_abs_max},         {"act_max_min_lt", &th.act_max_min_lt},
      {"act_max_min_gt", &th.act_max_min_gt}};
  size_t used = 0;
  for (const auto& [name, field] : fields) {
    if (thresholds.contains(name)) {
      *field = thresholds[name].cast<double>();
      ++used;
    }
  }
  for (const char* name : {"act_range_pct_lt", "act_range_pct_gt"}) {
    if (!thresholds.contains(name)) continue;
    const double v = thresholds[name].cast<double>();
    if (v >= 0) {
      (std::string(name) == "act_range_pct_lt" ? th.act_range_pct_lt : th.act_range_pct_gt) = v;
    }
    ++used;
  }
  if (used != py::len(thresholds)) {
    for (auto item : thresholds) {
      const std::string key = py::str(item.first);
      bool known = key == "act_range_pct_lt" || key == "act_range_pct_gt";
      for (const auto& [name, field] : fields) known = known || key == name;
      if (!known) ThrowIfError(Status::InvalidArgument("unknown scan threshold \"" + key + "\""));
    }
  }
  if (act_range) th.act_range = *act_range;
  return options;
}

// ---- diff ----

py::list Shape(const std::vector<int64_t>& shape) {
  py::list out;
  for (int64_t d : shape) out.append(d);
  return out;
}

py::dict DiffRowDict(const DiffReport& r, const DiffRow& row) {
  const NamedTensor& a = r.a.tensors[row.pair.a];
  const NamedTensor& b = r.b.tensors[row.pair.b];
  py::dict d;
  d["name_a"] = a.name;
  d["name_b"] = b.name;
  d["rule"] = std::string(EnumName(row.pair.rule));
  d["shape_a"] = Shape(a.tensor.shape());
  d["shape_b"] = Shape(b.tensor.shape());
  d["dtype_a"] = std::string(Name(a.tensor.dtype()));
  d["dtype_b"] = std::string(Name(b.tensor.dtype()));
  d["status"] = std::string(DiffStatusText(row));
  d["verdict"] = std::string(EnumName(row.verdict));
  d["note"] = row.note;
  if (row.compared()) {
    const DiffMetrics& m = row.metrics;
    d["numel"] = m.numel;
    d["close"] = m.close;
    d["allclose"] = m.allclose;
    d["allclose_ratio"] = m.allclose_ratio;
    d["cosine"] = m.cosine;
    d["mean_abs"] = m.mean_abs;
    d["max_abs"] = m.max_abs;
    d["max_rel"] = m.max_rel;
    d["rmse"] = m.rmse;
    d["max_ulp"] = m.max_ulp;
    d["ulp_dtype"] = m.ulp_dtype;
    d["worst_index"] = m.worst_index;
    d["nan_mismatch"] = m.nan_mismatch;
    d["inf_mismatch"] = m.inf_mismatch;
  }
  return d;
}

py::list Unpaired(const DiffSource& s, const std::vector<size_t>& idx) {
  py::list out;
  for (size_t i : idx) {
    const NamedTensor& t = s.tensors[i];
    py::dict d;
    d["name"] = t.name;
    d["shape"] = Shape(t.tensor.shape());
    d["dtype"] = std::string(Name(t.tensor.dtype()));
    d["framework_only"] = IsFrameworkOnlyName(t.name);
    out.append(d);
  }
  return out;
}

// ---- load: tensors as numpy arrays over the file's memory ----

// The buffer-protocol format of a dtype numpy has; "" for bf16 and the fp8 types.
const char* BufferFormat(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return "d";
    case DType::kF32:
      return "f";
    case DType::kF16:
      return "e";
    case DType::kI64:
      return "q";
    case DType::kI32:
      return "i";
    case DType::kI16:
      return "h";
    case DType::kI8:
      return "b";
    case DType::kU64:
      return "Q";
    case DType::kU32:
      return "I";
    case DType::kU16:
      return "H";
    case DType::kU8:
      return "B";
    case DType::kBool:
      return "?";
    case DType::kC64:
      return "Zf";
    case DType::kC128:
      return "Zd";
    default:
      return "";
  }
}

// A tensor kept alive for Python: exposes its memory read-only through the buffer protocol
// (numpy.asarray makes an array over it, which keeps this object, and so the file's map, alive).
struct TensorMemory {
  NamedTensor tensor;
};

py::buffer_info BufferOf(const TensorMemory& m) {
  const TensorView& v = m.tensor.tensor.view();
  const char* format = BufferFormat(v.dtype);
  // bf16 / fp8: their raw bits, as unsigned integers of their width (load() converts them).
  std::string fmt = *format != 0 ? format : (ItemSize(v.dtype) == 2 ? "H" : "B");
  const auto item = static_cast<py::ssize_t>(ItemSize(v.dtype));
  std::vector<py::ssize_t> shape(v.shape.begin(), v.shape.end());
  std::vector<py::ssize_t> strides;
  strides.reserve(v.strides.size());
  for (int64_t s : v.strides) strides.push_back(static_cast<py::ssize_t>(s) * item);
  // The view is validated by the reader, so first() and the strides stay inside the storage.
  return py::buffer_info(const_cast<std::byte*>(v.first()), item, fmt,
                         static_cast<py::ssize_t>(shape.size()), shape, strides,
                         /*readonly=*/true);
}

// A float32 copy of a bf16 / fp8 tensor (numpy has neither type).
py::array_t<float> Float32Copy(const TensorMemory& m) {
  const TensorView& v = m.tensor.tensor.view();
  const Tensor contiguous = ValueOrThrow(Tensor::CopyOf(v));
  std::vector<py::ssize_t> shape(v.shape.begin(), v.shape.end());
  py::array_t<float> out(shape);
  float* dst = out.mutable_data();
  const std::byte* src = contiguous.view().first();
  const int64_t n = contiguous.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (v.dtype == DType::kBF16) {
      uint16_t bits = 0;
      std::memcpy(&bits, src + i * 2, 2);
      dst[i] = BF16ToF32(bits);
    } else if (IsFloat8(v.dtype)) {
      dst[i] = F8ToF32(v.dtype, static_cast<uint8_t>(src[i]));
    } else {
      ThrowIfError(Status::InvalidArgument("float32 copy of a tensor numpy can hold as it is"));
    }
  }
  return out;
}

}  // namespace

void BindAnalysis(py::module_& m) {
  // scan
  py::class_<ScanReport, std::shared_ptr<ScanReport>>(m, "_ScanReport")
      .def_readonly("dump", &ScanReport::dump)
      .def_readonly("task", &ScanReport::task)
      .def_readonly("framework", &ScanReport::framework)
      .def_readonly("level", &ScanReport::level)
      .def_readonly("md5_mode", &ScanReport::md5_mode)
      .def_readonly("scopes", &ScanReport::scopes)
      .def_readonly("ranks", &ScanReport::ranks)
      .def_readonly("rank_folders", &ScanReport::rank_folders)
      .def_readonly("entries", &ScanReport::entries)
      .def_readonly("tensors", &ScanReport::tensors)
      .def_readonly("tensor_files_read", &ScanReport::tensor_files_read)
      .def_readonly("warnings", &ScanReport::warnings)
      .def_property_readonly("findings", &ScanReport::findings)
      .def_property_readonly("anomalies",
                             [](const ScanReport& r) {
                               py::list out;
                               for (const AnomalyNode& n : r.anomalies) out.append(AnomalyDict(n));
                               return out;
                             })
      .def_property_readonly("hits",
                             [](const ScanReport& r) {
                               py::list out;
                               for (const WatchpointHit& h : r.hits) out.append(HitDict(h));
                               return out;
                             })
      .def_property_readonly("headroom_summary",
                             [](const ScanReport& r) {
                               py::list out;
                               for (const HeadroomSummary& s : r.headroom_summary) {
                                 out.append(HeadroomDict(s));
                               }
                               return out;
                             })
      .def(
          "save",
          [](const ScanReport& r, const fs::path& dir, const std::string& timestamp) {
            const ScanOutputFiles files = ValueOrThrow(WriteScanReport(r, dir, timestamp));
            std::vector<fs::path> written = {files.json, files.anomalies_csv, files.watchpoints_csv,
                                             files.headroom_csv};
            if (!files.anomaly_analyze.empty()) written.push_back(files.anomaly_analyze);
            return written;
          },
          py::arg("dir"), py::arg("timestamp"));
  m.def(
      "_scan",
      [](const fs::path& path, const std::optional<std::string>& dtype,
         const std::optional<std::vector<std::string>>& watch, bool no_tensors,
         const py::dict& thresholds, const std::optional<std::pair<double, double>>& act_range) {
        const ScanOptions options =
            MakeScanOptions(dtype, watch, no_tensors, thresholds, act_range);
        Result<ScanReport> report = [&] {
          py::gil_scoped_release release;
          return ScanDump(path, options);
        }();
        return std::make_shared<ScanReport>(ValueOrThrow(std::move(report)));
      },
      py::arg("path"), py::arg("dtype"), py::arg("watch"), py::arg("no_tensors"),
      py::arg("thresholds"), py::arg("act_range"));

  // diff
  py::class_<DiffReport, std::shared_ptr<DiffReport>>(m, "_DiffReport")
      .def_readonly("rtol", &DiffReport::rtol)
      .def_readonly("atol", &DiffReport::atol)
      .def_property_readonly("warnings",
                             [](const DiffReport& r) {
                               std::vector<std::string> all = r.a.warnings;
                               all.insert(all.end(), r.b.warnings.begin(), r.b.warnings.end());
                               all.insert(all.end(), r.warnings.begin(), r.warnings.end());
                               return all;
                             })
      .def_property_readonly("kind_a", [](const DiffReport& r) { return r.a.kind; })
      .def_property_readonly("kind_b", [](const DiffReport& r) { return r.b.kind; })
      .def_property_readonly("clean", &DiffReport::clean)
      .def_property_readonly("rows",
                             [](const DiffReport& r) {
                               py::list out;
                               for (const DiffRow& row : r.rows) out.append(DiffRowDict(r, row));
                               return out;
                             })
      .def_property_readonly("only_a", [](const DiffReport& r) { return Unpaired(r.a, r.only_a); })
      .def_property_readonly("only_b", [](const DiffReport& r) { return Unpaired(r.b, r.only_b); })
      .def(
          "save",
          [](const DiffReport& r, const fs::path& dir) {
            std::error_code ec;
            fs::create_directories(dir, ec);
            if (ec) ThrowIfError(Status::IoError(dir.string() + ": " + ec.message()));
            ThrowIfError(WriteDiffValuesCsv(r, dir / "diff_values.csv"));
            ThrowIfError(WriteDiffShapesCsv(r, dir / "diff_shapes.csv"));
            ThrowIfError(WriteDiffJson(r, dir / "diff.json"));
            return std::vector<fs::path>{dir / "diff_values.csv", dir / "diff_shapes.csv",
                                         dir / "diff.json"};
          },
          py::arg("dir"));
  m.def(
      "_diff",
      [](const fs::path& a, const fs::path& b, const std::optional<fs::path>& map, double rtol,
         double atol, const std::string& align, bool inert) {
        DiffOptions options;
        options.rtol = rtol;
        options.atol = atol;
        if (align == "auto") {
          options.pairing.align = AlignMode::kAuto;
        } else if (align == "always") {
          options.pairing.align = AlignMode::kAlways;
        } else if (align == "never") {
          options.pairing.align = AlignMode::kNever;
        } else {
          ThrowIfError(
              Status::InvalidArgument("align " + align + ": expected auto, always or never"));
        }
        NameMap names;
        if (map) {
          names = ValueOrThrow(ReadNameMap(*map));
          options.pairing.map = &names;
        }
        ReadOptions read;
        read.inert_pickle = inert;
        Result<DiffReport> report = [&]() -> Result<DiffReport> {
          py::gil_scoped_release release;
          auto source_a = LoadDiffSource(a, read);
          if (!source_a) return source_a.error();
          auto source_b = LoadDiffSource(b, read);
          if (!source_b) return source_b.error();
          return DiffSources(std::move(*source_a), std::move(*source_b), options);
        }();
        return std::make_shared<DiffReport>(ValueOrThrow(std::move(report)));
      },
      py::arg("a"), py::arg("b"), py::arg("map"), py::arg("rtol"), py::arg("atol"),
      py::arg("align"), py::arg("inert"));

  // inspect: (JSON document text, terminal text, [(kind, message)...]); a file that could not be
  // read is raised as its error, as the command exits with it.
  m.def(
      "_inspect",
      [](const fs::path& path, bool inert) {
        InspectOptions options;
        options.inert_pickle = inert;
        Result<InspectReport> result = [&] {
          py::gil_scoped_release release;
          return Inspect(path, options);
        }();
        const InspectReport report = ValueOrThrow(std::move(result));
        std::vector<std::string> warnings;
        for (const InspectMessage& message : report.messages) {
          if (message.is_error()) ThrowIfError(message.error);
          warnings.push_back(message.warning);
        }
        return py::make_tuple(InspectJson(report), InspectText(report), warnings);
      },
      py::arg("path"), py::arg("inert"));

  // load
  py::class_<TensorMemory, std::shared_ptr<TensorMemory>>(m, "_TensorMemory", py::buffer_protocol())
      .def_buffer([](const TensorMemory& t) { return BufferOf(t); })
      .def_property_readonly("name", [](const TensorMemory& t) { return t.tensor.name; })
      .def_property_readonly(
          "dtype", [](const TensorMemory& t) { return std::string(Name(t.tensor.tensor.dtype())); })
      .def_property_readonly(
          "numpy_native",
          [](const TensorMemory& t) { return *BufferFormat(t.tensor.tensor.dtype()) != 0; })
      .def("float32_copy", &Float32Copy);
  // The figures of `a` against `b` (DiffTensorValues, as diff computes them per pair).
  m.def(
      "_tensor_diff",
      [](const TensorMemory& a, const TensorMemory& b, double rtol, double atol) {
        Result<DiffMetrics> result = [&] {
          py::gil_scoped_release release;
          return DiffTensorValues(a.tensor.tensor.view(), b.tensor.tensor.view(), rtol, atol);
        }();
        const DiffMetrics f = ValueOrThrow(std::move(result));
        py::dict d;
        d["numel"] = f.numel;
        d["close"] = f.close;
        d["allclose"] = f.allclose;
        d["allclose_ratio"] = f.allclose_ratio;
        d["cosine"] = f.cosine;
        d["mean_abs"] = f.mean_abs;
        d["max_abs"] = f.max_abs;
        d["max_rel"] = f.max_rel;
        d["nan_mismatch"] = f.nan_mismatch;
        d["inf_mismatch"] = f.inf_mismatch;
        return d;
      },
      py::arg("a"), py::arg("b"), py::arg("rtol"), py::arg("atol"));
  m.def(
      "_load",
      [](const fs::path& path, bool inert) {
        ReadOptions read;
        read.inert_pickle = inert;
        Result<DiffSource> source = [&] {
          py::gil_scoped_release release;
          return LoadDiffSource(path, read);
        }();
        DiffSource loaded = ValueOrThrow(std::move(source));
        std::vector<std::shared_ptr<TensorMemory>> out;
        out.reserve(loaded.tensors.size());
        for (NamedTensor& t : loaded.tensors) {
          out.push_back(std::make_shared<TensorMemory>(TensorMemory{std::move(t)}));
        }
        return py::make_tuple(loaded.kind, out, loaded.warnings);
      },
      py::arg("path"), py::arg("inert"));
}

}  // namespace numprobe
