//! report.json rendering: the model serialised as it is, pretty-printed.
//!
//! Field order follows the model's declaration order and metric maps keep report order, so the same
//! report always gives the same bytes. Values stay in base units and names are never shortened.
//! The model is written straight to the output as it is walked; no intermediate JSON tree is built.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

use super::model::Report;

/// The report as pretty JSON with a trailing newline. Non-finite numbers (which JSON cannot hold)
/// come out as `null`.
pub fn to_json(report: &Report) -> String {
    let mut bytes = Vec::new();
    write_json(report, &mut bytes).expect("writing to memory cannot fail");
    String::from_utf8(bytes).expect("serde_json writes UTF-8")
}

/// [`to_json`] into any writer (wrap a file in a `BufWriter`).
pub fn write_json<W: Write>(report: &Report, mut out: W) -> io::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, Pretty::default());
    report.serialize(&mut serializer).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// `serde_json`'s `PrettyFormatter` (two-space indent), byte for byte, except that a line break and
/// its indentation go out in one write. A large report.json is mostly short indented lines, and
/// writing the indent two bytes at a time was a good part of its rendering time.
#[derive(Default)]
struct Pretty {
    depth: usize,
    has_value: bool,
}

/// A line break followed by enough indentation for most reports (depth 31).
const BREAK: &[u8] = b"\n                                                              ";

impl Pretty {
    fn line_break<W: ?Sized + Write>(&self, out: &mut W) -> io::Result<()> {
        let width = 1 + 2 * self.depth;
        if width <= BREAK.len() {
            return out.write_all(&BREAK[..width]);
        }
        out.write_all(BREAK)?;
        for _ in 0..(width - BREAK.len()) {
            out.write_all(b" ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, out: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        out.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, out: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.line_break(out)?;
        }
        out.write_all(bracket)
    }

    fn item<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        if !first {
            out.write_all(b",")?;
        }
        self.line_break(out)
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.open(out, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.close(out, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        self.item(out, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.open(out, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.close(out, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        self.item(out, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        out.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Same bytes as `serde_json::to_string_pretty`, at every depth the break buffer covers and past it.
    #[test]
    fn matches_serde_json_pretty() {
        let mut deep = serde_json::json!({"leaf": [1.5, null, "x\n\"y\"", {}, []]});
        for i in 0..40 {
            deep = serde_json::json!({ "level": i, "empty": {}, "list": [deep, true] });
        }
        let mut ours = Vec::new();
        deep.serialize(&mut serde_json::Serializer::with_formatter(
            &mut ours,
            Pretty::default(),
        ))
        .unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string_pretty(&deep).unwrap()
        );
    }
}
