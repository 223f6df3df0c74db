/*===- tile_runtime.h - The Tile runtime's C interface -------------*- C
-*-===*\
 *
 * The one runtime that launches Tile's compiled kernels, as a C interface in
 * libtile_runtime.so: Python's tile.runtime calls it through ctypes, and it
 * shares its code with tile-run (tile/Runtime/: Bundle.h selects, Launch.h
 * binds, checks and computes grids, CudaDriver.h launches). It needs only
 * the NVIDIA driver, loaded on first launch (or TMA descriptor).
 *
 * Every function that can fail returns 0 on success and a TileError code on
 * failure; tileLastError() then says why (per thread). Kernels belong to
 * their bundle: they live until tileBundleClose.
 *
\*===----------------------------------------------------------------------===*/

#ifndef TILE_RUNTIME_TILE_RUNTIME_H
#define TILE_RUNTIME_TILE_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TILE_RUNTIME_EXPORTS)
#define TILE_RUNTIME_API __attribute__((visibility("default")))
#else
#define TILE_RUNTIME_API
#endif

/* Raised when a function changes meaning; readers check it. */
#define TILE_RUNTIME_ABI_VERSION 2

/* What failed: the caller's request (a bad argument, no such variant), or
 * the GPU (no driver, a load or launch the driver refused). */
enum TileError { TILE_ERROR_REQUEST = 1, TILE_ERROR_DEVICE = 2 };

typedef struct TileBundle TileBundle;
typedef struct TileKernel TileKernel;

enum TileArgKind { TILE_ARG_POINTER = 0, TILE_ARG_INT = 1, TILE_ARG_FLOAT = 2 };

/* One argument, 16 bytes: a device address with the code of its element
 * type (tileDTypeCode), an integer, or a float. */
typedef struct TileArg {
  int32_t kind;
  int32_t dtype;
  union {
    uint64_t address;
    int64_t integer;
    double real;
  } value;
} TileArg;

TILE_RUNTIME_API int tileRuntimeAbiVersion(void);
/* Why this thread's last failing call failed. */
TILE_RUNTIME_API const char *tileLastError(void);
/* The code of an element type ("fp16", "bf16", "fp32", "i32", ...), or -1. */
TILE_RUNTIME_API int tileDTypeCode(const char *name);

/* Opens a folder of compiled kernels (their <name>.json metadata). Files
 * that are no kernel metadata are skipped: tileBundleWarnings lists them. */
TILE_RUNTIME_API int tileBundleOpen(const char *directory, TileBundle **bundle);
TILE_RUNTIME_API void tileBundleClose(TileBundle *bundle);
TILE_RUNTIME_API const char *tileBundleWarnings(const TileBundle *bundle);
TILE_RUNTIME_API int tileBundleNumKernels(const TileBundle *bundle);
TILE_RUNTIME_API const TileKernel *tileBundleKernel(const TileBundle *bundle,
                                                    int index);
/* The variant named `name`; 1 (and no error) when there is none. */
TILE_RUNTIME_API int tileBundleFind(const TileBundle *bundle, const char *name,
                                    const TileKernel **kernel);
/* The variant of `family` for `element_type` (the element type of its first
 * pointer parameter; NULL: any) whose constexprs `key_names` equal
 * `key_values`, compiled for the device of compute capability
 * `device_major`.`device_minor` (negative: no device, the interpreter; the
 * environment's TILE_TARGET, if set, names the target to take), and, among
 * several, the one for sequences of `length` tokens (its max_n_ctx; a
 * negative length: the general variant). */
TILE_RUNTIME_API int tileBundleSelect(const TileBundle *bundle,
                                      const char *family,
                                      const char *element_type, int num_keys,
                                      const char *const *key_names,
                                      const int64_t *key_values, int64_t length,
                                      int device_major, int device_minor,
                                      const TileKernel **kernel);

TILE_RUNTIME_API const char *tileKernelName(const TileKernel *kernel);
TILE_RUNTIME_API const char *tileKernelFamily(const TileKernel *kernel);
TILE_RUNTIME_API const char *tileKernelMetadataPath(const TileKernel *kernel);
TILE_RUNTIME_API int tileKernelNumWarps(const TileKernel *kernel);
/* Whether the kernel has GPU code (a cubin or PTX beside its metadata). */
TILE_RUNTIME_API int tileKernelHasGpuCode(const TileKernel *kernel);
TILE_RUNTIME_API int tileKernelNumParams(const TileKernel *kernel);
/* A parameter's name, type and divisibility; "" (0) past the last. */
TILE_RUNTIME_API const char *tileKernelParamName(const TileKernel *kernel,
                                                 int index);
/* "*fp16", "i32", "fp32" */
TILE_RUNTIME_API const char *tileKernelParamType(const TileKernel *kernel,
                                                 int index);
TILE_RUNTIME_API int64_t tileKernelParamDivisibility(const TileKernel *kernel,
                                                     int index);
/* An integer (or boolean) constexpr; 1 (and no error) when it has none. */
TILE_RUNTIME_API int tileKernelConstexprInt(const TileKernel *kernel,
                                            const char *name, int64_t *value);
/* The kernel's whole metadata file, as text. */
TILE_RUNTIME_API const char *tileKernelMetadata(const TileKernel *kernel);

/* Checks arguments (in parameter order) against the kernel's parameters and
 * computes the grid from its launch spec, `num_sms` the multiprocessor
 * count a spec may read (NUM_SMS; 0: none given, an error for such a spec):
 * what tileLaunch does before it launches. `grid` (3 values) may be NULL. */
TILE_RUNTIME_API int tileCheck(const TileKernel *kernel, int64_t num_sms,
                               int num_args, const TileArg *args,
                               uint32_t *grid);
/* The multiprocessor count of CUDA device `device`: what tileLaunch's
 * grids read as NUM_SMS. */
TILE_RUNTIME_API int tileMultiprocessorCount(int device, int64_t *count);
/* Checks, computes the grid, and launches the kernel on `stream` (a
 * CUstream; NULL: the default stream) of CUDA device `device`, in its
 * primary context, loading it there on first use. */
TILE_RUNTIME_API int tileLaunch(const TileKernel *kernel, int device,
                                void *stream, int num_args,
                                const TileArg *args);
/* tileLaunch over `grid` (x, y, z: 3 values, each at least 1) chosen by the
 * caller instead of the kernel's launch spec, which the kernel need not
 * have: how a kernel is launched as Triton's are, kernel[grid](...). */
TILE_RUNTIME_API int tileLaunchGrid(const TileKernel *kernel, int device,
                                    void *stream, int num_args,
                                    const TileArg *args, const uint32_t *grid);

/* TMA descriptors (CUtensorMap) of tiled tensors, for kernels that copy
 * with Hopper's tensor memory accelerator. `dtype`: an element type code
 * (tileDTypeCode; fp8 travels as bytes). Dimensions are in the driver's
 * order, the innermost (contiguous) first: `global_dims` (elements) and
 * `box_dims` have `rank` (1 to 5) values, `global_strides` (bytes, of dims
 * 1..rank-1) rank - 1, `element_strides` rank or NULL (all 1).
 * `swizzle_bytes`: 0 (none), 32, 64 or 128; `l2_promotion_bytes`: 0 (none),
 * 64, 128 or 256; `oob_fill_nan`: 0 fills what lies outside the tensor with
 * zeros, 1 with the NaN that requests zero FMAs (floats only). */
#define TILE_TENSOR_MAP_BYTES 128

/* Checks a descriptor against cuTensorMapEncodeTiled's rules, as
 * tileEncodeTensorMap does first; the error names the rule broken
 * ("TMA descriptor: global address: ..."). Needs no driver. */
TILE_RUNTIME_API int
tileCheckTensorMap(int dtype, int rank, uint64_t global_address,
                   const uint64_t *global_dims, const uint64_t *global_strides,
                   const uint32_t *box_dims, const uint32_t *element_strides,
                   int swizzle_bytes, int l2_promotion_bytes, int oob_fill_nan);
/* Checks, then has the driver encode the descriptor into the
 * TILE_TENSOR_MAP_BYTES bytes at `tensor_map` (any alignment: the driver
 * writes 64-byte aligned memory, copied there). TILE_ERROR_REQUEST for a
 * broken rule, TILE_ERROR_DEVICE when the driver is missing, lacks the
 * entry point (before CUDA 12) or refuses; it may need a current CUDA
 * context (a launch's, or PyTorch's). */
TILE_RUNTIME_API int
tileEncodeTensorMap(int dtype, int rank, uint64_t global_address,
                    const uint64_t *global_dims, const uint64_t *global_strides,
                    const uint32_t *box_dims, const uint32_t *element_strides,
                    int swizzle_bytes, int l2_promotion_bytes, int oob_fill_nan,
                    void *tensor_map);

#ifdef __cplusplus
}
#endif

#endif /* TILE_RUNTIME_TILE_RUNTIME_H */
