//! Fuzzing the CUPTI trace reader and the attribution that follows it with proptest: random bytes,
//! random bytes after a real first line, and mutations of a seed corpus that holds every hostile
//! trace of `traces.rs` small (ranges never popped or ended, a domain or thread per range, a stack
//! 256 deep, a cut trace, backwards and 2^64 ns times) beside a plain one. Nothing may panic; an
//! accepted trace keeps within what its text holds and within `regions.max_depth`, and a refused one
//! names the file.
//!
//! Cases per property: `PROPTEST_CASES` (default 256), as for `fuzz.rs`.

use std::path::Path;

use proptest::prelude::*;
use proptest::sample::Index;

use profile_run::profiler::ncu::observe::trace::attribute::{attribute, PushPopScope};
use profile_run::profiler::ncu::readers::trace::{parse, ProcessTrace};
use profile_run::region::Renames;

use super::traces::trace_scenarios;

/// The limit the fuzzed traces are attributed under: small, so the seeds cross it.
const MAX_DEPTH: usize = 16;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

/// Every scenario at a size past [`MAX_DEPTH`], and the hand-made hostile traces.
fn seeds() -> Vec<Vec<u8>> {
    expected_seeds()
        .into_iter()
        .map(|(bytes, _)| bytes)
        .collect()
}

/// What a seed gives as it is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    Read,
    /// Read, and marked partial.
    Cut,
    /// Refused by the reader, naming this.
    Malformed(&'static str),
    /// Refused by attribution: more open ranges than the limit.
    TooMany,
}

fn expected_seeds() -> Vec<(Vec<u8>, Expect)> {
    let mut seeds: Vec<(Vec<u8>, Expect)> = trace_scenarios::SCENARIOS
        .iter()
        .map(|(name, _)| {
            let mut out = Vec::new();
            trace_scenarios::write(name, 24, &mut out).unwrap();
            let hostile = ["never-popped", "marks", "domains", "deep"].contains(name);
            (
                out,
                if hostile {
                    Expect::TooMany
                } else {
                    Expect::Read
                },
            )
        })
        .collect();
    let head = "profile-run-cupti-trace\t2\nprocess\t7\th\tp\t-\nname\t0\tk\n";
    let kernel = |start: u64, end: u64| {
        format!("kernel\t1\t{start}\t{end}\t0\t1\t7\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\napi\t1\t3\t5\t6\truntime\t1\n")
    };
    for (body, expect) in [
        (
            format!(
                "{}range\t1\tpush-pop\t3\t900\t100\t-\tstep\n",
                kernel(10, 20)
            ),
            Expect::Malformed("before the range's start"),
        ),
        (kernel(0, u64::MAX), Expect::Malformed("more than 2^53 ns")),
        (kernel(20, 10), Expect::Read),
        (
            format!(
                "{}range\t1\tstart-end\t3\t1\t-\tD\\t\\-\t\\\n",
                kernel(10, 20)
            ),
            Expect::Read,
        ),
    ] {
        let text = format!("{head}{body}");
        let lines = text.lines().count();
        seeds.push((format!("{text}end\t{lines}\n").into_bytes(), expect));
    }
    // The plain scenario cut at a line boundary and in the middle of a line.
    let whole = seeds[0].0.clone();
    let end = String::from_utf8_lossy(&whole).rfind("end\t").unwrap();
    seeds.push((whole[..end].to_vec(), Expect::Cut));
    seeds.push((whole[..end / 2].to_vec(), Expect::Cut));
    seeds
}

/// What proptest may do to a seed.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(Index),
    Flip(Index, u8),
    Delete(Index, Index),
    Insert(Index, &'static [u8]),
}

/// Tokens that break a trace's grammar: separators, missing values, escapes, record tags, numbers
/// at the edges of their types.
const TOKENS: &[&[u8]] = &[
    b"\t",
    b"\n",
    b"-",
    b"\\",
    b"\\-",
    b"\xff",
    b"0",
    b"4294967295",
    b"18446744073709551615",
    b"18446744073709551616",
    b"-1",
    b"end\t",
    b"end\t0\n",
    b"range\t",
    b"push-pop",
    b"start-end",
    b"kernel\t",
    b"name\t0\t",
    b"api\t",
    b"process\t",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), any::<u8>()).prop_map(|(at, b)| Mutation::Flip(at, b)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::Delete(a, b)),
        (any::<Index>(), proptest::sample::select(TOKENS))
            .prop_map(|(a, t)| Mutation::Insert(a, t)),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match m {
            Mutation::Truncate(at) => bytes.truncate(at.index(len)),
            Mutation::Flip(at, b) if !bytes.is_empty() => bytes[at.index(len)] ^= b | 1,
            Mutation::Flip(..) => {}
            Mutation::Delete(a, span) => {
                let from = a.index(len).min(bytes.len());
                let to = (from + span.index(16)).min(bytes.len());
                bytes.drain(from..to);
            }
            Mutation::Insert(at, token) => {
                let at = at.index(len + 1).min(bytes.len());
                bytes.splice(at..at, token.iter().copied());
            }
        }
    }
    bytes
}

/// Reads `bytes` as a trace and attributes it in both scopes: no panic; what is accepted stays within
/// its text and the limit; what is refused names the file.
fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let trace = match parse(bytes, Path::new("fuzz.trace")) {
        Ok(trace) => trace,
        Err(e) => {
            let message = e.to_string();
            prop_assert!(message.starts_with("fuzz.trace:"), "{}", message);
            return Ok(());
        }
    };
    check_bounds(&trace, bytes)?;
    for scope in [PushPopScope::Thread, PushPopScope::Process] {
        let mut seen = 0usize;
        let mut within = true;
        let attributed = attribute(&trace, scope, &Renames::default(), MAX_DEPTH, |a| {
            seen += 1;
            within &= a.stacks.iter().all(|s| s.len() <= MAX_DEPTH)
                && a.marks.len() <= MAX_DEPTH
                && a.stacks.len() <= MAX_DEPTH + 1
                && a.stacks.len() == a.ids.len();
        });
        prop_assert!(within, "a kernel was handed more ranges than the limit");
        if attributed.is_ok() {
            prop_assert_eq!(seen, trace.kernels.len());
        }
    }
    Ok(())
}

/// Memory follows the text: no more records than lines, no more text than bytes.
fn check_bounds(trace: &ProcessTrace, bytes: &[u8]) -> Result<(), TestCaseError> {
    let lines = bytes.iter().filter(|b| **b == b'\n').count() + 1;
    let records = trace.kernels.len() + trace.ranges.len() + trace.names.len();
    prop_assert!(records <= lines, "{} records from {} lines", records, lines);
    prop_assert!(trace.shapes.len() <= trace.kernels.len() + 1);
    let text: usize = trace
        .texts
        .iter()
        .chain(&trace.names)
        .map(String::len)
        .sum();
    prop_assert!(text <= bytes.len());
    for k in &trace.kernels {
        prop_assert!(k.end >= k.start && (k.shape as usize) < trace.shapes.len());
    }
    for r in &trace.ranges {
        prop_assert!(r.end.is_none_or(|end| end >= r.start));
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        check(&bytes)?;
    }

    #[test]
    fn random_lines_after_a_real_first_line_never_panic(
        lines in proptest::collection::vec("[a-z0-9\\t\\\\-]{0,60}", 0..40)
    ) {
        let text = format!("profile-run-cupti-trace\t2\nprocess\t1\th\tp\t-\n{}\n", lines.join("\n"));
        check(text.as_bytes())?;
    }

    #[test]
    fn mutated_hostile_traces_read_or_are_refused_cleanly(
        seed in any::<Index>(),
        mutations in proptest::collection::vec(mutation(), 0..8),
    ) {
        let seeds = seeds();
        let bytes = mutate(seeds[seed.index(seeds.len())].clone(), &mutations);
        check(&bytes)?;
    }
}

#[test]
fn every_seed_reads_or_is_refused_as_the_hostile_cases_say() {
    for (at, (seed, expect)) in expected_seeds().iter().enumerate() {
        check(seed).unwrap_or_else(|e| panic!("seed {at}: {e}"));
        let got = match parse(&seed[..], Path::new("fuzz.trace")) {
            Err(e) => match expect {
                Expect::Malformed(what) if e.to_string().contains(what) => *expect,
                _ => panic!("seed {at}: {e}"),
            },
            Ok(trace) if trace.partial.is_some() => Expect::Cut,
            Ok(trace) => {
                let refused = attribute(
                    &trace,
                    PushPopScope::Process,
                    &Renames::default(),
                    MAX_DEPTH,
                    |_| {},
                );
                if refused.is_err() {
                    Expect::TooMany
                } else {
                    Expect::Read
                }
            }
        };
        assert_eq!(got, *expect, "seed {at}");
    }
}
