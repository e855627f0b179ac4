//! Writes synthetic `--page raw` exports of any size for benchmarks.
//!
//! The header, the units row and the bulk of every data row come from a real capture (by default
//! `tests/fixtures/ncu/h200-2025.3.1/manual_raw.csv`), so column count, quoting and value shapes match
//! what ncu writes. What varies per row: the result ID, the process, the NVTX push/pop stack (nested
//! several levels deep, some ranges in a named domain, some results outside every range), the kernel
//! name and a handful of metrics (duration and cycles with thousands separators, percentages). The
//! output depends only on the options and the seed.
//!
//! ```text
//! cargo run --release --example gen-ncu-export -- --size 1G --processes 8 --out /tmp/big.csv
//! ```

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use clap::Parser;

#[derive(Debug, Parser)]
#[command(about = "Write a synthetic ncu `--page raw` CSV export")]
struct Args {
    /// Output file (`-` for stdout).
    #[arg(long, default_value = "-")]
    out: String,
    /// Stop once this many bytes are written (suffixes K, M, G: powers of 1024).
    #[arg(long, value_parser = parse_size, conflicts_with = "rows")]
    size: Option<u64>,
    /// Number of results (data rows) to write.
    #[arg(long)]
    rows: Option<u64>,
    /// Processes whose results interleave in the export.
    #[arg(long, default_value_t = 4)]
    processes: u32,
    /// Process ID of the first process (others follow); gives per-rank files distinct scopes.
    #[arg(long, default_value_t = 1000)]
    first_pid: u32,
    /// Deepest NVTX nesting (levels of push/pop ranges).
    #[arg(long, default_value_t = 4)]
    depth: u32,
    /// Distinct regions (nodes of the range tree).
    #[arg(long, default_value_t = 300)]
    regions: u32,
    /// Distinct kernel names.
    #[arg(long, default_value_t = 60)]
    kernels: u32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Real export whose header, units row and data rows serve as templates.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ncu/h200-2025.3.1/manual_raw.csv"))]
    template: PathBuf,
}

fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, scale) = match text.char_indices().last() {
        Some((i, 'K' | 'k')) => (&text[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&text[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&text[..i], 1 << 30),
        _ => (text, 1),
    };
    digits
        .parse::<f64>()
        .map(|v| (v * scale as f64) as u64)
        .map_err(|e| format!("`{text}` is not a size such as 100M or 4G: {e}"))
}

/// SplitMix64: tiny, fast and stable across releases, so a seed names one file forever.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A CSV field as ncu writes it: always quoted, inner quotes doubled.
fn quote(out: &mut Vec<u8>, raw: &[u8]) {
    out.push(b'"');
    for &b in raw {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

/// `1234567.89` → `1,234,567.89` (what ncu prints without `--print-units base` … and sometimes with).
fn with_separators(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    let (int, frac) = text
        .split_once('.')
        .map_or((&text[..], ""), |(i, f)| (i, f));
    let mut out = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// The region tree: every node's full path, in depth-first (program) order.
fn region_paths(count: u32, depth: u32, rng: &mut Rng) -> Vec<Vec<String>> {
    const LEVELS: [&str; 6] = ["step", "layer", "block", "attn", "op", "part"];
    let depth = depth.max(1);
    // Smallest branching factor whose tree of `depth` levels holds `count` nodes.
    let mut branching = 1u64;
    while (1..=depth).map(|l| branching.pow(l)).sum::<u64>() < count as u64 {
        branching += 1;
    }
    let mut paths = Vec::with_capacity(count as usize);
    let mut stack: Vec<String> = Vec::new();
    fn walk(
        stack: &mut Vec<String>,
        level: u32,
        depth: u32,
        branching: u64,
        count: usize,
        paths: &mut Vec<Vec<String>>,
        rng: &mut Rng,
    ) {
        for i in 0..branching {
            if paths.len() >= count {
                return;
            }
            let mut name = format!("{}{i}", LEVELS[level as usize % LEVELS.len()]);
            // Some top-level ranges live in a named domain, as `LLM@prefill` does in real captures.
            if level == 0 && rng.below(8) == 0 {
                name = format!("LLM@{name}");
            }
            stack.push(name);
            paths.push(stack.clone());
            if level + 1 < depth {
                walk(stack, level + 1, depth, branching, count, paths, rng);
            }
            stack.pop();
        }
    }
    walk(
        &mut stack,
        0,
        depth,
        branching,
        count as usize,
        &mut paths,
        rng,
    );
    paths
}

/// The NVTX push/pop cell for a thread and a stack (`TID  "<dom>:<name>:none…"  "…" `).
fn nvtx_cell(tid: u32, path: &[String]) -> Vec<u8> {
    if path.is_empty() {
        return Vec::new();
    }
    let mut cell = format!("{tid} ");
    for seg in path {
        let (domain, name) = seg.split_once('@').unwrap_or(("<default domain>", seg));
        cell.push_str(&format!(
            " \"{domain}:{name}:none:none:none:none:none:none\" "
        ));
    }
    cell.into_bytes()
}

struct Template {
    header_and_units: Vec<u8>,
    /// Data rows, each field already quoted.
    rows: Vec<Vec<Vec<u8>>>,
    kernels: Vec<String>,
    col: Columns,
}

struct Columns {
    id: usize,
    pid: usize,
    nvtx: usize,
    kernel: usize,
    device: usize,
    time: usize,
    cycles: Vec<usize>,
    pcts: Vec<usize>,
}

fn load_template(path: &PathBuf) -> Result<Template, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = bytes.splitn(3, |&b| b == b'\n');
    let header = lines.next().unwrap_or_default();
    let units = lines.next().unwrap_or_default();
    let mut header_and_units = header.to_vec();
    header_and_units.push(b'\n');
    header_and_units.extend_from_slice(units);
    header_and_units.push(b'\n');
    let mut reader = csv::ReaderBuilder::new().from_reader(&bytes[..]);
    let names: Vec<String> = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    let find = |name: &str| {
        names
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("{}: no column `{name}`", path.display()))
    };
    let find_all = |suffix: &str| -> Vec<usize> {
        names
            .iter()
            .enumerate()
            .filter(|(_, h)| h.ends_with(suffix))
            .map(|(i, _)| i)
            .collect()
    };
    let col = Columns {
        id: find("ID")?,
        pid: find("Process ID")?,
        nvtx: names
            .iter()
            .position(|h| h.contains("Push/Pop_Range"))
            .ok_or("template has no NVTX push/pop column")?,
        kernel: find("Kernel Name")?,
        device: find("Device")?,
        time: find("gpu__time_duration.sum")?,
        cycles: [
            "gpc__cycles_elapsed.max",
            "sm__cycles_active.avg",
            "sm__cycles_elapsed.avg",
        ]
        .iter()
        .filter_map(|n| find(n).ok())
        .collect(),
        pcts: find_all("pct_of_peak_sustained_elapsed"),
    };
    let mut rows = Vec::new();
    let mut kernels: Vec<String> = Vec::new();
    for record in reader.byte_records() {
        let record = record.map_err(|e| e.to_string())?;
        if record.get(col.id).is_some_and(|v| v.is_empty()) {
            continue; // the units row
        }
        let kernel = String::from_utf8_lossy(&record[col.kernel]).to_string();
        if !kernels.contains(&kernel) {
            kernels.push(kernel);
        }
        rows.push(
            record
                .iter()
                .map(|f| {
                    let mut q = Vec::with_capacity(f.len() + 2);
                    quote(&mut q, f);
                    q
                })
                .collect(),
        );
    }
    if rows.is_empty() {
        return Err(format!(
            "{}: no data rows to use as templates",
            path.display()
        ));
    }
    Ok(Template {
        header_and_units,
        rows,
        kernels,
        col,
    })
}

/// `count` distinct, realistic kernel names: the template's own, then variants of them.
fn kernel_names(base: &[String], count: u32) -> Vec<Vec<u8>> {
    (0..count as usize)
        .map(|k| {
            let name = &base[k % base.len()];
            let name = if k < base.len() {
                name.clone()
            } else {
                match name.find('<') {
                    Some(at) => format!("{}<{k}, {}", &name[..at], &name[at + 1..]),
                    None => format!("{name}_{k}"),
                }
            };
            let mut q = Vec::new();
            quote(&mut q, name.as_bytes());
            q
        })
        .collect()
}

/// What the generator writes into each column.
#[derive(Clone, Copy)]
enum Action {
    Copy,
    Id,
    Pid,
    Device,
    Nvtx,
    Kernel,
    Time,
    Cycles,
    Pct,
}

/// One simulated process: walks the region tree in program order, a few kernels per region visit.
struct Process {
    pid: u32,
    device: u32,
    cursor: usize,
    left_in_region: u32,
    kernel: usize,
    outside: bool,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("gen-ncu-export: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args = Args::parse();
    let template = load_template(&args.template)?;
    let mut rng = Rng(args.seed ^ 0x5EED);
    let paths = region_paths(args.regions.max(1), args.depth, &mut rng);
    let cells: Vec<Vec<Vec<u8>>> = (0..args.processes.max(1))
        .map(|p| {
            paths
                .iter()
                .map(|path| {
                    let mut q = Vec::new();
                    quote(&mut q, &nvtx_cell(args.first_pid + p, path));
                    q
                })
                .collect()
        })
        .collect();
    let kernels = kernel_names(&template.kernels, args.kernels.max(1));
    let region_kernels: Vec<Vec<usize>> = paths
        .iter()
        .map(|_| {
            (0..1 + rng.below(6))
                .map(|_| rng.below(kernels.len() as u64) as usize)
                .collect()
        })
        .collect();
    let mut procs: Vec<Process> = (0..args.processes.max(1))
        .map(|p| Process {
            pid: args.first_pid + p,
            device: p % 8,
            cursor: 0,
            left_in_region: 0,
            kernel: 0,
            outside: false,
        })
        .collect();

    let sink: Box<dyn Write> = if args.out == "-" {
        Box::new(std::io::stdout().lock())
    } else {
        Box::new(std::fs::File::create(&args.out).map_err(|e| format!("{}: {e}", args.out))?)
    };
    let mut out = BufWriter::with_capacity(1 << 20, sink);
    let io = |e: std::io::Error| format!("{}: {e}", args.out);
    out.write_all(&template.header_and_units).map_err(io)?;
    let mut written = template.header_and_units.len() as u64;
    let max_rows = args.rows.unwrap_or(u64::MAX);
    let max_bytes = args.size.unwrap_or(if args.rows.is_some() {
        u64::MAX
    } else {
        1 << 20
    });
    let col = &template.col;
    let actions: Vec<Action> = (0..template.rows[0].len())
        .map(|i| match i {
            _ if i == col.id => Action::Id,
            _ if i == col.pid => Action::Pid,
            _ if i == col.device => Action::Device,
            _ if i == col.nvtx => Action::Nvtx,
            _ if i == col.kernel => Action::Kernel,
            _ if i == col.time => Action::Time,
            _ if col.cycles.contains(&i) => Action::Cycles,
            _ if col.pcts.contains(&i) => Action::Pct,
            _ => Action::Copy,
        })
        .collect();
    let mut row: Vec<u8> = Vec::with_capacity(8192);
    let mut id = 0u64;
    let mut turn = 0usize;
    let mut block_left = 0u32;
    while id < max_rows && written < max_bytes {
        // Processes take turns in blocks, as concurrent ranks interleave in one export.
        if block_left == 0 {
            turn = rng.below(procs.len() as u64) as usize;
            block_left = 1 + rng.below(32) as u32;
        }
        block_left -= 1;
        let proc = &mut procs[turn];
        if proc.left_in_region == 0 {
            proc.cursor = (proc.cursor + 1) % paths.len();
            proc.left_in_region = 1 + rng.below(6) as u32;
            // One visit in twenty runs outside every range (warm-up, data loading).
            proc.outside = rng.below(20) == 0;
            proc.kernel = 0;
        }
        proc.left_in_region -= 1;
        // A region launches the same few kernels every time it runs, as real code does.
        let region_kernels = &region_kernels[proc.cursor];
        let kernel = &kernels[region_kernels[proc.kernel % region_kernels.len()]];
        proc.kernel += 1;
        let base = &template.rows[rng.below(template.rows.len() as u64) as usize];
        let time_ns = 1_000.0 + rng.below(2_000_000) as f64;
        row.clear();
        for (i, field) in base.iter().enumerate() {
            if i > 0 {
                row.push(b',');
            }
            match actions[i] {
                Action::Copy => row.extend_from_slice(field),
                Action::Id => quote(&mut row, id.to_string().as_bytes()),
                Action::Pid => quote(&mut row, proc.pid.to_string().as_bytes()),
                Action::Device => quote(&mut row, proc.device.to_string().as_bytes()),
                Action::Nvtx if proc.outside => row.extend_from_slice(b"\"\""),
                Action::Nvtx => row.extend_from_slice(&cells[turn][proc.cursor]),
                Action::Kernel => row.extend_from_slice(kernel),
                Action::Time => quote(&mut row, with_separators(time_ns, 0).as_bytes()),
                Action::Cycles => {
                    let cycles = time_ns * 1.98 * (0.5 + rng.below(1000) as f64 / 2000.0);
                    quote(&mut row, with_separators(cycles, 2).as_bytes());
                }
                Action::Pct => {
                    let pct = rng.below(10_000) as f64 / 100.0;
                    quote(&mut row, format!("{pct:.2}").as_bytes());
                }
            }
        }
        row.push(b'\n');
        out.write_all(&row).map_err(io)?;
        written += row.len() as u64;
        id += 1;
    }
    out.flush().map_err(io)?;
    eprintln!("gen-ncu-export: {id} results, {written} bytes");
    Ok(())
}
