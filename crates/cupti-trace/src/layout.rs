//! The CUPTI and NVTX ABI this library relies on: activity kinds, record field offsets and NVTX
//! callback slots, as constants. `layout.expected` lists them in the form `layout_check.c` prints from
//! the real headers, so the GPU machine's test (tests/manual/cupti/layout_check.sh) compares the two and
//! a unit test keeps the file and the constants together.

/// `CUpti_ActivityKind` values.
pub const KIND_KERNEL: u32 = 3;
pub const KIND_DRIVER: u32 = 4;
pub const KIND_RUNTIME: u32 = 5;
pub const KIND_CONCURRENT_KERNEL: u32 = 10;
pub const KIND_MARKER: u32 = 12;

/// `CUpti_ActivityFlag` bits of a marker record.
pub const FLAG_MARKER_START: u32 = 1 << 1;
pub const FLAG_MARKER_END: u32 = 1 << 2;

/// `CUPTI_ACTIVITY_FLAG_FLUSH_FORCED`: flush buffers still being filled too.
pub const FLUSH_FORCED: u32 = 1;

/// Field offsets of `CUpti_ActivityKernel10` (the kernel record of CUDA 13; every field read here sits
/// at the same offset in `CUpti_ActivityKernel4` to `9`).
pub mod kernel {
    pub const REGISTERS_PER_THREAD: usize = 6;
    pub const START: usize = 16;
    pub const END: usize = 24;
    pub const DEVICE_ID: usize = 40;
    pub const CONTEXT_ID: usize = 44;
    pub const STREAM_ID: usize = 48;
    pub const GRID_X: usize = 52;
    pub const BLOCK_X: usize = 64;
    pub const STATIC_SHARED_MEMORY: usize = 76;
    pub const DYNAMIC_SHARED_MEMORY: usize = 80;
    pub const CORRELATION_ID: usize = 92;
    pub const NAME: usize = 104;
}

/// Field offsets of `CUpti_ActivityAPI` (runtime and driver API calls).
pub mod api {
    pub const CBID: usize = 4;
    pub const START: usize = 8;
    pub const END: usize = 16;
    pub const PROCESS_ID: usize = 24;
    pub const THREAD_ID: usize = 28;
    pub const CORRELATION_ID: usize = 32;
    pub const SIZE: usize = 40;
}

/// Field offsets of `CUpti_ActivityMarker2` (NVTX ranges).
pub mod marker {
    pub const FLAGS: usize = 4;
    pub const TIMESTAMP: usize = 8;
    pub const ID: usize = 16;
    pub const OBJECT_KIND: usize = 20;
    /// `objectId.pt.threadId` (after `processId`).
    pub const THREAD_ID: usize = 28;
    pub const NAME: usize = 40;
    pub const DOMAIN: usize = 48;
    pub const SIZE: usize = 56;
}

/// NVTX's injection ABI (`nvtxDetail/nvtxTypes.h`).
pub mod nvtx {
    pub const ETID_CALLBACKS: u32 = 1;
    pub const MODULE_CORE: u32 = 1;
    pub const MODULE_CORE2: u32 = 5;
    pub const CORE_RANGE_START_EX: usize = 4;
    pub const CORE_RANGE_START_A: usize = 5;
    pub const CORE_RANGE_START_W: usize = 6;
    pub const CORE2_DOMAIN_RANGE_START_EX: usize = 2;
    pub const CORE_RANGE_PUSH_EX: usize = 8;
    pub const CORE_RANGE_PUSH_A: usize = 9;
    pub const CORE_RANGE_PUSH_W: usize = 10;
    pub const CORE_RANGE_POP: usize = 11;
    pub const CORE2_DOMAIN_RANGE_PUSH_EX: usize = 4;
    pub const CORE2_DOMAIN_RANGE_POP: usize = 5;
    /// `nvtxMessageType_t`.
    pub const MESSAGE_ASCII: i32 = 1;
    pub const MESSAGE_UNICODE: i32 = 2;
    pub const MESSAGE_REGISTERED: i32 = 3;
}

/// The constants as `NAME VALUE` lines, the form `layout_check.c` prints.
pub fn expected() -> String {
    let lines: [(&str, usize); 35] = [
        ("CUPTI_ACTIVITY_KIND_KERNEL", KIND_KERNEL as usize),
        ("CUPTI_ACTIVITY_KIND_DRIVER", KIND_DRIVER as usize),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", KIND_RUNTIME as usize),
        (
            "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
            KIND_CONCURRENT_KERNEL as usize,
        ),
        ("CUPTI_ACTIVITY_KIND_MARKER", KIND_MARKER as usize),
        (
            "CUPTI_ACTIVITY_FLAG_MARKER_START",
            FLAG_MARKER_START as usize,
        ),
        ("CUPTI_ACTIVITY_FLAG_MARKER_END", FLAG_MARKER_END as usize),
        ("CUPTI_ACTIVITY_FLAG_FLUSH_FORCED", FLUSH_FORCED as usize),
        ("kernel.registersPerThread", kernel::REGISTERS_PER_THREAD),
        ("kernel.start", kernel::START),
        ("kernel.end", kernel::END),
        ("kernel.deviceId", kernel::DEVICE_ID),
        ("kernel.contextId", kernel::CONTEXT_ID),
        ("kernel.streamId", kernel::STREAM_ID),
        ("kernel.gridX", kernel::GRID_X),
        ("kernel.blockX", kernel::BLOCK_X),
        ("kernel.staticSharedMemory", kernel::STATIC_SHARED_MEMORY),
        ("kernel.dynamicSharedMemory", kernel::DYNAMIC_SHARED_MEMORY),
        ("kernel.correlationId", kernel::CORRELATION_ID),
        ("kernel.name", kernel::NAME),
        ("api.cbid", api::CBID),
        ("api.start", api::START),
        ("api.end", api::END),
        ("api.processId", api::PROCESS_ID),
        ("api.threadId", api::THREAD_ID),
        ("api.correlationId", api::CORRELATION_ID),
        ("api.sizeof", api::SIZE),
        ("marker.flags", marker::FLAGS),
        ("marker.timestamp", marker::TIMESTAMP),
        ("marker.id", marker::ID),
        ("marker.objectKind", marker::OBJECT_KIND),
        ("marker.threadId", marker::THREAD_ID),
        ("marker.name", marker::NAME),
        ("marker.domain", marker::DOMAIN),
        ("marker.sizeof", marker::SIZE),
    ];
    let nvtx_lines = [
        ("NVTX_ETID_CALLBACKS", nvtx::ETID_CALLBACKS as usize),
        ("NVTX_CB_MODULE_CORE", nvtx::MODULE_CORE as usize),
        ("NVTX_CB_MODULE_CORE2", nvtx::MODULE_CORE2 as usize),
        ("NVTX_CBID_CORE_RangeStartEx", nvtx::CORE_RANGE_START_EX),
        ("NVTX_CBID_CORE_RangeStartA", nvtx::CORE_RANGE_START_A),
        ("NVTX_CBID_CORE_RangeStartW", nvtx::CORE_RANGE_START_W),
        (
            "NVTX_CBID_CORE2_DomainRangeStartEx",
            nvtx::CORE2_DOMAIN_RANGE_START_EX,
        ),
        ("NVTX_CBID_CORE_RangePushEx", nvtx::CORE_RANGE_PUSH_EX),
        ("NVTX_CBID_CORE_RangePushA", nvtx::CORE_RANGE_PUSH_A),
        ("NVTX_CBID_CORE_RangePushW", nvtx::CORE_RANGE_PUSH_W),
        ("NVTX_CBID_CORE_RangePop", nvtx::CORE_RANGE_POP),
        (
            "NVTX_CBID_CORE2_DomainRangePushEx",
            nvtx::CORE2_DOMAIN_RANGE_PUSH_EX,
        ),
        (
            "NVTX_CBID_CORE2_DomainRangePop",
            nvtx::CORE2_DOMAIN_RANGE_POP,
        ),
        ("NVTX_MESSAGE_TYPE_ASCII", nvtx::MESSAGE_ASCII as usize),
        ("NVTX_MESSAGE_TYPE_UNICODE", nvtx::MESSAGE_UNICODE as usize),
        (
            "NVTX_MESSAGE_TYPE_REGISTERED",
            nvtx::MESSAGE_REGISTERED as usize,
        ),
    ];
    let mut out: String = lines
        .iter()
        .chain(&nvtx_lines)
        .map(|(name, value)| format!("{name} {value}\n"))
        .collect();
    for check in deep_checks() {
        out.push_str(&format!("{} {}\n", check.label, check.value));
    }
    out
}

/// The in-process counters' ABI: the callback constants and the launch ids followed, the enum
/// values passed, then every struct's field offsets ([`crate::deep::ffi`]).
pub fn deep_checks() -> Vec<crate::deep::ffi::Check> {
    use crate::deep::ffi::Check;
    use crate::deep::{host, launch, profiler_constants};
    let value = |name: &str, value: usize| Check {
        label: name.to_string(),
        value,
        c: format!("V({name});"),
    };
    let mut out = vec![
        value("CUPTI_CB_DOMAIN_DRIVER_API", launch::DOMAIN_DRIVER as usize),
        value(
            "CUPTI_CB_DOMAIN_RUNTIME_API",
            launch::DOMAIN_RUNTIME as usize,
        ),
        value("CUPTI_API_ENTER", launch::SITE_ENTER as usize),
        value("CUPTI_API_EXIT", launch::SITE_EXIT as usize),
        value(
            "CUPTI_PROFILER_TYPE_RANGE_PROFILER",
            host::RANGE_PROFILER as usize,
        ),
    ];
    for (name, v) in profiler_constants() {
        out.push(value(name, v as usize));
    }
    for (_, cbid, name, _) in launch::LAUNCHES {
        out.push(value(name, cbid as usize));
    }
    out.extend(crate::deep::ffi::checks());
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_checked_file_lists_the_constants() {
        let file = include_str!("../layout.expected");
        assert_eq!(
            file,
            super::expected(),
            "regenerate layout.expected from layout::expected()"
        );
    }

    #[test]
    fn the_c_check_prints_every_deep_line() {
        let c = include_str!("../layout_check.c");
        for check in super::deep_checks() {
            assert!(c.contains(&check.c), "layout_check.c lacks `{}`", check.c);
        }
    }
}

#[cfg(test)]
mod generate {
    /// `LAYOUT_WRITE=1 cargo test -p cupti-trace generate` rewrites layout.expected and prints the
    /// C lines of the deep checks, after a struct or constant changed.
    #[test]
    fn write_when_asked() {
        if std::env::var_os("LAYOUT_WRITE").is_none() {
            return;
        }
        let dir = env!("CARGO_MANIFEST_DIR");
        std::fs::write(format!("{dir}/layout.expected"), super::expected()).unwrap();
        for check in super::deep_checks() {
            println!("  {}", check.c);
        }
    }
}
