//! One line read field by field and written field by field, and the error that names the field a
//! line got wrong. A record's field names, in order, are the one list both directions follow.

use std::borrow::Cow;
use std::fmt::{self, Display, Write as _};
use std::str::FromStr;

use crate::text;

/// What is wrong with one line, in words that name the field (its position and meaning); the reader
/// adds the file and the line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError(pub String);

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LineError {}

/// The fields of one line after its tag, taken in order; each is named by its record's list for
/// errors.
pub(crate) struct Fields<'a> {
    tag: &'a str,
    parts: std::str::Split<'a, char>,
    names: &'static [&'static str],
    at: usize,
}

impl<'a> Fields<'a> {
    /// The line's tag and the rest of the line after its tab (`None`: the line is its tag alone).
    pub(crate) fn split(line: &'a str) -> (&'a str, Option<&'a str>) {
        match line.split_once('\t') {
            Some((tag, rest)) => (tag, Some(rest)),
            None => (line, None),
        }
    }

    /// The fields after `tag`, read as the record `names` lists them. A line short of its last
    /// field fails at once, naming that field, so a cut line is reported as cut.
    pub(crate) fn new(
        tag: &'a str,
        rest: Option<&'a str>,
        names: &'static [&'static str],
    ) -> Result<Self, LineError> {
        // Counted on the bytes, so the line is split once, as it is read.
        let present = rest.map_or(0, |r| r.bytes().filter(|&b| b == b'\t').count() + 1);
        if let Some(last) = names.last().filter(|_| present < names.len()) {
            return Err(LineError(format!(
                "`{tag}` line has no field {} ({last})",
                names.len()
            )));
        }
        Ok(Fields {
            tag,
            parts: rest.unwrap_or_default().split('\t'),
            names,
            at: 0,
        })
    }

    /// The next field's text, its position (1 for the first after the tag) and its name.
    fn next(&mut self) -> Result<(&'a str, usize, &'static str), LineError> {
        self.at += 1;
        let name = self.names.get(self.at - 1).copied().unwrap_or("unlisted");
        let raw = self.parts.next().ok_or_else(|| {
            LineError(format!(
                "`{}` line has no field {} ({name})",
                self.tag, self.at
            ))
        })?;
        Ok((raw, self.at, name))
    }

    /// The next field as a keyword of the record's (a range's kind, an API call's kind).
    pub(crate) fn word(&mut self) -> Result<(&'a str, usize, &'static str), LineError> {
        self.next()
    }

    pub(crate) fn num<T: FromStr>(&mut self) -> Result<T, LineError> {
        let (raw, at, name) = self.next()?;
        parse_num(raw, at, name)
    }

    /// A C `int` field that counts something (grid and block size, shared memory): never negative.
    pub(crate) fn count(&mut self) -> Result<i32, LineError> {
        let (raw, at, name) = self.next()?;
        let value: i32 = parse_num(raw, at, name)?;
        if value < 0 {
            return Err(LineError(format!(
                "field {at} ({name}) is {value}, and a count is never negative"
            )));
        }
        Ok(value)
    }

    /// A number, or [`text::MISSING`].
    pub(crate) fn optional_num<T: FromStr>(&mut self) -> Result<Option<T>, LineError> {
        let (raw, at, name) = self.next()?;
        match raw {
            text::MISSING => Ok(None),
            _ => parse_num(raw, at, name).map(Some),
        }
    }

    /// A number, or [`text::MISSING`], in a field added to its record after the format's first
    /// traces: `None` when the line stops before it (a trace written before the field existed).
    pub(crate) fn later_optional_num<T: FromStr>(
        &mut self,
        name: &str,
    ) -> Result<Option<T>, LineError> {
        let at = self.at + 1;
        match self.parts.next() {
            None => Ok(None),
            Some(text::MISSING) => {
                self.at = at;
                Ok(None)
            }
            Some(raw) => {
                self.at = at;
                parse_num(raw, at, name).map(Some)
            }
        }
    }

    /// A text that is always present.
    pub(crate) fn text(&mut self) -> Result<Cow<'a, str>, LineError> {
        Ok(text::unescape(self.next()?.0))
    }

    /// A text, or [`text::MISSING`].
    pub(crate) fn optional_text(&mut self) -> Result<Option<Cow<'a, str>>, LineError> {
        Ok(text::read_optional(self.next()?.0))
    }
}

fn parse_num<T: FromStr>(raw: &str, at: usize, name: &str) -> Result<T, LineError> {
    raw.parse().map_err(|_| {
        let what = if raw.parse::<i128>().is_ok() {
            "out of range for it"
        } else {
            "not a number"
        };
        LineError(format!("field {at} ({name}) is {raw:?}, {what}"))
    })
}

/// One line being written: its tag, then each field after a tab, then the newline.
pub(crate) struct Line<'o> {
    out: &'o mut String,
}

impl<'o> Line<'o> {
    pub(crate) fn start(out: &'o mut String, tag: &str) -> Self {
        out.push_str(tag);
        Line { out }
    }

    /// A number or keyword; a text goes through [`text::escape`] or [`text::optional`] first.
    pub(crate) fn field(&mut self, value: impl Display) -> &mut Self {
        self.out.push('\t');
        // Writing to a String cannot fail.
        let _ = write!(self.out, "{value}");
        self
    }

    pub(crate) fn end(&mut self) {
        self.out.push('\n');
    }
}
