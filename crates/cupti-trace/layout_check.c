/* Prints the CUPTI and NVTX constants and record offsets profile-run's injection library relies on,
 * from the real headers, in the form of layout.expected (tests/manual/cupti/layout_check.sh diffs them). */
#include <stddef.h>
#include <stdio.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#define V(name) printf("%s %lu\n", #name, (unsigned long)(name))
#define O(label, type, field) printf("%s %lu\n", label, (unsigned long)offsetof(type, field))
#define S(label, type) printf("%s %lu\n", label, (unsigned long)sizeof(type))

int main(void) {
  V(CUPTI_ACTIVITY_KIND_KERNEL);
  V(CUPTI_ACTIVITY_KIND_DRIVER);
  V(CUPTI_ACTIVITY_KIND_RUNTIME);
  V(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  V(CUPTI_ACTIVITY_KIND_MARKER);
  V(CUPTI_ACTIVITY_FLAG_MARKER_START);
  V(CUPTI_ACTIVITY_FLAG_MARKER_END);
  V(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  O("kernel.registersPerThread", CUpti_ActivityKernel10, registersPerThread);
  O("kernel.start", CUpti_ActivityKernel10, start);
  O("kernel.end", CUpti_ActivityKernel10, end);
  O("kernel.deviceId", CUpti_ActivityKernel10, deviceId);
  O("kernel.contextId", CUpti_ActivityKernel10, contextId);
  O("kernel.streamId", CUpti_ActivityKernel10, streamId);
  O("kernel.gridX", CUpti_ActivityKernel10, gridX);
  O("kernel.blockX", CUpti_ActivityKernel10, blockX);
  O("kernel.staticSharedMemory", CUpti_ActivityKernel10, staticSharedMemory);
  O("kernel.dynamicSharedMemory", CUpti_ActivityKernel10, dynamicSharedMemory);
  O("kernel.correlationId", CUpti_ActivityKernel10, correlationId);
  O("kernel.name", CUpti_ActivityKernel10, name);
  O("api.cbid", CUpti_ActivityAPI, cbid);
  O("api.start", CUpti_ActivityAPI, start);
  O("api.end", CUpti_ActivityAPI, end);
  O("api.processId", CUpti_ActivityAPI, processId);
  O("api.threadId", CUpti_ActivityAPI, threadId);
  O("api.correlationId", CUpti_ActivityAPI, correlationId);
  S("api.sizeof", CUpti_ActivityAPI);
  O("marker.flags", CUpti_ActivityMarker2, flags);
  O("marker.timestamp", CUpti_ActivityMarker2, timestamp);
  O("marker.id", CUpti_ActivityMarker2, id);
  O("marker.objectKind", CUpti_ActivityMarker2, objectKind);
  O("marker.threadId", CUpti_ActivityMarker2, objectId.pt.threadId);
  O("marker.name", CUpti_ActivityMarker2, name);
  O("marker.domain", CUpti_ActivityMarker2, domain);
  S("marker.sizeof", CUpti_ActivityMarker2);
  V(NVTX_ETID_CALLBACKS);
  V(NVTX_CB_MODULE_CORE);
  V(NVTX_CB_MODULE_CORE2);
  V(NVTX_CBID_CORE_RangeStartEx);
  V(NVTX_CBID_CORE_RangeStartA);
  V(NVTX_CBID_CORE_RangeStartW);
  V(NVTX_CBID_CORE2_DomainRangeStartEx);
  return 0;
}
