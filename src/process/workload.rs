//! Whether a workload can start, checked by `--dry-run` without starting it: its program resolves
//! the way `execvp` would (a path as is, a bare name on `PATH`), and the script a Python interpreter
//! is given exists. A real run finds out only after the profiler has started.

use std::path::Path;

use super::{resolve_program, Unrunnable};

/// `Err`: what is missing and how to fix it, in one sentence.
pub fn check_workload(workload: &[String]) -> Result<(), String> {
    let Some(program) = workload.first() else {
        return Ok(());
    };
    match resolve_program(program) {
        Ok(_) => {}
        Err(Unrunnable::Missing(why)) => {
            return Err(format!(
                "the workload's program `{program}` cannot be found ({why}); check the command after `--`{}",
                if program.contains('/') {
                    ""
                } else {
                    ", or give its path"
                }
            ))
        }
        Err(Unrunnable::NotRunnable(why)) => {
            return Err(format!(
                "the workload's program `{program}` cannot be run: {why}"
            ))
        }
    }
    if let Some(script) = python_script(workload) {
        if !Path::new(script).is_file() {
            return Err(format!(
                "the workload's script `{script}` does not exist (relative to {}); check the command after `--`",
                std::env::current_dir()
                    .map_or_else(|_| "the current directory".to_string(), |d| d.display().to_string())
            ));
        }
    }
    Ok(())
}

/// The `.py` script a Python interpreter (`python`, `python3`, `python3.12`) is told to run; `None`
/// for `-m module` and `-c code`, and for any other program.
fn python_script(workload: &[String]) -> Option<&str> {
    let name = Path::new(workload.first()?).file_name()?.to_str()?;
    let version = name.strip_prefix("python")?;
    if !version.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let mut args = workload[1..].iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-m" | "-c" | "-" => return None,
            // Options whose value is the next argument.
            "-W" | "-X" | "--check-hash-based-pycs" => {
                args.next();
            }
            a if a.starts_with('-') => {}
            a => return a.ends_with(".py").then_some(a),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::python_script;

    fn argv(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn the_script_of_a_python_interpreter_is_found_and_modules_are_not_scripts() {
        assert_eq!(python_script(&argv("python train.py 2")), Some("train.py"));
        assert_eq!(
            python_script(&argv("/usr/bin/python3.12 -u -X dev a/b.py")),
            Some("a/b.py")
        );
        assert_eq!(
            python_script(&argv("python -m torch.distributed.run x.py")),
            None
        );
        assert_eq!(python_script(&argv("python -c print(1)")), None);
        assert_eq!(python_script(&argv("pythonista train.py")), None);
        assert_eq!(python_script(&argv("torchrun train.py")), None);
    }
}
