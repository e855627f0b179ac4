//! Writes a Neuron Explorer Parquet profile directory from a full-JSON profile, with the tables and
//! columns of profile schema 7.4.0 (the generator the tests use).
//!
//!     cargo run --example gen-neuron-parquet -- OUT_DIR [PROFILE.json] [SCHEMA_VERSION]

#[path = "../../tests/it/neuron/parquet_gen.rs"]
mod parquet_gen;

use std::path::PathBuf;

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(out) = args.next().map(PathBuf::from) else {
        eprintln!("usage: gen-neuron-parquet OUT_DIR [PROFILE.json] [SCHEMA_VERSION]");
        std::process::exit(2);
    };
    let json = args.next().map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/neuron/llama_tp_decoder.json")
        },
        PathBuf::from,
    );
    let mut opts = parquet_gen::GenOptions::default();
    if let Some(v) = args.next() {
        opts.version = v.to_string_lossy().into_owned();
    }
    parquet_gen::generate(&json, &out, &opts);
    println!("wrote {}", out.display());
}
