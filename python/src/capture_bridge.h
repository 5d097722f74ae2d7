// What module.cc's recording bindings share with the API wrapper (api_wrapper.cc): one
// implementation of "record these Python values" for both the Dumper's bindings and the wrapper's
// C++ path, so that the two cannot write different records.
#ifndef NUMPROBE_PYTHON_CAPTURE_BRIDGE_H_
#define NUMPROBE_PYTHON_CAPTURE_BRIDGE_H_

#include <string_view>

#include <pybind11/pybind11.h>

#include "numprobe/dumper.h"

namespace numprobe {

// The forward inputs of `name` (args: a tuple, kwargs: a dict). Raises (error_already_set).
void RecordForwardInputsOf(Dumper& d, std::string_view name, pybind11::handle args,
                           pybind11::handle kwargs);
// The forward outputs of `name`; `params` is None or a dict of the module's parameters.
void RecordForwardOutputsOf(Dumper& d, std::string_view name, pybind11::handle output,
                            pybind11::handle params);
// stack.json: the Python stack above the caller (`skip` frames left out), formatted by `format`
// once per distinct stack.
void AddCallStackOf(Dumper& d, std::string_view name, int skip, pybind11::handle format);
// enter(name), then whether `name` is recorded (active and selected).
bool EnterSelected(Dumper& d, std::string_view name);
// Whether `o` is a torch.Tensor; false before numprobe.pytorch registered torch's types.
bool IsTorchTensor(PyObject* o);
bool TorchRegistered();

void BindApiWrapper(pybind11::module_& m);  // api_wrapper.cc

}  // namespace numprobe

#endif  // NUMPROBE_PYTHON_CAPTURE_BRIDGE_H_
