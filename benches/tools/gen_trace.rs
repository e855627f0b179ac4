//! Writes a synthetic CUPTI trace (`benches/tools/trace_scenarios.rs`) for the trace benchmark.
//!
//! ```text
//! cargo run --release --example gen-cupti-trace -- kernels 10000000 /tmp/cupti.1.trace
//! ```

#[path = "trace_scenarios.rs"]
mod trace_scenarios;

use std::io::BufWriter;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || {
        eprintln!("usage: gen-cupti-trace SCENARIO N OUT");
        for (name, what) in trace_scenarios::SCENARIOS {
            eprintln!("  {name:16} N {what}");
        }
        std::process::exit(2);
    };
    let [scenario, n, out] = &args[..] else {
        return usage();
    };
    let Ok(n) = n.parse::<u32>() else {
        return usage();
    };
    let file = std::fs::File::create(out).unwrap_or_else(|e| {
        eprintln!("gen-cupti-trace: {out}: {e}");
        std::process::exit(1)
    });
    match trace_scenarios::write(scenario, n, BufWriter::new(file)) {
        Ok(true) => {}
        Ok(false) => usage(),
        Err(e) => {
            eprintln!("gen-cupti-trace: {out}: {e}");
            std::process::exit(1)
        }
    }
}
