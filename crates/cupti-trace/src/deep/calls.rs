//! The profiling functions of the process's libcupti, resolved once from the library the trace
//! already opened. A libcupti without the Range Profiler (before CUDA 12.6) is named in the error.

use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

use super::ffi::*;

type Call<P> = unsafe extern "C" fn(*mut P) -> u32;
pub type Callback = unsafe extern "C" fn(*mut c_void, u32, u32, *const c_void);

macro_rules! calls {
    ($($field:ident : $ty:ty = $sym:literal,)*) => {
        /// CUPTI's profiling entry points.
        pub struct Calls { $(pub $field: $ty,)* }

        fn resolve(library: &libloading::os::unix::Library, label: &str) -> Result<Calls, String> {
            // SAFETY: each symbol is declared with the signature of CUPTI's header.
            unsafe {
                Ok(Calls { $($field: *library.get::<$ty>(concat!($sym, "\0").as_bytes()).map_err(|_| {
                    format!("{label} has no {}: in-process counters need CUPTI's Range Profiler (CUDA 12.6 or later)", $sym)
                })?,)* })
            }
        }
    };
}

calls! {
    profiler_initialize: Call<ProfilerInitialize> = "cuptiProfilerInitialize",
    device_supported: Call<DeviceSupported> = "cuptiProfilerDeviceSupported",
    chip_name: Call<ChipName> = "cuptiDeviceGetChipName",
    counter_availability: Call<CounterAvailability> = "cuptiProfilerGetCounterAvailability",
    host_initialize: Call<HostInitialize> = "cuptiProfilerHostInitialize",
    host_deinitialize: Call<HostDeinitialize> = "cuptiProfilerHostDeinitialize",
    config_add_metrics: Call<ConfigAddMetrics> = "cuptiProfilerHostConfigAddMetrics",
    config_image_size: Call<ConfigImageSize> = "cuptiProfilerHostGetConfigImageSize",
    config_image: Call<ConfigImage> = "cuptiProfilerHostGetConfigImage",
    num_of_passes: Call<NumOfPasses> = "cuptiProfilerHostGetNumOfPasses",
    evaluate: Call<Evaluate> = "cuptiProfilerHostEvaluateToGpuValues",
    range_enable: Call<RangeEnable> = "cuptiRangeProfilerEnable",
    range_disable: Call<RangeObject> = "cuptiRangeProfilerDisable",
    range_start: Call<RangeObject> = "cuptiRangeProfilerStart",
    range_stop: Call<RangeStop> = "cuptiRangeProfilerStop",
    range_set_config: Call<RangeSetConfig> = "cuptiRangeProfilerSetConfig",
    range_decode: Call<RangeDecode> = "cuptiRangeProfilerDecodeData",
    counter_data_size: Call<CounterDataSize> = "cuptiRangeProfilerGetCounterDataSize",
    counter_data_init: Call<CounterDataInit> = "cuptiRangeProfilerCounterDataImageInitialize",
    counter_data_info: Call<CounterDataInfo> = "cuptiRangeProfilerGetCounterDataInfo",
    device_id: unsafe extern "C" fn(*mut c_void, *mut u32) -> u32 = "cuptiGetDeviceId",
    subscribe: unsafe extern "C" fn(*mut *mut c_void, Callback, *mut c_void) -> u32 = "cuptiSubscribe",
    enable_callback: unsafe extern "C" fn(u32, *mut c_void, u32, u32) -> u32 = "cuptiEnableCallback",
    result_string: unsafe extern "C" fn(u32, *mut *const c_char) -> u32 = "cuptiGetResultString",
}

static CALLS: OnceLock<Result<Calls, String>> = OnceLock::new();

/// The process's libcupti's profiling functions, resolved on first use.
pub fn get() -> Result<&'static Calls, String> {
    CALLS
        .get_or_init(|| {
            let cupti = crate::cupti::get()?;
            resolve(&cupti.library, &cupti.label)
        })
        .as_ref()
        .map_err(Clone::clone)
}

impl Calls {
    /// `Ok` for CUPTI_SUCCESS, else an error naming the call and CUPTI's own words for the code.
    pub fn check(&self, what: &str, code: u32) -> Result<(), String> {
        if code == 0 {
            return Ok(());
        }
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: CUPTI writes a pointer to a static string.
        let known = unsafe { (self.result_string)(code, &mut text) } == 0 && !text.is_null();
        let words = if known {
            // SAFETY: a NUL-terminated static string of CUPTI's.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        } else {
            "unknown error".into()
        };
        Err(format!("{what} failed with CUPTI error {code} ({words})"))
    }
}
