//! One CUDA context's Range Profiler: auto range (one range per kernel) and kernel replay (CUPTI
//! replays each profiled kernel once per pass, saving and restoring the memory it writes, inside
//! the launch call). Configured once; each profiled launch resets the counter data, starts, and
//! after the launch stops, decodes and evaluates every range it holds.

use std::ffi::{c_void, CStr};

use super::calls::Calls;
use super::ffi::*;
use super::host::{passes_of, Host, Image, Metrics};

/// `CUPTI_AutoRange` and `CUPTI_KernelReplay`.
pub const AUTO_RANGE: u32 = 1;
pub const KERNEL_REPLAY: u32 = 2;
/// `CUPTI_PROFILER_RANGE_PROFILING` and `CUPTI_PROFILER_CONFIGURATION_SUPPORTED`.
const RANGE_PROFILING_API: u32 = 0;
const SUPPORTED: u32 = 3;
/// Ranges one profiled launch may hold where CUDA graph launches are profiled: a graph's kernel
/// nodes. A kernel launch is one range.
pub const MAX_GRAPH_RANGES: usize = 64;

pub struct Context {
    calls: &'static Calls,
    object: *mut c_void,
    host: Host,
    config: Image,
    data: Image,
    max_ranges: usize,
    pub device: u32,
    pub chip: String,
    pub passes: u32,
}

// SAFETY: the profiler object and images are used only under the library's one lock.
unsafe impl Send for Context {}

impl Context {
    /// Sets up the Range Profiler on `ctx` for `metrics`; the error says why the device or the
    /// metric set cannot be profiled.
    pub fn open(
        calls: &'static Calls,
        ctx: *mut c_void,
        metrics: &Metrics,
        graphs: bool,
    ) -> Result<Context, String> {
        let max_ranges = if graphs { MAX_GRAPH_RANGES } else { 1 };
        let mut device = 0u32;
        // SAFETY: a live context from the launch callback.
        calls.check("cuptiGetDeviceId", unsafe {
            (calls.device_id)(ctx, &mut device)
        })?;
        let mut support = DeviceSupported::new();
        support.device = device as i32;
        support.api = RANGE_PROFILING_API;
        // SAFETY: valid parameters.
        calls.check("cuptiProfilerDeviceSupported", unsafe {
            (calls.device_supported)(&mut support)
        })?;
        if support.is_supported != SUPPORTED {
            return Err(format!(
                "device {device} cannot be range-profiled (architecture {}, vGPU {}, confidential compute {}, WSL {}; 3 is supported)",
                support.architecture, support.vgpu, support.confidential, support.wsl
            ));
        }
        let mut chip = ChipName::new();
        chip.device_index = device as usize;
        // SAFETY: valid parameters; CUPTI returns a static string.
        calls.check("cuptiDeviceGetChipName", unsafe {
            (calls.chip_name)(&mut chip)
        })?;
        // SAFETY: non-null, NUL-terminated (checked by the call's success).
        let chip = unsafe { CStr::from_ptr(chip.chip) }
            .to_string_lossy()
            .into_owned();
        let mut availability = counter_availability(calls, ctx)?;
        let host = Host::new(calls, &chip, Some(&mut availability))?;
        let mut config = host.config_image(metrics)?;
        let passes = passes_of(calls, &mut config)?;
        let mut enable = RangeEnable::new();
        enable.ctx = ctx;
        // SAFETY: valid parameters.
        calls.check("cuptiRangeProfilerEnable", unsafe {
            (calls.range_enable)(&mut enable)
        })?;
        let mut size = CounterDataSize::new();
        size.object = enable.object;
        size.names = metrics.as_ptr();
        size.count = metrics.count();
        size.max_ranges = max_ranges;
        size.max_nodes = max_ranges as u32;
        // SAFETY: valid parameters.
        calls.check("cuptiRangeProfilerGetCounterDataSize", unsafe {
            (calls.counter_data_size)(&mut size)
        })?;
        Ok(Context {
            calls,
            object: enable.object,
            host,
            config,
            data: Image::zeroed(size.size),
            max_ranges,
            device,
            chip,
            passes,
        })
    }

    /// Resets the counter data and starts profiling: the next launch on the context is measured.
    /// Configuring again each time costs 0.1–0.2 ms on an H200 (docs/ncu-notes.md).
    pub fn begin(&mut self) -> Result<(), String> {
        let calls = self.calls;
        let mut init = CounterDataInit::new();
        init.object = self.object;
        init.size = self.data.bytes();
        init.data = self.data.ptr();
        // SAFETY: the image holds `size` bytes.
        calls.check("cuptiRangeProfilerCounterDataImageInitialize", unsafe {
            (calls.counter_data_init)(&mut init)
        })?;
        let mut set = RangeSetConfig::new();
        set.object = self.object;
        set.config_size = self.config.bytes();
        set.config = self.config.ptr().cast_const();
        set.data_size = self.data.bytes();
        set.data = self.data.ptr();
        set.range = AUTO_RANGE;
        set.replay = KERNEL_REPLAY;
        set.max_ranges = self.max_ranges;
        set.levels = 1;
        set.min_level = 1;
        // SAFETY: both images live in `self` for as long as the profiler object.
        calls.check("cuptiRangeProfilerSetConfig", unsafe {
            (calls.range_set_config)(&mut set)
        })?;
        let mut start = RangeObject::new();
        start.object = self.object;
        // SAFETY: valid parameters.
        calls.check("cuptiRangeProfilerStart", unsafe {
            (calls.range_start)(&mut start)
        })
    }

    /// Stops profiling and returns each measured range's metric values, in range order.
    pub fn end(&mut self, metrics: &Metrics) -> Result<Vec<Vec<f64>>, String> {
        let calls = self.calls;
        let mut stop = RangeStop::new();
        stop.object = self.object;
        // SAFETY: valid parameters.
        calls.check("cuptiRangeProfilerStop", unsafe {
            (calls.range_stop)(&mut stop)
        })?;
        let mut decode = RangeDecode::new();
        decode.object = self.object;
        // SAFETY: valid parameters.
        calls.check("cuptiRangeProfilerDecodeData", unsafe {
            (calls.range_decode)(&mut decode)
        })?;
        let mut info = CounterDataInfo::new();
        info.size = self.data.bytes();
        info.data = self.data.ptr().cast_const();
        // SAFETY: a decoded image.
        calls.check("cuptiRangeProfilerGetCounterDataInfo", unsafe {
            (calls.counter_data_info)(&mut info)
        })?;
        if stop.all_submitted == 0 {
            return Err(format!(
                "kernel replay left passes unsubmitted (next pass {}); the launch's values are incomplete",
                stop.pass_index
            ));
        }
        (0..info.ranges)
            .map(|range| self.host.evaluate(&mut self.data, range, metrics))
            .collect()
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let mut p = RangeObject::new();
        p.object = self.object;
        // SAFETY: the object came from cuptiRangeProfilerEnable and is released once.
        unsafe { (self.calls.range_disable)(&mut p) };
    }
}

fn counter_availability(calls: &'static Calls, ctx: *mut c_void) -> Result<Image, String> {
    let mut p = CounterAvailability::new();
    p.ctx = ctx;
    // SAFETY: a null image asks for the size.
    calls.check("cuptiProfilerGetCounterAvailability", unsafe {
        (calls.counter_availability)(&mut p)
    })?;
    let mut image = Image::zeroed(p.size);
    p.image = image.ptr();
    // SAFETY: the image holds `size` bytes.
    calls.check("cuptiProfilerGetCounterAvailability", unsafe {
        (calls.counter_availability)(&mut p)
    })?;
    Ok(image)
}

/// Calls `cuptiProfilerInitialize` once per process, before any profiler object.
pub fn initialize(calls: &'static Calls) -> Result<(), String> {
    let mut p = ProfilerInitialize::new();
    // SAFETY: valid parameters.
    calls.check("cuptiProfilerInitialize", unsafe {
        (calls.profiler_initialize)(&mut p)
    })
}
