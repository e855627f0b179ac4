//! The file's string table: metric names are stored once and referenced by index (`NameId`). ncu
//! writes the table in a block header and later blocks may extend it, so entries are appended as
//! blocks are read and ids stay valid for the rest of the file.

use crate::fast_map::FastMap;

use super::wire::{Cursor, WireError};

#[derive(Debug, Default)]
pub struct StringTable {
    strings: Vec<String>,
    ids: FastMap<String, u32>,
}

impl StringTable {
    /// Appends the strings of one `StringTable` message (field 1, repeated).
    pub(crate) fn extend(&mut self, msg: Cursor<'_>) -> Result<(), WireError> {
        msg.for_each(|f| {
            if f.number == 1 {
                let s = f.as_str()?;
                let id = u32::try_from(self.strings.len())
                    .map_err(|_| WireError::new(f.offset, "more than 2^32 strings"))?;
                self.ids.entry(s.to_owned()).or_insert(id);
                self.strings.push(s.to_owned());
            }
            Ok(())
        })
    }

    pub fn get(&self, id: u32) -> Option<&str> {
        self.strings.get(id as usize).map(String::as_str)
    }

    /// The id of a name (its first entry if the table holds it twice).
    pub fn id_of(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.strings.len()
    }
}
