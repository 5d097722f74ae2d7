// Must not compile: a front end (CLI, Python module, example) sees include/numprobe/ only.
#include "numprobe/status.h"
#include "core/checked.h"
