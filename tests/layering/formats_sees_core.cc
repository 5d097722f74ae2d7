// Control for the layering tests: a layer includes the internal headers of a layer it names in
// DEPENDS (formats depends on core), so the failures of the other cases are the rule at work,
// not a broken include path.
#include "core/checked.h"
#include "formats/zip.h"
