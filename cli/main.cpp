// roofbench's own binary: the same entry point a user's binary gets (roofbench/main.h), with
// roofbench's families linked in from the library.
#include "roofbench/main.h"

ROOFBENCH_MAIN()
