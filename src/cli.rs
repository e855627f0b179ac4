//! Command-line arguments (clap derive), mirroring what the user typed; `app` resolves them.
