//! A bounds-checked little-endian cursor over one frame, used by every decoder here.

use crate::Error;
use crate::limits::BSON_DOCUMENT_LEN_MIN;

/// Reads fields front to back; every read that runs past the end is [`Error::Truncated`].
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    /// Offset of `bytes[0]` within the whole frame, so errors name frame offsets.
    base: usize,
    position: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`, whose first byte sits at `base` in the frame.
    pub(crate) fn new(bytes: &'a [u8], base: usize) -> Self {
        Reader {
            bytes,
            base,
            position: 0,
        }
    }

    /// The frame offset of the next byte to read.
    pub(crate) fn offset(&self) -> usize {
        self.base + self.position
    }

    /// Bytes not yet read.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `count` bytes.
    pub(crate) fn take(&mut self, count: usize, what: &'static str) -> Result<&'a [u8], Error> {
        let end = self.position.checked_add(count);
        match end.and_then(|end| self.bytes.get(self.position..end)) {
            Some(slice) => {
                self.position += count;
                Ok(slice)
            }
            None => Err(Error::Truncated {
                offset: self.offset(),
                what,
                needed: count - self.remaining(),
            }),
        }
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], Error> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, Error> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn i32_le(&mut self, what: &'static str) -> Result<i32, Error> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u32_le(&mut self, what: &'static str) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn i64_le(&mut self, what: &'static str) -> Result<i64, Error> {
        Ok(i64::from_le_bytes(self.array(what)?))
    }

    /// A zero-terminated UTF-8 string; the terminator is consumed, not returned.
    pub(crate) fn cstring(&mut self) -> Result<&'a str, Error> {
        let start = self.offset();
        let rest = self.bytes.get(self.position..).unwrap_or_default();
        let Some(length) = rest.iter().position(|&b| b == 0) else {
            return Err(Error::BadCString {
                offset: start,
                reason: "no terminating zero",
            });
        };
        let text = self.take(length, "C string")?;
        self.take(1, "C string terminator")?;
        std::str::from_utf8(text).map_err(|_| Error::BadCString {
            offset: start,
            reason: "not UTF-8",
        })
    }

    /// One BSON document's bytes, delimited by its own length prefix (not validated here).
    pub(crate) fn document_bytes(&mut self, max: usize) -> Result<&'a [u8], Error> {
        let offset = self.offset();
        let rest = self.bytes.get(self.position..).unwrap_or_default();
        let prefix: [u8; 4] = match rest.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()) {
            Some(bytes) => bytes,
            None => {
                return Err(Error::Truncated {
                    offset,
                    what: "document length",
                    needed: 4 - rest.len(),
                });
            }
        };
        let declared = i32::from_le_bytes(prefix);
        let size = usize::try_from(declared).unwrap_or(0);
        if size < BSON_DOCUMENT_LEN_MIN {
            return Err(Error::InvalidBson {
                offset,
                reason: format!("document length {declared} is below the minimum of 5"),
            });
        }
        if size > max {
            return Err(Error::DocumentTooLarge { offset, size, max });
        }
        self.take(size, "document")
    }
}

#[cfg(test)]
mod tests {
    use super::Reader;
    use crate::Error;

    #[test]
    fn reader_reports_truncation_with_frame_offset() {
        let mut reader = Reader::new(&[1, 0, 0], 16);
        assert_eq!(
            reader.i32_le("flags"),
            Err(Error::Truncated {
                offset: 16,
                what: "flags",
                needed: 1
            })
        );
    }

    #[test]
    fn reader_refuses_unterminated_cstring() {
        let mut reader = Reader::new(b"abc", 20);
        assert!(matches!(
            reader.cstring(),
            Err(Error::BadCString { offset: 20, .. })
        ));
    }
}
