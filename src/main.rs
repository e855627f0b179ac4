//! Entry point: run, print the error chain once, exit with the documented code.

use std::process::ExitCode;

fn main() -> ExitCode {
    match profile_run::app::main() {
        Ok(code) => ExitCode::from(code as u8),
        Err(err) => {
            let code = err.exit_code();
            eprintln!("error: {err}");
            let mut source = std::error::Error::source(&err);
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            ExitCode::from(code as u8)
        }
    }
}
