// Must not compile: core is the bottom layer and sees no other layer's internals.
#include "core/checked.h"
#include "formats/zip.h"
