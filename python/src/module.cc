// _numprobe: the Python binding of numprobe's capture core. Python hands over tensor memory as
// (data_ptr, dtype, shape, strides) read from the tensor object; statistics are computed in C++ on
// that memory (no copy, no Python floats). Errors become numprobe.Error's subclasses (py_errors.h).
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "numprobe/app/config_check.h"
#include "numprobe/dump.h"
#include "numprobe/dump_config.h"
#include "numprobe/dumper.h"
#include "numprobe/stats.h"

#include "capture_bridge.h"
#include "py_errors.h"

namespace py = pybind11;

namespace numprobe {

void BindPrecheck(py::module_& m);    // precheck_module.cc
void BindClosedLoop(py::module_& m);  // loop_module.cc
void BindAnalysis(py::module_& m);    // analysis_module.cc
void BindCompare(py::module_& m);     // compare_module.cc

namespace {

// Objects the converter recognizes, registered once by numprobe.pytorch (torch is not imported
// here so that the module works without torch).
struct TorchTypes {
  py::object tensor_type;  // torch.Tensor
  py::object size_type;    // torch.Size
  py::dict dtype_map;      // torch.dtype -> numprobe DType value
  py::object fallback;  // callable(obj) -> None | ("plain", type, value) | ("literal", json-able)
  py::object device_batch;  // callable(list[Tensor]) -> list[[max, min, mean, norm]]
  // torch._C._TensorBase's own stride and data_ptr: torch.Tensor's may be numprobe's wrappers
  // (stride is a wrapped API), and going through a wrapper costs a Python call per tensor.
  py::object stride;
  py::object data_ptr;
  bool force_device_path = false;  // route CPU tensors through device_batch (tests)
  bool ready = false;
};

TorchTypes& Types() {
  static TorchTypes* types = new TorchTypes();  // never destroyed: outlives interpreter teardown
  return *types;
}

// Attribute names read on every tensor, interned once (pybind11's attr("x") makes a new str per
// lookup).
struct AttrNames {
  PyObject* requires_grad = PyUnicode_InternFromString("requires_grad");
  PyObject* dtype = PyUnicode_InternFromString("dtype");
  PyObject* shape = PyUnicode_InternFromString("shape");
  PyObject* is_cpu = PyUnicode_InternFromString("is_cpu");
  PyObject* is_meta = PyUnicode_InternFromString("is_meta");
  PyObject* fields = PyUnicode_InternFromString("_fields");
};

const AttrNames& Names() {
  static const AttrNames* names = new AttrNames();  // never destroyed, as Types()
  return *names;
}

py::object GetAttr(py::handle h, PyObject* name) {
  PyObject* r = PyObject_GetAttr(h.ptr(), name);
  if (r == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

// f(arg) through vectorcall: pybind11's call operator builds an argument tuple each time.
py::object CallOne(const py::object& f, py::handle arg) {
  PyObject* r = PyObject_CallOneArg(f.ptr(), arg.ptr());
  if (r == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

bool GetBool(py::handle h, PyObject* name) {
  py::object v = GetAttr(h, name);
  return v.ptr() == Py_True;
}

// The ints of a tuple (torch.Size, stride()).
void ReadInts(py::handle seq, std::vector<int64_t>* out) {
  out->clear();
  if (!PyTuple_Check(seq.ptr())) {
    for (py::handle d : seq) out->push_back(d.cast<int64_t>());
    return;
  }
  const Py_ssize_t n = PyTuple_GET_SIZE(seq.ptr());
  out->reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    const long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(seq.ptr(), i));
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    out->push_back(v);
  }
}

JsonValue PyToJson(py::handle h, int depth) {
  if (depth > 32) return JsonValue();
  if (h.is_none()) return JsonValue();
  if (PyBool_Check(h.ptr())) return JsonValue::Bool(h.ptr() == Py_True);
  if (PyLong_Check(h.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow != 0) return JsonValue::Double(PyLong_AsDouble(h.ptr()));
    return JsonValue::Int(v);
  }
  if (PyFloat_Check(h.ptr())) return JsonValue::Double(PyFloat_AS_DOUBLE(h.ptr()));
  if (PyUnicode_Check(h.ptr())) return JsonValue::String(h.cast<std::string>());
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
    JsonValue::Array items;
    for (py::handle item : h) items.push_back(PyToJson(item, depth + 1));
    return JsonValue::MakeArray(std::move(items));
  }
  if (PyDict_Check(h.ptr())) {
    JsonValue::Object members;
    for (auto item : py::reinterpret_borrow<py::dict>(h)) {
      members.emplace_back(py::str(item.first).cast<std::string>(),
                           PyToJson(item.second, depth + 1));
    }
    return JsonValue::MakeObject(std::move(members));
  }
  return JsonValue::String(py::str(h).cast<std::string>());
}

// Converts Python values (tensors, scalars, nested tuples/lists/dicts) to DumpValues. Device
// tensors are gathered first and reduced in one batched call per record.
class Converter {
 public:
  explicit Converter(bool need_data) : need_data_(need_data) {}

  DumpValue Convert(py::handle h, int depth = 0) {
    TorchTypes& t = Types();
    if (depth > 48 || h.is_none()) return DumpValue::None();
    PyObject* o = h.ptr();
    if (PyBool_Check(o)) return DumpValue::Bool(o == Py_True);
    if (PyLong_Check(o)) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow != 0) return DumpValue::Plain("int", JsonValue::Double(PyLong_AsDouble(o)));
      return DumpValue::Int(v);
    }
    if (PyFloat_Check(o)) return DumpValue::Float(PyFloat_AS_DOUBLE(o));
    if (PyUnicode_Check(o)) return DumpValue::Str(h.cast<std::string>());
    if (t.ready && PyObject_IsInstance(o, t.tensor_type.ptr()) == 1) return ConvertTensor(h);
    if (o == Py_Ellipsis) return DumpValue::Plain("ellipsis", JsonValue::String("..."));
    if (PySlice_Check(o)) {
      JsonValue::Array parts;
      for (const char* attr : {"start", "stop", "step"}) {
        py::object part = h.attr(attr);
        if (part.is_none()) {
          parts.push_back(JsonValue());
        } else {
          try {
            parts.push_back(JsonValue::Int(py::int_(part).cast<int64_t>()));
          } catch (const py::error_already_set&) {
            parts.push_back(JsonValue());
          }
        }
      }
      return DumpValue::Plain("slice", JsonValue::MakeArray(std::move(parts)));
    }
    if (t.ready && PyObject_IsInstance(o, t.size_type.ptr()) == 1) {
      return DumpValue::Plain("torch.Size", PyToJson(h, 0));
    }
    // namedtuple: a dict of its fields (a plain tuple is not one; hasattr raises inside)
    if (PyTuple_Check(o) && !PyTuple_CheckExact(o) && PyObject_HasAttr(o, Names().fields) == 1) {
      DumpValue::Members members;
      for (py::handle field : h.attr("_fields")) {
        members.emplace_back(py::str(field).cast<std::string>(), Convert(h.attr(field), depth + 1));
      }
      return DumpValue::Dict(std::move(members));
    }
    if (PyTuple_Check(o) || PyList_Check(o)) {
      DumpValue::Items items;
      items.reserve(static_cast<size_t>(PySequence_Fast_GET_SIZE(o)));
      for (py::handle item : h) items.push_back(Convert(item, depth + 1));
      return DumpValue::List(std::move(items));
    }
    if (PyDict_Check(o)) {
      DumpValue::Members members;
      for (auto item : py::reinterpret_borrow<py::dict>(h)) {
        members.emplace_back(py::str(item.first).cast<std::string>(),
                             Convert(item.second, depth + 1));
      }
      return DumpValue::Dict(std::move(members));
    }
    if (t.ready && !t.fallback.is_none()) {
      py::object r = t.fallback(h);
      if (PyTuple_Check(r.ptr()) && py::len(r) >= 2) {
        const std::string kind = py::str(r[py::int_(0)]).cast<std::string>();
        if (kind == "plain" && py::len(r) == 3) {
          return DumpValue::Plain(py::str(r[py::int_(1)]).cast<std::string>(),
                                  PyToJson(r[py::int_(2)], 0));
        }
        if (kind == "literal") return DumpValue::Literal(PyToJson(r[py::int_(1)], 0));
        if (kind == "value") return Convert(r[py::int_(1)], depth + 1);
      }
    }
    return DumpValue::None();
  }

  // Device tensors met so far; the caller reduces them in one batch and converts again.
  py::list& device_tensors() { return device_tensors_; }
  void SetDeviceResults(py::list stats) {
    device_stats_ = std::move(stats);
    next_device_ = 0;
    second_pass_ = true;
  }
  // Keeps host copies alive until the record call returns.
  py::list& keep_alive() { return keep_alive_; }

  // numprobe's DType code of a torch.dtype (borrowed), or nullptr for a dtype it does not know.
  static PyObject* DTypeCode(py::handle dtype) {
    PyObject* code = PyDict_GetItemWithError(Types().dtype_map.ptr(), dtype.ptr());
    if (code == nullptr && PyErr_Occurred()) throw py::error_already_set();
    return code;
  }

  // The view of a host tensor of a dtype numprobe knows (async_dump's copies).
  static TensorView HostView(py::handle h) {
    TensorView view;
    PyObject* code = DTypeCode(GetAttr(h, Names().dtype));
    if (code == nullptr) throw py::value_error("a host copy of a dtype numprobe does not know");
    view.dtype = static_cast<DType>(py::handle(code).cast<int>());
    ReadInts(GetAttr(h, Names().shape), &view.shape);
    FillView(h, &view);
    return view;
  }

 private:
  DumpValue ConvertTensor(py::handle h) {
    TorchTypes& t = Types();
    const AttrNames& names = Names();
    TensorArg arg;
    arg.requires_grad = GetBool(h, names.requires_grad);
    py::object dtype = GetAttr(h, names.dtype);
    PyObject* code = DTypeCode(dtype);
    if (code == nullptr) {
      // A dtype numprobe does not know (quantized, ...): shape and dtype name only.
      return DumpValue::Literal(
          JsonValue::MakeObject({{"type", JsonValue::String("torch.Tensor")},
                                 {"dtype", JsonValue::String(py::str(dtype).cast<std::string>())},
                                 {"shape", PyToJson(GetAttr(h, names.shape), 0)},
                                 {"Max", JsonValue()},
                                 {"Min", JsonValue()},
                                 {"Mean", JsonValue()},
                                 {"Norm", JsonValue()},
                                 {"requires_grad", JsonValue::Bool(arg.requires_grad)}}));
    }
    arg.view.dtype = static_cast<DType>(py::handle(code).cast<int>());
    ReadInts(GetAttr(h, names.shape), &arg.view.shape);
    const bool on_cpu = GetBool(h, names.is_cpu) && !t.force_device_path;
    if (!on_cpu || GetBool(h, names.is_meta)) {
      arg.view.strides = ContiguousStrides(arg.view.shape);
      if (!second_pass_) {
        device_tensors_.append(h);
        arg.precomputed = std::vector<JsonValue>(4);
      } else {
        py::object entry = device_stats_[py::int_(next_device_++)];
        // (stats, host copy or None)
        py::object stats = entry[py::int_(0)];
        if (PyLong_Check(stats.ptr())) {  // async_dump: a slot, resolved at the step's end
          arg.pending_slot = stats.cast<int64_t>();
          arg.pending_data = need_data_;  // its host copy comes then too
          return DumpValue::Tensor(std::move(arg));
        }
        std::vector<JsonValue> values;
        for (py::handle v : stats) values.push_back(PyToJson(v, 0));
        py::object host = entry[py::int_(1)];
        if (need_data_ && !host.is_none()) {
          keep_alive_.append(host);
          ReadInts(GetAttr(host, names.shape), &arg.view.shape);
          FillView(host, &arg.view);
        }
        arg.precomputed = std::move(values);
      }
      return DumpValue::Tensor(std::move(arg));
    }
    FillView(h, &arg.view);
    return DumpValue::Tensor(std::move(arg));
  }

  // Strides and data of `h` into `view`, whose shape is already h's.
  static void FillView(py::handle h, TensorView* view) {
    TorchTypes& t = Types();
    ReadInts(t.stride.is_none() ? h.attr("stride")() : CallOne(t.stride, h), &view->strides);
    // data_ptr() already points at the first element (storage offset applied).
    py::object ptr = t.data_ptr.is_none() ? h.attr("data_ptr")() : CallOne(t.data_ptr, h);
    view->data = reinterpret_cast<const std::byte*>(ptr.cast<uintptr_t>());
    view->byte_offset = 0;
    if (view->numel() == 0) view->data = nullptr;
  }

  bool need_data_;
  bool second_pass_ = false;
  py::list device_tensors_;
  py::list device_stats_;
  size_t next_device_ = 0;
  py::list keep_alive_;
};

// Converts `values` (one top-level value per argument) handling device tensors in one batch.
std::vector<DumpValue> ConvertAll(std::initializer_list<py::handle> values, bool need_data,
                                  Converter* converter) {
  std::vector<DumpValue> out;
  for (py::handle v : values) out.push_back(converter->Convert(v));
  if (py::len(converter->device_tensors()) == 0) return out;
  TorchTypes& t = Types();
  py::list results = t.device_batch(converter->device_tensors(), need_data);
  converter->SetDeviceResults(results);
  out.clear();
  for (py::handle v : values) out.push_back(converter->Convert(v));
  return out;
}

// stack.json: the Python stack above the caller, formatted once per distinct stack and reused;
// msprobe-format lines come from `format`, a Python callable given [(code, lineno), ...] on a
// miss. A stack is keyed by the code objects of its frames and the offset of each frame's current
// instruction, which fixes its line: mapping an offset to its line walks the code's line table
// (PyCode_Addr2Line was most of the stack's cost), so that is done on a miss only. The cache
// holds the code objects, so that a key's addresses cannot be reused by other code.
class StackCache {
 public:
  std::shared_ptr<const std::vector<std::string>> Get(int skip, py::handle format) {
    key_.clear();
    PyFrameObject* frame = PyEval_GetFrame();  // borrowed
    Py_XINCREF(frame);
    for (int i = 0; frame != nullptr && i < skip; ++i) {
      PyFrameObject* back = PyFrame_GetBack(frame);
      Py_DECREF(frame);
      frame = back;
    }
    size_t hash = 0;
    while (frame != nullptr) {
      PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
      const int where = InstructionOf(frame);
      key_.emplace_back(reinterpret_cast<PyObject*>(code), where);
      hash = hash * 1000003u ^ (reinterpret_cast<uintptr_t>(code) >> 4) ^
             (static_cast<size_t>(where) << 20);
      Py_DECREF(code);  // alive while its frame is; the cache entry takes its own reference
      PyFrameObject* back = PyFrame_GetBack(frame);
      Py_DECREF(frame);
      frame = back;
    }
    auto range = entries_.equal_range(hash);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second.key == key_) return it->second.lines;
    }
    Entry entry;
    py::list frames;
    for (const auto& [code, where] : key_) {
      entry.codes.push_back(py::reinterpret_borrow<py::object>(code));
      frames.append(py::make_tuple(py::reinterpret_borrow<py::object>(code), LineOf(code, where)));
    }
    entry.key = key_;
    entry.lines = std::make_shared<const std::vector<std::string>>(
        format(frames).cast<std::vector<std::string>>());
    return entries_.emplace(hash, std::move(entry))->second.lines;
  }

 private:
  // What fixes a frame's line: the offset of its current instruction where the C API gives it
  // (3.11), else the line itself.
  static int InstructionOf(PyFrameObject* frame) {
#if PY_VERSION_HEX >= 0x030B0000
    return PyFrame_GetLasti(frame);
#else
    return PyFrame_GetLineNumber(frame);
#endif
  }
  static int LineOf(PyObject* code, int where) {
#if PY_VERSION_HEX >= 0x030B0000
    return PyCode_Addr2Line(reinterpret_cast<PyCodeObject*>(code), where);  // < 0: first line
#else
    (void)code;
    return where;
#endif
  }

  struct Entry {
    std::vector<std::pair<PyObject*, int>> key;
    std::vector<py::object> codes;                          // keeps the key's code objects alive
    std::shared_ptr<const std::vector<std::string>> lines;  // handed to Dumper::AddStack
  };
  std::vector<std::pair<PyObject*, int>> key_;
  std::unordered_multimap<size_t, Entry> entries_;
};

StackCache& Stacks() {
  static StackCache* cache = new StackCache();  // never destroyed, as Types()
  return *cache;
}

// Runs `work` (returning a Status) without the GIL, so that other Python threads run while the
// Dumper writes; a failure becomes the Python exception.
template <typename Work>
void RunWithoutGil(const Work& work) {
  Status st;
  {
    py::gil_scoped_release release;
    st = work();
  }
  ThrowIfError(st);
}

// Converts `values` (under the GIL: they are Python objects; with tensor data when `need_data`),
// then hands the converted values to `record` without the GIL. Every record_* binding is this.
template <typename Record>
void ConvertAndRecord(std::initializer_list<py::handle> values, bool need_data,
                      const Record& record) {
  Converter conv(need_data);
  std::vector<DumpValue> v = ConvertAll(values, need_data, &conv);
  RunWithoutGil([&] { return record(v); });
}

// A view of tensor memory handed over from Python (torch's data_ptr, shape and strides).
TensorView ViewOfMemory(uintptr_t data_ptr, int dtype, std::vector<int64_t> shape,
                        std::vector<int64_t> strides) {
  if (dtype < 0 || dtype >= kDTypeCount) ThrowIfError(Status::InvalidArgument("unknown dtype"));
  if (shape.size() != strides.size()) {
    ThrowIfError(Status::InvalidArgument("shape and strides differ in length"));
  }
  TensorView v;
  v.data = reinterpret_cast<const std::byte*>(data_ptr);
  v.dtype = static_cast<DType>(dtype);
  v.shape = std::move(shape);
  v.strides = std::move(strides);
  if (v.numel() > 0 && v.data == nullptr)
    ThrowIfError(Status::InvalidArgument("null data pointer"));
  return v;
}

py::dict StatsToDict(const TensorStats& s) {
  py::dict d;
  d["count"] = s.count;
  d["max"] = s.has_minmax ? py::object(py::float_(s.max)) : py::object(py::none());
  d["min"] = s.has_minmax ? py::object(py::float_(s.min)) : py::object(py::none());
  d["mean"] = s.has_mean_norm ? py::object(py::float_(s.mean)) : py::object(py::none());
  d["norm"] = s.has_mean_norm ? py::object(py::float_(s.norm)) : py::object(py::none());
  d["nan_count"] = s.nan_count;
  d["pos_inf_count"] = s.pos_inf_count;
  d["neg_inf_count"] = s.neg_inf_count;
  d["zero_count"] = s.zero_count;
  d["max_abs"] = s.max_abs;
  d["min_nonzero_abs"] = s.min_nonzero_abs;
  return d;
}

}  // namespace

void RecordForwardInputsOf(Dumper& d, std::string_view name, py::handle args, py::handle kwargs) {
  ConvertAndRecord({args, kwargs}, d.NeedsData(name), [&](std::vector<DumpValue>& v) {
    return d.RecordForwardInputs(name, v[0], v[1]);
  });
}

void RecordForwardOutputsOf(Dumper& d, std::string_view name, py::handle output,
                            py::handle params) {
  ConvertAndRecord({output, params}, d.NeedsData(name), [&](std::vector<DumpValue>& v) {
    return d.RecordForwardOutputs(name, v[0], params.is_none() ? nullptr : &v[1]);
  });
}

void AddCallStackOf(Dumper& d, std::string_view name, int skip, py::handle format) {
  d.AddStack(name, Stacks().Get(skip, format));
}

bool EnterSelected(Dumper& d, std::string_view name) {
  d.Enter(name);
  return d.active() && d.Selected(name);
}

bool IsTorchTensor(PyObject* o) {
  const TorchTypes& t = Types();
  return t.ready && PyObject_IsInstance(o, t.tensor_type.ptr()) == 1;
}

bool TorchRegistered() { return Types().ready; }

}  // namespace numprobe

PYBIND11_MODULE(_numprobe, m) {
  using namespace numprobe;
  m.doc() = "numprobe capture core (C++)";
  CreateErrorTypes(m);
  BindApiWrapper(m);
  BindPrecheck(m);
  BindClosedLoop(m);
  BindAnalysis(m);
  BindCompare(m);

  m.def(
      "register_torch",
      [](py::object tensor_type, py::object size_type, py::dict dtype_map, py::object fallback,
         py::object device_batch, py::object stride, py::object data_ptr) {
        TorchTypes& t = Types();
        t.stride = std::move(stride);
        t.data_ptr = std::move(data_ptr);
        t.tensor_type = std::move(tensor_type);
        t.size_type = std::move(size_type);
        t.dtype_map = std::move(dtype_map);
        t.fallback = std::move(fallback);
        t.device_batch = std::move(device_batch);
        t.ready = true;
      },
      py::arg("tensor_type"), py::arg("size_type"), py::arg("dtype_map"), py::arg("fallback"),
      py::arg("device_batch"), py::arg("stride") = py::none(), py::arg("data_ptr") = py::none(),
      "Registers torch's types and the Python helpers the converter calls.");
  m.def(
      "set_force_device_path", [](bool on) { Types().force_device_path = on; },
      "Tests: reduce CPU tensors through the batched device path.");

  py::dict dtypes;
#define NUMPROBE_PY_DTYPE_(e, name, ...) dtypes[py::str(name)] = static_cast<int>(DType::e);
  NUMPROBE_FOR_EACH_DTYPE(NUMPROBE_PY_DTYPE_)
#undef NUMPROBE_PY_DTYPE_
  m.attr("DTYPES") = dtypes;

  m.def(
      "tensor_stats",
      [](uintptr_t data_ptr, int dtype, std::vector<int64_t> shape, std::vector<int64_t> strides) {
        const TensorView v = ViewOfMemory(data_ptr, dtype, std::move(shape), std::move(strides));
        Result<TensorStats> s = [&] {
          py::gil_scoped_release release;
          return ComputeStats(v);
        }();
        return StatsToDict(ValueOrThrow(std::move(s)));
      },
      py::arg("data_ptr"), py::arg("dtype"), py::arg("shape"), py::arg("strides"),
      "Statistics of the tensor memory at data_ptr (elements of numprobe dtype `dtype`).");

  py::class_<DumpConfig>(m, "DumpConfig")
      .def_static("parse",
                  [](const std::string& text) { return ValueOrThrow(DumpConfig::Parse(text)); })
      .def_static("load",
                  [](const std::string& path) { return ValueOrThrow(DumpConfig::Load(path)); })
      .def("override",
           [](DumpConfig& c, const std::string& key, const std::string& json_value) {
             ThrowIfError(c.Override(key, json_value));
           })
      .def_property_readonly("task", [](const DumpConfig& c) { return std::string(c.task_name()); })
      .def_property_readonly("level",
                             [](const DumpConfig& c) { return std::string(c.level_name()); })
      .def_readonly("dump_path", &DumpConfig::dump_path)
      .def_readonly("steps", &DumpConfig::steps)
      .def_readonly("ranks", &DumpConfig::ranks)
      .def_readonly("scope", &DumpConfig::scope)
      .def_readonly("list", &DumpConfig::list)
      .def_readonly("async_dump", &DumpConfig::async_dump)
      .def_readonly("extra_info", &DumpConfig::extra_info)
      .def_readonly("is_deterministic", &DumpConfig::is_deterministic)
      .def_readonly("seed", &DumpConfig::seed)
      .def_readonly("overflow_nums", &DumpConfig::overflow_nums)
      .def_readonly("warnings", &DumpConfig::warnings)
      .def_property_readonly(
          "dump_layout",
          [](const DumpConfig& c) {
            return std::string(c.dump_layout == DumpLayout::kPacked ? "packed" : "files");
          })
      .def_readonly("requested_task", &DumpConfig::requested_task)
      .def_readonly("dump_forward", &DumpConfig::dump_forward)
      .def_readonly("dump_backward", &DumpConfig::dump_backward)
      .def_readonly("dump_input", &DumpConfig::dump_input)
      .def_readonly("dump_output", &DumpConfig::dump_output)
      .def_property_readonly("risk_level",
                             [](const DumpConfig& c) {
                               static const char* names[] = {"ALL", "CORE", "FOCUS"};
                               return std::string(names[static_cast<int>(c.risk_level)]);
                             })
      .def_property_readonly(
          "summary_mode",
          [](const DumpConfig& c) {
            return std::string(c.summary_mode == SummaryMode::kMd5 ? "md5" : "statistics");
          })
      .def_readonly("bench_path", &DumpConfig::bench_path)
      .def_readonly("diff_nums", &DumpConfig::diff_nums)
      .def_readonly("stop_at_first", &DumpConfig::stop_at_first)
      .def_readonly("closed_loop_dialect", &DumpConfig::closed_loop_dialect)
      .def_property_readonly("loop", [](const DumpConfig& c) {
        // The closed loop's sections (DumpConfig::loop) as a dict.
        py::dict d;
        d["overflow_check"] = c.loop.overflow_check;
        d["check_steps"] = c.loop.check_steps;
        d["compare"] = c.loop.compare;
        d["compare_base"] = c.loop.compare_base;
        d["metrics"] = c.loop.metrics;
        d["config_check"] = c.loop.config_check;
        d["config_base"] = c.loop.config_base;
        return d;
      });

  py::class_<Dumper>(m, "Dumper")
      .def(py::init([](const DumpConfig& config, std::optional<int64_t> rank, int64_t pid) {
             DumperOptions options;
             options.rank = rank;
             options.pid = pid;
             return ValueOrThrow(Dumper::Open(config, options));
           }),
           py::arg("config"), py::arg("rank") = std::nullopt, py::arg("pid") = 0)
      .def_property_readonly("step", &Dumper::step)
      .def_property_readonly("active", &Dumper::active)
      .def_property_readonly("rank_dir", [](const Dumper& d) { return d.rank_dir().string(); })
      .def_property_readonly("entry_count", &Dumper::entry_count)
      .def("set_rank", [](Dumper& d, int64_t r) { ThrowIfError(d.SetRank(r)); })
      .def(
          "resolve_pending",
          [](Dumper& d, py::list values, py::object data) {
            const size_t n = py::len(values);
            if (!data.is_none() && py::len(data) != n) {
              throw py::value_error("resolve_pending: data must have one item per slot");
            }
            std::vector<PendingValues> slots(n);
            for (size_t i = 0; i < n; ++i) {
              for (py::handle x : values[py::int_(i)]) slots[i].stats.push_back(PyToJson(x, 0));
              if (data.is_none()) continue;
              py::object host = data[py::int_(i)];
              if (!host.is_none()) slots[i].data = Converter::HostView(host);
            }
            // `data` holds the host copies for the duration of the call.
            RunWithoutGil([&] { return d.ResolvePending(slots); });
          },
          py::arg("values"), py::arg("data") = py::none(),
          "async_dump: the statistics of the pending slots, [[Max, Min, Mean, Norm], ...], and, "
          "for records made with need_data, the host copies (a CPU tensor or None per slot).")
      .def_property_readonly("pending_records", &Dumper::pending_records)
      .def("start", [](Dumper& d) { ThrowIfError(d.Start()); })
      .def("stop", [](Dumper& d) { RunWithoutGil([&] { return d.Stop(); }); })
      .def("step_forward", [](Dumper& d) { RunWithoutGil([&] { return d.Step(); }); })
      .def(
          "flush", [](Dumper& d) { RunWithoutGil([&] { return d.Flush(); }); },
          "Waits until everything recorded is written and the last step end's files are durable.")
      .def("close", [](Dumper& d) { RunWithoutGil([&] { return d.Close(); }); })
      .def("enter", [](Dumper& d, const std::string& n) { d.Enter(n); })
      .def("leave", [](Dumper& d, const std::string& n) { d.Leave(n); })
      .def("selected", [](Dumper& d, const std::string& n) { return d.Selected(n); })
      .def(
          "enter_selected", [](Dumper& d, const std::string& n) { return EnterSelected(d, n); },
          "enter(name), then whether `name` is recorded (active and selected): one call per "
          "wrapped API instead of three.")
      .def("record_forward_inputs",
           [](Dumper& d, const std::string& name, py::tuple args, py::dict kwargs) {
             RecordForwardInputsOf(d, name, args, kwargs);
           })
      .def(
          "record_forward_outputs",
          [](Dumper& d, const std::string& name, py::handle output, py::object params) {
            RecordForwardOutputsOf(d, name, output, params);
          },
          py::arg("name"), py::arg("output"), py::arg("params") = py::none())
      .def(
          "record_forward",
          [](Dumper& d, const std::string& name, py::tuple args, py::dict kwargs, py::handle output,
             py::object params) {
            ConvertAndRecord({args, kwargs, output, params}, d.NeedsData(name),
                             [&](std::vector<DumpValue>& v) {
                               return d.RecordForward(name, v[0], v[1], v[2],
                                                      params.is_none() ? nullptr : &v[3]);
                             });
          },
          py::arg("name"), py::arg("args"), py::arg("kwargs"), py::arg("output"),
          py::arg("params") = py::none())
      .def("record_backward",
           [](Dumper& d, const std::string& name, py::handle grad_outputs, py::handle grad_inputs) {
             ConvertAndRecord(
                 {grad_outputs, grad_inputs}, d.NeedsData(name),
                 [&](std::vector<DumpValue>& v) { return d.RecordBackward(name, v[0], v[1]); });
           })
      .def("record_param_grad",
           [](Dumper& d, const std::string& entry, const std::string& param, py::handle grad) {
             ConvertAndRecord({grad}, d.NeedsData(entry), [&](std::vector<DumpValue>& v) {
               return d.RecordParameterGrad(entry, param, v[0]);
             });
           })
      .def("record_debug",
           [](Dumper& d, const std::string& name, py::handle value) {
             ConvertAndRecord({value}, d.NeedsData(name),
                              [&](std::vector<DumpValue>& v) { return d.RecordDebug(name, v[0]); });
           })
      .def("track_casts", [](Dumper& d) { d.TrackCasts(); })
      .def(
          "add_cast",
          [](Dumper& d, const std::string& name, py::handle input, py::handle output,
             const std::vector<std::string>& stack) {
            ConvertAndRecord({input, output}, /*need_data=*/false, [&](std::vector<DumpValue>& v) {
              return d.AddCast(name, v[0], v[1], stack);
            });
          },
          "casts.json: one narrowing cast (statistics of its input and output tensors).")
      .def("add_stack",
           [](Dumper& d, const std::string& name, std::vector<std::string> frames) {
             d.AddStack(name, std::move(frames));
           })
      .def(
          "add_call_stack",
          [](Dumper& d, const std::string& name, int skip, py::handle format) {
            AddCallStackOf(d, name, skip, format);
          },
          py::arg("name"), py::arg("skip"), py::arg("format"),
          "stack.json: the caller's stack (`skip` frames above it left out), formatted by "
          "`format` once per distinct stack.")
      .def("add_construct",
           [](Dumper& d, const std::string& name, std::optional<std::string> parent) {
             d.AddConstruct(name, parent ? std::optional<std::string_view>(*parent) : std::nullopt);
           })
      .def("take_divergence",
           [](Dumper& d) -> py::object {
             auto n = d.TakeDivergence();
             if (!n) return py::none();
             py::dict out;
             out["name"] = n->name;
             out["step"] = n->step;
             out["rank"] = n->rank;
             out["report"] = n->report;
             return out;
           })
      .def_property_readonly("incremental_summary",
                             [](const Dumper& d) -> py::object {
                               auto s = d.incremental_summary();
                               if (!s) return py::none();
                               py::dict out;
                               out["bench"] = s->bench;
                               out["tensors_judged"] = s->tensors_judged;
                               out["tensors_over_tolerance"] = s->tensors_over;
                               out["entries_over_tolerance"] = s->entries_over;
                               out["tensors_written"] = s->tensors_written;
                               out["bytes_written"] = s->bytes_written;
                               out["bytes_not_written"] = s->bytes_not_written;
                               out["first_divergence"] = s->first_divergence.empty()
                                                             ? py::object(py::none())
                                                             : py::str(s->first_divergence);
                               out["first_divergence_step"] = s->first_divergence_step;
                               return out;
                             })
      .def("take_overflow_report", [](Dumper& d) -> py::object {
        auto r = d.TakeOverflowReport();
        if (!r) return py::none();
        py::dict out;
        out["name"] = r->name;
        out["step"] = r->step;
        out["rank"] = r->rank;
        out["report"] = r->report;
        return out;
      });

  m.def(
      "tensor_fingerprint",
      [](uintptr_t data_ptr, int dtype, std::vector<int64_t> shape, std::vector<int64_t> strides) {
        const TensorView v = ViewOfMemory(data_ptr, dtype, std::move(shape), std::move(strides));
        Result<TensorStats> s = [&] {
          py::gil_scoped_release release;
          return ComputeStats(v);
        }();
        return TensorFingerprintText(v, ValueOrThrow(std::move(s)));
      },
      py::arg("data_ptr"), py::arg("dtype"), py::arg("shape"), py::arg("strides"),
      "The config-check fingerprint item of a tensor: 'dtype [shape] max= min= mean= norm='.");
  m.def(
      "collect_snapshot",
      [](std::vector<std::string> configs, std::vector<std::string> data,
         std::vector<std::string> weights, std::vector<std::string> command,
         std::vector<std::string> set, std::string python, bool tensor_stats,
         std::optional<std::string> output) {
        CollectOptions options;
        options.configs.assign(configs.begin(), configs.end());
        options.data.assign(data.begin(), data.end());
        options.weights.assign(weights.begin(), weights.end());
        options.command = std::move(command);
        options.set = std::move(set);
        options.python = std::move(python);
        options.tensor_stats = tensor_stats;
        Result<Snapshot> snapshot = [&] {
          py::gil_scoped_release release;  // runs the probe interpreter and hashes files
          return CollectSnapshot(options);
        }();
        Snapshot s = ValueOrThrow(std::move(snapshot));
        if (output) ThrowIfError(WriteSnapshot(s, *output));
        return SnapshotToJson(s);
      },
      py::arg("configs"), py::arg("data"), py::arg("weights"), py::arg("command"), py::arg("set"),
      py::arg("python"), py::arg("tensor_stats") = true, py::arg("output") = std::nullopt,
      "config-check collect: the snapshot as JSON text, also written atomically to `output`.");
  m.def(
      "load_dump_json",
      [](const std::string& rank_dir) {
        DumpJsonText t = ValueOrThrow(LoadDumpJson(rank_dir));
        return py::make_tuple(t.text, t.from_journal, t.truncated_tail);
      },
      "dump.json text of a rank folder, rebuilt from the journal when dump.json is missing or "
      "older.");
  m.def(
      "read_journal",
      [](const std::string& path) {
        JournalText r = ValueOrThrow(ReadDumpJournalText(path));
        // Python's json reads the NaN/Infinity tokens msprobe's files use.
        const py::object loads = py::module_::import("json").attr("loads");
        py::dict out;
        out["dump"] = loads(r.dump);
        out["stack"] = loads(r.stack);
        out["construct"] = loads(r.construct);
        out["debug"] = loads(r.debug);
        out["records"] = r.records;
        out["dump_json_current"] = r.dump_json_current;
        out["truncated_tail"] = r.truncated_tail;
        return out;
      },
      "Reads a dump.json.journal back.");
}
