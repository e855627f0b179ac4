//! An SQLite file another tool wrote (an Nsight Systems export, a rocpd database), opened read-only:
//! its tables' and views' columns asked by name, and its errors worded with its path.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::super::TraceError;
use super::refused;

/// An open SQLite file and its path, for messages.
pub(super) struct Sqlite<'p> {
    pub db: Connection,
    pub path: &'p Path,
}

impl<'p> Sqlite<'p> {
    pub fn open(path: &'p Path) -> Result<Sqlite<'p>, TraceError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let db = Connection::open_with_flags(path, flags)
            .map_err(|e| refused(path, format!("could not be opened as SQLite: {e}")))?;
        Ok(Sqlite { db, path })
    }

    /// An SQLite error, as the file's own.
    pub fn sql(&self, e: rusqlite::Error) -> TraceError {
        refused(self.path, format!("SQLite could not read it: {e}"))
    }

    /// The table's or view's columns; `None` when the file has none of that name.
    pub fn columns(&self, table: &str) -> Result<Option<Vec<String>>, TraceError> {
        let mut query = self
            .db
            .prepare("SELECT name FROM pragma_table_info(?1)")
            .map_err(|e| self.sql(e))?;
        let names = query
            .query_map([table], |row| row.get::<_, String>(0))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.sql(e))?;
        Ok((!names.is_empty()).then_some(names))
    }
}
