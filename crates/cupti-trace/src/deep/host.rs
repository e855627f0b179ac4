//! CUPTI's Profiler Host API: a metric set's configuration image and pass count for a chip (no GPU
//! needed), and the evaluation of collected counter data into metric values.

use std::ffi::{c_char, CString};

use super::calls::Calls;
use super::ffi::*;

/// `CUPTI_PROFILER_TYPE_RANGE_PROFILER`.
pub const RANGE_PROFILER: u32 = 0;

/// Metric names as C strings, and the array of pointers CUPTI takes.
pub struct Metrics {
    pub names: Vec<String>,
    _owned: Vec<CString>,
    pointers: Vec<*const c_char>,
}

// SAFETY: the pointers point into `_owned`, which moves with them and is never changed.
unsafe impl Send for Metrics {}

impl Metrics {
    pub fn new(names: &[String]) -> Result<Metrics, String> {
        let owned = names
            .iter()
            .map(|n| CString::new(n.as_str()).map_err(|_| format!("metric {n:?} holds a NUL")))
            .collect::<Result<Vec<_>, _>>()?;
        let pointers = owned.iter().map(|c| c.as_ptr()).collect();
        Ok(Metrics {
            names: names.to_vec(),
            _owned: owned,
            pointers,
        })
    }

    pub fn as_ptr(&self) -> *const *const c_char {
        self.pointers.as_ptr()
    }

    pub fn count(&self) -> usize {
        self.pointers.len()
    }
}

/// A buffer CUPTI fills, 8-byte aligned as its images must be.
pub struct Image {
    words: Vec<u64>,
    len: usize,
}

impl Image {
    pub fn zeroed(len: usize) -> Image {
        Image {
            words: vec![0; len.div_ceil(8)],
            len,
        }
    }

    pub fn ptr(&mut self) -> *mut u8 {
        self.words.as_mut_ptr().cast()
    }

    pub fn bytes(&self) -> usize {
        self.len
    }
}

/// A host object for one chip, released on drop.
pub struct Host {
    calls: &'static Calls,
    object: *mut std::ffi::c_void,
}

// SAFETY: CUPTI's host object is plain memory used under the library's one lock.
unsafe impl Send for Host {}

impl Host {
    /// `availability`: the context's counter availability image, or `None` for a chip alone.
    pub fn new(
        calls: &'static Calls,
        chip: &str,
        availability: Option<&mut Image>,
    ) -> Result<Host, String> {
        let chip_c = CString::new(chip).map_err(|_| "chip name holds a NUL".to_string())?;
        let mut p = HostInitialize::new();
        p.profiler_type = RANGE_PROFILER;
        p.chip = chip_c.as_ptr();
        p.availability = availability.map_or(std::ptr::null(), |a| a.ptr().cast_const());
        // SAFETY: a valid parameter struct; the strings live across the call.
        calls.check(&format!("cuptiProfilerHostInitialize({chip})"), unsafe {
            (calls.host_initialize)(&mut p)
        })?;
        Ok(Host {
            calls,
            object: p.host,
        })
    }

    /// The configuration image of `metrics`; an unknown metric is named in the error.
    pub fn config_image(&self, metrics: &Metrics) -> Result<Image, String> {
        let calls = self.calls;
        let mut add = ConfigAddMetrics::new();
        add.host = self.object;
        add.names = metrics.as_ptr();
        add.count = metrics.count();
        // SAFETY: valid parameters; the names live in `metrics`.
        if unsafe { (calls.config_add_metrics)(&mut add) } != 0 {
            return Err(self.which_metric_fails(metrics));
        }
        let mut size = ConfigImageSize::new();
        size.host = self.object;
        // SAFETY: valid parameters.
        calls.check("cuptiProfilerHostGetConfigImageSize", unsafe {
            (calls.config_image_size)(&mut size)
        })?;
        let mut image = Image::zeroed(size.size);
        let mut get = ConfigImage::new();
        get.host = self.object;
        get.size = image.bytes();
        get.image = image.ptr();
        // SAFETY: the image holds `size` bytes.
        calls.check("cuptiProfilerHostGetConfigImage", unsafe {
            (calls.config_image)(&mut get)
        })?;
        Ok(image)
    }

    /// Adds the metrics one by one to a fresh host object to name the first the chip refuses.
    fn which_metric_fails(&self, metrics: &Metrics) -> String {
        for name in &metrics.names {
            let one = Metrics::new(std::slice::from_ref(name));
            let mut add = ConfigAddMetrics::new();
            add.host = self.object;
            let Ok(one) = one else { continue };
            add.names = one.as_ptr();
            add.count = 1;
            // SAFETY: valid parameters.
            if unsafe { (self.calls.config_add_metrics)(&mut add) } != 0 {
                return format!("CUPTI does not know the metric {name:?} on this chip (check its spelling with `ncu --query-metrics`)");
            }
        }
        "cuptiProfilerHostConfigAddMetrics refused the metric set".into()
    }

    /// The values of `metrics` in range `range` of a decoded counter data image.
    pub fn evaluate(
        &self,
        data: &mut Image,
        range: usize,
        metrics: &Metrics,
    ) -> Result<Vec<f64>, String> {
        let mut values = vec![0f64; metrics.count()];
        let mut p = Evaluate::new();
        p.host = self.object;
        p.size = data.bytes();
        p.data = data.ptr().cast_const();
        p.range = range;
        p.names = metrics.as_ptr();
        p.count = metrics.count();
        p.values = values.as_mut_ptr();
        // SAFETY: `values` holds one f64 per metric.
        self.calls
            .check("cuptiProfilerHostEvaluateToGpuValues", unsafe {
                (self.calls.evaluate)(&mut p)
            })?;
        Ok(values)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let mut p = HostDeinitialize::new();
        p.host = self.object;
        // SAFETY: the object came from cuptiProfilerHostInitialize and is released once.
        unsafe { (self.calls.host_deinitialize)(&mut p) };
    }
}

/// How many replay passes a configuration image takes.
pub fn passes_of(calls: &'static Calls, image: &mut Image) -> Result<u32, String> {
    let mut p = NumOfPasses::new();
    p.size = image.bytes();
    p.image = image.ptr();
    // SAFETY: the image is one CUPTI made.
    calls.check("cuptiProfilerHostGetNumOfPasses", unsafe {
        (calls.num_of_passes)(&mut p)
    })?;
    Ok(p.passes as u32)
}

/// Why a metric set's passes were not counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PassCountError {
    /// No usable libcupti or host API here: nothing is known of the metrics.
    Unavailable(String),
    /// The chip refused the metric set; the first metric it does not know is named.
    Refused(String),
}

impl std::fmt::Display for PassCountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PassCountError::Unavailable(why) | PassCountError::Refused(why) => f.write_str(why),
        }
    }
}

/// How many replay passes `metrics` take on `chip` (`GH100`), from the host API alone: no GPU and
/// no CUDA context needed, only the process's libcupti (see [`crate::cupti`]), which loads the
/// driver library.
pub fn pass_count(chip: &str, metrics: &[String]) -> Result<u32, PassCountError> {
    use PassCountError::{Refused, Unavailable};
    let calls = super::calls::get().map_err(Unavailable)?;
    let set = Metrics::new(metrics).map_err(Refused)?;
    let host = Host::new(calls, chip, None).map_err(Unavailable)?;
    match host.config_image(&set) {
        Ok(mut image) => passes_of(calls, &mut image).map_err(Unavailable),
        // Only a metric refused on its own, on a host object of its own, is the metric's fault.
        Err(why) => Err(refused_alone(calls, chip, metrics).unwrap_or(Unavailable(why))),
    }
}

/// The first of `metrics` that a fresh host object on `chip` refuses by itself.
fn refused_alone(calls: &'static Calls, chip: &str, metrics: &[String]) -> Option<PassCountError> {
    metrics.iter().find_map(|name| {
        let one = Metrics::new(std::slice::from_ref(name)).ok()?;
        let host = Host::new(calls, chip, None).ok()?;
        host.config_image(&one).err().map(|_| {
            PassCountError::Refused(format!(
                "CUPTI does not know the metric {name:?} on {chip} (check its spelling with `ncu --query-metrics`)"
            ))
        })
    })
}
