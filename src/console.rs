//! Writing to the terminal streams without ever failing a run: a closed stderr (`2>&1 | head -2`) or
//! a hung-up terminal must not stop profile-run while the profiler still holds a capture, and a closed
//! stdout is a silent success (as in ripgrep), while a full disk on stdout is an error.
//!
//! Floor: ground. Imports nothing above it. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

use std::io::Write;

/// Writes one line to stderr; any error (closed pipe, hung-up terminal) is ignored, never a panic
/// (`eprintln!` panics on them). Control characters are escaped ([`escape_controls`]): notes and
/// errors quote names and values from inputs, which must not drive the terminal.
pub fn err_line(text: &str) {
    // Unit tests: through the test harness's capture, so a note from code under test (a claim taken
    // over) shows only with a failing test's output, not as noise that reads like a failure.
    #[cfg(test)]
    eprintln!("{}", escape_controls(text));
    #[cfg(not(test))]
    program_line(&escape_controls(text));
}

/// Writes one line of the profiled program's own output to stderr as it is: its colours and
/// carriage-return progress bars are the program's, and reach the terminal as they would without
/// profile-run (never a panic on a closed stream either).
pub fn program_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = err.write_all(b"\n");
    }
    let _ = err.flush();
}

/// C0/C1 controls, DEL, and the bidirectional overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069) that make text display in an order other than the one it has: the characters no
/// name is shown with raw, on the terminal or in a report.
pub fn is_invisible_control(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with nothing a terminal could misread: every control character but line feed and tab
/// (ESC, BEL, CR, backspace, DEL, the C1 range) and every bidi override or isolate
/// ([`is_invisible_control`]) written as a visible `\u{1b}` escape, so a range name or a config
/// value that holds a terminal sequence or reverses the line is shown, not obeyed; and the
/// replacement character that a lossy decoding of foreign bytes leaves (`\u{fffd}`) written as `?`,
/// so an error about a garbage file prints as plain text.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let is_escaped =
        |c: char| (is_invisible_control(c) && c != '\n' && c != '\t') || c == '\u{fffd}';
    if !text.chars().any(is_escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\u{fffd}' => out.push('?'),
            c if is_escaped(c) => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Writes `text` (plus a final newline if missing) to stdout. A closed pipe (`| head`) is a
/// success; any other error (`> /dev/full`) is returned, since then the output was lost.
pub fn out_text(text: &str) -> std::io::Result<()> {
    write_text(&mut std::io::stdout().lock(), text)
}

fn write_text(out: &mut dyn Write, text: &str) -> std::io::Result<()> {
    let written = out
        .write_all(text.as_bytes())
        .and_then(|()| match text.ends_with('\n') {
            true => Ok(()),
            false => out.write_all(b"\n"),
        })
        .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_overrides_and_isolates_are_shown_not_obeyed() {
        assert_eq!(
            escape_controls("a\u{202e}b\u{2067}c"),
            "a\\u{202e}b\\u{2067}c"
        );
        assert_eq!(escape_controls("前向き"), "前向き");
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(escape_controls("plain\tname\n"), "plain\tname\n");
        assert_eq!(
            escape_controls("a\x1b[2Jb\x07\r"),
            "a\\u{1b}[2Jb\\u{7}\\u{d}"
        );
        assert_eq!(escape_controls("\u{9b}31m"), "\\u{9b}31m");
    }

    #[test]
    fn a_closed_pipe_is_a_success_and_a_full_device_an_error() {
        let (mut writer, reader) = std::os::unix::net::UnixStream::pair().unwrap();
        drop(reader);
        assert!(write_text(&mut writer, "report.md").is_ok());
        let mut full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let err = write_text(&mut full, "report.md").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28), "ENOSPC: {err}");
    }

    #[test]
    fn escaped_text_keeps_line_breaks_and_escapes_what_a_terminal_would_misread() {
        assert_eq!(
            escape_controls("bad \u{fffd}\u{fffd} start\n  caused by: \u{1b}[31m"),
            "bad ?? start\n  caused by: \\u{1b}[31m"
        );
    }
}
