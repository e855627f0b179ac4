//! Counters collected inside the traced process, off unless `PROFILE_RUN_DEEP_METRICS` names ncu
//! metrics ([`config`]). The library subscribes to CUPTI's launch callbacks (runtime and driver);
//! on entry to a launch the rule ([`rule`]) picks, it starts the context's Range Profiler
//! ([`profiler`]: auto range, kernel replay), and on exit it stops it, evaluates the values with the
//! host API ([`host`]) and files them into the trace with the launch's correlation id. Activity
//! tracing runs on beside it. The NVTX stacks a launch is counted under (every thread's, and its
//! own thread's) come from the push/pop slots [`crate::nvtx`] wraps ([`stack`]).

pub mod config;
pub mod ffi;
pub mod host;
pub mod launch;
pub mod rule;
pub mod stack;

mod calls;
mod profiler;

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use config::Config;
use host::Metrics;
use launch::{Launch, Params, LAUNCHES, SITE_ENTER};
use profiler::Context;
use rule::{Sampler, Stratum};
use stack::ProcessFrames;

pub use host::{pass_count, PassCountError};

/// The Range Profiler's enum values the library passes, for the layout check.
pub fn profiler_constants() -> [(&'static str, u32); 2] {
    [
        ("CUPTI_AutoRange", profiler::AUTO_RANGE),
        ("CUPTI_KernelReplay", profiler::KERNEL_REPLAY),
    ]
}

/// After this many failed profiled launches the library stops trying (each failure is in the
/// trace): the run goes on traced.
const MAX_FAILURES: u32 = 8;

struct State {
    calls: &'static calls::Calls,
    metrics: Metrics,
    sampler: Sampler,
    /// Each context's profiler, `None` once it failed to open (the error is in the trace).
    contexts: HashMap<usize, Option<Context>>,
    /// A profiled launch is in flight (on some thread): others are counted, not profiled, since
    /// auto range would measure them into the same counter data.
    active: bool,
    /// `cuptiProfilerInitialize` has run: at the first profiled launch, since inside
    /// `InitializeInjection` (the driver still initialising) it fails with CUPTI_ERROR_UNKNOWN.
    initialized: bool,
    graphs: bool,
    /// `PROFILE_RUN_DEEP_IN_RANGES`: launches outside every range are in no region the report keeps.
    in_ranges: bool,
    /// `PROFILE_RUN_DEEP_DEBUG`: each profiled launch's cost by phase on stderr.
    debug: bool,
    /// Launch callbacks still to print under `PROFILE_RUN_DEEP_DEBUG`.
    debug_left: u32,
    failures: u32,
}

static STATE: OnceLock<Mutex<State>> = OnceLock::new();

fn state() -> Option<MutexGuard<'static, State>> {
    STATE
        .get()
        .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Whether in-process counters are on in this process.
pub fn enabled() -> bool {
    STATE.get().is_some()
}

/// Reads the environment: `Ok(None)` when no counters are asked for.
pub fn config_from_env() -> Result<Option<Config>, String> {
    config::from_env(|k| std::env::var(k).ok())
}

/// Starts in-process counters: CUPTI's profiler initialised, the launch callbacks subscribed. A
/// process whose rank is not among the deep ranks only names the metrics in its trace (so the
/// report reads it as a rank of a sampled run whose peers profiled) and profiles nothing, but
/// still says where its libcupti has no Range Profiler, as its peers' would not either. Counters
/// that cannot start are said in the trace and in `cupti.<pid>.no-counters` ([`give_up`]); the
/// trace runs on without them.
pub fn start(config: Config) {
    crate::trace().metrics(&config.metrics);
    if !config::profiles(&config, crate::output::rank()) {
        if let Err(why) = calls::get() {
            give_up(&why, "no counters could be collected");
        }
        return;
    }
    if let Err(why) = subscribe(config) {
        // A callback subscribed before the failure profiles nothing.
        if let Some(mut st) = state() {
            st.failures = MAX_FAILURES;
        }
        give_up(&why, "no counters are collected");
    }
}

fn subscribe(config: Config) -> Result<(), String> {
    let calls = calls::get()?;
    let metrics = Metrics::new(&config.metrics)?;
    let _ = STATE.set(Mutex::new(State {
        calls,
        metrics,
        sampler: Sampler::new(config.samples, config.first),
        contexts: HashMap::new(),
        active: false,
        initialized: false,
        graphs: config.graphs,
        in_ranges: config.in_ranges,
        debug: config.debug,
        debug_left: if config.debug { 400 } else { 0 },
        failures: 0,
    }));
    let mut subscriber: *mut c_void = std::ptr::null_mut();
    // SAFETY: `on_callback` matches CUpti_CallbackFunc.
    calls.check("cuptiSubscribe", unsafe {
        (calls.subscribe)(&mut subscriber, on_callback, std::ptr::null_mut())
    })?;
    for (domain, cbid, name, _) in LAUNCHES {
        // SAFETY: a valid subscriber, domain and callback id.
        calls.check(&format!("cuptiEnableCallback({name})"), unsafe {
            (calls.enable_callback)(1, subscriber, domain, cbid)
        })?;
    }
    Ok(())
}

/// Some launch of this process has been profiled: its counters run.
static PROFILED: AtomicBool = AtomicBool::new(false);

/// The counters cannot run in this process, or not on a context (`why`, then what that leaves,
/// `ending`): said in the trace, and, while no launch has been profiled, in
/// `cupti.<pid>.no-counters`, which profile-run reads at the end of the trace pass to measure the
/// deep metrics under ncu instead (`deep_engine: auto`). The trace's lock is held across the check
/// and the write, as it is where the first profiled launch sets [`PROFILED`] and removes the file.
fn give_up(why: &str, ending: &str) {
    let mut trace = crate::trace();
    trace.deep_error(format!("{why}; {ending}"));
    if !PROFILED.load(Ordering::Acquire) {
        crate::output::no_counters(why);
    }
}

/// The profiled launches failed [`MAX_FAILURES`] times, the last just now: no more are tried.
fn gave_up_after_failures() {
    give_up(
        &format!("{MAX_FAILURES} profiled launches failed"),
        "no more are profiled",
    );
}

/// Where the current thread is in launch calls (a runtime launch holds a driver launch).
#[derive(Debug, Clone, Copy, Default)]
struct Nest {
    depth: u32,
    /// The outermost call's correlation id: the one the kernel records carry.
    outer: u32,
    decided: bool,
    /// The depth and context of the call that started profiling.
    session: Option<(u32, usize)>,
    /// When the profiled launch's configuration began, and when the launch itself did.
    started: Option<(Instant, Instant)>,
}

thread_local! {
    static NEST: Cell<Nest> = Cell::new(Nest::default());
}

/// Every thread's open push/pop ranges: a launch is counted under all of them (as ncu's
/// `--nvtx-push-pop-scope process`, profile-run's default, and the trace's attribution see it) and
/// under its own thread's ([`ProcessFrames::hash`]). PyTorch launches the backward pass from its
/// autograd thread, which opens no range of its own: counted under its own thread's stack alone,
/// every backward launch would be one stratum outside `train_step/backward`.
static PROCESS_FRAMES: Mutex<ProcessFrames> = Mutex::new(ProcessFrames::new());

fn process_frames() -> MutexGuard<'static, ProcessFrames> {
    PROCESS_FRAMES.lock().unwrap_or_else(|e| e.into_inner())
}

/// A start/end range was started in this process. Their ends are not followed, so from then on no
/// launch counts as outside every range.
static START_END_SEEN: AtomicBool = AtomicBool::new(false);

/// An NVTX start/end range began.
pub fn start_end() {
    START_END_SEEN.store(true, Ordering::Relaxed);
}

/// Whether a launch made now is outside every NVTX range of the process: no push/pop range open on
/// any thread, and no start/end range ever started.
fn outside_every_range() -> bool {
    !START_END_SEEN.load(Ordering::Relaxed) && process_frames().is_empty()
}

/// An NVTX push on this thread (`domain` 0: the default domain).
pub fn push(domain: usize, message: u64) {
    process_frames().push(thread_id(), domain, message);
}

/// An NVTX pop on this thread.
pub fn pop(domain: usize) {
    process_frames().pop(thread_id(), domain);
}

/// The calling thread's id, for [`ProcessFrames`].
fn thread_id() -> u64 {
    thread_local! {
        static ID: u64 = {
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        };
    }
    ID.with(|id| *id)
}

unsafe extern "C" fn on_callback(_user: *mut c_void, domain: u32, cbid: u32, data: *const c_void) {
    let Some(kind) = launch::params_of(domain, cbid) else {
        return;
    };
    if data.is_null() {
        return;
    }
    // SAFETY: for the runtime and driver domains CUPTI passes a CUpti_CallbackData.
    let data = unsafe { &*data.cast::<ffi::CallbackData>() };
    let mut nest = NEST.with(Cell::get);
    if data.site == SITE_ENTER {
        nest.depth += 1;
        if nest.depth == 1 {
            nest = Nest {
                depth: 1,
                outer: data.correlation,
                ..Nest::default()
            };
        }
        if !nest.decided {
            // SAFETY: CUPTI's parameters for this callback id, and its symbol name.
            if let Some(l) = unsafe { launch::read(kind, data.params, data.symbol) } {
                nest.decided = true;
                let ctx = data.context as usize;
                if let Some(configuring) = begin_if_chosen(l, ctx, kind, cbid, nest.outer) {
                    nest.session = Some((nest.depth, ctx));
                    nest.started = Some((configuring, Instant::now()));
                }
            }
        }
    } else {
        if let (Some((depth, ctx)), Some(started)) = (nest.session, nest.started) {
            if depth == nest.depth {
                end_session(ctx, nest.outer, started);
                nest.session = None;
            }
        }
        nest.depth = nest.depth.saturating_sub(1);
    }
    NEST.with(|n| n.set(nest));
}

/// Counts the launch in its stratum and, when the rule picks it, starts the context's profiler;
/// the time it started configuring it when it did (the launch's cost counts from there).
fn begin_if_chosen(
    l: Launch,
    ctx: usize,
    kind: Params,
    cbid: u32,
    correlation: u32,
) -> Option<Instant> {
    let configuring = Instant::now();
    let mut st = state()?;
    if (l.graph && !st.graphs) || l.collective || (st.in_ranges && outside_every_range()) {
        return None;
    }
    let stack = process_frames().hash(thread_id());
    let chosen = st.sampler.launch(Stratum {
        name: l.name,
        grid: l.grid,
        block: l.block,
        stack,
    });
    if st.debug_left > 0 {
        st.debug_left -= 1;
        eprintln!(
            "profile-run deep: {kind:?} cbid {cbid} correlation {correlation} thread {} grid {:?} block {:?} stack {stack:016x} chosen {chosen} ctx {ctx:#x}",
            thread_id(), l.grid, l.block
        );
    }
    if !chosen || st.active || ctx == 0 || st.failures >= MAX_FAILURES {
        return None;
    }
    let mut errors = Vec::new();
    let mut unusable = None;
    let calls = st.calls;
    if !st.initialized {
        if let Err(e) = profiler::initialize(calls) {
            st.failures = MAX_FAILURES;
            drop(st);
            give_up(&e, "no counters are collected");
            return None;
        }
        st.initialized = true;
    }
    let State {
        contexts,
        metrics,
        graphs,
        ..
    } = &mut *st;
    let slot = contexts.entry(ctx).or_insert_with(|| {
        match Context::open(calls, ctx as *mut c_void, metrics, *graphs) {
            Ok(c) => {
                crate::trace().deep_set(c.device, &c.chip, c.passes);
                Some(c)
            }
            Err(e) => {
                unusable = Some(format!("context {ctx:#x}: {e}"));
                None
            }
        }
    });
    let begun = match slot.as_mut().map(Context::begin) {
        Some(Ok(())) => true,
        Some(Err(e)) => {
            errors.push(format!("launch {correlation}: {e}"));
            st.failures += 1;
            false
        }
        None => false,
    };
    st.active = begun;
    let spent = st.failures == MAX_FAILURES;
    drop(st);
    if let Some(why) = unusable {
        give_up(&why, "no counters are collected on it");
    }
    for e in errors {
        crate::trace().deep_error(e);
    }
    if spent {
        gave_up_after_failures();
    }
    begun.then_some(configuring)
}

/// Stops the profiler after a profiled launch and files its values (or why there are none) with
/// what the launch cost: configuring, the launch with its replay passes, reading the values.
fn end_session(ctx: usize, correlation: u32, (configuring, launched): (Instant, Instant)) {
    let returned = Instant::now();
    let Some(mut st) = state() else { return };
    st.active = false;
    let debug = st.debug;
    let State {
        contexts, metrics, ..
    } = &mut *st;
    let result = match contexts.get_mut(&ctx).and_then(Option::as_mut) {
        Some(c) => c.end(metrics),
        None => Err("the context's profiler is gone".into()),
    };
    if result.is_err() {
        st.failures += 1;
    }
    let spent = st.failures == MAX_FAILURES;
    drop(st);
    let cost_ns = configuring.elapsed().as_nanos() as u64;
    if debug {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        eprintln!(
            "profile-run deep: launch {correlation} cost {:.1} ms: configure {:.1}, launch and replay {:.1}, read {:.1}",
            cost_ns as f64 / 1e6,
            ms(launched - configuring),
            ms(returned - launched),
            ms(returned.elapsed())
        );
    }
    let mut trace = crate::trace();
    match result {
        // Seen on an H200 with CUDA 13.0: a CUDA graph launch measures no kernel, and every launch
        // profiled after it on the context measures none either.
        Ok(ranges) if ranges.is_empty() => {
            trace.profiled(correlation, cost_ns, ranges);
            trace.deep_error(format!(
                "launch {correlation}: CUPTI measured no kernel in it"
            ));
        }
        Ok(ranges) => {
            trace.profiled(correlation, cost_ns, ranges);
            if !PROFILED.swap(true, Ordering::AcqRel) {
                crate::output::counters_work();
            }
        }
        Err(e) => trace.deep_error(format!("launch {correlation}: {e}")),
    }
    drop(trace);
    if spent {
        gave_up_after_failures();
    }
}
