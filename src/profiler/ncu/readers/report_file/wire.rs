//! The protobuf wire format, read in place: a cursor over one message's bytes that yields its fields
//! without copying, so callers decode only the fields they need and skip the rest for free.
//!
//! Every length is checked against the bytes that remain before anything is sliced, and every error
//! carries the absolute byte offset in the report file (the cursor knows where its slice starts).

/// A decode failure at an absolute byte offset of the (decompressed) report file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    pub offset: u64,
    pub what: String,
}

impl WireError {
    pub fn new(offset: u64, what: impl Into<String>) -> WireError {
        WireError {
            offset,
            what: what.into(),
        }
    }
}

/// A field's payload: the wire types this format uses (groups, wire types 3 and 4, are rejected).
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    /// A length-delimited payload and the absolute offset of its first byte.
    Bytes(&'a [u8], u64),
}

/// One field: its number and payload, plus the absolute offset of its key for error messages.
#[derive(Debug, Clone, Copy)]
pub struct Field<'a> {
    pub number: u32,
    pub value: Value<'a>,
    pub offset: u64,
}

impl<'a> Field<'a> {
    /// The field as an unsigned integer (varint or fixed), or an error naming the field.
    pub fn as_u64(&self) -> Result<u64, WireError> {
        match self.value {
            Value::Varint(v) | Value::Fixed64(v) => Ok(v),
            Value::Fixed32(v) => Ok(u64::from(v)),
            Value::Bytes(..) => Err(self.wrong("an integer")),
        }
    }

    /// The field as a 32-bit unsigned integer; larger values are an error, not truncated.
    pub fn as_u32(&self) -> Result<u32, WireError> {
        let v = self.as_u64()?;
        u32::try_from(v).map_err(|_| {
            WireError::new(
                self.offset,
                format!("field {} holds {v}, more than 32 bits", self.number),
            )
        })
    }

    /// The field as a signed 32-bit integer (protobuf `int32` is sign-extended to 64 bits on the wire).
    pub fn as_i32(&self) -> Result<i32, WireError> {
        Ok(self.as_u64()? as i64 as i32)
    }

    pub fn as_f64(&self) -> Result<f64, WireError> {
        match self.value {
            Value::Fixed64(v) => Ok(f64::from_bits(v)),
            _ => Err(self.wrong("a double")),
        }
    }

    pub fn as_f32(&self) -> Result<f32, WireError> {
        match self.value {
            Value::Fixed32(v) => Ok(f32::from_bits(v)),
            _ => Err(self.wrong("a float")),
        }
    }

    pub fn as_bytes(&self) -> Result<&'a [u8], WireError> {
        match self.value {
            Value::Bytes(b, _) => Ok(b),
            _ => Err(self.wrong("a length-delimited value")),
        }
    }

    /// The field as UTF-8 text, borrowed from the buffer.
    pub fn as_str(&self) -> Result<&'a str, WireError> {
        let b = self.as_bytes()?;
        std::str::from_utf8(b).map_err(|e| {
            WireError::new(
                self.offset,
                format!("field {} is not UTF-8 text: {e}", self.number),
            )
        })
    }

    /// A cursor over the embedded message this field holds.
    pub fn as_message(&self) -> Result<Cursor<'a>, WireError> {
        match self.value {
            Value::Bytes(b, at) => Ok(Cursor::new(b, at)),
            _ => Err(self.wrong("an embedded message")),
        }
    }

    fn wrong(&self, expected: &str) -> WireError {
        WireError::new(
            self.offset,
            format!("field {} is not {expected}", self.number),
        )
    }
}

/// A forward-only cursor over one message's bytes.
#[derive(Clone, Copy)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Cursor<'a> {
    /// `base` is the absolute file offset of `buf[0]`.
    pub fn new(buf: &'a [u8], base: u64) -> Cursor<'a> {
        Cursor { buf, pos: 0, base }
    }

    /// The absolute offset of the message's first byte.
    pub fn start(&self) -> u64 {
        self.base
    }

    fn at(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let start = self.at();
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(WireError::new(
                    start,
                    "a varint runs past the end of its message",
                ));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(WireError::new(start, "a varint is longer than 10 bytes"))
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], WireError> {
        let remaining = self.buf.len() - self.pos;
        if n > remaining {
            return Err(WireError::new(
                self.at(),
                format!(
                    "{what} of {n} bytes runs past the end of its message ({remaining} bytes left)"
                ),
            ));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The next field, `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<Field<'a>>, WireError> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let offset = self.at();
        let key = self.varint()?;
        let number = u32::try_from(key >> 3)
            .map_err(|_| WireError::new(offset, "field number out of range"))?;
        if number == 0 {
            return Err(WireError::new(offset, "field number 0"));
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => Value::Fixed64(u64::from_le_bytes(
                self.take(8, "a fixed64")?.try_into().expect("8 bytes"),
            )),
            5 => Value::Fixed32(u32::from_le_bytes(
                self.take(4, "a fixed32")?.try_into().expect("4 bytes"),
            )),
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len).unwrap_or(usize::MAX);
                let at = self.at();
                Value::Bytes(self.take(len, "a length-delimited field")?, at)
            }
            t => {
                return Err(WireError::new(
                    offset,
                    format!("unsupported wire type {t} (field {number})"),
                ))
            }
        };
        Ok(Some(Field {
            number,
            value,
            offset,
        }))
    }

    /// Calls `f` for every field of the message, stopping at the first error.
    pub fn for_each(
        mut self,
        mut f: impl FnMut(Field<'a>) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        while let Some(field) = self.next_field()? {
            f(field)?;
        }
        Ok(())
    }
}

/// Shows where the message is, not its bytes (a result is tens of KB).
impl std::fmt::Debug for Cursor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Cursor {{ start: {}, len: {}, pos: {} }}",
            self.base,
            self.buf.len(),
            self.pos
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_varint_bytes_and_fixed_fields() {
        // field 1 varint 150, field 2 "hi", field 3 double 1.5, field 4 float 2.0
        let mut buf = vec![0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i', 0x19];
        buf.extend_from_slice(&1.5f64.to_le_bytes());
        buf.push(0x25);
        buf.extend_from_slice(&2.0f32.to_le_bytes());
        let mut c = Cursor::new(&buf, 100);
        let f = c.next_field().unwrap().unwrap();
        assert_eq!((f.number, f.as_u64().unwrap(), f.offset), (1, 150, 100));
        assert_eq!(c.next_field().unwrap().unwrap().as_str().unwrap(), "hi");
        assert_eq!(c.next_field().unwrap().unwrap().as_f64().unwrap(), 1.5);
        assert_eq!(c.next_field().unwrap().unwrap().as_f32().unwrap(), 2.0);
        assert!(c.next_field().unwrap().is_none());
    }

    #[test]
    fn a_length_past_the_end_is_an_error_at_its_offset() {
        let buf = [0x08, 0x01, 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f];
        let mut c = Cursor::new(&buf, 10);
        c.next_field().unwrap();
        let e = c.next_field().unwrap_err();
        assert_eq!(e.offset, 18, "{e:?}");
        assert!(e.what.contains("runs past the end"), "{e:?}");
    }

    #[test]
    fn groups_and_overlong_varints_are_errors() {
        assert!(Cursor::new(&[0x0b], 0).next_field().is_err());
        let long = [
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        assert!(Cursor::new(&long, 0).next_field().is_err());
        assert!(Cursor::new(&[0x08, 0x80], 0).next_field().is_err());
    }
}
