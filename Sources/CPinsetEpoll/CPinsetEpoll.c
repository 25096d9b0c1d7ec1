// Declarations only (see include/CPinsetEpoll.h); SwiftPM needs one source file per C target.
#include "CPinsetEpoll.h"
