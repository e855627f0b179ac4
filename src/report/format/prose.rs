//! Markdown for the prose profile-run writes itself (notes, findings' messages and actions): its
//! `code spans` stay code, everything else is escaped as [`super::escape_md`] escapes names.

use super::text::{cut_long, escape_html, push_escaped_md, visible};
use crate::console::is_invisible_control;

/// Escapes prose for Markdown, keeping its code spans: a run of backticks that a run of the same
/// length closes (CommonMark's rule) is written as is, with what it encloses, because the inside of
/// a code span is literal text already. Everything else, and every backtick without its closing run,
/// is escaped as [`super::escape_md`] does, so a name quoted in the text can neither inject HTML
/// nor open a heading. A span is escaped as plain text instead where keeping it could break its
/// line or table: it holds a `|` (a GFM table would split its cell there, and a backslash before it
/// would show inside the code outside tables) or a control or bidi-override character.
pub fn escape_md_prose(text: &str) -> String {
    let text = cut_long(text);
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest: &str = &text;
    let mut at_start = true;
    while let Some(open) = rest.find('`') {
        let fence = backtick_run(&rest[open..]);
        let inside_from = open + fence;
        let span = closing_run(&rest[inside_from..], fence)
            .map(|len| &rest[inside_from..inside_from + len])
            .filter(|inside| can_stay_code(inside));
        push_escaped_md(&mut out, &rest[..open], at_start);
        at_start = false;
        match span {
            Some(inside) => {
                let ticks = &rest[open..inside_from];
                out.push_str(ticks);
                // A code span shows a line break as a space anyway; writing the space keeps the
                // break from ending a list item or a table row.
                out.push_str(&inside.replace("\r\n", " ").replace(['\n', '\r', '\t'], " "));
                out.push_str(ticks);
                rest = &rest[inside_from + inside.len() + fence..];
            }
            None => {
                push_escaped_md(&mut out, &rest[open..inside_from], false);
                rest = &rest[inside_from..];
            }
        }
    }
    push_escaped_md(&mut out, rest, at_start);
    out
}

/// Escapes prose for HTML, its code spans as `<code>` elements: the backticks a Markdown reader
/// never sees are never shown in report.html either. Controls are made visible, as everywhere in it.
pub fn prose_html(text: &str) -> String {
    let text = cut_long(text);
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest: &str = &text;
    while let Some(open) = rest.find('`') {
        let fence = backtick_run(&rest[open..]);
        let inside_from = open + fence;
        out.push_str(&escape_html(&visible(&rest[..open])));
        match closing_run(&rest[inside_from..], fence) {
            Some(len) => {
                let inside = &rest[inside_from..inside_from + len];
                out.push_str("<code>");
                out.push_str(&escape_html(&visible(inside.trim())));
                out.push_str("</code>");
                rest = &rest[inside_from + len + fence..];
            }
            None => {
                out.push_str(&escape_html(&rest[open..inside_from]));
                rest = &rest[inside_from..];
            }
        }
    }
    out.push_str(&escape_html(&visible(rest)));
    out
}

/// Length in bytes of the run of backticks `text` starts with.
fn backtick_run(text: &str) -> usize {
    text.bytes().take_while(|&b| b == b'`').count()
}

/// Where in `text` the first run of exactly `fence` backticks starts, if one does.
fn closing_run(text: &str, fence: usize) -> Option<usize> {
    let mut at = 0;
    while let Some(found) = text[at..].find('`') {
        let start = at + found;
        let run = backtick_run(&text[start..]);
        if run == fence {
            return Some(start);
        }
        at = start + run;
    }
    None
}

/// Line breaks and tabs become spaces inside a kept span; any other control character (NEL
/// included) would pass through unseen, so such a span is escaped instead.
fn can_stay_code(inside: &str) -> bool {
    !inside.contains('|')
        && !inside
            .chars()
            .any(|c| is_invisible_control(c) && !matches!(c, '\n' | '\r' | '\t'))
}

#[cfg(test)]
mod tests {
    use super::{escape_md_prose, prose_html};

    #[test]
    fn html_prose_shows_code_spans_as_code_never_as_backticks() {
        assert_eq!(
            prose_html("set `neuron.hardware.peak_flops` to <override>"),
            "set <code>neuron.hardware.peak_flops</code> to &lt;override&gt;"
        );
        assert_eq!(prose_html("a ` b"), "a ` b");
        assert_eq!(prose_html("``a ` b``"), "<code>a ` b</code>");
    }

    #[test]
    fn code_spans_stay_code_and_the_text_around_them_is_escaped() {
        assert_eq!(
            escape_md_prose("set `neuron.hardware.peak_flops` to *override*"),
            "set `neuron.hardware.peak_flops` to \\*override\\*"
        );
        assert_eq!(
            escape_md_prose("`sm__throughput.avg`, `gpc__cycles_elapsed.max`."),
            "`sm__throughput.avg`, `gpc__cycles_elapsed.max`."
        );
        assert_eq!(escape_md_prose("``a ` b``"), "``a ` b``");
        assert_eq!(escape_md_prose("# `x`"), "\\# `x`");
    }

    #[test]
    fn a_backtick_without_its_closing_run_is_escaped() {
        assert_eq!(escape_md_prose("a ` b"), "a \\` b");
        assert_eq!(escape_md_prose("``a` b"), "\\`\\`a\\` b");
        assert_eq!(escape_md_prose("`a` `b"), "`a` \\`b");
    }

    #[test]
    fn a_span_that_could_break_its_line_or_table_is_escaped_as_text() {
        assert_eq!(escape_md_prose("`a|b`"), "\\`a\\|b\\`");
        assert_eq!(escape_md_prose("`a\u{1b}b`"), "\\`a\\u{1b}b\\`");
        assert_eq!(escape_md_prose("`a\u{85}b`"), "\\`a\\u{85}b\\`");
        assert_eq!(escape_md_prose("`a\r\nb` c"), "`a b` c");
        assert_eq!(escape_md_prose("`<script>` <b>"), "`<script>` \\<b\\>");
    }
}
