//! Writing to the terminal streams without ever failing a run: a closed stderr (`2>&1 | head -2`) or
//! a hung-up terminal must not stop profile-run while the profiler still holds a capture, and a closed
//! stdout is a silent success (as in ripgrep), while a full disk on stdout is an error.
//!
//! Floor: ground. Imports nothing above it. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

use std::io::Write;

/// Writes one line to stderr; any error (closed pipe, hung-up terminal) is ignored, never a panic
/// (`eprintln!` panics on them).
pub fn err_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = err.write_all(b"\n");
    }
    let _ = err.flush();
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
}
