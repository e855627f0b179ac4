//! report.json rendering: the model serialised as it is, indented, with leaf objects on one line.
//!
//! Field order follows the model's declaration order and metric maps keep report order, so the same
//! report always gives the same bytes. Values stay in base units and names are never shortened.
//! The model is written straight to the output as it is walked; no intermediate JSON tree is built.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter};

use serde_json::value::RawValue;

use crate::parallel;
use crate::report::model::{Report, Scope};
use crate::report::RenderError;

/// The report as pretty JSON with a trailing newline. Non-finite numbers (which JSON cannot hold)
/// come out as `null`.
pub fn to_json(report: &Report) -> String {
    let mut bytes = Vec::new();
    write_json(report, &mut bytes).expect("writing to memory cannot fail");
    String::from_utf8(bytes).expect("serde_json writes UTF-8")
}

/// [`to_json`] into any writer (wrap a file in a `BufWriter`).
pub fn write_json<W: Write>(report: &Report, out: W) -> io::Result<()> {
    write_json_on(report, out, 1)
}

/// [`write_json`] with the scopes serialised on up to `threads` threads (0: one per core), a batch
/// at a time so that only a batch of scopes is held as text; the same bytes as one thread.
pub fn write_json_on<W: Write>(report: &Report, mut out: W, threads: usize) -> io::Result<()> {
    let threads = parallel::thread_count(threads);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, Layout::default());
    // Scopes cut to their totals are written one line each, the same on any number of threads.
    if (threads <= 1 || report.scopes.len() < 2) && report.scope_trees {
        report.serialize(&mut serializer)
    } else {
        ParallelScopes { report, threads }.serialize(&mut serializer)
    }
    .map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// The report with its `scopes` written from text made on several threads. Field for field the same
/// as [`Report`]'s serialisation (a test compares the bytes).
struct ParallelScopes<'a> {
    report: &'a Report,
    threads: usize,
}

/// Depth of a scope object in report.json (inside the top-level object and the `scopes` array).
const SCOPE_DEPTH: usize = 2;

impl Serialize for ParallelScopes<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq, SerializeStruct};

        struct Scopes<'a>(&'a ParallelScopes<'a>);
        impl Serialize for Scopes<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let ParallelScopes { report, threads } = *self.0;
                let one_line = !report.scope_trees;
                let mut seq = serializer.serialize_seq(Some(report.scopes.len()))?;
                for batch in report.scopes.chunks(threads * 2) {
                    let text = |scope: &Scope| scope_text(scope, one_line);
                    let texts = parallel::map(batch.iter().collect(), threads, text);
                    for text in texts {
                        seq.serialize_element(&text.map_err(S::Error::custom)?)?;
                    }
                }
                seq.end()
            }
        }

        let report = self.report;
        let mut fields = serializer.serialize_struct("Report", 14)?;
        fields.serialize_field("schema_version", &report.schema_version)?;
        fields.serialize_field("generator", &report.generator)?;
        fields.serialize_field("run", &report.run)?;
        fields.serialize_field("metrics", &report.metrics)?;
        fields.serialize_field("time_metric", &report.time_metric)?;
        fields.serialize_field("kernel_selection", &report.kernel_selection)?;
        fields.serialize_field("scopes", &Scopes(self))?;
        fields.serialize_field("aggregate", &report.aggregate)?;
        if report.scope_tables.is_empty() {
            fields.skip_field("scope_tables")?;
        } else {
            fields.serialize_field("scope_tables", &report.scope_tables)?;
        }
        fields.serialize_field("notes", &report.notes)?;
        fields.serialize_field("compare", &report.compare)?;
        fields.serialize_field("sampling", &report.sampling)?;
        fields.serialize_field("cross_rank", &report.cross_rank)?;
        fields.serialize_field("scope_trees", &report.scope_trees)?;
        fields.end()
    }
}

/// One scope as it appears inside report.json's `scopes` array; on one line (`one_line`) for a
/// scope cut to its totals, of which a report may hold 10,000: a tenth of report.json's size is
/// indentation otherwise, and a quarter its summary's regions (its own regions list has them), its
/// regions' names (the last of their segments) and the members of its regions and summary that
/// are `null` or empty, which such a scope leaves out (docs/report-schema.md).
fn scope_text(scope: &Scope, one_line: bool) -> serde_json::Result<Box<RawValue>> {
    if one_line {
        let mut value = serde_json::to_value(scope)?;
        if let Some(regions) = value.get_mut("regions").and_then(|r| r.as_array_mut()) {
            for region in regions.iter_mut() {
                // A region's name is the last of its `segments`.
                if let Some(members) = region.as_object_mut() {
                    members.remove("name");
                }
                leave_out_empty(region);
            }
        }
        if let Some(summary) = value.get_mut("summary") {
            // The regions by self time: the scope's own regions list has their times and shares.
            if let Some(members) = summary.as_object_mut() {
                members.remove("top_regions");
            }
            leave_out_empty(summary);
        }
        return RawValue::from_string(serde_json::to_string(&value)?);
    }
    let mut text = Vec::new();
    let layout = Layout {
        depth: SCOPE_DEPTH,
        ..Layout::default()
    };
    scope.serialize(&mut serde_json::Serializer::with_formatter(
        &mut text, layout,
    ))?;
    RawValue::from_string(String::from_utf8(text).expect("serde_json writes UTF-8"))
}

/// Removes the members of `value`'s objects, at every depth, that are `null`, `[]` or `{}`.
fn leave_out_empty(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(members) => {
            members.retain(|_, v| match v {
                Value::Null => false,
                Value::Array(a) => !a.is_empty(),
                Value::Object(o) => !o.is_empty(),
                _ => true,
            });
            members.values_mut().for_each(leave_out_empty);
        }
        Value::Array(items) => items.iter_mut().for_each(leave_out_empty),
        _ => {}
    }
}

/// `serde_json`'s `PrettyFormatter` layout (two-space indent), except that an object or array that
/// holds no object is written on one line: a metric value is `{"value": 12.5, "unit": "ns"}`, a path's
/// segments `["train_step", "forward"]`. A large report.json is mostly such leaves, so this halves its
/// size and its writing time, and keeps one metric per line for grep and diff.
///
/// Whether a container holds an object is known only when it closes or an object starts inside it, so
/// the text of the open containers not yet decided is kept both ways until then.
#[derive(Default)]
struct Layout {
    depth: usize,
    has_value: bool,
    /// Open containers, innermost last, that hold no object so far; 0 when writing straight out.
    pending: usize,
    /// Their text indented, and on one line.
    indented: Vec<u8>,
    one_line: Vec<u8>,
}

/// A line break followed by enough indentation for most reports (depth 31), written in one go.
const BREAK: &[u8] = b"\n                                                              ";

fn line_break<W: ?Sized + Write>(depth: usize, out: &mut W) -> io::Result<()> {
    let width = 1 + 2 * depth;
    if width <= BREAK.len() {
        return out.write_all(&BREAK[..width]);
    }
    out.write_all(BREAK)?;
    for _ in 0..(width - BREAK.len()) {
        out.write_all(b" ")?;
    }
    Ok(())
}

impl Layout {
    /// An object starts inside the open containers not yet decided: they are written indented.
    fn object_inside<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        if self.pending > 0 {
            out.write_all(&self.indented)?;
            self.indented.clear();
            self.one_line.clear();
            self.pending = 0;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, out: &mut W, bracket: &[u8]) -> io::Result<()> {
        if bracket == b"{" {
            self.object_inside(out)?;
        }
        self.depth += 1;
        self.has_value = false;
        self.pending += 1;
        self.indented.extend_from_slice(bracket);
        self.one_line.extend_from_slice(bracket);
        Ok(())
    }

    fn close<W: ?Sized + Write>(&mut self, out: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.pending == 0 {
            if self.has_value {
                line_break(self.depth, out)?;
            }
            return out.write_all(bracket);
        }
        if self.has_value {
            line_break(self.depth, &mut self.indented)?;
        }
        self.indented.extend_from_slice(bracket);
        self.one_line.extend_from_slice(bracket);
        self.pending -= 1;
        if self.pending == 0 {
            out.write_all(&self.one_line)?;
            self.indented.clear();
            self.one_line.clear();
        }
        Ok(())
    }

    fn item<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        if self.pending == 0 {
            if !first {
                out.write_all(b",")?;
            }
            return line_break(self.depth, out);
        }
        if !first {
            self.indented.push(b',');
            self.one_line.extend_from_slice(b", ");
        }
        line_break(self.depth, &mut self.indented)
    }
}

/// Scalars are written as serde_json writes them, straight out or into both pending texts.
macro_rules! scalars {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $name<W: ?Sized + Write>(&mut self, out: &mut W, $($arg: $ty),*) -> io::Result<()> {
            if self.pending == 0 {
                return CompactFormatter.$name(out, $($arg),*);
            }
            let from = self.one_line.len();
            CompactFormatter.$name(&mut self.one_line, $($arg),*)?;
            self.indented.extend_from_slice(&self.one_line[from..]);
            Ok(())
        }
    )*};
}

impl Formatter for Layout {
    scalars! {
        write_null();
        write_bool(value: bool);
        write_i8(value: i8);
        write_i16(value: i16);
        write_i32(value: i32);
        write_i64(value: i64);
        write_i128(value: i128);
        write_u8(value: u8);
        write_u16(value: u16);
        write_u32(value: u32);
        write_u64(value: u64);
        write_u128(value: u128);
        write_f32(value: f32);
        write_f64(value: f64);
        write_number_str(value: &str);
        begin_string();
        end_string();
        write_string_fragment(fragment: &str);
        write_char_escape(char_escape: CharEscape);
    }

    /// Only whole scopes made on other threads come as raw text, and a scope is an object: the open
    /// containers around it are written indented.
    fn write_raw_fragment<W: ?Sized + Write>(
        &mut self,
        out: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.object_inside(out)?;
        out.write_all(fragment.as_bytes())
    }

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
        if self.pending == 0 {
            return out.write_all(b": ");
        }
        self.indented.extend_from_slice(b": ");
        self.one_line.extend_from_slice(b": ");
        Ok(())
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// report.json, serialised on `threads` threads (0: one per core); the same bytes on any number.
pub struct Json {
    pub threads: usize,
}

impl super::Output for Json {
    fn file_name(&self) -> &'static str {
        "report.json"
    }

    fn render(
        &self,
        report: &Report,
        out: &mut dyn Write,
    ) -> Result<Vec<(std::path::PathBuf, Vec<u8>)>, RenderError> {
        write_json_on(report, out, self.threads).map_err(|source| RenderError::Write {
            path: "report.json".into(),
            source,
        })?;
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(value: &serde_json::Value) -> String {
        let mut ours = Vec::new();
        value
            .serialize(&mut serde_json::Serializer::with_formatter(
                &mut ours,
                Layout::default(),
            ))
            .unwrap();
        String::from_utf8(ours).unwrap()
    }

    #[test]
    fn containers_without_objects_take_one_line() {
        let value = serde_json::json!({
            "metric": {"value": 1.5, "unit": "ns", "values": ["4", "16"]},
            "segments": ["a", "b\n\"c\""],
            "list": [{"x": 1}, {"y": {"z": []}}, 3],
            "empty": {},
            "none": null
        });
        let expected = r#"{
  "metric": {"value": 1.5, "unit": "ns", "values": ["4", "16"]},
  "segments": ["a", "b\n\"c\""],
  "list": [
    {"x": 1},
    {
      "y": {"z": []}
    },
    3
  ],
  "empty": {},
  "none": null
}"#;
        assert_eq!(layout(&value), expected);
    }

    /// The same JSON as serde_json's own writer, at every depth the break buffer covers and past it.
    #[test]
    fn reads_back_as_the_same_value_at_any_depth() {
        let mut deep =
            serde_json::json!({"leaf": [1.5, null, "x\n\"y\"", {}, []], "n": -3, "t": true});
        for i in 0..40 {
            deep = serde_json::json!({ "level": i, "empty": {}, "list": [deep, true], "flat": [i, "s"] });
        }
        let text = layout(&deep);
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, deep);
        // Each line is indented two spaces per container open before it, deeper than the break buffer too.
        let mut open = 0usize;
        for line in text.lines() {
            let closing = line.trim_start().starts_with(['}', ']']) as usize;
            let indent = line.len() - line.trim_start().len();
            assert_eq!(indent, 2 * (open - closing), "{line}");
            open += line.matches(['{', '[']).count();
            open -= line.matches(['}', ']']).count();
        }
        assert!(text
            .lines()
            .any(|l| l.starts_with(&" ".repeat(BREAK.len()))));
    }
}
