//! Texts the user or the workload controls (range names, kernel names, commands) as report.md,
//! report.html and the charts show them: escaped for Markdown and HTML, invisible characters made
//! visible, cut past [`MAX_SHOWN_CHARS`], and plain names and slugs for headings and anchors.

use std::borrow::Cow;

use crate::console::is_invisible_control;

/// A region name as a reader sees it: the `\@` that keeps a default-domain range named `a@x` apart
/// from range `x` of domain `a` in region paths is shown as the plain `@`.
pub fn plain_name(name: &str) -> Cow<'_, str> {
    if name.contains("\\@") {
        Cow::Owned(name.replace("\\@", "@"))
    } else {
        Cow::Borrowed(name)
    }
}

/// At most `max` characters, the last one an ellipsis when anything was cut: after the last whole
/// word where one ends in the last third of what is kept (prose reads on), else mid-name.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    let floor = kept.len() - kept.len() / 3;
    let mut out = match kept.rfind(' ') {
        Some(space) if space >= floor => kept[..space].trim_end().to_string(),
        _ => kept,
    };
    out.push('…');
    out
}

/// The most characters of one text (a name, a path, a command) that report.md, report.html and the
/// charts show; the rest is cut with a count, and report.json keeps the whole. A name of 50 MB would
/// otherwise be copied into every table, heading and tooltip that mentions it.
pub const MAX_SHOWN_CHARS: usize = 10_000;

/// `text` cut to [`MAX_SHOWN_CHARS`] characters, followed by how much was left out.
pub fn cut_long(text: &str) -> Cow<'_, str> {
    // Bytes are at least characters: most texts are decided without counting.
    if text.len() <= MAX_SHOWN_CHARS {
        return Cow::Borrowed(text);
    }
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        None => Cow::Borrowed(text),
        Some((end, _)) => {
            let left_out = text[end..].chars().count();
            Cow::Owned(format!(
                "{}… ({left_out} more characters, in full in report.json)",
                &text[..end]
            ))
        }
    }
}

/// Escapes text for Markdown prose, headings and GFM table cells: Markdown punctuation gets a
/// backslash, `<`, `>` and `&` too (a backslash-escaped character is literal text, so no HTML can be
/// injected, and the plain text carries no entities), line breaks and tabs
/// become spaces and other control or bidi-override characters become visible `\u{…}` escapes, so
/// a name can never end a table row or a heading.
pub fn escape_md(text: &str) -> String {
    let text = cut_long(text);
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped_md(&mut out, &text, true);
    out
}

/// Appends `text` escaped as [`escape_md`] does, without cutting it; `at_start` says whether it
/// begins the whole text, where a `#` would open a heading.
pub(super) fn push_escaped_md(out: &mut String, text: &str, at_start: bool) {
    let mut chars = text.chars().enumerate().peekable();
    while let Some((i, ch)) = chars.next() {
        match ch {
            // A CRLF line break is one break.
            '\r' if matches!(chars.peek(), Some((_, '\n'))) => {}
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '<' | '>' | '&' => {
                out.push('\\');
                out.push(ch);
            }
            '#' if i == 0 && at_start => out.push_str("\\#"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if is_invisible_control(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
}

/// Escapes text for HTML and XML (SVG) text and attribute values: `& < > " '` become entities, line
/// breaks and tabs become spaces, and other control or bidi-override characters become visible
/// `\u{…}` escapes (XML 1.0 forbids most controls; overrides could reorder what is shown).
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for ch in visible(text).chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Line breaks and tabs as spaces, other control and bidi-override characters as visible `\u{…}`;
/// cut to [`MAX_SHOWN_CHARS`] characters.
pub fn visible(text: &str) -> String {
    let text = cut_long(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\r' | '\t' => out.push(' '),
            c if is_invisible_control(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// An inline code span that holds any text: the fence is one backtick longer than the longest run
/// inside, line breaks become spaces and control characters visible escapes. Not for table cells
/// (GFM splits cells on `|` even inside code spans).
pub fn code_span(text: &str) -> String {
    let text = cut_long(text);
    let mut clean = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '\n' | '\r' | '\t' => clean.push(' '),
            c if is_invisible_control(c) => clean.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => clean.push(c),
        }
    }
    let mut longest = 0;
    let mut run = 0;
    for ch in clean.chars() {
        run = if ch == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A space on each side keeps a leading or trailing backtick apart from the fence.
    let pad = if clean.starts_with('`') || clean.ends_with('`') || clean.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{clean}{pad}{fence}")
}

/// An HTML id fragment from a region path: ASCII letters and digits, lowercased, other runs turned
/// into `-`, at most 60 characters. May be empty (non-Latin names); callers make ids unique.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 60 {
            break;
        }
    }
    out.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortening_counts_characters() {
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("名前です", 4), "名前です");
        // Prose is cut after a whole word; a name with no space near the end, mid-name.
        assert_eq!(
            shorten("the kernel depends on memory", 22),
            "the kernel depends…"
        );
        assert_eq!(shorten("a kernel_with_a_long_name", 12), "a kernel_wi…");
    }

    #[test]
    fn escaping_neutralises_markdown_and_html() {
        assert_eq!(escape_md("a|b"), "a\\|b");
        assert_eq!(escape_md("<script>"), "\\<script\\>");
        assert_eq!(escape_md("a&amp;b"), "a\\&amp;b");
        assert_eq!(escape_md("#h\nx"), "\\#h x");
        assert_eq!(escape_md("a\r\nb"), "a b");
        assert_eq!(escape_md("a\u{1b}b"), "a\\u{1b}b");
        assert_eq!(escape_md("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(slug("train_step/forward"), "train-step-forward");
        assert_eq!(slug("前向"), "");
        assert_eq!(
            escape_html("<b a=\"x\">'&\r\n\u{202e}"),
            "&lt;b a=&quot;x&quot;&gt;&#39;&amp; \\u{202e}"
        );
    }
}
