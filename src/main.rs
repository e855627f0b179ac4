//! Entry point: run, print the error chain once, exit with the documented code.

use std::process::ExitCode;

use profile_run::console::{err_line, escape_controls};

fn main() -> ExitCode {
    // A panic is a bug in profile-run, not in the user's input: exit 1 (internal error), never 101.
    let Ok(outcome) = std::panic::catch_unwind(profile_run::commands::main) else {
        err_line("error: internal error in profile-run (a bug); please report it with the command line used");
        return ExitCode::from(profile_run::error::exit::INTERNAL as u8);
    };
    match outcome {
        Ok(code) => ExitCode::from(code as u8),
        Err(err) => {
            let code = err.exit_code();
            let message = err.to_string();
            err_line(&format!("error: {}", escape_controls(&message)));
            let mut source = std::error::Error::source(&err);
            while let Some(cause) = source {
                // Most messages already quote their cause; repeat it only when it adds something.
                let cause_text = cause.to_string();
                if !message.contains(&cause_text) {
                    err_line(&format!("  caused by: {}", escape_controls(&cause_text)));
                }
                source = cause.source();
            }
            ExitCode::from(code as u8)
        }
    }
}
