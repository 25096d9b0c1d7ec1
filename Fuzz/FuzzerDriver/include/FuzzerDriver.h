#ifndef PINSET_FUZZER_DRIVER_H
#define PINSET_FUZZER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, linked by -sanitize=fuzzer). SwiftPM links each executable target with its
/// `main` renamed to `<Target>_main`, so libFuzzer's own `main` is never used; each fuzzer's `<Target>_main`
/// calls this instead.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
