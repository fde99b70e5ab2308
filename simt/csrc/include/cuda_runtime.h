// cuda_runtime.h: the SIMT emulator provides this header through kbsimt_cuda.h.
#include "kbsimt_cuda.h"
