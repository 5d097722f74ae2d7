// numprobe.Error from a Status: the exception type (created once by the module's init) and the
// helpers every binding file raises it with.
#ifndef NUMPROBE_PYTHON_PY_ERRORS_H_
#define NUMPROBE_PYTHON_PY_ERRORS_H_

#include <utility>

#include <pybind11/pybind11.h>

#include "numprobe/result.h"
#include "numprobe/status.h"

namespace numprobe {

// numprobe.Error (set by PYBIND11_MODULE before any binding runs).
inline PyObject*& ErrorType() {
  static PyObject* type = nullptr;
  return type;
}

inline void ThrowIfError(const Status& status) {
  if (status.ok()) return;
  PyErr_SetString(ErrorType(), status.ToString().c_str());
  throw pybind11::error_already_set();
}

template <typename T>
T ValueOrThrow(Result<T> result) {
  if (!result.ok()) ThrowIfError(result.error());
  return std::move(result).value();
}

}  // namespace numprobe

#endif  // NUMPROBE_PYTHON_PY_ERRORS_H_
