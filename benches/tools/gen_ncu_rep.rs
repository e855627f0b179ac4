//! Builds a large `.ncu-rep` from a real one for benches/ncu_rep.sh: the file header and every block
//! of the input once, then its result blocks again and again until the output has the requested
//! number of copies. Blocks are copied byte for byte with their own length prefixes, so the framing
//! stays correct; the one block that carries the string table is not repeated (later blocks refer to
//! its entries by index, and a second copy would only lengthen the table).
//!
//! Usage: `gen-ncu-rep INPUT.ncu-rep[.gz] OUTPUT.ncu-rep COPIES`

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output, copies] = args.as_slice() else {
        eprintln!("usage: gen-ncu-rep INPUT.ncu-rep[.gz] OUTPUT.ncu-rep COPIES");
        return ExitCode::from(2);
    };
    let Ok(copies) = copies.parse::<u32>() else {
        eprintln!("COPIES must be a whole number, got {copies:?}");
        return ExitCode::from(2);
    };
    match run(input, output, copies) {
        Ok(results) => {
            eprintln!("wrote {output}: {results} results");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read_input(path: &str) -> std::io::Result<Vec<u8>> {
    let raw = std::fs::read(path)?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(raw.as_slice()).read_to_end(&mut out)?;
        return Ok(out);
    }
    Ok(raw)
}

/// One block: its bytes (length prefixes included), whether it holds results, whether it carries strings.
struct Block<'a> {
    bytes: &'a [u8],
    results: u64,
    strings: bool,
}

fn run(input: &str, output: &str, copies: u32) -> Result<u64, String> {
    let data = read_input(input).map_err(|e| format!("{input}: {e}"))?;
    if !data.starts_with(b"NVR\0") {
        return Err(format!("{input}: not a report file"));
    }
    let header_end = 8 + le32(&data, 4)? as usize;
    let blocks = split_blocks(&data, header_end)?;
    let mut out = BufWriter::new(File::create(output).map_err(|e| format!("{output}: {e}"))?);
    let w = |out: &mut BufWriter<File>, b: &[u8]| {
        out.write_all(b).map_err(|e| format!("{output}: {e}"))
    };
    w(&mut out, &data[..header_end])?;
    let mut results = 0;
    for b in &blocks {
        w(&mut out, b.bytes)?;
        results += b.results;
    }
    for _ in 1..copies {
        for b in blocks.iter().filter(|b| b.results > 0 && !b.strings) {
            w(&mut out, b.bytes)?;
            results += b.results;
        }
    }
    out.flush().map_err(|e| format!("{output}: {e}"))?;
    Ok(results)
}

fn le32(data: &[u8], at: usize) -> Result<u32, String> {
    let b = data
        .get(at..at + 4)
        .ok_or(format!("cut short at byte {at}"))?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn split_blocks(data: &[u8], mut at: usize) -> Result<Vec<Block<'_>>, String> {
    let mut blocks = Vec::new();
    while at < data.len() {
        let start = at;
        let header_len = le32(data, at)? as usize;
        let header = data
            .get(at + 4..at + 4 + header_len)
            .ok_or(format!("block header at {at} cut short"))?;
        let fields =
            top_level_fields(header).ok_or(format!("block header at {at} is not a message"))?;
        let get = |n: u64| fields.iter().find(|f| f.0 == n).map_or(0, |f| f.1);
        let payload = get(5) as usize;
        at += 4 + header_len + payload;
        if at > data.len() {
            return Err(format!("block at {start} runs past the end"));
        }
        blocks.push(Block {
            bytes: &data[start..at],
            results: get(2) + get(7) + get(8) + get(9),
            strings: get(4) > 0,
        });
    }
    Ok(blocks)
}

/// (field number, varint value or length) of each top-level field of a message.
fn top_level_fields(msg: &[u8]) -> Option<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < msg.len() {
        let key = varint(msg, &mut i)?;
        let v = match key & 7 {
            0 => varint(msg, &mut i)?,
            2 => {
                let len = varint(msg, &mut i)?;
                i = i.checked_add(usize::try_from(len).ok()?)?;
                len
            }
            1 => {
                i += 8;
                0
            }
            5 => {
                i += 4;
                0
            }
            _ => return None,
        };
        out.push((key >> 3, v));
    }
    (i == msg.len()).then_some(out)
}

fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*i)?;
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}
