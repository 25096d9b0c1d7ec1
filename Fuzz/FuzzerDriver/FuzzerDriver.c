// Declarations only: see include/FuzzerDriver.h. SwiftPM needs one source file to build a C module.
#include "FuzzerDriver.h"
