//! Every result of every fixture against the CSV pages ncu exported from the same report file: the
//! fixed columns, every metric column of the raw page, the NVTX cells and the details page's rule rows.

use std::collections::BTreeMap;

use profile_run::profiler::ncu::readers::export::nvtx_cell::{parse_cell, CellLayout};
use profile_run::profiler::ncu::readers::report_file::ResultKind;

use super::{decode, Decoded, Val};
use crate::common::fixture;

/// A CSV page: its header and its data rows (the units row after the header is dropped).
struct Page {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Page {
    fn read(name: &str, page: &str, units_row: bool) -> Page {
        let path = fixture(&format!("ncu/h100-2025.3.1-pytorch/{name}_{page}.csv"));
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_path(&path)
            .unwrap();
        let mut all = rdr
            .records()
            .map(|r| r.unwrap().iter().map(str::to_owned).collect::<Vec<_>>());
        let header = all.next().unwrap();
        let skip = usize::from(units_row);
        Page {
            header,
            rows: all.skip(skip).collect(),
        }
    }

    fn col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }
}

/// The CSV columns that are not metrics (ncu's fixed columns).
const FIXED: [&str; 13] = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
    "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

/// ncu's CSV prints a shortened demangled name (casts such as `(int)` dropped, some namespaces
/// folded); compare with both sides stripped of casts and namespace qualifiers.
fn normalise_kernel_name(name: &str) -> String {
    let mut s = name.to_owned();
    for cast in [
        "(int)",
        "(unsigned int)",
        "(unsigned long)",
        "(long)",
        "(bool)",
        "(char)",
        "(unsigned char)",
        "(short)",
    ] {
        s = s.replace(cast, "");
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        // A qualifier is a run of identifier characters (or `<unnamed>`) followed by `::`.
        let start = i;
        if s[i..].starts_with("<unnamed>::") {
            i += "<unnamed>::".len();
            continue;
        }
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if i > start && s[i..].starts_with("::") {
            i += 2;
            continue;
        }
        if i == start {
            out.push(b[i] as char);
            i += 1;
        } else {
            out.push_str(&s[start..i]);
        }
    }
    out
}

fn dim_cell(d: [u64; 3]) -> String {
    format!("({}, {}, {})", d[0], d[1], d[2])
}

fn close(csv: f64, file: f64) -> bool {
    // The CSV prints at most two decimals for fractional values and full integers otherwise.
    let diff = (csv - file).abs();
    diff <= 5e-3 + 1e-9 * file.abs().max(csv.abs())
}

fn check_fixed_columns(name: &str, page: &Page, decoded: &[Decoded]) {
    assert_eq!(
        decoded.len(),
        page.rows.len(),
        "{name}: results vs CSV rows"
    );
    let c = |n: &str| {
        page.col(n)
            .unwrap_or_else(|| panic!("{name}: no column {n}"))
    };
    for (d, row) in decoded.iter().zip(&page.rows) {
        let at = format!("{name} result {}", d.index);
        assert_eq!(row[c("ID")], d.index.to_string(), "{at}");
        assert_eq!(row[c("Process ID")], d.pid.to_string(), "{at}");
        assert_eq!(
            Some(&row[c("Process Name")]),
            d.process_name.as_ref(),
            "{at}"
        );
        assert_eq!(Some(&row[c("Host Name")]), d.host.as_ref(), "{at}");
        assert_eq!(row[c("Device")], d.device.unwrap().to_string(), "{at}");
        assert_eq!(row[c("Context")], d.context.unwrap().to_string(), "{at}");
        let stream = d.stream.map_or("n/a".to_owned(), |s| s.to_string());
        assert_eq!(row[c("Stream")], stream, "{at}");
        match (&d.kind, &d.kernel) {
            (ResultKind::Kernel, Some((display, function, mangled))) => {
                assert!(!mangled.is_empty() && !function.is_empty(), "{at}");
                assert_eq!(
                    normalise_kernel_name(&row[c("Kernel Name")]),
                    normalise_kernel_name(display),
                    "{at}"
                );
                assert_eq!(row[c("Grid Size")], dim_cell(d.grid.unwrap()), "{at}");
                assert_eq!(row[c("Block Size")], dim_cell(d.block.unwrap()), "{at}");
            }
            (ResultKind::Range, None) => assert_eq!(row[c("Kernel Name")], "range", "{at}"),
            other => panic!("{at}: unexpected {other:?}"),
        }
    }
}

fn check_metrics(name: &str, page: &Page, decoded: &[Decoded]) -> usize {
    let mut compared = 0;
    for (d, row) in decoded.iter().zip(&page.rows) {
        for (i, col) in page.header.iter().enumerate() {
            if FIXED.contains(&col.as_str()) {
                continue;
            }
            let at = format!("{name} result {} metric {col}", d.index);
            let cell = &row[i];
            let file = d
                .metrics
                .get(col)
                .unwrap_or_else(|| panic!("{at}: not in the file"));
            match file {
                Val::Num(v) => {
                    let csv: f64 = cell
                        .replace(',', "")
                        .parse()
                        .unwrap_or_else(|_| panic!("{at}: CSV {cell:?} vs {v}"));
                    assert!(close(csv, *v), "{at}: CSV {cell} vs file {v}");
                }
                Val::Str(s) => assert_eq!(cell, s, "{at}"),
                Val::Missing => assert!(cell == "n/a" || cell.is_empty(), "{at}: {cell:?}"),
            }
            compared += 1;
        }
        assert!(
            d.metrics.contains_key("gpu__time_duration.sum"),
            "{name} result {}",
            d.index
        );
    }
    compared
}

/// Splits a push/pop cell into threads: `TID  "entry"  "entry" TID2  "entry"`.
fn cell_threads(cell: &str) -> Vec<(u32, Vec<String>)> {
    let mut out: Vec<(u32, Vec<String>)> = Vec::new();
    let b = cell.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push((cell[start..i].parse().unwrap(), Vec::new()));
        } else if b[i] == b'"' {
            let rest = &cell[i + 1..];
            let end = rest
                .char_indices()
                .find(|&(j, c)| {
                    let after = rest[j + 1..].trim_start();
                    c == '"'
                        && (after.is_empty()
                            || after.starts_with('"')
                            || after.starts_with(|c: char| c.is_ascii_digit()))
                })
                .map(|(j, _)| j)
                .unwrap();
            out.last_mut().unwrap().1.push(rest[..end].to_owned());
            i += end + 2;
        } else {
            i += 1;
        }
    }
    out
}

fn check_nvtx(name: &str, page: &Page, decoded: &[Decoded]) {
    let pp_header = &FIXED[4];
    let se_header = &FIXED[5];
    let pp_layout = CellLayout::from_header(pp_header, "Push/Pop_Range").unwrap();
    let se_layout = CellLayout::from_header(se_header, "Start/Stop_Range").unwrap();
    let pp = page.col(pp_header).unwrap();
    let se = page.col(se_header).unwrap();
    for (d, row) in decoded.iter().zip(&page.rows) {
        let at = format!("{name} result {}", d.index);
        let state = d
            .nvtx
            .as_ref()
            .unwrap_or_else(|| panic!("{at}: no NVTX state"));
        // Push/pop: the threads with open ranges, in file order, each domain's stack outermost first.
        let want: Vec<(u32, Vec<(String, String)>)> = cell_threads(&row[pp])
            .into_iter()
            .map(|(tid, entries)| {
                let ranges = entries
                    .iter()
                    .flat_map(|e| parse_cell(&format!("\"{e}\""), pp_layout))
                    .map(|r| (r.domain, r.name))
                    .collect();
                (tid, ranges)
            })
            .collect();
        let got: Vec<(u32, Vec<(String, String)>)> = state
            .threads
            .iter()
            .filter(|t| t.has_ranges())
            .map(|t| {
                let ranges = t
                    .domains
                    .iter()
                    .flat_map(|d| d.stack.iter().map(|r| (d.domain.clone(), r.name.clone())))
                    .collect();
                (t.tid, ranges)
            })
            .collect();
        assert_eq!(got, want, "{at}: push/pop");
        // Start/end: `id:domain:name:…` entries.
        let want: Vec<(String, String)> = parse_cell(&row[se], se_layout)
            .into_iter()
            .map(|r| (r.domain, r.name))
            .collect();
        let got: Vec<(String, String)> = state
            .start_end
            .iter()
            .map(|r| (r.domain.clone(), r.name.clone()))
            .collect();
        assert_eq!(got, want, "{at}: start/end");
        let ids: Vec<String> = row[se]
            .split('"')
            .filter_map(|e| e.split(':').next().filter(|s| !s.trim().is_empty()))
            .map(|s| s.trim().to_owned())
            .collect();
        let got_ids: Vec<String> = state.start_end.iter().map(|r| r.id.to_string()).collect();
        assert_eq!(got_ids, ids, "{at}: start/end ids");
    }
}

/// One rule row: rule, type, description, speedup type, speedup.
type RuleRow = (String, String, String, String, String);

/// The details page's rule rows, per result: (rule, type, description, speedup type, speedup).
fn check_rules(name: &str, decoded: &[Decoded]) -> usize {
    let page = Page::read(name, "details", false);
    let c = |n: &str| page.col(n).unwrap();
    let (id, rule, ty, desc, st, sv) = (
        c("ID"),
        c("Rule Name"),
        c("Rule Type"),
        c("Rule Description"),
        c("Estimated Speedup Type"),
        c("Estimated Speedup"),
    );
    let mut want: BTreeMap<u64, Vec<RuleRow>> = BTreeMap::new();
    for row in page
        .rows
        .iter()
        .filter(|r| r.len() > rule && !r[rule].is_empty())
    {
        let e = (
            row[rule].clone(),
            row[ty].clone(),
            row[desc].clone(),
            row[st].clone(),
            row[sv].clone(),
        );
        want.entry(row[id].parse().unwrap()).or_default().push(e);
    }
    let mut rows = 0;
    for d in decoded {
        let mut got = Vec::new();
        for r in &d.rules {
            for m in &r.messages {
                let (kind, value) = match m.speedup {
                    Some(s) => (s.kind.csv_label().to_owned(), format!("{:.2}", s.value)),
                    None => (String::new(), String::new()),
                };
                got.push((
                    r.identifier.clone(),
                    m.severity.csv_label().to_owned(),
                    m.plain_text(),
                    kind,
                    value,
                ));
            }
        }
        let want = want.remove(&d.index).unwrap_or_default();
        assert_eq!(
            got.len(),
            want.len(),
            "{name} result {}: rule rows",
            d.index
        );
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (&g.0, &g.1, &g.3),
                (&w.0, &w.1, &w.3),
                "{name} result {}",
                d.index
            );
            assert_eq!(
                g.2.trim(),
                w.2.trim(),
                "{name} result {} rule {}",
                d.index,
                g.0
            );
            if !w.4.is_empty() {
                let (a, b): (f64, f64) = (g.4.parse().unwrap(), w.4.parse().unwrap());
                assert!(
                    (a - b).abs() <= 0.006,
                    "{name} result {} rule {}: {a} vs {b}",
                    d.index,
                    g.0
                );
            }
        }
        rows += got.len();
    }
    assert!(
        want.is_empty(),
        "{name}: CSV rule rows for results the file lacks: {:?}",
        want.keys()
    );
    rows
}

fn check_fixture(name: &str) {
    let decoded = decode(name);
    let page = Page::read(name, "raw", true);
    check_fixed_columns(name, &page, &decoded);
    let compared = check_metrics(name, &page, &decoded);
    assert!(
        compared >= decoded.len() * 400,
        "{name}: only {compared} metric cells compared"
    );
    check_nvtx(name, &page, &decoded);
    let rules = check_rules(name, &decoded);
    assert!(rules > 0, "{name}: no rule rows compared");
}

macro_rules! fixture_tests {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            check_fixture(stringify!($name));
        }
    )*};
}

mod fixtures {
    use super::check_fixture;
    fixture_tests!(
        emit_nvtx,
        nccl_one_rank,
        rep_apprange,
        rep_kernel,
        rep_multiproc,
        rep_pystack,
        rep_range,
        rep_start_end
    );
}
