// The pre-check part of _numprobe: what numprobe.precheck's replay calls into C++ for. Tensors
// arrive as (data_ptr, dtype, shape) of contiguous CPU memory; rows and API results cross as
// plain dicts (so that worker processes can send them to the writer). Errors become
// numprobe.Error.
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "numprobe/app/precheck.h"
#include "numprobe/app/precheck_compare.h"
#include "numprobe/app/precheck_inputs.h"
#include "numprobe/app/precheck_plan.h"
#include "numprobe/scan.h"
#include "numprobe/tensor_file.h"
#include "numprobe/thread_pool.h"

#include "py_errors.h"

namespace py = pybind11;

namespace numprobe {
namespace {

template <typename T>
T Take(Result<T> r) {
  return ValueOrThrow(std::move(r));
}

void Check(const Status& s) { ThrowIfError(s); }

TensorView Contiguous(uintptr_t ptr, int dtype, const std::vector<int64_t>& shape) {
  if (dtype < 0 || dtype >= kDTypeCount) ThrowIfError(Status::InvalidArgument("unknown dtype"));
  TensorView v =
      TensorView::Contiguous(reinterpret_cast<const void*>(ptr), static_cast<DType>(dtype), shape);
  if (v.numel() > 0 && ptr == 0) ThrowIfError(Status::InvalidArgument("null data pointer"));
  return v;
}

PrecheckStatus StatusOf(const std::string& text) {
  const auto s = EnumFromName<PrecheckStatus>(text);
  if (!s) ThrowIfError(Status::InvalidArgument("unknown status '" + text + "'"));
  return *s;
}

py::object Opt(const std::optional<double>& v) {
  return v ? py::object(py::float_(*v)) : py::object(py::none());
}

py::dict RowToDict(const PrecheckRow& r) {
  py::dict d;
  d["name"] = r.name;
  d["bench_dtype"] = r.bench_dtype;
  d["device_dtype"] = r.device_dtype;
  d["shape"] = r.shape;
  py::list columns;
  for (const auto& c : r.columns) columns.append(Opt(c));
  d["columns"] = columns;
  d["status"] = std::string(EnumName(r.status));
  d["message"] = r.message;
  d["standard"] = r.standard;
  d["standard_result"] = std::string(EnumName(r.standard_result));
  d["verdict"] = std::string(EnumName(r.verdict()));
  d["reason"] = r.reason;
  d["worst_index"] = r.worst_index;
  d["worst_device"] = Opt(r.worst_device);
  d["worst_bench"] = Opt(r.worst_bench);
  d["device"] = r.device;
  return d;
}

PrecheckRow RowFromDict(const py::dict& d) {
  PrecheckRow r;
  r.name = d["name"].cast<std::string>();
  r.bench_dtype = d["bench_dtype"].cast<std::string>();
  r.device_dtype = d["device_dtype"].cast<std::string>();
  r.shape = d["shape"].cast<std::string>();
  const auto columns = d["columns"].cast<std::vector<std::optional<double>>>();
  if (columns.size() != r.columns.size())
    ThrowIfError(Status::InvalidArgument("row: wrong column count"));
  std::copy(columns.begin(), columns.end(), r.columns.begin());
  r.status = StatusOf(d["status"].cast<std::string>());
  r.message = d["message"].cast<std::string>();
  r.standard = d["standard"].cast<std::string>();
  r.standard_result = StatusOf(d["standard_result"].cast<std::string>());
  r.reason = d["reason"].cast<std::string>();
  r.worst_index = d["worst_index"].cast<int64_t>();
  r.worst_device = d["worst_device"].cast<std::optional<double>>();
  r.worst_bench = d["worst_bench"].cast<std::optional<double>>();
  r.device = d["device"].cast<std::string>();
  return r;
}

py::dict ApiToDict(const PrecheckApiResult& a) {
  py::dict d;
  d["api"] = a.api;
  d["forward"] = std::string(EnumName(a.forward));
  d["backward"] = std::string(EnumName(a.backward));
  d["message"] = a.message;
  d["verdict"] = std::string(EnumName(a.verdict));
  d["dropout"] = a.dropout;
  py::list fwd;
  py::list bwd;
  for (const PrecheckRow& r : a.forward_rows) fwd.append(RowToDict(r));
  for (const PrecheckRow& r : a.backward_rows) bwd.append(RowToDict(r));
  d["forward_rows"] = fwd;
  d["backward_rows"] = bwd;
  return d;
}

// An API result from the replay: its rows (and, for dropout, its forward status), aggregated.
PrecheckApiResult ApiFromDict(const py::dict& d) {
  PrecheckApiResult a;
  a.api = d["api"].cast<std::string>();
  for (py::handle r : d["forward_rows"]) a.forward_rows.push_back(RowFromDict(r.cast<py::dict>()));
  for (py::handle r : d["backward_rows"])
    a.backward_rows.push_back(RowFromDict(r.cast<py::dict>()));
  a.dropout = d.contains("dropout") && d["dropout"].cast<bool>();
  if (a.dropout) a.forward = StatusOf(d["forward"].cast<std::string>());
  const bool skipped = d.contains("skipped") && d["skipped"].cast<bool>();
  Aggregate(&a);
  if (skipped) a.backward = PrecheckStatus::kSkip;
  return a;
}

py::dict FilesToDict(const PrecheckFiles& f) {
  py::dict d;
  d["result_csv"] = f.result_csv.string();
  d["details_csv"] = f.details_csv.string();
  d["json"] = f.json.string();
  d["timestamp"] = f.timestamp;
  return d;
}

std::optional<double> OptArg(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  return o.cast<double>();
}

}  // namespace

void BindPrecheck(py::module_& m) {
  m.def("precheck_seed", &PrecheckSeed, py::arg("seed"), py::arg("key"),
        "The generator seed of one tensor: `seed` mixed with its row name.");
  m.def(
      "precheck_generate",
      [](uintptr_t ptr, int dtype, int64_t numel, py::object max, py::object min, py::object mean,
         py::object norm, uint64_t seed) {
        if (dtype < 0 || dtype >= kDTypeCount)
          ThrowIfError(Status::InvalidArgument("unknown dtype"));
        if (numel > 0 && ptr == 0) ThrowIfError(Status::InvalidArgument("null data pointer"));
        RecordedStatistics s;
        s.dtype = static_cast<DType>(dtype);
        s.numel = numel;
        s.max = OptArg(max);
        s.min = OptArg(min);
        s.mean = OptArg(mean);
        s.norm = OptArg(norm);
        Check([&] {
          py::gil_scoped_release release;
          return GenerateFromStatistics(s, seed, reinterpret_cast<std::byte*>(ptr));
        }());
      },
      py::arg("data_ptr"), py::arg("dtype"), py::arg("numel"), py::arg("max"), py::arg("min"),
      py::arg("mean"), py::arg("norm"), py::arg("seed"),
      "Fills contiguous memory with values matching recorded statistics (precheck_inputs.h).");
  m.def(
      "precheck_output",
      [](const std::string& name, const std::string& api, uintptr_t device_ptr, int device_dtype,
         const std::vector<int64_t>& shape, uintptr_t bench_ptr, int bench_dtype,
         const std::string& device) {
        const TensorView d = Contiguous(device_ptr, device_dtype, shape);
        const TensorView b = Contiguous(bench_ptr, bench_dtype, shape);
        Result<PrecheckMetrics> metrics = [&] {
          py::gil_scoped_release release;
          return PrecheckTensorPair(d, b, &ThreadPool::Default());
        }();
        TensorOutputInfo info;
        info.name = name;
        info.api = api;
        info.device_dtype = d.dtype;
        info.bench_dtype = b.dtype;
        info.shape = shape;
        info.device = device;
        return RowToDict(JudgeTensorOutput(info, Take(std::move(metrics))));
      },
      py::arg("name"), py::arg("api"), py::arg("device_ptr"), py::arg("device_dtype"),
      py::arg("shape"), py::arg("bench_ptr"), py::arg("bench_dtype"), py::arg("device"),
      "Judges one tensor output against its benchmark (both contiguous, same shape): a row dict.");
  m.def(
      "precheck_builtin",
      [](std::string name, std::string bench_type, std::string device_type, bool equal) {
        return RowToDict(JudgeBuiltinOutput(std::move(name), std::move(bench_type),
                                            std::move(device_type), equal));
      },
      "A row for a non-tensor output.");
  m.def(
      "precheck_message_row",
      [](std::string name, const std::string& status, std::string message) {
        return RowToDict(MessageRow(std::move(name), StatusOf(status), std::move(message)));
      },
      "A row that carries only a status and a message.");
  m.def(
      "precheck_dropout",
      [](int64_t bench_zeros, int64_t device_zeros, int64_t numel) {
        return std::string(EnumName(JudgeDropout(bench_zeros, device_zeros, numel)));
      },
      "msprobe's dropout rule on the zero counts.");
  m.def(
      "precheck_skipped",
      [](std::string api, std::string message) {
        return ApiToDict(SkippedApi(std::move(api), std::move(message)));
      },
      "An API skipped as a whole.");
  m.def(
      "precheck_aggregate", [](const py::dict& api) { return ApiToDict(ApiFromDict(api)); },
      "An API's rows aggregated into its result line.");

  py::class_<PrecheckWriter>(m, "PrecheckWriter")
      .def_static(
          "create",
          [](const std::string& dir, const std::string& ts) {
            return Take(PrecheckWriter::Create(dir, ts));
          },
          "New result files in `dir`.")
      .def_static(
          "resume", [](const std::string& csv) { return Take(PrecheckWriter::Resume(csv)); },
          "Continues the files of an interrupted run from its result CSV.")
      .def_property_readonly("files",
                             [](const PrecheckWriter& w) { return FilesToDict(w.files()); })
      .def_property_readonly("done", [](const PrecheckWriter& w) { return w.done(); })
      .def("append",
           [](PrecheckWriter& w, const py::dict& api) {
             const PrecheckApiResult a = ApiFromDict(api);
             Check(w.Append(a));
             return ApiToDict(a);
           })
      .def("apis",
           [](const PrecheckWriter& w) {
             py::list out;
             for (const PrecheckApiResult& a : w.apis()) out.append(ApiToDict(a));
             return out;
           })
      .def(
          "finish",
          [](PrecheckWriter& w, const std::string& dump, const std::string& mode, uint64_t seed,
             const std::string& device, std::vector<std::string> warnings) {
            PrecheckRunInfo info{dump, mode, seed, device, std::move(warnings)};
            Check(w.Finish(info));
            const PrecheckSummary s = Summarize(w.apis());
            py::dict d;
            d["apis"] = s.apis;
            d["pass"] = s.pass;
            d["warning"] = s.warning;
            d["error"] = s.error;
            d["skip"] = s.skip;
            return d;
          },
          py::arg("dump"), py::arg("mode"), py::arg("seed"), py::arg("device"),
          py::arg("warnings"));

  m.def(
      "read_tensor_file",
      [](const std::string& path) {
        ReadOptions options;
        options.check_crc = false;
        TensorFile file = Take([&] {
          py::gil_scoped_release release;
          return ReadTensorFile(path, options);
        }());
        py::list out;
        for (const NamedTensor& t : file.tensors) {
          const TensorView& v = t.tensor.view();
          Tensor c = v.is_contiguous() ? t.tensor : Take(Tensor::CopyOf(v));
          const TensorView& cv = c.view();
          py::bytes data(reinterpret_cast<const char*>(cv.first()),
                         static_cast<size_t>(cv.numel() * ItemSize(cv.dtype)));
          out.append(py::make_tuple(t.name, static_cast<int>(cv.dtype), cv.shape, data, t.device));
        }
        return out;
      },
      py::arg("path"),
      "The tensors of a tensor file (read by numprobe's restricted readers, never by pickle): "
      "[(name, dtype, shape, bytes, device)], C-contiguous.");

  m.def(
      "precheck_compare",
      [](const std::string& device_csv, const std::string& reference_csv,
         std::optional<std::string> out_dir, const std::string& ts) {
        PrecheckCompareReport r = Take([&] {
          py::gil_scoped_release release;
          return ComparePrecheckDetails(device_csv, reference_csv);
        }());
        py::dict d;
        if (out_dir) {
          const PrecheckCompareFiles files = Take(WritePrecheckCompare(r, *out_dir, ts));
          d["result_csv"] = files.result_csv.string();
          d["details_csv"] = files.details_csv.string();
          d["json"] = files.json.string();
        }
        py::list apis;
        for (const PrecheckCompareApi& a : r.apis) {
          py::dict x;
          x["api"] = a.api;
          x["forward"] = std::string(EnumName(a.forward));
          x["backward"] = std::string(EnumName(a.backward));
          x["message"] = a.message;
          apis.append(x);
        }
        d["apis"] = apis;
        d["failed"] = r.failed();
        d["warnings"] = r.warnings;
        return d;
      },
      py::arg("device_csv"), py::arg("reference_csv"), py::arg("out_dir") = std::nullopt,
      py::arg("timestamp") = "",
      "precheck-compare: the device's details judged against a reference device's.");

  m.def(
      "precheck_plan",
      [](const std::string& path, const std::string& target, std::optional<std::string> settings,
         std::optional<std::string> out_dir, const std::string& ts) {
        const auto dtype = ParseHeadroomTarget(target);
        if (!dtype) ThrowIfError(Status::InvalidArgument("unknown target dtype '" + target + "'"));
        std::optional<PlanSettings> s;
        if (settings) s = Take(ReadPlanSettings(*settings));
        PlanReport r = Take(PlanPrecision(path, *dtype, s ? &*s : nullptr));
        if (out_dir) Check(WritePlanReport(r, *out_dir, ts));
        py::dict d;
        d["target"] = target;
        d["tensors"] = r.tensors;
        d["ops"] = r.ops;
        d["settings_known"] = r.settings_known;
        d["warnings"] = r.warnings;
        py::list findings;
        for (const PlanFinding& f : r.findings) {
          py::dict x;
          x["severity"] = std::string(EnumName(f.severity));
          x["kind"] = f.kind;
          x["op"] = f.op;
          x["tensor"] = f.tensor;
          x["detail"] = f.detail;
          x["advice"] = f.advice;
          x["value"] = f.value;
          findings.append(x);
        }
        d["findings"] = findings;
        return d;
      },
      py::arg("path"), py::arg("target"), py::arg("settings") = std::nullopt,
      py::arg("out_dir") = std::nullopt, py::arg("timestamp") = "",
      "The static precision plan of a dump for a target dtype.");
}

}  // namespace numprobe
