// The fuzz binary's entry point. SwiftPM links every executable with `main` defined as the
// module's own entry (`tokenbroker_fuzz_main`), so libFuzzer's `main` is never linked in; this
// one hands argv to libFuzzer's driver with the target's callback, as its `main` would.
#include <stddef.h>
#include <stdint.h>
#include "fuzz_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

int tokenbroker_fuzz_main(int argc, char **argv) {
  return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput);
}
