/* Stand-in for the NVIDIA driver's libnvidia-ml.so.1 as a DGX Spark shows it: one GPU, an
 * "NVIDIA GB10", whose memory queries answer NVML_ERROR_NOT_SUPPORTED (unified memory; see
 * /work/shared/reference/spark-facts.md). Ray counts GPUs through this library
 * (ray/_private/accelerators/nvidia_gpu.py: nvmlInit, nvmlDeviceGetCount, nvmlDeviceGetName via its
 * vendored pynvml), so a Ray inside a test container sees the node's one GPU exactly as on a Spark.
 * The stand-in OCI hook (tests/cluster/hostbin/nvidia-container-runtime-hook) puts it into
 * containers started with --gpus, as the NVIDIA container toolkit mounts the real one. */
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
enum { OK = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, INSUFFICIENT_SIZE = 7 };

static int initialized;
static struct nvmlDevice_st { int index; } gb10 = {0};

static nvmlReturn_t copy(char *buf, unsigned int len, const char *text) {
    if (!buf) return INVALID_ARGUMENT;
    if (strlen(text) + 1 > len) return INSUFFICIENT_SIZE;
    strcpy(buf, text);
    return OK;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; initialized++; return OK; }
nvmlReturn_t nvmlInit_v2(void) { initialized++; return OK; }
nvmlReturn_t nvmlInit(void) { initialized++; return OK; }
nvmlReturn_t nvmlShutdown(void) {
    if (!initialized) return UNINITIALIZED;
    initialized--;
    return OK;
}

const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
    case OK: return "Success";
    case UNINITIALIZED: return "Uninitialized";
    case INVALID_ARGUMENT: return "Invalid Argument";
    case NOT_SUPPORTED: return "Not Supported";
    case INSUFFICIENT_SIZE: return "Insufficient Size";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int n) { return copy(v, n, "580.126.09"); }
nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int n) { return copy(v, n, "13.580.126.09"); }
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { if (!v) return INVALID_ARGUMENT; *v = 13000; return OK; }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialized) return UNINITIALIZED;
    if (!count) return INVALID_ARGUMENT;
    *count = 1;
    return OK;
}
nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return nvmlDeviceGetCount_v2(count); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (!initialized) return UNINITIALIZED;
    if (index != 0 || !device) return INVALID_ARGUMENT;
    *device = &gb10;
    return OK;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) { return nvmlDeviceGetHandleByIndex_v2(i, d); }

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int n) {
    if (d != &gb10) return INVALID_ARGUMENT;
    return copy(name, n, "NVIDIA GB10");
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int n) {
    if (d != &gb10) return INVALID_ARGUMENT;
    return copy(uuid, n, "GPU-6c1b3f0e-2a8d-4d1e-9b8e-0f1e2d3c4b5a");
}
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *index) {
    if (d != &gb10 || !index) return INVALID_ARGUMENT;
    *index = 0;
    return OK;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor) {
    if (d != &gb10 || !major || !minor) return INVALID_ARGUMENT;
    *major = 12;
    *minor = 1;
    return OK;
}
/* Unified memory: a GB10 reports no framebuffer of its own. */
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, void *memory) { (void)d; (void)memory; return NOT_SUPPORTED; }
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, void *memory) { (void)d; (void)memory; return NOT_SUPPORTED; }
