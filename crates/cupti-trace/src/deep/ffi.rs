//! CUPTI's profiling ABI as this library uses it: the parameter structs of the Range Profiler
//! (`cupti_range_profiler.h`), the Profiler Host API (`cupti_profiler_host.h`) and target API
//! (`cupti_profiler_target.h`, `cupti_target.h`), the callback data of `cupti_callbacks.h`, the
//! launch calls' parameters (`generated_cuda_meta.h`, `generated_cuda_runtime_api_meta.h`) and
//! NVTX's event attributes. Each struct is declared once, by [`c_struct!`], which also lists its
//! C name and field names, so `layout_check.c` prints the same offsets from the real headers and
//! the GPU machine's check compares them with `layout.expected`.

use std::ffi::{c_char, c_void};

/// One `NAME VALUE` line of the layout check and the C statement that prints it from the headers.
pub struct Check {
    pub label: String,
    pub value: usize,
    pub c: String,
}

/// A `#[repr(C)]` struct with its C name and field names: every field up to the last one read
/// (a `plain` struct may stop early, never skip one). `params` structs start with CUPTI's
/// `structSize` and `pPriv` and get [`new`](Self::new), which zeroes them and sets `structSize` to
/// the header's `*_STRUCT_SIZE` (the end of the last field).
macro_rules! c_struct {
    ($(#[$m:meta])* $kind:ident $name:ident = $c:ident { $($field:ident / $cf:ident : $ty:ty,)* }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub struct $name { $(pub $field: $ty,)* }

        impl $name {
            /// Where the last field ends: CUPTI's `*_STRUCT_SIZE` for a parameter struct.
            pub fn end() -> usize {
                let mut end = 0;
                $(end = end.max(std::mem::offset_of!($name, $field) + std::mem::size_of::<$ty>());)*
                end
            }

            pub fn checks(out: &mut Vec<Check>) {
                $(out.push(Check {
                    label: concat!(stringify!($c), ".", stringify!($cf)).to_string(),
                    value: std::mem::offset_of!($name, $field),
                    c: concat!("O(\"", stringify!($c), ".", stringify!($cf), "\", ", stringify!($c), ", ", stringify!($cf), ");").to_string(),
                });)*
                c_struct!(@size $kind $name $c out);
            }
        }
        c_struct!(@new $kind $name);
    };
    (@size params $name:ident $c:ident $out:ident) => {
        $out.push(Check {
            label: concat!(stringify!($c), ".STRUCT_SIZE").to_string(),
            value: $name::end(),
            c: concat!("V2(\"", stringify!($c), ".STRUCT_SIZE\", ", stringify!($c), "_STRUCT_SIZE);").to_string(),
        });
    };
    (@size plain $name:ident $c:ident $out:ident) => {};
    (@new params $name:ident) => {
        impl $name {
            /// Zeroed, `structSize` set.
            pub fn new() -> Self {
                // SAFETY: every field is an integer or a raw pointer, for which zero is valid.
                let mut p: Self = unsafe { std::mem::zeroed() };
                p.struct_size = Self::end();
                p
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }
    };
    (@new plain $name:ident) => {};
}

type Obj = *mut c_void;

c_struct! { params ProfilerInitialize = CUpti_Profiler_Initialize_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void,
} }
c_struct! { params DeviceSupported = CUpti_Profiler_DeviceSupported_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void,
    device / cuDevice: i32, is_supported / isSupported: u32, architecture / architecture: u32,
    sli / sli: u32, vgpu / vGpu: u32, confidential / confidentialCompute: u32, cmp / cmp: u32,
    wsl / wsl: u32, api / api: u32,
} }
c_struct! { params ChipName = CUpti_Device_GetChipName_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void,
    device_index / deviceIndex: usize, chip / pChipName: *const c_char,
} }
c_struct! { params CounterAvailability = CUpti_Profiler_GetCounterAvailability_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, ctx / ctx: *mut c_void,
    size / counterAvailabilityImageSize: usize, image / pCounterAvailabilityImage: *mut u8,
} }
c_struct! { params HostInitialize = CUpti_Profiler_Host_Initialize_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void,
    profiler_type / profilerType: u32, chip / pChipName: *const c_char,
    availability / pCounterAvailabilityImage: *const u8, host / pHostObject: Obj,
} }
c_struct! { params HostDeinitialize = CUpti_Profiler_Host_Deinitialize_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, host / pHostObject: Obj,
} }
c_struct! { params ConfigAddMetrics = CUpti_Profiler_Host_ConfigAddMetrics_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, host / pHostObject: Obj,
    names / ppMetricNames: *const *const c_char, count / numMetrics: usize,
} }
c_struct! { params ConfigImageSize = CUpti_Profiler_Host_GetConfigImageSize_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, host / pHostObject: Obj,
    size / configImageSize: usize,
} }
c_struct! { params ConfigImage = CUpti_Profiler_Host_GetConfigImage_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, host / pHostObject: Obj,
    size / configImageSize: usize, image / pConfigImage: *mut u8,
} }
c_struct! { params NumOfPasses = CUpti_Profiler_Host_GetNumOfPasses_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void,
    size / configImageSize: usize, image / pConfigImage: *mut u8, passes / numOfPasses: usize,
} }
c_struct! { params Evaluate = CUpti_Profiler_Host_EvaluateToGpuValues_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, host / pHostObject: Obj,
    data / pCounterDataImage: *const u8, size / counterDataImageSize: usize,
    range / rangeIndex: usize, names / ppMetricNames: *const *const c_char,
    count / numMetrics: usize, values / pMetricValues: *mut f64,
} }
c_struct! { params RangeEnable = CUpti_RangeProfiler_Enable_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, ctx / ctx: *mut c_void,
    object / pRangeProfilerObject: Obj,
} }
c_struct! { params RangeObject = CUpti_RangeProfiler_Start_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, object / pRangeProfilerObject: Obj,
} }
c_struct! { params RangeStop = CUpti_RangeProfiler_Stop_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, object / pRangeProfilerObject: Obj,
    pass_index / passIndex: usize, target_level / targetNestingLevel: usize,
    all_submitted / isAllPassSubmitted: u8,
} }
c_struct! { params RangeSetConfig = CUpti_RangeProfiler_SetConfig_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, object / pRangeProfilerObject: Obj,
    config_size / configSize: usize, config / pConfig: *const u8,
    data_size / counterDataImageSize: usize, data / pCounterDataImage: *mut u8,
    range / range: u32, replay / replayMode: u32, max_ranges / maxRangesPerPass: usize,
    levels / numNestingLevels: u16, min_level / minNestingLevel: u16, pass_index / passIndex: usize,
    target_level / targetNestingLevel: u16,
} }
c_struct! { params RangeDecode = CUpti_RangeProfiler_DecodeData_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, object / pRangeProfilerObject: Obj,
    dropped / numOfRangeDropped: usize,
} }
c_struct! { params CounterDataSize = CUpti_RangeProfiler_GetCounterDataSize_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, object / pRangeProfilerObject: Obj,
    names / pMetricNames: *const *const c_char, count / numMetrics: usize,
    max_ranges / maxNumOfRanges: usize, max_nodes / maxNumRangeTreeNodes: u32,
    size / counterDataSize: usize,
} }
c_struct! { params CounterDataInit = CUpti_RangeProfiler_CounterDataImage_Initialize_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, object / pRangeProfilerObject: Obj,
    size / counterDataSize: usize, data / pCounterData: *mut u8,
} }
c_struct! { params CounterDataInfo = CUpti_RangeProfiler_GetCounterDataInfo_Params {
    struct_size / structSize: usize, p_priv / pPriv: *mut c_void, data / pCounterDataImage: *const u8,
    size / counterDataImageSize: usize, ranges / numTotalRanges: usize,
} }
c_struct! {
    /// What a launch callback is given (`CUpti_CallbackData`).
    plain CallbackData = CUpti_CallbackData {
    site / callbackSite: u32, function / functionName: *const c_char,
    params / functionParams: *const c_void, returned / functionReturnValue: *mut c_void,
    symbol / symbolName: *const c_char, context / context: *mut c_void, context_uid / contextUid: u32,
    data / correlationData: *mut u64, correlation / correlationId: u32,
} }
c_struct! { plain DriverLaunch = cuLaunchKernel_params {
    function / f: *mut c_void, grid_x / gridDimX: u32, grid_y / gridDimY: u32, grid_z / gridDimZ: u32,
    block_x / blockDimX: u32, block_y / blockDimY: u32, block_z / blockDimZ: u32,
} }
c_struct! { plain DriverLaunchEx = cuLaunchKernelEx_params {
    config / config: *const DriverLaunchConfig, function / f: *mut c_void,
} }
c_struct! { plain DriverLaunchConfig = CUlaunchConfig {
    grid_x / gridDimX: u32, grid_y / gridDimY: u32, grid_z / gridDimZ: u32,
    block_x / blockDimX: u32, block_y / blockDimY: u32, block_z / blockDimZ: u32,
} }
c_struct! { plain RuntimeLaunch = cudaLaunchKernel_v7000_params {
    function / func: *const c_void, grid / gridDim: [u32; 3], block / blockDim: [u32; 3],
} }
c_struct! { plain RuntimeLaunchEx = cudaLaunchKernelExC_v11060_params {
    config / config: *const RuntimeLaunchConfig, function / func: *const c_void,
} }
c_struct! { plain RuntimeLaunchConfig = cudaLaunchConfig_t {
    grid / gridDim: [u32; 3], block / blockDim: [u32; 3],
} }
c_struct! {
    /// The first field of `cuGraphLaunch_params` and `cudaGraphLaunch_v10000_params` alike.
    plain GraphLaunch = cuGraphLaunch_params { exec / hGraph: *mut c_void, }
}
c_struct! { plain EventAttributes = nvtxEventAttributes_t {
    version / version: u16, size / size: u16, category / category: u32,
    color_type / colorType: i32, color / color: u32, payload_type / payloadType: i32,
    reserved / reserved0: i32, payload / payload: u64, message_type / messageType: i32,
    message / message: *const c_void,
} }

/// Every struct's checks, in `layout.expected` order.
pub fn checks() -> Vec<Check> {
    let mut out = Vec::new();
    ProfilerInitialize::checks(&mut out);
    DeviceSupported::checks(&mut out);
    ChipName::checks(&mut out);
    CounterAvailability::checks(&mut out);
    HostInitialize::checks(&mut out);
    HostDeinitialize::checks(&mut out);
    ConfigAddMetrics::checks(&mut out);
    ConfigImageSize::checks(&mut out);
    ConfigImage::checks(&mut out);
    NumOfPasses::checks(&mut out);
    Evaluate::checks(&mut out);
    RangeEnable::checks(&mut out);
    RangeObject::checks(&mut out);
    RangeStop::checks(&mut out);
    RangeSetConfig::checks(&mut out);
    RangeDecode::checks(&mut out);
    CounterDataSize::checks(&mut out);
    CounterDataInit::checks(&mut out);
    CounterDataInfo::checks(&mut out);
    CallbackData::checks(&mut out);
    DriverLaunch::checks(&mut out);
    DriverLaunchEx::checks(&mut out);
    DriverLaunchConfig::checks(&mut out);
    RuntimeLaunch::checks(&mut out);
    RuntimeLaunchEx::checks(&mut out);
    RuntimeLaunchConfig::checks(&mut out);
    GraphLaunch::checks(&mut out);
    EventAttributes::checks(&mut out);
    out
}
