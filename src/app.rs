//! Commands: profile, report, config show. Each turns parsed arguments into work on the other modules.

use crate::error::Result;

pub fn main() -> Result<i32> {
    Ok(0)
}
