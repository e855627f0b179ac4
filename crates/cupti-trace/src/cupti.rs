//! libcupti opened at run time: the process's own copy when it already loaded one (torch does), else
//! the one a host program named ([`prefer`]) or `$PROFILE_RUN_LIBCUPTI`, else the usual names and
//! the toolkit's path. The error says every place
//! looked in, for profile-run to show.

use std::ffi::c_void;
use std::sync::OnceLock;

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};

use crate::layout::{FLUSH_FORCED, KIND_CONCURRENT_KERNEL, KIND_DRIVER, KIND_MARKER, KIND_RUNTIME};

/// The environment variable that names a libcupti to load when the process has none loaded.
pub const LIBCUPTI_VAR: &str = "PROFILE_RUN_LIBCUPTI";

const SONAMES: [&str; 3] = ["libcupti.so.13", "libcupti.so.12", "libcupti.so"];
const TOOLKIT: [&str; 2] = [
    "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
    "/usr/local/cuda/lib64/libcupti.so",
];

type BufferRequested = unsafe extern "C" fn(*mut *mut u8, *mut usize, *mut usize);
type BufferCompleted = unsafe extern "C" fn(*mut c_void, u32, *mut u8, usize, usize);
type RegisterCallbacks = unsafe extern "C" fn(BufferRequested, BufferCompleted) -> u32;
type Enable = unsafe extern "C" fn(u32) -> u32;
type GetNextRecord = unsafe extern "C" fn(*mut u8, usize, *mut *mut u8) -> u32;
type FlushAll = unsafe extern "C" fn(u32) -> u32;
pub type NvtxInit = unsafe extern "C" fn(crate::nvtx::GetExportTable) -> i32;

/// The functions this library calls, resolved once.
pub struct Cupti {
    /// Kept so the functions below stay mapped; the profiling functions are resolved from it too.
    pub(crate) library: Library,
    /// The file that was loaded, as the trace names it.
    pub label: String,
    register_callbacks: RegisterCallbacks,
    enable: Enable,
    get_next_record: GetNextRecord,
    flush_all: FlushAll,
    pub nvtx_init: Option<NvtxInit>,
}

static CUPTI: OnceLock<Result<Cupti, String>> = OnceLock::new();

/// The libcupti a program that links this crate asks for (profile-run's
/// `pipeline.ncu.trace.libcupti`), in place of `$PROFILE_RUN_LIBCUPTI`.
static PREFERRED: OnceLock<String> = OnceLock::new();

/// Names the libcupti to load where the process has none loaded; only before the first load, and
/// only the first name counts.
pub fn prefer(path: &str) {
    let _ = PREFERRED.set(path.to_string());
}

/// The process's libcupti, loaded on first use.
pub fn get() -> Result<&'static Cupti, String> {
    CUPTI.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// The path of the loaded libcupti, from the process's memory map.
fn mapped_path() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            p.rsplit('/')
                .next()
                .is_some_and(|f| f.starts_with("libcupti.so"))
        })
        .map(String::from)
}

fn open(name: &str, flags: i32) -> Option<Library> {
    // SAFETY: loading libcupti runs its initialisers, which have no preconditions.
    unsafe { Library::open(Some(name), flags) }.ok()
}

fn load() -> Result<Cupti, String> {
    let mut looked = Vec::new();
    let mut found = None;
    for soname in SONAMES {
        if let Some(lib) = open(soname, RTLD_NOW | libc::RTLD_NOLOAD) {
            found = Some(lib);
            break;
        }
    }
    looked.push(format!(
        "a libcupti already loaded by the process ({})",
        SONAMES.join(", ")
    ));
    // Named either way, it is the variable the traced process gets from the same setting.
    let explicit = PREFERRED
        .get()
        .cloned()
        .or_else(|| std::env::var(LIBCUPTI_VAR).ok().filter(|p| !p.is_empty()));
    if found.is_none() {
        if let Some(path) = &explicit {
            found = open(path, RTLD_NOW | RTLD_GLOBAL);
            looked.push(format!("{path} (${LIBCUPTI_VAR})"));
        }
    }
    for name in SONAMES.iter().chain(&TOOLKIT) {
        if found.is_some() {
            break;
        }
        found = open(name, RTLD_NOW | RTLD_GLOBAL);
        looked.push(name.to_string());
    }
    let Some(library) = found else {
        return Err(format!(
            "could not load libcupti; looked for {}. Set pipeline.ncu.trace.libcupti to the libcupti the workload uses (torch: <env>/lib/python3.*/site-packages/nvidia/cu13/lib/libcupti.so.13), or pipeline.ncu.timing=ncu",
            looked.join(", ")
        ));
    };
    resolve(library)
}

fn resolve(library: Library) -> Result<Cupti, String> {
    let label = mapped_path().unwrap_or_else(|| "libcupti".into());
    let missing = |name: &str| format!("{label} has no {name}: it is not a usable libcupti");
    // SAFETY: each symbol is declared with the signature of CUPTI's own header (cupti_activity.h).
    unsafe {
        let register_callbacks = *library
            .get::<RegisterCallbacks>(b"cuptiActivityRegisterCallbacks\0")
            .map_err(|_| missing("cuptiActivityRegisterCallbacks"))?;
        let enable = *library
            .get::<Enable>(b"cuptiActivityEnable\0")
            .map_err(|_| missing("cuptiActivityEnable"))?;
        let get_next_record = *library
            .get::<GetNextRecord>(b"cuptiActivityGetNextRecord\0")
            .map_err(|_| missing("cuptiActivityGetNextRecord"))?;
        let flush_all = *library
            .get::<FlushAll>(b"cuptiActivityFlushAll\0")
            .map_err(|_| missing("cuptiActivityFlushAll"))?;
        let nvtx_init = library
            .get::<NvtxInit>(b"InitializeInjectionNvtx2\0")
            .ok()
            .map(|s| *s);
        Ok(Cupti {
            library,
            label,
            register_callbacks,
            enable,
            get_next_record,
            flush_all,
            nvtx_init,
        })
    }
}

/// Registers the buffer callbacks and enables the four activity kinds.
pub fn enable(cupti: &'static Cupti) -> Result<(), String> {
    // SAFETY: the callbacks match CUPTI's buffer-callback signatures.
    let code = unsafe { (cupti.register_callbacks)(buffer_requested, buffer_completed) };
    if code != 0 {
        return Err(format!(
            "{}: cuptiActivityRegisterCallbacks failed with CUPTI error {code}",
            cupti.label
        ));
    }
    for kind in [
        KIND_CONCURRENT_KERNEL,
        KIND_RUNTIME,
        KIND_DRIVER,
        KIND_MARKER,
    ] {
        // SAFETY: plain call with a valid activity kind.
        let code = unsafe { (cupti.enable)(kind) };
        if code != 0 {
            return Err(format!(
                "{}: cuptiActivityEnable({kind}) failed with CUPTI error {code} (another profiler attached to the process, such as ncu or nsys, holds CUPTI)",
                cupti.label
            ));
        }
    }
    Ok(())
}

impl Cupti {
    /// Hands over every buffer, those still being filled included.
    pub fn flush(&self) {
        // SAFETY: plain call.
        unsafe { (self.flush_all)(FLUSH_FORCED) };
    }
}

/// Each buffer: 8 MiB, 8-byte aligned (CUPTI's requirement), as u64 words.
const BUFFER_WORDS: usize = 1 << 20;

unsafe extern "C" fn buffer_requested(buffer: *mut *mut u8, size: *mut usize, max: *mut usize) {
    let mut words = vec![0u64; BUFFER_WORDS];
    let ptr = words.as_mut_ptr();
    std::mem::forget(words);
    // SAFETY: CUPTI passes valid out-pointers.
    unsafe {
        *buffer = ptr.cast();
        *size = BUFFER_WORDS * 8;
        *max = 0;
    }
}

unsafe extern "C" fn buffer_completed(
    _context: *mut c_void,
    _stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    if buffer.is_null() {
        return;
    }
    if let Ok(cupti) = get() {
        // SAFETY: CUPTI filled `valid` bytes of the buffer handed out by `buffer_requested`.
        let bytes = unsafe { std::slice::from_raw_parts(buffer, valid) };
        let mut trace = crate::trace();
        let mut record: *mut u8 = std::ptr::null_mut();
        // SAFETY: CUPTI walks its own records in the buffer; `record` stays inside it.
        while unsafe { (cupti.get_next_record)(buffer, valid, &mut record) } == 0 {
            let at = (record as usize).wrapping_sub(buffer as usize);
            if let Some(decoded) = bytes.get(at..).and_then(crate::records::decode) {
                // SAFETY: the record's strings are CUPTI's, alive while the buffer is processed.
                unsafe { crate::absorb(&mut trace, decoded) };
            }
        }
    }
    // SAFETY: the buffer is the Vec<u64> of `buffer_requested`, given back once.
    drop(unsafe { Vec::from_raw_parts(buffer.cast::<u64>(), BUFFER_WORDS, BUFFER_WORDS) });
}
