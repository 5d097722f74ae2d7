// numprobe's Python exceptions from a Status: the one place a library error becomes a Python
// exception. The classes are created once by the module's init (CreateErrorTypes):
//
//   numprobe.Error                 base of them all; .kind (ErrorKind) and .code (CLI exit)
//     numprobe.UsageError          invalid_argument: a bad option or argument    code 2
//     numprobe.NotFoundError       not_found: a file, entry or name is missing   code 3
//     numprobe.FileAccessError     io_error: the operating system refused        code 3
//     numprobe.FormatError         corrupt, out_of_range: malformed input        code 3
//       numprobe.UnsupportedError  unsupported: well-formed, but not read        code 3
//     numprobe.RejectedError       rejected: refused for safety (pickles)        code 3
//     numprobe.InternalError       internal: a bug in numprobe                   code 3
//
// .code is the exit status `numprobe` gives the same error (tools/numprobe: ReportError), so a
// script can exit with it. UsageError is also a ValueError, NotFoundError a FileNotFoundError and
// FileAccessError an OSError, so generic handlers catch them too. The message is the Status's
// message without the code name (the class says it).
#ifndef NUMPROBE_PYTHON_PY_ERRORS_H_
#define NUMPROBE_PYTHON_PY_ERRORS_H_

#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include "numprobe/result.h"
#include "numprobe/status.h"

namespace numprobe {

// The CLI's exit codes for errors (tools/numprobe/cli.h: kExitUsage, kExitBadInput).
inline constexpr int kPyExitUsage = 2;
inline constexpr int kPyExitBadInput = 3;

inline int ExitCodeOf(ErrorCode code) {
  return code == ErrorCode::kInvalidArgument ? kPyExitUsage : kPyExitBadInput;
}

// The exception class per ErrorCode (index = the code's value), set by CreateErrorTypes.
inline PyObject** ErrorTypes() {
  static PyObject* types[static_cast<int>(ErrorCode::kInternal) + 1] = {};
  return types;
}

// numprobe.Error.
inline PyObject*& ErrorType() {
  static PyObject* type = nullptr;
  return type;
}

// Creates the classes in `m` (once, by PYBIND11_MODULE before any binding runs).
inline void CreateErrorTypes(pybind11::module_& m) {
  namespace py = pybind11;
  // `kind`: the class's default .kind, for errors raised from Python code (instances made from a
  // Status carry the Status's own).
  const auto make = [&m](const char* name, py::tuple bases, int code, const char* kind,
                         const char* doc) {
    py::dict attrs;
    attrs["__module__"] = "numprobe";
    attrs["__doc__"] = doc;
    attrs["code"] = code;
    attrs["kind"] = kind == nullptr ? py::object(py::none()) : py::object(py::str(kind));
    py::object type = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type))(
        name, bases, attrs);
    m.attr(name) = type;
    return type.release().ptr();  // kept for the life of the process
  };
  PyObject* base = make(
      "Error", py::make_tuple(py::handle(PyExc_RuntimeError)), kPyExitBadInput, nullptr,
      "Any numprobe error. .kind: the error's kind (\"corrupt\", \"not_found\", ...); .code: the "
      "exit status the numprobe command gives the same error (2 usage, 3 bad input).");
  ErrorType() = base;
  py::handle b(base);
  PyObject* usage =
      make("UsageError", py::make_tuple(b, py::handle(PyExc_ValueError)), kPyExitUsage,
           "invalid_argument", "An invalid argument or option (kind invalid_argument).");
  PyObject* not_found =
      make("NotFoundError", py::make_tuple(b, py::handle(PyExc_FileNotFoundError)), kPyExitBadInput,
           "not_found", "A file, entry or name that does not exist (kind not_found).");
  PyObject* io =
      make("FileAccessError", py::make_tuple(b, py::handle(PyExc_OSError)), kPyExitBadInput,
           "io_error", "The operating system refused to open, read, write or map (kind io_error).");
  PyObject* format =
      make("FormatError", py::make_tuple(b), kPyExitBadInput, "corrupt",
           "Malformed or truncated input, or a size beyond a limit (kinds corrupt, out_of_range).");
  PyObject* unsupported =
      make("UnsupportedError", py::make_tuple(py::handle(format)), kPyExitBadInput, "unsupported",
           "Well-formed input using a feature numprobe does not read (kind unsupported).");
  PyObject* rejected =
      make("RejectedError", py::make_tuple(b), kPyExitBadInput, "rejected",
           "Input refused on safety grounds, e.g. a pickle global outside the allowlist (kind "
           "rejected).");
  PyObject* internal = make("InternalError", py::make_tuple(b), kPyExitBadInput, "internal",
                            "A bug in numprobe (kind internal).");
  PyObject** types = ErrorTypes();
  types[static_cast<int>(ErrorCode::kOk)] = base;
  types[static_cast<int>(ErrorCode::kInvalidArgument)] = usage;
  types[static_cast<int>(ErrorCode::kNotFound)] = not_found;
  types[static_cast<int>(ErrorCode::kIoError)] = io;
  types[static_cast<int>(ErrorCode::kCorrupt)] = format;
  types[static_cast<int>(ErrorCode::kUnsupported)] = unsupported;
  types[static_cast<int>(ErrorCode::kOutOfRange)] = format;
  types[static_cast<int>(ErrorCode::kRejected)] = rejected;
  types[static_cast<int>(ErrorCode::kInternal)] = internal;
}

// .kind of an error: the ErrorCode's name as a Python identifier ("invalid_argument"; the
// library's ErrorCodeName is prose: "invalid argument").
inline const char* ErrorKind(ErrorCode code) {
  static constexpr const char* kKinds[] = {"ok",           "invalid_argument", "not_found",
                                           "io_error",     "corrupt",          "unsupported",
                                           "out_of_range", "rejected",         "internal"};
  return kKinds[static_cast<int>(code)];
}

// Raises the exception for `status` (not OK) as a pending Python error.
inline void SetPythonError(const Status& status) {
  namespace py = pybind11;
  PyObject* type = ErrorTypes()[static_cast<int>(status.code())];
  py::object error = py::reinterpret_borrow<py::object>(type)(status.message());
  error.attr("kind") = ErrorKind(status.code());
  error.attr("code") = ExitCodeOf(status.code());
  PyErr_SetObject(type, error.ptr());
}

inline void ThrowIfError(const Status& status) {
  if (status.ok()) return;
  SetPythonError(status);
  throw pybind11::error_already_set();
}

template <typename T>
T ValueOrThrow(Result<T> result) {
  if (!result.ok()) ThrowIfError(result.error());
  return std::move(result).value();
}

}  // namespace numprobe

#endif  // NUMPROBE_PYTHON_PY_ERRORS_H_
