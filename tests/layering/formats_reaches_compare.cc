// Must not compile: formats does not depend on compare, so compare's internals are invisible.
#include "formats/zip.h"
#include "compare/compare_internal.h"
