//! Text fields and the missing value: a field is one tab-free, newline-free run of characters, so
//! backslash, tab, newline and carriage return are escaped (`\\` `\t` `\n` `\r`), and `-` alone
//! stands for a missing value (a text that is `-` itself is written `\-`).

use std::borrow::Cow;

/// A missing value (a range that never ended, a marker with no domain or name).
pub const MISSING: &str = "-";

/// A text as a field: `\`, tab, newline and carriage return escaped, and a `-` text escaped so that it
/// never reads as a missing value. Text with nothing to escape is returned as it is.
pub fn escape(text: &str) -> Cow<'_, str> {
    if text == MISSING {
        return Cow::Borrowed("\\-");
    }
    if !text.contains(['\\', '\t', '\n', '\r']) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Undoes [`escape`]: `\t` `\n` `\r` are the control characters, a backslash before any other character
/// is that character (`\\`, `\-`), and a trailing lone backslash is kept.
pub fn unescape(field: &str) -> Cow<'_, str> {
    if !field.contains('\\') {
        return Cow::Borrowed(field);
    }
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    Cow::Owned(out)
}

/// An optional text as a field: escaped, or [`MISSING`].
pub fn optional(text: Option<&str>) -> Cow<'_, str> {
    text.map_or(Cow::Borrowed(MISSING), escape)
}

/// A field read as an optional text: `None` for [`MISSING`], else the unescaped text.
pub fn read_optional(field: &str) -> Option<Cow<'_, str>> {
    (field != MISSING).then(|| unescape(field))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_special_character_escapes_and_comes_back() {
        let cases = [
            ("plain", "plain"),
            ("a\tb", "a\\tb"),
            ("line\nnext\r", "line\\nnext\\r"),
            ("back\\slash", "back\\\\slash"),
            ("-", "\\-"),
            ("--", "--"),
            ("-x", "-x"),
            ("", ""),
            ("\\t is not a tab", "\\\\t is not a tab"),
        ];
        for (text, field) in cases {
            assert_eq!(escape(text), field, "{text:?}");
            assert!(!escape(text).contains(['\t', '\n', '\r']));
            assert_eq!(unescape(field), text, "{field:?}");
        }
    }

    #[test]
    fn a_lone_dash_is_missing_and_an_escaped_one_is_text() {
        assert_eq!(optional(None), "-");
        assert_eq!(optional(Some("-")), "\\-");
        assert_eq!(read_optional("-"), None);
        assert_eq!(read_optional("\\-").as_deref(), Some("-"));
        assert_eq!(read_optional("").as_deref(), Some(""));
    }

    #[test]
    fn unknown_escapes_and_a_trailing_backslash_are_kept_as_text() {
        assert_eq!(unescape("\\q"), "q");
        assert_eq!(unescape("end\\"), "end\\");
    }
}
