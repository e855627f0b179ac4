//! profile-run's CUPTI injection library. The CUDA driver loads it through `CUDA_INJECTION64_PATH`
//! and calls [`InitializeInjection`]; NVTX loads it through `NVTX_INJECTION64_PATH` and calls
//! [`InitializeInjectionNvtx2`]. Both open the libcupti the process already loaded (torch ships its
//! own; a second copy would see none of the first one's NVTX ranges), enable kernel, runtime API,
//! driver API and marker activity, and at exit write one trace file per process into
//! `$PROFILE_RUN_TRACE_DIR` (in the format of the `trace-format` crate, which profile-run reads with).
//! Children inherit the environment, so every CUDA process of a run writes its own trace.
//!
//! The only unsafe code of profile-run lives here: the C entry points, CUPTI's buffer callbacks and
//! the NVTX slots wrapped to tell start/end ranges from push/pop ranges (CUPTI's marker records do
//! not say which a range was).

pub mod deep;
pub mod layout;
pub mod records;
pub mod trace;

mod cupti;
mod nvtx;
mod output;

/// The variable naming the libcupti to load where the process loaded none, and a linking
/// program's way to name it.
pub use cupti::{prefer as prefer_libcupti, LIBCUPTI_VAR};
/// The variable naming the directory the traced process writes its trace into.
pub use output::{DIR_VAR as TRACE_DIR_VAR, NO_COUNTERS_SUFFIX};

/// The library's variables a user sets in the shell for the traced process (profile-run sets the
/// others from its settings), which profile-run never takes for settings of its own.
pub const USER_VARIABLES: [&str; 3] = [
    LIBCUPTI_VAR,
    deep::config::GRAPHS_VAR,
    deep::config::DEBUG_VAR,
];

use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, Once, OnceLock};

use records::Record;
use trace::{Range, Trace};

/// The process's trace, filled from CUPTI's buffers and NVTX's start calls.
static TRACE: LazyLock<Mutex<Trace>> = LazyLock::new(|| Mutex::new(Trace::default()));

fn trace() -> MutexGuard<'static, Trace> {
    TRACE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The exit status of a process stopped at its first CUDA call because it cannot be traced (profile-run
/// reads `cupti.<pid>.error` for why). Chosen apart from the statuses Python and shells use.
pub const STOPPED_EXIT_CODE: i32 = 86;

/// Called by the CUDA driver when the process initialises CUDA. Returns 1 when tracing runs.
///
/// A process that cannot be traced (no libcupti found, or CUPTI refused the activity kinds) is
/// stopped here, at its first CUDA call, rather than left to run the whole workload untraced: the
/// run would produce no timing, and the user would learn so only at its end.
#[no_mangle]
pub extern "C" fn InitializeInjection() -> i32 {
    if start() {
        return 1;
    }
    if let Some(why) = FAILED.get() {
        eprintln!(
            "profile-run trace: stopping the process at its first CUDA call, since it cannot be traced: {why}"
        );
        // SAFETY: `_exit` ends the process at once; the driver holds no lock the exit could need,
        // and skipping atexit handlers is the point (the workload must not go on untraced).
        unsafe { libc::_exit(STOPPED_EXIT_CODE) };
    }
    0
}

/// Called by NVTX on the process's first NVTX call: hands NVTX to the process's libcupti, then wraps
/// the range-start slots it installed so start/end ranges are known as such. Returns CUPTI's answer
/// (nonzero: NVTX calls go to CUPTI).
///
/// # Safety
/// `get_export_table` must be NVTX's export-table function, as NVTX passes it.
#[no_mangle]
pub unsafe extern "C" fn InitializeInjectionNvtx2(
    get_export_table: Option<nvtx::GetExportTable>,
) -> i32 {
    let Some(get_export_table) = get_export_table else {
        return 0;
    };
    if !start() {
        return 0;
    }
    // SAFETY: NVTX passed this function; the slots it returns stay valid for the process.
    unsafe { nvtx::install(get_export_table) }
}

/// Why tracing could not start in this process, once [`start`] has failed for a reason the run must
/// hear about (not for a process outside a profile-run, which has no trace directory).
static FAILED: OnceLock<String> = OnceLock::new();

/// Loads CUPTI and starts the activity trace (and the in-process counters, when asked for), once;
/// false when the trace cannot run (the reason is in the run's trace directory). Counters asked
/// for that cannot run are said in the trace and in `cupti.<pid>.no-counters` ([`deep::start`]);
/// the trace runs on.
fn start() -> bool {
    static STARTED: Once = Once::new();
    static RUNNING: AtomicBool = AtomicBool::new(false);
    STARTED.call_once(|| {
        let running = match output::directory() {
            None => {
                eprintln!("profile-run trace: PROFILE_RUN_TRACE_DIR is not set; nothing is traced");
                false
            }
            Some(_) => match deep::config_from_env().and_then(|deep| {
                cupti::get().and_then(cupti::enable)?;
                Ok(deep)
            }) {
                Ok(deep) => {
                    // Counters that cannot run leave the trace running: the run keeps its times,
                    // and profile-run measures the deep metrics another way.
                    if let Some(config) = deep {
                        deep::start(config);
                    }
                    // SAFETY: `at_exit` is a plain extern "C" function that never unwinds.
                    unsafe { libc::atexit(at_exit) };
                    true
                }
                Err(why) => {
                    output::failure(&why);
                    let _ = FAILED.set(why);
                    false
                }
            },
        };
        RUNNING.store(running, Ordering::Release);
    });
    RUNNING.load(Ordering::Acquire)
}

/// Flushes every buffer CUPTI holds and writes the trace file.
extern "C" fn at_exit() {
    if let Ok(cupti) = cupti::get() {
        cupti.flush();
        output::write(&trace(), &cupti.label);
    }
}

/// A string CUPTI stored in a record (kernel name, range name, domain); `None` for a null pointer.
///
/// # Safety
/// `ptr` is null or a NUL-terminated string CUPTI keeps alive while the buffer is processed.
unsafe fn text(ptr: usize) -> Option<String> {
    if ptr == 0 {
        return None;
    }
    // SAFETY: per this function's contract.
    Some(
        unsafe { CStr::from_ptr(ptr as *const c_char) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Files one decoded record into the trace.
///
/// # Safety
/// The record's string pointers are valid (see [`text`]).
unsafe fn absorb(trace: &mut Trace, record: Record) {
    match record {
        Record::Kernel {
            mut kernel,
            name_ptr,
        } => {
            // SAFETY: per this function's contract.
            let name = unsafe { text(name_ptr) }.unwrap_or_default();
            kernel.name = trace.name(&name);
            trace.kernel(kernel);
        }
        Record::Api(call) => trace.api(call),
        Record::MarkerStart {
            id,
            thread,
            timestamp,
            name_ptr,
            domain_ptr,
        } => trace.range_start(Range {
            id,
            thread,
            start: timestamp,
            end: None,
            // SAFETY: per this function's contract.
            domain: unsafe { text(domain_ptr) },
            // SAFETY: per this function's contract.
            name: unsafe { text(name_ptr) },
        }),
        Record::MarkerEnd { id, timestamp } => trace.range_end(id, timestamp),
        Record::Other => {}
    }
}

/// How many replay passes `metrics` (a comma list of ncu metric names) take on `chip` (CUPTI's chip
/// name, `GH100`), counted by CUPTI's host API with no GPU work ([`deep::pass_count`], which
/// profile-run calls itself): for programs that open this library, as
/// tests/manual/ncu/deep_session.sh does. Loads libcupti as the trace does (`PROFILE_RUN_LIBCUPTI`
/// names one). Returns the count, or -1 with the reason on stderr.
///
/// # Safety
/// `chip` and `metrics` are NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn profile_run_deep_passes(
    chip: *const c_char,
    metrics: *const c_char,
) -> i64 {
    if chip.is_null() || metrics.is_null() {
        return -1;
    }
    // SAFETY: per this function's contract.
    let (chip, metrics) = unsafe { (CStr::from_ptr(chip), CStr::from_ptr(metrics)) };
    let names: Vec<String> = metrics
        .to_string_lossy()
        .split(',')
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .collect();
    match deep::pass_count(&chip.to_string_lossy(), &names) {
        Ok(passes) => i64::from(passes),
        Err(why) => {
            eprintln!("profile-run deep: {why}");
            -1
        }
    }
}

/// Keeps a start/end range's id (see [`nvtx`]).
fn note_start_end(id: u64) {
    deep::start_end();
    trace().start_end(id);
}
