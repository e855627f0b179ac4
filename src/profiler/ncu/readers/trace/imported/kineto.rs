//! A PyTorch profiler (Kineto) trace: Chrome trace JSON with `schemaVersion` 1, plain or gzip. Its
//! `traceEvents` are read one at a time, never held as a whole: kernels (`cat: kernel`) with their
//! correlation id (`args.correlation`, else `args."External id"`), the runtime and driver calls that
//! launched them (`cuda_runtime`, `cuda_driver`, `hip_runtime`: same id, their thread and start),
//! `user_annotation` / `record_function` ranges as push/pop ranges of their thread, and
//! `gpu_user_annotation` ranges of a GPU stream. Where the trace has GPU-side annotations, a kernel
//! takes those open on its own stream when it ran (what the GPU did); else the CPU annotations open
//! on the launching thread when its launch started, as for the CUPTI trace.
//!
//! Times are µs in the file (fractions allowed) and ns in the trace. The process is the one whose
//! threads launched the kernels; `distributedInfo` gives its rank and the job's size.

use std::io::BufReader;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::super::{ProcessTrace, RangeKind, TraceError, TraceInput};
use super::collect::{Collect, KernelRow};
use super::refused;
use crate::fast_map::FastMap;
use crate::file_kind;

/// The `schemaVersion`s read: Kineto has written 1 since the key exists.
pub const KNOWN_SCHEMA_VERSIONS: &[u64] = &[1];

/// Reads one Kineto trace, bounded by `input.checks` (its text, after inflating a `.gz`).
pub fn read(input: &TraceInput) -> Result<ProcessTrace, TraceError> {
    let path = &input.path;
    let text = file_kind::open_text(path, &input.checks).map_err(|e| TraceError::Io {
        path: path.clone(),
        source: e.into(),
    })?;
    let mut events = Events::default();
    let mut de = serde_json::Deserializer::from_reader(BufReader::new(text));
    let top = Top {
        events: &mut events,
    }
    .deserialize(&mut de)
    .and_then(|top| de.end().map(|()| top));
    let top = top.map_err(|e| match e.io_error_kind() {
        Some(_) => refused(path, format!("could not be read whole: {e}")),
        None => refused(
            path,
            format!("is not the JSON a PyTorch profiler writes: {e}"),
        ),
    })?;
    let version = top
        .schema_version
        .ok_or_else(|| refused(path, "has no `schemaVersion` key, which every PyTorch profiler (Kineto) trace starts with: export the trace with torch.profiler (`prof.export_chrome_trace`) or `on_trace_ready=tensorboard_trace_handler`"))?;
    if !KNOWN_SCHEMA_VERSIONS.contains(&version) {
        return Err(refused(
            path,
            format!("`schemaVersion` is {version}, a Kineto trace layout profile-run does not know (it reads {KNOWN_SCHEMA_VERSIONS:?})"),
        ));
    }
    if !top.had_events {
        return Err(refused(
            path,
            "has no `traceEvents` key: not a PyTorch profiler trace",
        ));
    }
    if let Some(what) = events.refused.take() {
        return Err(refused(path, what));
    }
    events
        .finish(path, version, top.distributed)
        .map_err(|what| refused(path, what))
}

/// The top-level object, `traceEvents` visited in place.
struct Top<'e> {
    events: &'e mut Events,
}

/// What the top level says besides its events.
struct TopFound {
    schema_version: Option<u64>,
    had_events: bool,
    distributed: Option<Distributed>,
}

#[derive(Deserialize, Default)]
struct Distributed {
    rank: Option<u32>,
    world_size: Option<u32>,
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = TopFound;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<TopFound, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = TopFound;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object with `schemaVersion` and `traceEvents`")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopFound, A::Error> {
        let mut found = TopFound {
            schema_version: None,
            had_events: false,
            distributed: None,
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "schemaVersion" => found.schema_version = Some(map.next_value()?),
                "distributedInfo" => found.distributed = Some(map.next_value()?),
                "traceEvents" => {
                    map.next_value_seed(EventList {
                        events: &mut *self.events,
                    })?;
                    found.had_events = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

/// `traceEvents`, each event filed as soon as it is read.
struct EventList<'e> {
    events: &'e mut Events,
}

impl<'de> DeserializeSeed<'de> for EventList<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventList<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("`traceEvents`: a list of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(event) = seq.next_element::<RawEvent>()? {
            let at = self.events.seen;
            self.events.seen += 1;
            if self.events.refused.is_none() {
                if let Err(what) = self.events.add(event) {
                    self.events.refused = Some(format!("`traceEvents[{at}]`: {what}"));
                }
            }
        }
        Ok(())
    }
}

/// One event as the file has it; what profile-run does not read is skipped unparsed.
#[derive(Deserialize, Default)]
#[serde(default)]
struct RawEvent {
    ph: Option<String>,
    cat: Option<String>,
    name: Option<String>,
    pid: Option<Value>,
    tid: Option<Value>,
    ts: Option<Value>,
    dur: Option<Value>,
    args: Option<RawArgs>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawArgs {
    correlation: Option<Value>,
    #[serde(rename = "External id")]
    external: Option<Value>,
    device: Option<Value>,
    stream: Option<Value>,
    grid: Option<Value>,
    block: Option<Value>,
    #[serde(rename = "registers per thread")]
    registers: Option<Value>,
    #[serde(rename = "shared memory")]
    shared: Option<Value>,
    /// A metadata event's value (`process_name`).
    name: Option<Value>,
}

/// What a kind of event is to profile-run, by its `cat`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Kernel,
    Launch,
    CpuRange,
    GpuRange,
}

fn kind_of(cat: &str) -> Option<Kind> {
    Some(match cat.to_ascii_lowercase().as_str() {
        "kernel" => Kind::Kernel,
        "cuda_runtime" | "cuda_driver" | "runtime" | "driver" | "hip_runtime" => Kind::Launch,
        "user_annotation" | "record_function" => Kind::CpuRange,
        "gpu_user_annotation" => Kind::GpuRange,
        _ => return None,
    })
}

/// A kernel read, its launch still to be found.
struct Pending {
    row: KernelRow<'static>,
    /// The kernel's name, by its place in `Events::names`.
    name: u32,
    external: Option<u64>,
    gpu: (u64, u64),
}

/// A runtime or driver call that may have launched kernels.
struct Call {
    correlation: Option<u64>,
    external: Option<u64>,
    /// (pid, tid).
    track: (u64, u64),
    start: u64,
}

/// A `user_annotation` (CPU) or `gpu_user_annotation` (GPU stream) range.
struct Annotation {
    kind: Kind,
    /// (pid, tid): a CPU thread, or a GPU (its pid) and stream (its tid).
    track: (u64, u64),
    start: u64,
    end: u64,
    /// By its place in `Events::names`.
    name: u32,
}

/// The events filed so far.
#[derive(Default)]
struct Events {
    seen: u64,
    /// The first event refused, named by its place in `traceEvents`.
    refused: Option<String>,
    kernels: Vec<Pending>,
    calls: Vec<Call>,
    ranges: Vec<Annotation>,
    process_names: FastMap<u64, String>,
    /// Thread ids written as text (Kineto names some tracks), numbered past every numeric id.
    named_threads: FastMap<String, u64>,
    /// Kernel and annotation names, each kept once: a trace repeats a few hundred names over
    /// millions of events, and a name is often longer than the rest of its kernel.
    names: Vec<String>,
    name_ids: FastMap<String, u32>,
}

impl Events {
    fn add(&mut self, e: RawEvent) -> Result<(), String> {
        let ph = e.ph.as_deref().unwrap_or("");
        if ph == "M" {
            if e.name.as_deref() == Some("process_name") {
                let pid = self.id(e.pid.as_ref(), "pid")?;
                if let Some(Value::String(name)) = e.args.and_then(|a| a.name) {
                    self.process_names.insert(pid, name);
                }
            }
            return Ok(());
        }
        let Some(kind) = e.cat.as_deref().and_then(kind_of) else {
            return Ok(());
        };
        if ph != "X" {
            return Ok(());
        }
        let track = (
            self.id(e.pid.as_ref(), "pid")?,
            self.id(e.tid.as_ref(), "tid")?,
        );
        let start = micros(e.ts.as_ref(), "ts")?;
        let end = start
            .checked_add(micros(e.dur.as_ref(), "dur")?)
            .ok_or("`ts` + `dur` is past 2^64 ns")?;
        let args = e.args.unwrap_or_default();
        let name = self.intern(e.name.unwrap_or_default());
        match kind {
            Kind::Kernel => self.kernel(&args, name, track, (start, end))?,
            Kind::Launch => {
                let correlation = number(args.correlation.as_ref(), "args.correlation")?;
                let external = number(args.external.as_ref(), "args.\"External id\"")?;
                self.calls.push(Call {
                    correlation,
                    external,
                    track,
                    start,
                });
            }
            Kind::CpuRange | Kind::GpuRange => self.ranges.push(Annotation {
                kind,
                track,
                start,
                end,
                name,
            }),
        }
        Ok(())
    }

    fn intern(&mut self, name: String) -> u32 {
        if let Some(&at) = self.name_ids.get(&name) {
            return at;
        }
        let at = self.names.len() as u32;
        self.names.push(name.clone());
        self.name_ids.insert(name, at);
        at
    }

    fn kernel(
        &mut self,
        args: &RawArgs,
        name: u32,
        gpu: (u64, u64),
        (start, end): (u64, u64),
    ) -> Result<(), String> {
        let small = |v: Option<&Value>, key: &str| -> Result<Option<u32>, String> {
            number(v, key)?
                .map(|n| u32::try_from(n).map_err(|_| format!("`{key}` is {n}, past 2^32")))
                .transpose()
        };
        let device = small(args.device.as_ref(), "args.device")?;
        let stream = small(args.stream.as_ref(), "args.stream")?;
        let dims = |v: Option<&Value>, key: &str| -> Result<[u32; 3], String> {
            let mut out = [1; 3];
            if let Some(Value::Array(items)) = v {
                for (at, item) in items.iter().take(3).enumerate() {
                    out[at] = small(Some(item), key)?.unwrap_or(1);
                }
            }
            Ok(out)
        };
        self.kernels.push(Pending {
            row: KernelRow {
                correlation: number(args.correlation.as_ref(), "args.correlation")?,
                start,
                end,
                device: device.unwrap_or(u32::try_from(gpu.0).unwrap_or(0)),
                stream: stream.unwrap_or(u32::try_from(gpu.1).unwrap_or(0)),
                name: "",
                grid: dims(args.grid.as_ref(), "args.grid")?,
                block: dims(args.block.as_ref(), "args.block")?,
                registers: small(args.registers.as_ref(), "args.\"registers per thread\"")?
                    .unwrap_or(0),
                shared: number(args.shared.as_ref(), "args.\"shared memory\"")?.unwrap_or(0),
            },
            name,
            external: number(args.external.as_ref(), "args.\"External id\"")?,
            gpu,
        });
        Ok(())
    }

    /// A `pid` or `tid`: a number, or a text (a named track) numbered on first sight.
    fn id(&mut self, v: Option<&Value>, key: &str) -> Result<u64, String> {
        match v {
            Some(Value::String(text)) => {
                let next = (1u64 << 63) + self.named_threads.len() as u64;
                Ok(*self.named_threads.entry(text.clone()).or_insert(next))
            }
            other => number(other, key).map(|n| n.unwrap_or(0)),
        }
    }

    /// The process's trace: the pid whose threads launched the most kernels, its annotations, its
    /// kernels joined to their launches; `Err` names a kernel or range whose times cannot be.
    fn finish(
        self,
        path: &std::path::Path,
        version: u64,
        distributed: Option<Distributed>,
    ) -> Result<ProcessTrace, String> {
        let mut collect = Collect::new(path);
        let pid = launching_pid(&self.calls);
        // GPU annotations, where the trace has them, stand for the CPU ones they mirror.
        let gpu_side = self.ranges.iter().any(|r| r.kind == Kind::GpuRange);
        for range in self
            .ranges
            .iter()
            .filter(|r| (r.kind == Kind::GpuRange) == gpu_side)
        {
            let (p, t) = range.track;
            let (thread, start) = match range.kind {
                // A GPU annotation starts with its first kernel, and a range is open only after
                // its start: filed 1 ns earlier, it holds the kernel that starts it (as HTA counts).
                Kind::GpuRange => (
                    collect.thread(gpu_track(p), t),
                    range.start.saturating_sub(1),
                ),
                _ => (collect.thread(p, t), range.start),
            };
            let times = (start, Some(range.end));
            collect.range(
                (RangeKind::PushPop, thread),
                times,
                None,
                Some(&self.names[range.name as usize]),
            )?;
        }
        let by_external = file_calls(&self.calls, (!gpu_side).then_some(&mut collect));
        for mut k in self.kernels {
            if k.row.correlation.is_none() {
                k.row.correlation = k.external.and_then(|x| by_external.get(&x).copied());
            }
            if gpu_side {
                // The stream's annotations open when the kernel ran: its "launch" is its start.
                let id = k.row.correlation.unwrap_or(u64::MAX - k.row.start);
                k.row.correlation = Some(id);
                let thread = collect.thread(gpu_track(k.gpu.0), k.gpu.1);
                collect.call(id, thread, k.row.start);
            }
            let row = KernelRow {
                name: &self.names[k.name as usize],
                ..k.row
            };
            collect.kernel(row)?;
        }
        let trace = collect.trace();
        trace.pid = u32::try_from(pid).unwrap_or(0);
        trace.process_name = self.process_names.get(&pid).cloned().unwrap_or_default();
        trace.libcupti = format!("PyTorch profiler (Kineto) trace, schemaVersion {version}");
        trace.recorder = Some("kineto");
        if let Some(d) = distributed {
            trace.rank = d.rank;
            trace.world_size = d.world_size;
        }
        Ok(collect.finish())
    }
}

/// A GPU's tracks kept apart from every CPU thread's (both are numbered by the file's `pid`).
fn gpu_track(pid: u64) -> u64 {
    u64::MAX - pid
}

/// Files the launching calls into `collect` (none when GPU-side annotations place the kernels); the
/// ids that calls with only an `External id` were given, by that id, for the kernels that name it.
fn file_calls(calls: &[Call], mut collect: Option<&mut Collect>) -> FastMap<u64, u64> {
    let mut by_external: FastMap<u64, u64> = FastMap::default();
    let mut next_id = 1u64 << 62;
    for call in calls {
        let id = match (call.correlation, call.external) {
            (Some(c), _) => c,
            (None, Some(x)) => *by_external.entry(x).or_insert_with(|| {
                next_id += 1;
                next_id
            }),
            (None, None) => continue,
        };
        if let Some(collect) = collect.as_deref_mut() {
            let thread = collect.thread(call.track.0, call.track.1);
            collect.call(id, thread, call.start);
        }
    }
    by_external
}

/// The pid whose calls launched the most kernels (the trainer, not its data-loader workers).
fn launching_pid(calls: &[Call]) -> u64 {
    let mut counts: FastMap<u64, u64> = FastMap::default();
    for call in calls {
        *counts.entry(call.track.0).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(pid, n)| (n, std::cmp::Reverse(pid)))
        .map_or(0, |(pid, _)| pid)
}

/// A non-negative whole number (ids, sizes); `None` when absent or `null`.
fn number(v: Option<&Value>, key: &str) -> Result<Option<u64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19)
                    .map(|f| f as u64)
            })
            .map(Some)
            .ok_or_else(|| format!("`{key}` is {n}, not a whole number ≥ 0")),
        Some(other) => Err(format!("`{key}` is {other}, not a number")),
    }
}

/// A time in µs (`ts`, `dur`; fractions allowed) as whole ns.
fn micros(v: Option<&Value>, key: &str) -> Result<u64, String> {
    let Some(Value::Number(n)) = v else {
        return Err(match v {
            None => format!("a complete event (`ph: X`) has no `{key}`"),
            Some(other) => format!("`{key}` is {other}, not a number of µs"),
        });
    };
    // Whole µs are exact; a fraction goes through f64, exact to a quarter µs at today's epoch.
    if let Some(us) = n.as_u64() {
        return us
            .checked_mul(1000)
            .ok_or_else(|| format!("`{key}` is {n} µs, past 2^64 ns"));
    }
    let ns = n.as_f64().map(|us| (us * 1000.0).round());
    match ns {
        Some(ns) if (0.0..1.8e19).contains(&ns) => Ok(ns as u64),
        _ => Err(format!(
            "`{key}` is {n} µs, not a time between 0 and 2^64 ns"
        )),
    }
}
