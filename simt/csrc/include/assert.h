// assert.h for kernels on the SIMT emulator: a failed assert stops the
// launch with an error naming the expression and place, as a device-side
// assert does, instead of aborting the process.
#include "kbsimt_abi.h"
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : kbs_trap("assertion failed: " #e, __FILE__, __LINE__))
#endif
