//! Launch callbacks read: which calls launch kernels or CUDA graphs, and the kernel name, grid and
//! block each call's parameters give. A runtime launch call makes a driver launch call inside it;
//! the outermost call whose parameters can be read decides for both.

use std::ffi::{c_char, c_void, CStr};

use super::ffi::{DriverLaunch, DriverLaunchEx, GraphLaunch, RuntimeLaunch, RuntimeLaunchEx};
use super::rule::{fnv, is_collective};

/// `CUpti_CallbackDomain` values and callback sites.
pub const DOMAIN_DRIVER: u32 = 1;
pub const DOMAIN_RUNTIME: u32 = 2;
pub const SITE_ENTER: u32 = 0;
pub const SITE_EXIT: u32 = 1;

/// What each launch callback id's parameters are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Params {
    /// `cuLaunchKernel` and `cuLaunchCooperativeKernel`: function, grid, block.
    Driver,
    /// `cuLaunchKernelEx`: a launch configuration.
    DriverEx,
    /// `cudaLaunchKernel` and `cudaLaunchCooperativeKernel`: function, dim3 grid and block.
    Runtime,
    /// `cudaLaunchKernelExC`: a launch configuration.
    RuntimeEx,
    /// `__cudaLaunchKernel` (CUDA 13): parameters CUPTI's headers do not declare, so the driver call
    /// inside it decides.
    Opaque,
    /// `cuGraphLaunch` / `cudaGraphLaunch`: an executable graph.
    Graph,
}

/// (domain, callback id, name, parameters) of every launch call the library follows.
pub const LAUNCHES: [(u32, u32, &str, Params); 18] = [
    (
        DOMAIN_DRIVER,
        307,
        "CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel",
        Params::Driver,
    ),
    (
        DOMAIN_DRIVER,
        442,
        "CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz",
        Params::Driver,
    ),
    (
        DOMAIN_DRIVER,
        477,
        "CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel",
        Params::Driver,
    ),
    (
        DOMAIN_DRIVER,
        478,
        "CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz",
        Params::Driver,
    ),
    (
        DOMAIN_DRIVER,
        652,
        "CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx",
        Params::DriverEx,
    ),
    (
        DOMAIN_DRIVER,
        653,
        "CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz",
        Params::DriverEx,
    ),
    (
        DOMAIN_DRIVER,
        514,
        "CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch",
        Params::Graph,
    ),
    (
        DOMAIN_DRIVER,
        515,
        "CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz",
        Params::Graph,
    ),
    (
        DOMAIN_RUNTIME,
        211,
        "CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000",
        Params::Runtime,
    ),
    (
        DOMAIN_RUNTIME,
        214,
        "CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000",
        Params::Runtime,
    ),
    (
        DOMAIN_RUNTIME,
        269,
        "CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000",
        Params::Runtime,
    ),
    (
        DOMAIN_RUNTIME,
        270,
        "CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000",
        Params::Runtime,
    ),
    (
        DOMAIN_RUNTIME,
        430,
        "CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060",
        Params::RuntimeEx,
    ),
    (
        DOMAIN_RUNTIME,
        431,
        "CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060",
        Params::RuntimeEx,
    ),
    (
        DOMAIN_RUNTIME,
        505,
        "CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000",
        Params::Opaque,
    ),
    (
        DOMAIN_RUNTIME,
        506,
        "CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000",
        Params::Opaque,
    ),
    (
        DOMAIN_RUNTIME,
        311,
        "CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000",
        Params::Graph,
    ),
    (
        DOMAIN_RUNTIME,
        312,
        "CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000",
        Params::Graph,
    ),
];

/// The parameters of a followed launch call; `None` for any other call.
pub fn params_of(domain: u32, cbid: u32) -> Option<Params> {
    LAUNCHES
        .iter()
        .find(|(d, c, ..)| *d == domain && *c == cbid)
        .map(|l| l.3)
}

/// What a launch is, for the rule: a name hash, grid and block (zero for a graph), and whether the
/// kernel is a collective's ([`super::rule::is_collective`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub name: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub graph: bool,
    pub collective: bool,
}

/// Reads a launch call's parameters; `None` for [`Params::Opaque`] or null pointers.
///
/// # Safety
/// `params` is the `functionParams` CUPTI passed for a call of kind `kind`, and `symbol` its
/// `symbolName` (null or a NUL-terminated string).
pub unsafe fn read(kind: Params, params: *const c_void, symbol: *const c_char) -> Option<Launch> {
    if params.is_null() {
        return None;
    }
    // SAFETY: per this function's contract.
    let name = |function: *const c_void| unsafe { kernel_name(symbol, function) };
    // SAFETY: per this function's contract.
    let collective =
        !symbol.is_null() && is_collective(unsafe { CStr::from_ptr(symbol) }.to_bytes());
    // SAFETY: per this function's contract, `params` points to the struct of its kind.
    unsafe {
        match kind {
            Params::Driver => {
                let p = &*params.cast::<DriverLaunch>();
                Some(Launch {
                    name: name(p.function),
                    grid: [p.grid_x, p.grid_y, p.grid_z],
                    block: [p.block_x, p.block_y, p.block_z],
                    graph: false,
                    collective,
                })
            }
            Params::DriverEx => {
                let p = &*params.cast::<DriverLaunchEx>();
                let c = p.config.as_ref()?;
                Some(Launch {
                    name: name(p.function),
                    grid: [c.grid_x, c.grid_y, c.grid_z],
                    block: [c.block_x, c.block_y, c.block_z],
                    graph: false,
                    collective,
                })
            }
            Params::Runtime => {
                let p = &*params.cast::<RuntimeLaunch>();
                Some(Launch {
                    name: name(p.function),
                    grid: p.grid,
                    block: p.block,
                    graph: false,
                    collective,
                })
            }
            Params::RuntimeEx => {
                let p = &*params.cast::<RuntimeLaunchEx>();
                let c = p.config.as_ref()?;
                Some(Launch {
                    name: name(p.function),
                    grid: c.grid,
                    block: c.block,
                    graph: false,
                    collective,
                })
            }
            Params::Graph => {
                let p = &*params.cast::<GraphLaunch>();
                Some(Launch {
                    name: fnv((p.exec as usize as u64)
                        .to_le_bytes()
                        .into_iter()
                        .chain(*b"graph")),
                    grid: [0; 3],
                    block: [0; 3],
                    graph: true,
                    collective: false,
                })
            }
            Params::Opaque => None,
        }
    }
}

/// The kernel's name as CUPTI gives it, else (no name) its function handle: equal launches, equal
/// hashes, within the process.
///
/// # Safety
/// `symbol` is null or a NUL-terminated string.
unsafe fn kernel_name(symbol: *const c_char, function: *const c_void) -> u64 {
    if symbol.is_null() {
        return fnv((function as usize as u64).to_le_bytes());
    }
    // SAFETY: per this function's contract.
    fnv(unsafe { CStr::from_ptr(symbol) }.to_bytes().iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_launch_call_is_followed_once() {
        for (at, (d, c, name, _)) in LAUNCHES.iter().enumerate() {
            assert!(
                !LAUNCHES[at + 1..]
                    .iter()
                    .any(|(d2, c2, ..)| d2 == d && c2 == c),
                "{name} twice"
            );
            assert_eq!(*d == DOMAIN_DRIVER, name.contains("DRIVER"), "{name}");
        }
        assert_eq!(params_of(DOMAIN_DRIVER, 307), Some(Params::Driver));
        assert_eq!(params_of(DOMAIN_RUNTIME, 307), None, "the domain counts");
    }

    #[test]
    fn a_driver_launch_reads_its_grid_and_block() {
        let p = DriverLaunch {
            function: std::ptr::null_mut(),
            grid_x: 8,
            grid_y: 4,
            grid_z: 1,
            block_x: 128,
            block_y: 1,
            block_z: 1,
        };
        let name = c"_Z4gemmPf";
        // SAFETY: a DriverLaunch and a C string, as the contract asks.
        let got = unsafe {
            read(
                Params::Driver,
                (&p as *const DriverLaunch).cast(),
                name.as_ptr(),
            )
        }
        .unwrap();
        assert_eq!(
            (got.grid, got.block, got.graph),
            ([8, 4, 1], [128, 1, 1], false)
        );
        assert_eq!(got.name, fnv(*b"_Z4gemmPf"));
        assert!(!got.collective);
        let nccl =
            c"_Z24ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
        // SAFETY: as above.
        let got = unsafe {
            read(
                Params::Driver,
                (&p as *const DriverLaunch).cast(),
                nccl.as_ptr(),
            )
        };
        assert!(got.unwrap().collective, "an NCCL kernel is never profiled");
        // SAFETY: as above; an opaque call is never read.
        assert_eq!(
            unsafe {
                read(
                    Params::Opaque,
                    (&p as *const DriverLaunch).cast(),
                    name.as_ptr(),
                )
            },
            None
        );
    }
}
