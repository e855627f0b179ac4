//! The progress display while the profiler runs: a spinner with the current kernel or range and the
//! count on a terminal, plain lines otherwise, nothing with `--quiet`. Program output is passed through.

use std::io::IsTerminal;
use std::time::Duration;

use crate::console;
use indicatif::{ProgressBar, ProgressStyle};

pub enum Display {
    Quiet,
    Plain,
    Spinner(ProgressBar),
}

impl Display {
    pub fn new(quiet: bool) -> Display {
        if quiet {
            Display::Quiet
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                    .expect("static template"),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            Display::Spinner(bar)
        } else {
            Display::Plain
        }
    }

    /// A line of the program's own output, or a profiler message worth showing as is.
    pub fn passthrough(&self, line: &str) {
        match self {
            Display::Quiet => {}
            Display::Plain => console::program_line(line),
            Display::Spinner(bar) => bar.println(line),
        }
    }

    /// The current activity (`profiling reduce_kernel (#12)`); kernel and range names in it are
    /// shown with their control characters escaped.
    pub fn status(&self, message: String) {
        match self {
            Display::Quiet => {}
            Display::Plain => console::err_line(&message),
            Display::Spinner(bar) => {
                bar.set_message(console::escape_controls(&message).into_owned())
            }
        }
    }

    pub fn finish(&self) {
        if let Display::Spinner(bar) = self {
            bar.finish_and_clear();
        }
    }
}
