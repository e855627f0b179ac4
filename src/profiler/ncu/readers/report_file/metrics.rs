//! Metric values: each result holds a list of (`NameId`, value) pairs; the name is an index into the
//! string table and the value keeps the type ncu stored (string, float, double, uint32, uint64).
//! Per-instance values (`MetricValueList`) and the metric category are skipped.

use super::strings::StringTable;
use super::wire::{Cursor, WireError};

/// A metric value with the type the file stores it as.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum RecordedValue<'a> {
    String(&'a str),
    Float(f32),
    Double(f64),
    Uint32(u32),
    Uint64(u64),
    /// The metric is listed without a value (ncu prints `n/a`).
    Missing,
}

impl RecordedValue<'_> {
    /// The value as a number; strings and missing values give `None`.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            RecordedValue::Float(v) => Some(f64::from(v)),
            RecordedValue::Double(v) => Some(v),
            RecordedValue::Uint32(v) => Some(f64::from(v)),
            RecordedValue::Uint64(v) => Some(v as f64),
            RecordedValue::String(_) | RecordedValue::Missing => None,
        }
    }

    /// The value as an unsigned integer when it is stored as one.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            RecordedValue::Uint32(v) => Some(u64::from(v)),
            RecordedValue::Uint64(v) => Some(v),
            _ => None,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            RecordedValue::String(_) => "string",
            RecordedValue::Float(_) => "float",
            RecordedValue::Double(_) => "double",
            RecordedValue::Uint32(_) => "uint32",
            RecordedValue::Uint64(_) => "uint64",
            RecordedValue::Missing => "missing",
        }
    }
}

/// One metric of one result. The file does not store units (ncu derives them from the metric name
/// through its metrics library), so none is given here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric<'a> {
    pub name: &'a str,
    pub name_id: u32,
    pub value: RecordedValue<'a>,
}

/// Iterates the metric fields of one result message, decoding each as it is reached.
#[derive(Debug, Clone)]
pub struct MetricIter<'a> {
    body: Cursor<'a>,
    field: u32,
    strings: &'a StringTable,
    done: bool,
}

impl<'a> MetricIter<'a> {
    pub(crate) fn new(body: Cursor<'a>, field: u32, strings: &'a StringTable) -> MetricIter<'a> {
        MetricIter {
            body,
            field,
            strings,
            done: false,
        }
    }

    fn next_metric(&mut self) -> Result<Option<Metric<'a>>, WireError> {
        while let Some(f) = self.body.next_field()? {
            if f.number == self.field {
                return decode_metric(f.as_message()?, self.strings).map(Some);
            }
        }
        Ok(None)
    }
}

impl<'a> Iterator for MetricIter<'a> {
    type Item = Result<Metric<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.next_metric().transpose();
        // An error ends the iteration: the cursor cannot resynchronise after bad bytes.
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }
}

fn decode_metric<'a>(msg: Cursor<'a>, strings: &'a StringTable) -> Result<Metric<'a>, WireError> {
    let mut name_id = None;
    let mut value = RecordedValue::Missing;
    let mut at = msg.start();
    msg.for_each(|f| {
        match f.number {
            1 => {
                name_id = Some(f.as_u32()?);
                at = f.offset;
            }
            2 => value = decode_value(f.as_message()?)?,
            _ => {}
        }
        Ok(())
    })?;
    let Some(name_id) = name_id else {
        return Err(WireError::new(at, "a metric result without a name id"));
    };
    let name = strings.get(name_id).ok_or_else(|| {
        WireError::new(
            at,
            format!(
                "metric name id {name_id} is outside the string table ({} entries)",
                strings.len()
            ),
        )
    })?;
    Ok(Metric {
        name,
        name_id,
        value,
    })
}

/// A `ProfileMetricValue` (also used for device attributes): one of five typed fields.
pub(crate) fn decode_value(msg: Cursor<'_>) -> Result<RecordedValue<'_>, WireError> {
    let mut value = RecordedValue::Missing;
    msg.for_each(|f| {
        value = match f.number {
            1 => RecordedValue::String(f.as_str()?),
            2 => RecordedValue::Float(f.as_f32()?),
            3 => RecordedValue::Double(f.as_f64()?),
            4 => RecordedValue::Uint32(f.as_u32()?),
            5 => RecordedValue::Uint64(f.as_u64()?),
            _ => value,
        };
        Ok(())
    })?;
    Ok(value)
}
