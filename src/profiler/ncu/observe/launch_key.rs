//! What a launch is known by across passes and captures: its configuration ([`Shape`], with the
//! mangled kernel name the launch key) and the process it ran in. Shared by the sampled join
//! (`report_source/twins.rs`) and the first pass's durations (`launch_durations.rs`).

/// A launch's configuration: with the mangled kernel name, what makes two launches twins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    pub grid: [u64; 3],
    pub block: [u64; 3],
    pub registers: u64,
    pub shared_static: u64,
    pub shared_dynamic: u64,
}

#[cfg(test)]
impl Shape {
    /// A one-dimensional launch of `grid` blocks of 128 threads: the launch key tests vary.
    pub(crate) fn of_grid(grid: u64) -> Shape {
        Shape {
            grid: [grid, 1, 1],
            block: [128, 1, 1],
            registers: 32,
            shared_static: 0,
            shared_dynamic: 0,
        }
    }
}

/// Which process (id, device) of one capture a result ran in.
pub(crate) type Process = (u32, Option<u64>);
