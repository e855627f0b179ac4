//! What one result is called in a report's words (a kernel launch on GPU, an instruction on
//! Neuron), and what the report's wording depends on it.

use serde::Serialize;

/// What one result is called: a kernel launch on GPU, an instruction on Neuron.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ItemNoun {
    pub one: &'static str,
    pub many: &'static str,
    /// Whether the report lists them by name (GPU kernels); a Neuron region lists no instructions.
    pub listed: bool,
    /// What the regions the profiler itself marks are called (`NVTX regions`, `regions`).
    pub ranges: &'static str,
    /// The heading of a count of results (`Launches`, `Count`).
    pub count_heading: &'static str,
    /// What the aggregate spans (`all processes and devices`, `all profiles`).
    pub across: &'static str,
    /// The scope's totals are the profiler's own summary (Neuron), shown as a Totals table beside
    /// the regions too, and only with the metrics the summary has.
    pub own_totals: bool,
    /// Each scope is one input file (a profile), known across runs by the file's name rather than by
    /// process, host and device (which such a scope does not record): how `diff` pairs scopes.
    pub scope_per_file: bool,
    /// `diff`'s note when a report records no hardware model, `{which}` standing for `either report`,
    /// `report A` or `report B`.
    pub hardware_unknown: &'static str,
    /// What to check when a `diff` gate found no region both runs have.
    pub no_shared_regions: &'static str,
    /// Whether a finding on launch overhead counts first on the short results it covers (GPU
    /// kernels): what the Summary's opening says of it.
    pub launch_overhead: bool,
}

impl ItemNoun {
    pub const KERNEL: ItemNoun = ItemNoun {
        one: "kernel",
        many: "kernels",
        listed: true,
        ranges: "NVTX regions",
        count_heading: "Launches",
        across: "all processes and devices",
        own_totals: false,
        scope_per_file: false,
        hardware_unknown: "The GPU model is not recorded in {which} (reports written before it was recorded, and CSV exports without the device__attribute_display_name column, lack it), so whether both runs used the same GPU is unknown.",
        no_shared_regions: "check that both runs mark the same ranges",
        launch_overhead: true,
    };
}

impl Default for ItemNoun {
    fn default() -> ItemNoun {
        ItemNoun::KERNEL
    }
}
