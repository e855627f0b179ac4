// Kernels inside NVTX ranges of a named domain `LLM`: push/pop ranges (`request/prefill`,
// `request/decode`) and start/end ranges (`batch`, and `phase` that overlaps `prefill` and outlives it),
// plus default-domain push/pop ranges around them. No PyTorch: the process loads no libcupti of its own.
// Build: nvcc -O2 -o domain_ranges domain_ranges.cu -ldl
#include <cstdio>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void add(float *x, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b;
}

static nvtxEventAttributes_t named(const char *name) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return a;
}

int main() {
  const int n = 1 << 20;
  float *x;
  cudaMalloc(&x, n * sizeof(float));
  scale<<<n / 256, 256>>>(x, 1.0f, n);  // outside every range
  cudaDeviceSynchronize();
  nvtxDomainHandle_t llm = nvtxDomainCreateA("LLM");
  nvtxEventAttributes_t batch = named("batch"), request = named("request"), prefill = named("prefill"),
                        decode = named("decode"), phase = named("phase");
  for (int step = 0; step < 2; ++step) {
    nvtxRangePushA("step");
    nvtxRangeId_t b = nvtxDomainRangeStartEx(llm, &batch);
    nvtxDomainRangePushEx(llm, &request);
    nvtxDomainRangePushEx(llm, &prefill);
    for (int i = 0; i < 3; ++i) scale<<<n / 256, 256>>>(x, 1.001f, n);
    nvtxRangeId_t p = nvtxDomainRangeStartEx(llm, &phase);
    add<<<n / 128, 128>>>(x, 0.5f, n);
    nvtxDomainRangePop(llm);  // prefill
    nvtxDomainRangePushEx(llm, &decode);
    for (int i = 0; i < 4; ++i) add<<<n / 256, 256>>>(x, 0.25f, n);
    nvtxDomainRangeEnd(llm, p);
    scale<<<n / 512, 512>>>(x, 0.999f, n);
    nvtxDomainRangePop(llm);  // decode
    nvtxDomainRangePop(llm);  // request
    nvtxDomainRangeEnd(llm, b);
    nvtxRangePop();  // step
  }
  cudaDeviceSynchronize();
  cudaFree(x);
  std::printf("done\n");
  return 0;
}
