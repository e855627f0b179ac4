//! ncu's file formats, read as they are: the CSV pages `ncu --import --page raw|details` writes
//! (`export/`) and the `.ncu-rep` report file itself (`report_file/`, format in
//! docs/ncu-report-format.md). Nothing here knows regions or the report model.

pub mod export;
pub mod report_file;
