// The wrapped-API path in C++ (L1 and mix): CaptureState, the capture runtime's state (the base
// class of numprobe.pytorch._runtime._Runtime, so that Python and C++ read and change the same
// fields: running, depth, inner, thread, pid, the per-step call counters, the API selection, the
// construct nodes), and ApiWrapper, the callable that replaces a torch API. A wrapper call runs no
// Python bytecode in the common case (statistics, md5 or tensor capture): it checks the state,
// counts, names the entry, records inputs, calls the original, records outputs. What needs Python
// goes back to the runtime: the whole call when records are checked after each (overflow checks,
// stop_at_first) or the API's selection is not known yet (_Runtime.call_api), a narrowing cast
// (note_cast), a backward hook (hook_api_backward).
#include <charconv>
#include <optional>
#include <string>

#include <pthread.h>
#include <pybind11/pybind11.h>
#include <unistd.h>
// structmember.h after Python.h (pybind11 includes it).
#include <structmember.h>

#include "capture_bridge.h"

namespace py = pybind11;

namespace numprobe {
namespace {

// This process's id, refreshed in a forked child (a forked DataLoader worker must not record):
// getpid() is a system call on every wrapped call otherwise.
long g_process_id = 0;

void RefreshProcessId() { g_process_id = static_cast<long>(getpid()); }

struct CaptureState {
  PyObject_HEAD
      // Recording is on (start() .. stop()).
      char running;
  // Nesting of wrapped API calls (only the outermost is recorded).
  int depth;
  // > 0 while numprobe itself calls torch: wrappers and hooks pass through.
  int inner;
  unsigned long thread;    // the thread that records (threading.get_ident())
  long pid;                // the process that records
  PyObject* api_counts;    // per-step call counters, {prefix: count}
  PyObject* selection;     // {api_name: bool}: whether an API is recorded
  PyObject* api_parent;    // construct.json: the module an API call is filed under, or None
  PyObject* module_nodes;  // [(name, parent)] in first-seen order
  Py_ssize_t module_nodes_flushed;
  char collect_stacks;     // stack.json
  char construct_on;       // construct.json (L0, mix)
  char construct_apis;     // construct.json has API nodes (mix)
  char check_any;          // records are checked after each (overflow checks, stop_at_first)
  char track_casts;        // casts.json
  char dump_backward;      // backward entries (API backward hooks)
  PyObject* format_stack;  // callable([(code, lineno), ...]) -> stack.json lines
  PyObject* dumper_obj;    // numprobe.Dumper
  Dumper* dumper;          // its C++ object (nullptr while dumper_obj is None)
};

// A Python exception from whatever a bridge call threw; false when one was set.
template <class F>
bool Guarded(F&& f) {
  try {
    f();
    return true;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return false;
}

int StateTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* s = reinterpret_cast<CaptureState*>(self);
  Py_VISIT(s->api_counts);
  Py_VISIT(s->selection);
  Py_VISIT(s->api_parent);
  Py_VISIT(s->module_nodes);
  Py_VISIT(s->format_stack);
  Py_VISIT(s->dumper_obj);
  return 0;
}

int StateClear(PyObject* self) {
  auto* s = reinterpret_cast<CaptureState*>(self);
  Py_CLEAR(s->api_counts);
  Py_CLEAR(s->selection);
  Py_CLEAR(s->api_parent);
  Py_CLEAR(s->module_nodes);
  Py_CLEAR(s->format_stack);
  Py_CLEAR(s->dumper_obj);
  s->dumper = nullptr;
  return 0;
}

void StateDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  StateClear(self);
  Py_TYPE(self)->tp_free(self);
}

PyObject* StateNew(PyTypeObject* type, PyObject*, PyObject*) {
  auto* s = reinterpret_cast<CaptureState*>(type->tp_alloc(type, 0));
  if (s == nullptr) return nullptr;
  s->api_counts = PyDict_New();
  s->selection = PyDict_New();
  s->module_nodes = PyList_New(0);
  s->api_parent = Py_NewRef(Py_None);
  s->format_stack = Py_NewRef(Py_None);
  s->dumper_obj = Py_NewRef(Py_None);
  s->pid = -1;
  if (s->api_counts == nullptr || s->selection == nullptr || s->module_nodes == nullptr) {
    Py_DECREF(s);
    return nullptr;
  }
  return reinterpret_cast<PyObject*>(s);
}

PyObject* GetDumper(PyObject* self, void*) {
  return Py_NewRef(reinterpret_cast<CaptureState*>(self)->dumper_obj);
}

int SetDumper(PyObject* self, PyObject* value, void*) {
  auto* s = reinterpret_cast<CaptureState*>(self);
  Dumper* d = nullptr;
  if (value == nullptr) value = Py_None;
  if (value != Py_None) {
    try {
      d = py::cast<Dumper*>(py::handle(value));
    } catch (const py::cast_error&) {
      PyErr_SetString(PyExc_TypeError, "dumper must be a numprobe Dumper or None");
      return -1;
    }
  }
  Py_SETREF(s->dumper_obj, Py_NewRef(value));
  s->dumper = d;
  return 0;
}

// construct.json, in msprobe's order: an API node (mix) and then the module nodes not yet written.
bool UpdateConstruct(CaptureState* s, std::string_view name, PyObject* parent, bool is_api) {
  if (!s->construct_on) return true;
  if (s->dumper == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the capture runtime has no dumper");
    return false;
  }
  return Guarded([&] {
    const auto text = [](PyObject* o) -> std::optional<std::string_view> {
      if (o == nullptr || o == Py_None) return std::nullopt;
      Py_ssize_t n = 0;
      const char* p = PyUnicode_AsUTF8AndSize(o, &n);
      if (p == nullptr) throw py::error_already_set();
      return std::string_view(p, static_cast<size_t>(n));
    };
    if (is_api && s->construct_apis) s->dumper->AddConstruct(name, text(parent));
    if (!PyList_Check(s->module_nodes)) throw py::type_error("module_nodes must be a list");
    while (s->module_nodes_flushed < PyList_GET_SIZE(s->module_nodes)) {
      PyObject* node = PyList_GET_ITEM(s->module_nodes, s->module_nodes_flushed);
      if (!PyTuple_Check(node) || PyTuple_GET_SIZE(node) != 2) {
        throw py::type_error("module_nodes holds (name, parent) pairs");
      }
      s->dumper->AddConstruct(*text(PyTuple_GET_ITEM(node, 0)), text(PyTuple_GET_ITEM(node, 1)));
      ++s->module_nodes_flushed;
    }
  });
}

PyObject* StateUpdateConstruct(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"name", "parent", "is_api", nullptr};
  PyObject* name = nullptr;
  PyObject* parent = Py_None;
  int is_api = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|Op", const_cast<char**>(keywords), &name,
                                   &parent, &is_api)) {
    return nullptr;
  }
  if (parent != Py_None && !PyUnicode_Check(parent)) {
    PyErr_SetString(PyExc_TypeError, "parent must be a str or None");
    return nullptr;
  }
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(name, &n);
  if (p == nullptr) return nullptr;
  auto* s = reinterpret_cast<CaptureState*>(self);
  if (!UpdateConstruct(s, std::string_view(p, static_cast<size_t>(n)), parent, is_api != 0)) {
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyMemberDef kStateMembers[] = {
    {"running", T_BOOL, offsetof(CaptureState, running), 0, nullptr},
    {"depth", T_INT, offsetof(CaptureState, depth), 0, nullptr},
    {"inner", T_INT, offsetof(CaptureState, inner), 0, nullptr},
    {"thread", T_ULONG, offsetof(CaptureState, thread), 0, nullptr},
    {"pid", T_LONG, offsetof(CaptureState, pid), 0, nullptr},
    {"api_counts", T_OBJECT_EX, offsetof(CaptureState, api_counts), 0, nullptr},
    {"selection", T_OBJECT_EX, offsetof(CaptureState, selection), 0, nullptr},
    {"api_parent", T_OBJECT, offsetof(CaptureState, api_parent), 0, nullptr},
    {"module_nodes", T_OBJECT_EX, offsetof(CaptureState, module_nodes), 0, nullptr},
    {"module_nodes_flushed", T_PYSSIZET, offsetof(CaptureState, module_nodes_flushed), 0, nullptr},
    {"collect_stacks", T_BOOL, offsetof(CaptureState, collect_stacks), 0, nullptr},
    {"construct_on", T_BOOL, offsetof(CaptureState, construct_on), 0, nullptr},
    {"construct_apis", T_BOOL, offsetof(CaptureState, construct_apis), 0, nullptr},
    {"check_any", T_BOOL, offsetof(CaptureState, check_any), 0, nullptr},
    {"track_casts", T_BOOL, offsetof(CaptureState, track_casts), 0, nullptr},
    {"dump_backward", T_BOOL, offsetof(CaptureState, dump_backward), 0, nullptr},
    {"format_stack", T_OBJECT, offsetof(CaptureState, format_stack), 0, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef kStateGetSet[] = {
    {"dumper", GetDumper, SetDumper, "the numprobe.Dumper records go to", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef kStateMethods[] = {
    {"update_construct",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(StateUpdateConstruct)),
     METH_VARARGS | METH_KEYWORDS,
     "update_construct(name, parent=None, is_api=False): construct.json's nodes, in msprobe's "
     "order (an API node at mix, then the module nodes not yet written)."},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject CaptureStateType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "numprobe._numprobe.CaptureState";
  t.tp_basicsize = sizeof(CaptureState);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  t.tp_doc =
      "The capture runtime's state, read and changed by the wrapped APIs in C++ and by the "
      "Python runtime (its subclass).";
  t.tp_traverse = StateTraverse;
  t.tp_clear = StateClear;
  t.tp_dealloc = StateDealloc;
  t.tp_new = StateNew;
  t.tp_members = kStateMembers;
  t.tp_getset = kStateGetSet;
  t.tp_methods = kStateMethods;
  return t;
}();

struct ApiWrapper {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* dict;      // __name__, __doc__, __wrapped__, _numprobe_original, ...
  PyObject* weakrefs;  // weak references to it, as to a function
  PyObject* runtime;   // a CaptureState (the _Runtime that wrapped the API)
  PyObject* prefix;    // "Torch.add."
  PyObject* api_name;  // "add"
  PyObject* original;
  char distributed;  // records its inputs again as its outputs (torch.distributed)
  char is_cast;      // a cast API (casts.json)
};

// Interned names of the runtime's Python methods.
struct Methods {
  PyObject* call_api = PyUnicode_InternFromString("call_api");
  PyObject* note_cast = PyUnicode_InternFromString("note_cast");
  PyObject* hook_api_backward = PyUnicode_InternFromString("hook_api_backward");
  PyObject* requires_grad = PyUnicode_InternFromString("requires_grad");
};

const Methods& M() {
  static const Methods* m = new Methods();  // never destroyed: outlives interpreter teardown
  return *m;
}

int WrapperTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* w = reinterpret_cast<ApiWrapper*>(self);
  Py_VISIT(w->dict);
  Py_VISIT(w->runtime);
  Py_VISIT(w->prefix);
  Py_VISIT(w->api_name);
  Py_VISIT(w->original);
  return 0;
}

int WrapperClear(PyObject* self) {
  auto* w = reinterpret_cast<ApiWrapper*>(self);
  Py_CLEAR(w->dict);
  Py_CLEAR(w->runtime);
  Py_CLEAR(w->prefix);
  Py_CLEAR(w->api_name);
  Py_CLEAR(w->original);
  return 0;
}

void WrapperDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  if (reinterpret_cast<ApiWrapper*>(self)->weakrefs != nullptr) PyObject_ClearWeakRefs(self);
  WrapperClear(self);
  Py_TYPE(self)->tp_free(self);
}

// The call's positional arguments as a tuple and its keywords as a dict.
bool PackArguments(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject** tuple,
                   PyObject** dict) {
  *tuple = PyTuple_New(nargs);
  *dict = PyDict_New();
  if (*tuple == nullptr || *dict == nullptr) return false;
  for (Py_ssize_t i = 0; i < nargs; ++i) PyTuple_SET_ITEM(*tuple, i, Py_NewRef(args[i]));
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    if (PyDict_SetItem(*dict, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) return false;
  }
  return true;
}

// The whole call through the Python runtime (_Runtime.call_api).
PyObject* CallThroughRuntime(ApiWrapper* w, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames) {
  PyObject* tuple = nullptr;
  PyObject* dict = nullptr;
  PyObject* out = nullptr;
  if (PackArguments(args, nargs, kwnames, &tuple, &dict)) {
    out = PyObject_CallMethodObjArgs(w->runtime, M().call_api, w->prefix, w->api_name, w->original,
                                     tuple, dict, w->distributed ? Py_True : Py_False, nullptr);
  }
  Py_XDECREF(tuple);
  Py_XDECREF(dict);
  return out;
}

// Whether an output may carry an API backward hook: its first tensor (msprobe's choice, as
// _runtime._first_tensor) requires grad. hook_api_backward decides the rest.
int MayHookBackward(PyObject* value) {
  while (!IsTorchTensor(value)) {
    if (PyDict_Check(value)) {
      PyObject* key = nullptr;
      PyObject* item = nullptr;
      Py_ssize_t pos = 0;
      PyObject* found = nullptr;
      while (PyDict_Next(value, &pos, &key, &item)) {
        if (IsTorchTensor(item)) {
          found = item;
          break;
        }
      }
      if (found == nullptr) return 0;
      value = found;
    } else if (PyList_Check(value) || PyTuple_Check(value)) {
      if (PySequence_Fast_GET_SIZE(value) == 0) return 0;
      value = PySequence_Fast_GET_ITEM(value, 0);
    } else {
      return 0;
    }
  }
  PyObject* flag = PyObject_GetAttr(value, M().requires_grad);
  if (flag == nullptr) return -1;
  const int r = flag == Py_True ? 1 : 0;
  Py_DECREF(flag);
  return r;
}

// After the original returned `out`: construct node, outputs (or leave), cast note, backward
// hook; false with an exception set.
bool AfterCall(ApiWrapper* w, CaptureState* s, const std::string& name, PyObject* count,
               bool collect, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
               PyObject* out) {
  if (s->construct_on && !UpdateConstruct(s, name, s->api_parent, true)) return false;
  if (collect) {
    PyObject* recorded = nullptr;
    if (w->distributed) {  // its inputs, keywords' values after the positional ones
      const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
      recorded = PyTuple_New(nargs + nkw);
      if (recorded == nullptr) return false;
      for (Py_ssize_t i = 0; i < nargs + nkw; ++i) {
        PyTuple_SET_ITEM(recorded, i, Py_NewRef(args[i]));
      }
    } else if (PyTuple_Check(out)) {
      recorded = Py_NewRef(out);
    } else {
      recorded = PyTuple_Pack(1, out);
      if (recorded == nullptr) return false;
    }
    const bool ok = Guarded(
        [&] { RecordForwardOutputsOf(*s->dumper, name, py::handle(recorded), py::none()); });
    Py_DECREF(recorded);
    if (!ok) return false;
  } else {
    s->dumper->Leave(name);
  }
  if (s->track_casts && w->is_cast && nargs > 0) {
    PyObject* text = PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
    if (text == nullptr) return false;
    PyObject* r =
        PyObject_CallMethodObjArgs(w->runtime, M().note_cast, text, args[0], out, nullptr);
    Py_DECREF(text);
    if (r == nullptr) return false;
    Py_DECREF(r);
  }
  if (s->dump_backward) {
    const int may = TorchRegistered() ? MayHookBackward(out) : 1;
    if (may < 0) return false;
    if (may == 1) {
      PyObject* r = PyObject_CallMethodObjArgs(w->runtime, M().hook_api_backward, w->prefix, count,
                                               collect ? Py_True : Py_False, out, nullptr);
      if (r == nullptr) return false;
      Py_DECREF(r);
    }
  }
  return true;
}

// One wrapped call recorded in C++ (the common case of _Runtime.call_api, which it mirrors).
PyObject* RecordedCall(ApiWrapper* w, CaptureState* s, bool collect, PyObject* const* args,
                       size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject* count_obj = PyDict_GetItemWithError(s->api_counts, w->prefix);  // borrowed
  if (count_obj == nullptr && PyErr_Occurred()) return nullptr;
  long long count = 0;
  if (count_obj != nullptr) {
    count = PyLong_AsLongLong(count_obj);
    if (count == -1 && PyErr_Occurred()) return nullptr;
  }
  Py_ssize_t prefix_len = 0;
  const char* prefix = PyUnicode_AsUTF8AndSize(w->prefix, &prefix_len);
  if (prefix == nullptr) return nullptr;
  std::string name(prefix, static_cast<size_t>(prefix_len));
  char digits[24];
  const auto conv = std::to_chars(digits, digits + sizeof digits, count);
  name.append(digits, conv.ptr);
  name += ".forward";

  ++s->depth;
  if (collect) {
    ++s->inner;
    const bool ok = Guarded([&] {
      if (!EnterSelected(*s->dumper, name)) return;
      if (s->collect_stacks) AddCallStackOf(*s->dumper, name, 0, py::handle(s->format_stack));
      PyObject* tuple = nullptr;
      PyObject* dict = nullptr;
      const bool packed = PackArguments(args, nargs, kwnames, &tuple, &dict);
      py::object t = py::reinterpret_steal<py::object>(tuple);
      py::object d = py::reinterpret_steal<py::object>(dict);
      if (!packed) throw py::error_already_set();
      RecordForwardInputsOf(*s->dumper, name, t, d);
    });
    --s->inner;
    if (!ok) {
      --s->depth;
      return nullptr;
    }
  }
  PyObject* out = PyObject_Vectorcall(w->original, args, nargsf, kwnames);
  if (out == nullptr) {
    --s->depth;
    return nullptr;
  }
  ++s->inner;
  PyObject* count_now = PyLong_FromLongLong(count);
  bool ok =
      count_now != nullptr && AfterCall(w, s, name, count_now, collect, args, nargs, kwnames, out);
  --s->inner;
  if (ok) {
    PyObject* next = PyLong_FromLongLong(count + 1);
    ok = next != nullptr && PyDict_SetItem(s->api_counts, w->prefix, next) == 0;
    Py_XDECREF(next);
  }
  Py_XDECREF(count_now);
  --s->depth;
  if (!ok) {
    Py_DECREF(out);
    return nullptr;
  }
  return out;
}

PyObject* WrapperVectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                            PyObject* kwnames) {
  auto* w = reinterpret_cast<ApiWrapper*>(self);
  if (w->original == nullptr || w->runtime == nullptr) {  // cleared by the garbage collector
    PyErr_SetString(PyExc_RuntimeError, "a numprobe wrapper called after it was cleared");
    return nullptr;
  }
  auto* s = reinterpret_cast<CaptureState*>(w->runtime);
  if (!s->running || s->depth != 0 || s->inner != 0 || PyThread_get_thread_ident() != s->thread ||
      g_process_id != s->pid || s->api_counts == nullptr || s->selection == nullptr) {
    return PyObject_Vectorcall(w->original, args, nargsf, kwnames);
  }
  if (!PyDict_Check(s->api_counts) || !PyDict_Check(s->selection)) {
    return CallThroughRuntime(w, args, PyVectorcall_NARGS(nargsf), kwnames);  // other mappings
  }
  PyObject* selected = PyDict_GetItemWithError(s->selection, w->api_name);  // borrowed
  if (selected == nullptr && PyErr_Occurred()) return nullptr;
  if (selected == nullptr || s->check_any || s->dumper == nullptr) {
    return CallThroughRuntime(w, args, PyVectorcall_NARGS(nargsf), kwnames);
  }
  const int collect = PyObject_IsTrue(selected);
  if (collect < 0) return nullptr;
  return RecordedCall(w, s, collect != 0, args, nargsf, kwnames);
}

PyObject* WrapperNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"runtime",     "prefix",  "api_name", "original",
                                   "distributed", "is_cast", nullptr};
  PyObject* runtime = nullptr;
  PyObject* prefix = nullptr;
  PyObject* api_name = nullptr;
  PyObject* original = nullptr;
  int distributed = 0;
  int is_cast = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!UUO|pp", const_cast<char**>(keywords),
                                   &CaptureStateType, &runtime, &prefix, &api_name, &original,
                                   &distributed, &is_cast)) {
    return nullptr;
  }
  if (!PyCallable_Check(original)) {
    PyErr_SetString(PyExc_TypeError, "original must be callable");
    return nullptr;
  }
  auto* w = reinterpret_cast<ApiWrapper*>(type->tp_alloc(type, 0));
  if (w == nullptr) return nullptr;
  w->vectorcall = WrapperVectorcall;
  w->runtime = Py_NewRef(runtime);
  w->prefix = Py_NewRef(prefix);
  w->api_name = Py_NewRef(api_name);
  w->original = Py_NewRef(original);
  w->distributed = static_cast<char>(distributed);
  w->is_cast = static_cast<char>(is_cast);
  return reinterpret_cast<PyObject*>(w);
}

// A method on a class, as a function is: bound to the instance it is read from.
PyObject* WrapperGet(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

PyObject* WrapperRepr(PyObject* self) {
  auto* w = reinterpret_cast<ApiWrapper*>(self);
  return PyUnicode_FromFormat("<numprobe wrapper of %R>", w->original);
}

// pickle and copy take it by name, as a function: its __name__ in its __module__ (torch.add is
// found as "add" in torch, where its qualified name, _VariableFunctionsClass.add, is not).
PyObject* WrapperReduce(PyObject* self, PyObject*) {
  return PyObject_GetAttrString(self, "__name__");
}

PyMethodDef kWrapperMethods[] = {{"__reduce__", WrapperReduce, METH_NOARGS, nullptr},
                                 {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kWrapperGetSet[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject ApiWrapperType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "numprobe._numprobe.ApiWrapper";
  t.tp_basicsize = sizeof(ApiWrapper);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
               Py_TPFLAGS_METHOD_DESCRIPTOR;
  t.tp_doc =
      "ApiWrapper(runtime, prefix, api_name, original, distributed=False, is_cast=False): a "
      "wrapped torch API, recorded in C++ while `runtime` (a CaptureState) is running.";
  t.tp_vectorcall_offset = offsetof(ApiWrapper, vectorcall);
  t.tp_dictoffset = offsetof(ApiWrapper, dict);
  t.tp_weaklistoffset = offsetof(ApiWrapper, weakrefs);
  t.tp_call = PyVectorcall_Call;
  t.tp_descr_get = WrapperGet;
  t.tp_traverse = WrapperTraverse;
  t.tp_clear = WrapperClear;
  t.tp_dealloc = WrapperDealloc;
  t.tp_new = WrapperNew;
  t.tp_repr = WrapperRepr;
  t.tp_getset = kWrapperGetSet;
  t.tp_methods = kWrapperMethods;
  return t;
}();

}  // namespace

void BindApiWrapper(py::module_& m) {
  RefreshProcessId();
  pthread_atfork(nullptr, nullptr, RefreshProcessId);
  if (PyType_Ready(&CaptureStateType) < 0 || PyType_Ready(&ApiWrapperType) < 0) {
    throw py::error_already_set();
  }
  m.add_object("CaptureState", py::handle(reinterpret_cast<PyObject*>(&CaptureStateType)));
  m.add_object("ApiWrapper", py::handle(reinterpret_cast<PyObject*>(&ApiWrapperType)));
}

}  // namespace numprobe
