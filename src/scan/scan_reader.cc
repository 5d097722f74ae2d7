// scan_{ts}.json read back (numprobe/scan.h); the writer is scan_writer.cc.
#include "numprobe/scan.h"

#include "core/json.h"

namespace numprobe {

Result<JsonValue> ParseScanJson(std::string_view text) {
  // Written by numprobe as standard JSON ("NaN" strings); bare NaN/Infinity are read too.
  NUMPROBE_ASSIGN_OR_RETURN(
      JsonValue doc,
      ParseJson(text, kPythonJson));
  if (!doc.is_object()) return Status::Corrupt("the root is not an object");
  return doc;
}

}  // namespace numprobe
