//! One Parquet table (one file, or several `Name_0.parquet`, `Name_1.parquet` parts) read row by row
//! through the `parquet` crate's record API, with lenient value conversion: the same logical column may
//! be written as INT64, UINT64, DOUBLE or text depending on the writer.
//!
//! A table is opened through the checked open (`crate::file_kind`): a regular file inside its
//! profile directory, never a FIFO (which would block) or a link out of the directory; its footer
//! is checked against the file's size and [`MAX_FOOTER_BYTES`] before the metadata is read.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row};

use crate::file_kind::{open_checked, Checks, FileError, Limit, Links};
use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};
use crate::profiler::neuron::readers::json_text::parse_id_list;
use crate::profiler::neuron::readers::summary_json::{check_text, check_value, Entry, Scalar};
use crate::region::{cut_name, NAME_LIMIT};

/// A table's files, in part order.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub files: Vec<PathBuf>,
}

/// One row, with what an error needs to say where it is.
pub struct RowView<'a> {
    pub file: &'a Path,
    pub table: &'a str,
    pub row_no: usize,
    pub columns: &'a [String],
    pub row: &'a Row,
}

/// The largest Parquet metadata (the footer's thrift block) read. A table's metadata describes its
/// row groups and columns in a few KiB to a few MiB; a footer claiming more is damaged or forged,
/// and reading it would hold that many bytes before the metadata is found not to decode.
pub const MAX_FOOTER_BYTES: u64 = 64 << 20;

/// The trailing bytes of a Parquet file: the metadata's length (u32, little-endian) and `PAR1`.
const FOOTER_TAIL: u64 = 8;

/// How a table file is opened: a regular file, through a link only to a file inside `dir`.
fn checks(dir: &Path) -> Checks {
    Checks {
        links: Links::Within(dir.to_path_buf()),
        limit: Limit {
            bytes: u64::MAX,
            fix: "",
        },
    }
}

/// The directory a table file belongs to.
fn profile_dir(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("."))
}

/// Why the table file at `path` is not read from profile directory `dir` (`is a FIFO`, `is a
/// symbolic link to …, outside …`); `None` when it is a regular file inside it, or is missing (the
/// read then says so).
pub fn refusal(path: &Path, dir: &Path) -> Option<String> {
    match open_checked(path, &checks(dir)) {
        Err(FileError::Refused { reason }) => Some(reason),
        _ => None,
    }
}

fn open(path: &Path) -> Result<SerializedFileReader<File>> {
    let mut file = open_checked(path, &checks(profile_dir(path))).map_err(|e| match e {
        FileError::Refused { reason } => NeuronError::Unrecognised {
            path: path.into(),
            message: format!(
                "{reason}: a table is read only as a regular file inside its profile directory; \
                 put the table file itself there"
            ),
        },
        FileError::Io { source } => NeuronError::io(path, source),
    })?;
    check_footer(path, &mut file)?;
    guarded(|| SerializedFileReader::new(file))
        .ok_or_else(|| damaged(path, "byte 0".into()))?
        .map_err(|e| {
            NeuronError::parse(path, "byte 0", format!("not a readable Parquet file: {e}"))
        })
}

/// `read()`, or `None` where the `parquet` crate panics on a damaged file (a slice past the end of
/// a page, found by fuzzing): the caller words it with [`damaged`].
fn guarded<T>(read: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).ok()
}

fn damaged(path: &Path, at: String) -> NeuronError {
    NeuronError::parse(
        path,
        at,
        "the Parquet reader could not decode the file: it is damaged (cut short, or bytes \
         changed); export the profile again",
    )
}

/// Refuses a footer whose metadata length cannot be true: longer than the file before it, or past
/// [`MAX_FOOTER_BYTES`]. A file too short for a footer, or without `PAR1`, is left to the reader.
fn check_footer(path: &Path, file: &mut File) -> Result<()> {
    let io = |e| NeuronError::io(path, e);
    let size = file.metadata().map_err(io)?.len();
    if size < FOOTER_TAIL {
        return Ok(());
    }
    let mut tail = [0u8; FOOTER_TAIL as usize];
    file.seek(SeekFrom::Start(size - FOOTER_TAIL)).map_err(io)?;
    file.read_exact(&mut tail).map_err(io)?;
    file.rewind().map_err(io)?;
    if &tail[4..] != b"PAR1" {
        return Ok(());
    }
    let claimed = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    // The leading `PAR1`, the metadata, then the tail.
    let room = size.saturating_sub(FOOTER_TAIL + 4);
    let why = if claimed > room {
        format!("but the file holds only {room} bytes before its footer")
    } else if claimed > MAX_FOOTER_BYTES {
        format!("more than the {MAX_FOOTER_BYTES} bytes a table's metadata is read up to")
    } else {
        return Ok(());
    };
    Err(NeuronError::parse(
        path,
        format!("byte {}", size - FOOTER_TAIL),
        format!(
            "the footer says the metadata holds {claimed} bytes, {why}: the file is damaged \
             (cut short, or not written by a Parquet writer); export the profile again"
        ),
    ))
}

impl Table {
    /// The top-level column names of the first part (parts share one schema).
    pub fn columns(&self) -> Result<Vec<String>> {
        let Some(first) = self.files.first() else {
            return Ok(Vec::new());
        };
        let reader = open(first)?;
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        Ok(schema
            .root_schema()
            .get_fields()
            .iter()
            .map(|f| f.name().to_string())
            .collect())
    }

    /// Call `visit` for every row of every part; row numbers count across parts.
    pub fn for_each(&self, mut visit: impl FnMut(&RowView) -> Result<()>) -> Result<()> {
        let mut row_no = 0;
        for file in &self.files {
            let reader = open(file)?;
            let columns: Vec<String> = reader
                .metadata()
                .file_metadata()
                .schema_descr()
                .root_schema()
                .get_fields()
                .iter()
                .map(|f| f.name().to_string())
                .collect();
            let at = format!("table {}", self.name);
            let mut rows = guarded(|| reader.get_row_iter(None))
                .ok_or_else(|| damaged(file, at.clone()))?
                .map_err(|e| NeuronError::parse(file, &at, e.to_string()))?;
            loop {
                let next = guarded(|| rows.next())
                    .ok_or_else(|| damaged(file, format!("table {}, row {row_no}", self.name)))?;
                let Some(row) = next else {
                    break;
                };
                let row = row.map_err(|e| {
                    NeuronError::parse(
                        file,
                        format!("table {}, row {row_no}", self.name),
                        e.to_string(),
                    )
                })?;
                visit(&RowView {
                    file,
                    table: &self.name,
                    row_no,
                    columns: &columns,
                    row: &row,
                })?;
                row_no += 1;
            }
        }
        Ok(())
    }
}

impl RowView<'_> {
    fn field(&self, column: &str) -> Option<&Field> {
        let i = self.columns.iter().position(|c| c == column)?;
        self.row.get_column_iter().nth(i).map(|(_, f)| f)
    }

    fn error(&self, column: &str, message: String) -> NeuronError {
        NeuronError::parse(
            self.file,
            format!(
                "table {}, row {}, column `{column}`",
                self.table, self.row_no
            ),
            message,
        )
    }

    /// A number as f64; `None` for a null or absent column.
    pub fn f64(&self, column: &str) -> Result<Option<f64>> {
        let Some(f) = self.field(column) else {
            return Ok(None);
        };
        Ok(match f {
            Field::Null => None,
            Field::Byte(v) => Some(*v as f64),
            Field::Short(v) => Some(*v as f64),
            Field::Int(v) => Some(*v as f64),
            Field::Long(v) => Some(*v as f64),
            Field::UByte(v) => Some(*v as f64),
            Field::UShort(v) => Some(*v as f64),
            Field::UInt(v) => Some(*v as f64),
            Field::ULong(v) => Some(*v as f64),
            Field::Float(v) => Some(*v as f64),
            Field::Double(v) => Some(*v),
            Field::Float16(v) => Some(f64::from(*v)),
            Field::TimestampMicros(v) => Some(*v as f64 * 1e3),
            Field::TimestampMillis(v) => Some(*v as f64 * 1e6),
            Field::Str(s) if s.trim().is_empty() => None,
            Field::Str(s) => Some(
                s.trim()
                    .parse()
                    .map_err(|_| self.error(column, format!("expected a number, found \"{s}\"")))?,
            ),
            other => return Err(self.error(column, format!("expected a number, found {other}"))),
        })
    }

    /// A non-negative integer (times in ns, sizes, ids); integer columns are read exactly.
    pub fn u64(&self, column: &str) -> Result<Option<u64>> {
        let exact = match self.field(column) {
            Some(Field::Long(v)) if *v >= 0 => Some(*v as u64),
            Some(Field::ULong(v)) => Some(*v),
            Some(Field::Int(v)) if *v >= 0 => Some(*v as u64),
            Some(Field::UInt(v)) => Some(u64::from(*v)),
            Some(Field::Str(s)) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        if exact.is_some() {
            return Ok(exact);
        }
        match self.f64(column)? {
            None => Ok(None),
            Some(v) if v >= 0.0 && v.is_finite() => Ok(Some(v as u64)),
            Some(v) => {
                Err(self.error(column, format!("expected a non-negative number, found {v}")))
            }
        }
    }

    /// A required non-negative integer.
    pub fn req_u64(&self, column: &str) -> Result<u64> {
        self.u64(column)?
            .ok_or_else(|| self.error(column, "missing value (null)".into()))
    }

    /// Text; numbers are written out, `null` and `""` are `None`.
    pub fn text(&self, column: &str) -> Result<Option<String>> {
        let Some(f) = self.field(column) else {
            return Ok(None);
        };
        Ok(match f {
            Field::Null => None,
            Field::Str(s) if s.is_empty() => None,
            Field::Str(s) => Some(s.clone()),
            Field::Bytes(b) => Some(String::from_utf8_lossy(b.data()).into_owned()),
            other => Some(other.to_string()),
        })
    }

    /// The value of `column` as a summary metric named `name` (the column itself in a wide table, the
    /// row's key in a long one), checked as summary-json's values are: a negative, NaN or infinite
    /// number, or a measure that is not a number, is refused naming the table, row, column and key.
    /// `None` where the column is absent.
    pub(crate) fn summary_value(&self, column: &str, name: &str) -> Result<Option<Entry>> {
        let Some(f) = self.field(column) else {
            return Ok(None);
        };
        let checked = match f {
            Field::Null => Ok(Entry::Number(None)),
            Field::Str(s) => check_text(name, s),
            Field::Bytes(b) => check_text(name, &String::from_utf8_lossy(b.data())),
            Field::Bool(b) => check_value(name, Scalar::Bool(*b)),
            Field::Group(_) | Field::ListInternal(_) | Field::MapInternal(_) => Err(format!(
                "`{name}` is a nested value ({f}); the `Summary` table holds one number or text \
                 per metric: is this `view --output-format parquet` output?"
            )),
            _ => match self.f64(column) {
                Ok(Some(x)) => check_value(name, Scalar::Number(x)),
                Ok(None) => Ok(Entry::Number(None)),
                // Dates, decimals: not a number this reader converts; text, refused for a measure.
                Err(_) => check_value(name, Scalar::Text(&f.to_string())),
            },
        };
        checked
            .map(Some)
            .map_err(|message| self.error(column, format!("key `{name}`: {message}")))
    }

    /// [`RowView::text`] cut past [`NAME_LIMIT`] bytes as range names are ([`cut_name`]), without
    /// copying the whole of a longer one.
    pub fn name(&self, column: &str) -> Result<Option<String>> {
        match self.field(column) {
            Some(Field::Str(s)) if s.len() > NAME_LIMIT => Ok(Some(cut_name(s))),
            _ => Ok(self.text(column)?.map(|t| match t.len() > NAME_LIMIT {
                true => cut_name(&t),
                false => t,
            })),
        }
    }

    /// A list of ids: a Parquet list, or text such as `[3, 7]`.
    pub fn ids(&self, column: &str) -> Result<Vec<u64>> {
        let Some(f) = self.field(column) else {
            return Ok(Vec::new());
        };
        match f {
            Field::Null => Ok(Vec::new()),
            Field::ListInternal(list) => list
                .elements()
                .iter()
                .map(|e| match e {
                    Field::Long(v) if *v >= 0 => Ok(*v as u64),
                    Field::Int(v) if *v >= 0 => Ok(*v as u64),
                    Field::ULong(v) => Ok(*v),
                    Field::UInt(v) => Ok(u64::from(*v)),
                    other => Err(self.error(column, format!("bad id {other} in the list"))),
                })
                .collect(),
            Field::Str(s) => parse_id_list(s).map_err(|m| self.error(column, m)),
            other => Ok(vec![self.u64(column)?.ok_or_else(|| {
                self.error(column, format!("bad id list {other}"))
            })?]),
        }
    }

    /// A list of names: a Parquet list of strings, or text such as `["a", "b"]` or `a,b`.
    pub fn names(&self, column: &str) -> Result<Vec<String>> {
        let Some(f) = self.field(column) else {
            return Ok(Vec::new());
        };
        Ok(match f {
            Field::Null => Vec::new(),
            Field::ListInternal(list) => list
                .elements()
                .iter()
                .map(|e| match e {
                    Field::Str(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect(),
            Field::Str(s) => match serde_json::from_str::<Vec<String>>(s) {
                Ok(v) => v,
                Err(_) => s
                    .trim_matches(['[', ']'])
                    .split(',')
                    .map(|w| w.trim().trim_matches(['"', '\'']).to_string())
                    .filter(|w| !w.is_empty())
                    .collect(),
            },
            other => vec![other.to_string()],
        })
    }

    /// `time_intervals` as text `[[1, 10], [20, 50]]`.
    pub fn intervals(&self, column: &str) -> Result<Vec<(u64, u64)>> {
        match self.text(column)? {
            None => Ok(Vec::new()),
            Some(s) => serde_json::from_str::<Vec<(u64, u64)>>(&s)
                .map_err(|e| self.error(column, format!("expected [[start, end], …]: {e}"))),
        }
    }
}
