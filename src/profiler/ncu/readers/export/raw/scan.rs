//! Finding the fields of one raw-page row without tokenising all of them.
//!
//! ncu quotes every field (`"…"`, a quote inside doubled), so outside the quotes a row holds nothing
//! but the `,` between fields. The scanner builds, 64 bytes at a time, bit masks of the quotes and
//! commas, turns the quote mask into an inside-quotes mask (a prefix XOR: each quote flips the
//! state, a doubled quote flips it twice) and counts the commas outside quotes with `popcount`, so
//! the ~500 fields ncu writes per row cost a few instructions per 64 bytes; only the blocks that hold
//! a wanted field are walked comma by comma.
//!
//! A row that is not of that shape (an unquoted field, text after a closing quote, a line break
//! inside a field, `\r\n` line ends, another field count) is refused, and the caller reads it with
//! the CSV reader instead, so such input behaves exactly as it always did.

/// Where a wanted field lies in the row: `start..end` covers the field with its quotes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FieldSpan {
    pub start: u32,
    pub end: u32,
}

/// Finds the fields numbered `wanted` (ascending, distinct) in `row` (a line without its `\n`) that
/// must have exactly `width` fields, writing their spans to `out` (same order). `false` when the row
/// is not fully quoted CSV of that width.
pub fn scan_row(row: &[u8], width: usize, wanted: &[usize], out: &mut [FieldSpan]) -> bool {
    debug_assert_eq!(wanted.len(), out.len());
    if row.is_empty() || row.len() >= u32::MAX as usize || width == 0 {
        return false;
    }
    let mut field = 0usize;
    let mut field_start = 0u32;
    let mut next = 0usize;
    let mut want = wanted.first().copied().unwrap_or(usize::MAX);
    let mut carry = 0u64;
    let mut padded = [0u8; 64];
    for (index, chunk) in row.chunks(64).enumerate() {
        let offset = (index * 64) as u32;
        let block: &[u8; 64] = match chunk.try_into() {
            Ok(block) => block,
            Err(_) => {
                // Only the last chunk is short, so the rest of `padded` is still zero.
                padded[..chunk.len()].copy_from_slice(chunk);
                &padded
            }
        };
        let (quotes, commas) = masks(block);
        let inside = prefix_xor(quotes) ^ carry;
        carry = ((inside as i64) >> 63) as u64;
        let valid = if chunk.len() == 64 {
            u64::MAX
        } else {
            (1u64 << chunk.len()) - 1
        };
        let outside = !inside & !quotes & valid;
        if outside & !commas != 0 {
            return false;
        }
        let mut separators = outside;
        while separators != 0 {
            let count = separators.count_ones() as usize;
            if field + count < want {
                field += count;
                break;
            }
            let at = offset + separators.trailing_zeros();
            separators &= separators - 1;
            if field == want {
                out[next] = FieldSpan {
                    start: field_start,
                    end: at,
                };
                next += 1;
                want = wanted.get(next).copied().unwrap_or(usize::MAX);
            }
            field += 1;
            field_start = at + 1;
        }
        if field >= width {
            return false;
        }
    }
    if carry != 0 || field + 1 != width {
        return false;
    }
    if field == want {
        out[next] = FieldSpan {
            start: field_start,
            end: row.len() as u32,
        };
        next += 1;
    }
    next == wanted.len()
}

/// The text of a field found by [`scan_row`]: without its quotes, with doubled quotes still doubled
/// (see [`has_escapes`] and [`unescape_into`]).
pub fn field_body(row: &[u8], span: FieldSpan) -> &[u8] {
    let raw = &row[span.start as usize..span.end as usize];
    // The scanner accepts only quoted fields or empty ones (`,,`).
    if raw.len() >= 2 {
        &raw[1..raw.len() - 1]
    } else {
        &[]
    }
}

pub fn has_escapes(body: &[u8]) -> bool {
    memchr::memchr(b'"', body).is_some()
}

/// Appends `body` with each doubled quote made single.
pub fn unescape_into(body: &[u8], out: &mut Vec<u8>) {
    let mut rest = body;
    while let Some(at) = memchr::memchr(b'"', rest) {
        out.extend_from_slice(&rest[..=at]);
        // The scanner guarantees the quote is doubled.
        rest = rest.get(at + 2..).unwrap_or(&[]);
    }
    out.extend_from_slice(rest);
}

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const ONES: u64 = 0x0101_0101_0101_0101;

/// Bit i set where `block[i]` is `"` (first mask) or `,` (second).
#[inline]
fn masks(block: &[u8; 64]) -> (u64, u64) {
    let mut quotes = 0u64;
    let mut commas = 0u64;
    for (i, word) in block.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        quotes |= byte_bits(word, b'"') << (8 * i);
        commas |= byte_bits(word, b',') << (8 * i);
    }
    (quotes, commas)
}

/// Eight bits, bit k set where byte k of `word` equals `byte` (exact, no false positives).
#[inline]
fn byte_bits(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    // High bit of each byte set where that byte of x is zero.
    let zero = !(((x & LOW7) + LOW7) | x | LOW7);
    // Gather the eight high bits into the top byte, then bring them down.
    ((zero >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// Bit i set when an odd number of bits 0..=i of `x` are set.
#[inline]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(row: &[u8], width: usize, wanted: &[usize]) -> Option<Vec<Vec<u8>>> {
        let mut spans = vec![FieldSpan::default(); wanted.len()];
        scan_row(row, width, wanted, &mut spans).then(|| {
            spans
                .iter()
                .map(|&s| {
                    let mut out = Vec::new();
                    unescape_into(field_body(row, s), &mut out);
                    out
                })
                .collect()
        })
    }

    fn csv_fields(row: &[u8]) -> Vec<Vec<u8>> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(row);
        let mut rec = csv::ByteRecord::new();
        assert!(reader.read_byte_record(&mut rec).unwrap());
        rec.iter().map(<[u8]>::to_vec).collect()
    }

    #[test]
    fn byte_bits_are_exact() {
        let word = u64::from_le_bytes(*b"\",\"\x00\xa2\"\xff,");
        assert_eq!(byte_bits(word, b'"'), 0b0010_0101);
        assert_eq!(byte_bits(word, b','), 0b1000_0010);
        assert_eq!(prefix_xor(0b1001), 0b0111);
    }

    #[test]
    fn finds_wanted_fields_like_the_csv_reader() {
        let long = "x".repeat(150);
        let rows = [
            "\"0\",\"a\",\"\",\"b,c\"".to_string(),
            format!("\"1\",\"{long}\",\"1,234.5\",\"q\"\"uote\"\"\""),
            format!("\"2\",\"7  \"\"<default domain>:a,\"\",\"\"b:none\"\" \",\"{long}\",\"\""),
            "\"3\",,\"\"\"\",\"\"".to_string(),
        ];
        for row in &rows {
            let all = csv_fields(row.as_bytes());
            assert_eq!(all.len(), 4, "{row}");
            for wanted in [&[0, 1, 2, 3][..], &[1, 3], &[3], &[0], &[]] {
                let got = fields(row.as_bytes(), 4, wanted).expect(row);
                let expected: Vec<_> = wanted.iter().map(|&i| all[i].clone()).collect();
                assert_eq!(got, expected, "{row} {wanted:?}");
            }
        }
    }

    #[test]
    fn wide_rows_span_many_blocks() {
        let cells: Vec<String> = (0..515).map(|i| format!("\"{}\"", i * 37)).collect();
        let row = cells.join(",");
        let wanted = [0, 6, 63, 64, 200, 514];
        let got = fields(row.as_bytes(), 515, &wanted).unwrap();
        for (w, g) in wanted.iter().zip(got) {
            assert_eq!(g, (w * 37).to_string().into_bytes());
        }
    }

    #[test]
    fn refuses_what_is_not_fully_quoted() {
        for row in [
            "\"0\",a,\"b\"",
            "\"0\",\"a\"x,\"b\"",
            "\"0\",\"a\",\"b\"\r",
            "\"0\",\"a\",\"b",
            "\"0\",\"a\" ,\"b\"",
            "\"0\",\"a\"",
            "\"0\",\"a\",\"b\",\"c\"",
            "",
        ] {
            assert!(fields(row.as_bytes(), 3, &[0, 2]).is_none(), "{row}");
        }
    }
}
