//! `view --output-format summary-json`: one object keyed by profile id (one per subgraph), each a flat
//! map of metrics. Numbers are kept in the tool's units (seconds, bytes, 0–1 fractions); `null` stays
//! `None`; text values (versions) go to `Summary::text`.
//!
//! The file is read as a stream: each profile id's metrics go straight into its `Summary`, no JSON
//! tree is built, keys are looked at where they lie in the read buffer, and each metric name is held
//! once however many subgraphs repeat it. Memory follows the metrics, not the text (docs/reliability.md,
//! "Neuron profiles"). Every value is checked on the way in (see [`check_value`]): an error names the
//! key path, the line and column, and the byte offset in the file.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use serde::de::{Deserialize, DeserializeSeed, Error as _, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};
use crate::profiler::neuron::readers::model::Summary;

/// Read a summary-json file.
pub fn read(path: &Path) -> Result<Vec<Summary>> {
    let file = std::fs::File::open(path).map_err(|e| NeuronError::io(path, e))?;
    read_from(path, BufReader::with_capacity(1 << 16, file))
}

/// Parse summary-json text (`path` names it in errors).
pub fn parse(path: &Path, text: &str) -> Result<Vec<Summary>> {
    read_from(path, text.as_bytes())
}

/// The document after the tool's log lines, read as it streams by.
fn read_from<R: BufRead>(path: &Path, mut input: R) -> Result<Vec<Summary>> {
    let (skipped, lines_before) = skip_log_lines(path, &mut input)?;
    let consumed = Rc::new(Cell::new(0u64));
    let counted = Counted {
        inner: input,
        consumed: Rc::clone(&consumed),
    };
    let mut de = serde_json::Deserializer::from_reader(counted);
    let mut track = serde_path_to_error::Track::new();
    let result = Document.deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track));
    let at_byte = || skipped + consumed.get().saturating_sub(1);
    let summaries = result.map_err(|inner| {
        let key = track.path().to_string();
        located(path, &inner, lines_before, at_byte(), Some(&key))
    })?;
    de.end().map_err(|e| {
        let err = located(path, &e, lines_before, at_byte(), None);
        match err {
            NeuronError::Parse { path, at, message } => NeuronError::Parse {
                path,
                at,
                message: format!("text after the JSON document: {message}"),
            },
            other => other,
        }
    })?;
    if summaries.is_empty() {
        return Err(NeuronError::parse(
            path,
            "key `.`",
            "the summary has no profile id; was the NTFF empty?",
        ));
    }
    Ok(summaries)
}

/// An error placed in the whole file: line and column (counting the log lines), byte offset, key.
fn located(
    path: &Path,
    inner: &serde_json::Error,
    lines_before: usize,
    byte: u64,
    key: Option<&str>,
) -> NeuronError {
    // serde_json appends its own (document-relative) position; the file-relative one replaces it.
    let message = inner.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m);
    let mut at = format!(
        "line {}, column {}, byte {byte}",
        inner.line() + lines_before,
        inner.column()
    );
    if let Some(key) = key.filter(|k| !k.is_empty() && *k != ".") {
        at.push_str(&format!(", key `{key}`"));
    }
    NeuronError::parse(path, at, message)
}

/// Skips what comes before the first `{` (the tool's log lines), leaving the `{` unread. Returns the
/// bytes skipped and the line breaks among them.
fn skip_log_lines<R: BufRead>(path: &Path, input: &mut R) -> Result<(u64, usize)> {
    let (mut skipped, mut lines) = (0u64, 0usize);
    loop {
        let buf = input.fill_buf().map_err(|e| NeuronError::io(path, e))?;
        if buf.is_empty() {
            return Err(NeuronError::parse(
                path,
                format!("byte {skipped}"),
                "no JSON object found (expected `{` after the tool's log lines); \
                 is this the output of `view --output-format json` or `summary-json`?",
            ));
        }
        let upto = memchr::memchr(b'{', buf);
        let taken = upto.unwrap_or(buf.len());
        lines += memchr::memchr_iter(b'\n', &buf[..taken]).count();
        skipped += taken as u64;
        input.consume(taken);
        if upto.is_some() {
            return Ok((skipped, lines));
        }
    }
}

/// A reader that counts the bytes handed on, for the byte offset of an error.
struct Counted<R> {
    inner: R,
    consumed: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.set(self.consumed.get() + n as u64);
        Ok(n)
    }
}

/// The whole document: profile id → metrics, in file order.
struct Document;

impl<'de> DeserializeSeed<'de> for Document {
    type Value = Vec<Summary>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Document {
    type Value = Vec<Summary>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of profile ids")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut names = Names::default();
        let mut ids: HashSet<String> = HashSet::new();
        let mut out = Vec::new();
        while let Some(id) = map.next_key::<String>()? {
            let duplicate = !ids.insert(id.clone());
            out.push(map.next_value_seed(Metrics {
                profile_id: id,
                duplicate,
                names: &mut names,
            })?);
        }
        Ok(out)
    }
}

/// Each metric name held once, however many subgraphs repeat it.
#[derive(Default)]
struct Names(HashSet<Arc<str>>);

impl Names {
    fn intern(&mut self, name: &str) -> Arc<str> {
        if let Some(known) = self.0.get(name) {
            return Arc::clone(known);
        }
        let name: Arc<str> = name.into();
        self.0.insert(Arc::clone(&name));
        name
    }
}

/// One profile id's object of metrics.
struct Metrics<'a> {
    profile_id: String,
    /// The id came before: refused here, so that the error names it.
    duplicate: bool,
    names: &'a mut Names,
}

impl<'de> DeserializeSeed<'de> for Metrics<'_> {
    type Value = Summary;

    // `any`, so that a value of the wrong type reaches the visitor, which says what it found.
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        if self.duplicate {
            IgnoredAny::deserialize(d)?;
            return Err(D::Error::custom(
                "this profile id is given twice; each subgraph has one id",
            ));
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Metrics<'_> {
    type Value = Summary;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of metrics")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Summary {
            profile_id: self.profile_id,
            ..Summary::default()
        };
        while let Some(name) = map.next_key_seed(NameSeed(self.names))? {
            let duplicate = out.metrics.contains_key(&name) || out.text.contains_key(&*name);
            match map.next_value_seed(ValueSeed {
                name: &name,
                duplicate,
            })? {
                Entry::Number(v) => {
                    out.metrics.insert(name, v);
                }
                Entry::Text(t) => {
                    out.text.insert(name.to_string(), t);
                }
            }
        }
        out.metrics.shrink_to_fit();
        Ok(out)
    }

    // Said the way the rest of the readers say it: "expected an object of metrics, found a number".
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(E::custom("expected an object of metrics, found a number"))
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(E::custom("expected an object of metrics, found a number"))
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(E::custom("expected an object of metrics, found a number"))
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(E::custom("expected an object of metrics, found a string"))
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(E::custom("expected an object of metrics, found a boolean"))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Err(E::custom("expected an object of metrics, found null"))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(A::Error::custom(
            "expected an object of metrics, found a list",
        ))
    }
}

/// A metric name, looked at in place and interned.
struct NameSeed<'a>(&'a mut Names);

impl<'de> DeserializeSeed<'de> for NameSeed<'_> {
    type Value = Arc<str>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for NameSeed<'_> {
    type Value = Arc<str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a metric name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(self.0.intern(name))
    }
}

/// What a summary value becomes.
#[derive(Debug, PartialEq)]
pub(crate) enum Entry {
    Number(Option<f64>),
    Text(String),
}

/// A metric's value, checked against its name as it is read.
struct ValueSeed<'a> {
    name: &'a str,
    /// The name came before in the same object: refused here, so that the error names the key.
    duplicate: bool,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Entry;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        if self.duplicate {
            IgnoredAny::deserialize(d)?;
            return Err(D::Error::custom(
                "this metric is given twice in one profile id's object",
            ));
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Entry;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a metric value")
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        check_value(self.name, Scalar::Number(v as f64)).map_err(E::custom)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        check_value(self.name, Scalar::Number(v as f64)).map_err(E::custom)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        check_value(self.name, Scalar::Number(v)).map_err(E::custom)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        check_value(self.name, Scalar::Text(v)).map_err(E::custom)
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        check_value(self.name, Scalar::Bool(v)).map_err(E::custom)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(Entry::Number(None))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Err(A::Error::custom(nested(self.name, "a list")))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Err(A::Error::custom(nested(self.name, "an object")))
    }
}

fn nested(name: &str, what: &str) -> String {
    format!(
        "`{name}` is {what}; a summary is a flat map of metrics (numbers, or text for versions and \
         the instance type): is this `view --output-format summary-json` output?"
    )
}

/// A scalar JSON value as the tool wrote it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scalar<'a> {
    Number(f64),
    Text(&'a str),
    Bool(bool),
}

/// Whether a metric's name says it measures something (`*_time`, `*_bytes`, `*_percent`, …): such a
/// metric must be a number (or `null`); text is refused rather than kept as a version string.
fn is_measure(name: &str) -> bool {
    const SUFFIXES: &[&str] = &[
        "_time",
        "_bytes",
        "_percent",
        "_count",
        "_flops",
        "_intensity",
        "_ratio",
        "_ns",
        "_cycles",
    ];
    SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// The one check of a summary value, for summary-json and the full JSON's `summary` alike. Every
/// number in a summary is a time, size, count, fraction, ratio or index: none is negative, and none is
/// NaN or infinite. A measure (see [`is_measure`]) must be a number, or a numeric string as some tool
/// versions write them; other keys (versions, the instance type) are kept as text. The error message
/// says what is wrong; the caller adds where.
pub(crate) fn check_value(name: &str, value: Scalar<'_>) -> std::result::Result<Entry, String> {
    match value {
        Scalar::Number(x) => number(name, x, &x),
        Scalar::Text(t) if is_measure(name) => match t.trim() {
            "" => Ok(Entry::Number(None)),
            digits => match digits.parse::<f64>() {
                Ok(x) => number(name, x, &format_args!("\"{t}\"")),
                Err(_) => Err(format!(
                    "`{name}` is the text \"{}\", but it measures something and must be a number",
                    t.chars().take(40).collect::<String>()
                )),
            },
        },
        Scalar::Text(t) => Ok(Entry::Text(t.to_string())),
        Scalar::Bool(b) if is_measure(name) => Err(format!(
            "`{name}` is {b}, but it measures something and must be a number"
        )),
        Scalar::Bool(b) => Ok(Entry::Text(b.to_string())),
    }
}

/// A number of a summary, `written` as the file has it: none is negative, NaN or infinite.
fn number(name: &str, x: f64, written: &dyn fmt::Display) -> std::result::Result<Entry, String> {
    if x.is_nan() {
        Err(format!(
            "`{name}` is {written}, not a number: re-export the summary; a profile whose \
             counters overflowed cannot be read"
        ))
    } else if x.is_infinite() {
        Err(format!(
            "`{name}` is {written}, which is not a finite number"
        ))
    } else if x < 0.0 {
        Err(format!(
            "`{name}` is {written}: a summary holds times, sizes, counts and fractions, \
             none of which can be negative"
        ))
    } else {
        Ok(Entry::Number(Some(x)))
    }
}

/// A summary value written as text by a reader that reads numbers as text too (the Parquet `Summary`
/// table, summary-text): numeric text is a number and checked as one, anything else is checked as
/// text (refused under a measure's name); empty text is `null`.
pub(crate) fn check_text(name: &str, text: &str) -> std::result::Result<Entry, String> {
    match text.trim() {
        "" => Ok(Entry::Number(None)),
        digits => match digits.parse::<f64>() {
            Ok(x) => number(name, x, &format_args!("\"{text}\"")),
            Err(_) => check_value(name, Scalar::Text(text)),
        },
    }
}

/// One profile id's metrics from an already parsed object (the full JSON's `summary[0]`), checked
/// as summary-json's are; an error is what is wrong and the metric's name.
pub(crate) fn summary(
    profile_id: String,
    metrics: Map<String, Value>,
) -> std::result::Result<Summary, (String, String)> {
    let mut out = Summary {
        profile_id,
        ..Summary::default()
    };
    for (name, value) in metrics {
        let scalar = match &value {
            Value::Null => {
                out.metrics.insert(name.into(), None);
                continue;
            }
            Value::Number(n) => Scalar::Number(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => Scalar::Text(s),
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Array(_) => return Err((nested(&name, "a list"), name)),
            Value::Object(_) => return Err((nested(&name, "an object"), name)),
        };
        let entry = match check_value(&name, scalar) {
            Ok(entry) => entry,
            Err(message) => return Err((message, name)),
        };
        match entry {
            Entry::Number(v) => {
                out.metrics.insert(name.into(), v);
            }
            Entry::Text(t) => {
                out.text.insert(name, t);
            }
        }
    }
    Ok(out)
}
