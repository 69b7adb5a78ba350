//! Records at rest (issue 18): a collection's records tree, holding each document raw or
//! compressed as its collection's compressor says.
//!
//! A collection created with `Compressor::None` stores each document's BSON bytes as the
//! tree value, exactly as before compression existed. A collection created with
//! `Compressor::Lz4` stores every value with a one-byte tag:
//!
//! ```text
//!   0x00 ++ bson            raw (small documents, or where LZ4 saves under 1/8)
//!   0x01 ++ len:u32le ++ b  an LZ4 block (lz4_flex's block format) of `len` BSON bytes
//! ```
//!
//! Invariants:
//! - The compressor is fixed when the collection is created (catalog field `compressor`,
//!   and the log's create operation), so every value of one tree has one encoding; a value
//!   is never interpreted under another collection's encoding.
//! - The bytes a decompressor sees have passed the pager's extent checksum (every node and
//!   overflow extent is checksummed as stored), and a decoded value must be exactly `len`
//!   bytes: a block that does not decode to that length is corruption, never data.
//! - A raw value is handed out borrowed from the file (zero-copy); only compressed values
//!   are copied, once, by decompression.
//! - The log always carries the uncompressed document: compression happens where the tree
//!   is written, live and at replay alike, so both produce the same bytes.

use super::StoreError;
use crate::error::{Error, ErrorCode};
use bson::raw::RawBsonRef;
use btree::{PageRead, Tree};
use pager::WriteTxn;
use std::borrow::Cow;
use std::ops::Bound;

/// How a collection's documents are stored.
///
/// The default is `None` until scans decode only the fields they read (PLAN D53: with
/// whole-document decoding an unindexed range count over 1 GiB of LZ4 records took 117x
/// as long as over raw ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compressor {
    /// Raw BSON, untagged (the format before compression).
    #[default]
    None,
    /// LZ4 blocks where they pay, tagged.
    Lz4,
}

/// Documents below this size are stored raw: LZ4's framing costs more than it saves.
const MIN_COMPRESS: usize = 128;

const TAG_RAW: u8 = 0x00;
const TAG_LZ4: u8 = 0x01;

impl Compressor {
    /// The name users give and `collStats` shows.
    pub fn name(self) -> &'static str {
        match self {
            Compressor::None => "none",
            Compressor::Lz4 => "lz4",
        }
    }

    /// The compressor called `name` (`None` when this build has none by that name).
    pub fn from_name(name: &str) -> Option<Compressor> {
        match name {
            "none" => Some(Compressor::None),
            "lz4" => Some(Compressor::Lz4),
            _ => None,
        }
    }

    /// `doc` as this compressor stores it.
    pub fn encode<'d>(self, doc: &'d [u8]) -> Cow<'d, [u8]> {
        match self {
            Compressor::None => Cow::Borrowed(doc),
            Compressor::Lz4 => {
                if doc.len() >= MIN_COMPRESS
                    && let Ok(len) = u32::try_from(doc.len())
                {
                    let mut out =
                        vec![0u8; 5 + lz4_flex::block::get_maximum_output_size(doc.len())];
                    out[0] = TAG_LZ4;
                    out[1..5].copy_from_slice(&len.to_le_bytes());
                    if let Ok(written) = lz4_flex::block::compress_into(doc, &mut out[5..]) {
                        let stored = 5 + written;
                        if stored <= doc.len() - doc.len() / 8 {
                            out.truncate(stored);
                            return Cow::Owned(out);
                        }
                    }
                }
                let mut out = Vec::with_capacity(doc.len() + 1);
                out.push(TAG_RAW);
                out.extend_from_slice(doc);
                Cow::Owned(out)
            }
        }
    }

    /// The document bytes of the stored value `stored`.
    pub fn decode<'t>(self, stored: Cow<'t, [u8]>) -> Result<Cow<'t, [u8]>, StoreError> {
        if self == Compressor::None {
            return Ok(stored);
        }
        let bad = |what: &str| StoreError::Corrupt(format!("compressed record: {what}"));
        match stored.first().copied() {
            Some(TAG_RAW) => Ok(match stored {
                Cow::Borrowed(bytes) => Cow::Borrowed(&bytes[1..]),
                Cow::Owned(mut bytes) => {
                    bytes.remove(0);
                    Cow::Owned(bytes)
                }
            }),
            Some(TAG_LZ4) => {
                let header: [u8; 4] = stored
                    .get(1..5)
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(|| bad("header cut off"))?;
                let len = u32::from_le_bytes(header) as usize;
                if len > crate::limits::STORED_RECORD_MAX {
                    return Err(bad("length over the record limit"));
                }
                let mut out = vec![0u8; len];
                let written = lz4_flex::block::decompress_into(&stored[5..], &mut out)
                    .map_err(|e| bad(&format!("LZ4 block does not decode: {e}")))?;
                if written != len {
                    return Err(bad("LZ4 block decodes to the wrong length"));
                }
                Ok(Cow::Owned(out))
            }
            Some(tag) => Err(bad(&format!("unknown tag {tag:#04x}"))),
            None => Err(bad("empty value")),
        }
    }
}

/// An LZ4 block decoded only as far as asked: the sequences are decoded in order, so the
/// output so far is always a prefix of the whole (a match copies only earlier output).
struct Lz4Prefix<'i> {
    input: &'i [u8],
    at: usize,
    out: Vec<u8>,
    /// The decoded length the value's header states: the output never passes it.
    len: usize,
}

impl Lz4Prefix<'_> {
    fn bad(what: &str) -> StoreError {
        StoreError::Corrupt(format!("compressed record: {what}"))
    }

    fn byte(&mut self) -> Result<u8, StoreError> {
        let byte = *self
            .input
            .get(self.at)
            .ok_or_else(|| Self::bad("LZ4 block cut off"))?;
        self.at += 1;
        Ok(byte)
    }

    fn length(&mut self, nibble: u8) -> Result<usize, StoreError> {
        let mut length = usize::from(nibble);
        if nibble == 15 {
            loop {
                let more = self.byte()?;
                length += usize::from(more);
                if more != 255 {
                    break;
                }
            }
        }
        Ok(length)
    }

    /// Decodes until the output holds at least `target` bytes or the block ends; the
    /// block may end only at the stated length.
    fn fill(&mut self, target: usize) -> Result<(), StoreError> {
        let target = target.min(self.len);
        while self.out.len() < target {
            let token = self.byte()?;
            let literals = self.length(token >> 4)?;
            let end = self
                .at
                .checked_add(literals)
                .filter(|&end| end <= self.input.len())
                .ok_or_else(|| Self::bad("LZ4 literals cut off"))?;
            if self.out.len() + literals > self.len {
                return Err(Self::bad("LZ4 block decodes past its length"));
            }
            self.out.extend_from_slice(&self.input[self.at..end]);
            self.at = end;
            if self.at == self.input.len() {
                break;
            }
            let offset = usize::from(u16::from_le_bytes([self.byte()?, self.byte()?]));
            let length = self.length(token & 15)? + 4;
            if offset == 0 || offset > self.out.len() {
                return Err(Self::bad("LZ4 match before the start"));
            }
            if self.out.len() + length > self.len {
                return Err(Self::bad("LZ4 block decodes past its length"));
            }
            let from = self.out.len() - offset;
            for i in 0..length {
                let byte = self.out[from + i];
                self.out.push(byte);
            }
        }
        if self.at == self.input.len() && self.out.len() != self.len {
            return Err(Self::bad("LZ4 block decodes to the wrong length"));
        }
        Ok(())
    }
}

/// Bytes decoded at a time while looking for the end of an element.
const LEADING_STEP: usize = 512;

impl Compressor {
    /// The document of the stored value `stored` cut down to its leading elements up to
    /// the first occurrence of each of the top-level `fields` (a well-formed document);
    /// the whole document when one is missing or the value is stored raw. A filter or
    /// projection reading only `fields` sees the same values in both.
    pub fn decode_leading<'t>(
        self,
        stored: Cow<'t, [u8]>,
        fields: &std::collections::BTreeSet<String>,
    ) -> Result<Cow<'t, [u8]>, StoreError> {
        if self == Compressor::None || stored.first() != Some(&TAG_LZ4) {
            return self.decode(stored);
        }
        let header: [u8; 4] = stored
            .get(1..5)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| Lz4Prefix::bad("header cut off"))?;
        let len = u32::from_le_bytes(header) as usize;
        if !(5..=crate::limits::STORED_RECORD_MAX).contains(&len) {
            return Err(Lz4Prefix::bad("length out of range"));
        }
        let mut block = Lz4Prefix {
            input: &stored[5..],
            at: 0,
            out: Vec::with_capacity(len.min(4096)),
            len,
        };
        let mut missing: Vec<&str> = fields.iter().map(String::as_str).collect();
        let mut at = 4;
        block.fill(at)?;
        while !missing.is_empty() {
            block.fill(at + 1)?;
            if at + 1 >= len || block.out.get(at) == Some(&0) {
                // The document's end: a field is missing, so the whole one is the answer.
                break;
            }
            let end = loop {
                match query::element_span(&block.out, at) {
                    Some((_, end)) if end <= block.out.len() => break end,
                    Some((_, end)) if end < len => block.fill(end)?,
                    _ if block.out.len() < len => block.fill(block.out.len() + LEADING_STEP)?,
                    _ => return Err(Lz4Prefix::bad("malformed document")),
                }
            };
            let (key, _) = query::element_span(&block.out, at).expect("spanned above");
            missing.retain(|field| field.as_bytes() != key);
            at = end;
        }
        if !missing.is_empty() {
            block.fill(len)?;
            return Ok(Cow::Owned(block.out));
        }
        let mut out = block.out;
        out.truncate(at);
        out.push(0);
        let total = i32::try_from(out.len()).map_err(|_| Lz4Prefix::bad("length"))?;
        out[..4].copy_from_slice(&total.to_le_bytes());
        Ok(Cow::Owned(out))
    }
}

/// The compressor a collection's create options ask for (`None`: the store's default).
///
/// `storageEngine: {multiforadb: {compressor: "none" | "lz4"}}` names ours; mongod's
/// `storageEngine: {wiredTiger: {configString: "block_compressor=..."}}` is read too:
/// `none` stores raw, any compressor (snappy, zlib, zstd) stores with LZ4, the codec this
/// build has. `zstd` named for ours is 238 NotImplemented; anything else is 2 BadValue.
pub fn requested(options: &bson::RawDocument) -> Result<Option<Compressor>, Error> {
    let bad = |message: String| Error::new(ErrorCode::BadValue, message);
    let engines = match options.get("storageEngine") {
        Ok(None) => return Ok(None),
        Ok(Some(RawBsonRef::Document(engines))) => engines,
        _ => return Err(bad("'storageEngine' has to be a document.".into())),
    };
    let mut chosen = None;
    for element in engines {
        let (engine, value) = element.map_err(|e| bad(e.to_string()))?;
        let RawBsonRef::Document(settings) = value else {
            return Err(bad(format!(
                "'storageEngine.{engine}' has to be an embedded document."
            )));
        };
        match engine.as_str() {
            "multiforadb" => {
                for element in settings {
                    let (key, value) = element.map_err(|e| bad(e.to_string()))?;
                    match (key.as_str(), value) {
                        ("compressor", RawBsonRef::String("zstd")) => {
                            return Err(Error::new(
                                ErrorCode::NotImplemented,
                                "the zstd compressor is not supported yet (none or lz4)",
                            ));
                        }
                        ("compressor", RawBsonRef::String(name)) => {
                            chosen = Some(Compressor::from_name(name).ok_or_else(|| {
                                bad(format!("unknown compressor '{name}' (none or lz4)"))
                            })?);
                        }
                        _ => {
                            return Err(bad(format!(
                                "unknown option 'storageEngine.multiforadb.{key}'"
                            )));
                        }
                    }
                }
            }
            "wiredTiger" => {
                if let Ok(Some(RawBsonRef::String(config))) = settings.get("configString") {
                    for item in config.split(',') {
                        if let Some(name) = item.trim().strip_prefix("block_compressor=") {
                            chosen = Some(match name.trim() {
                                "none" | "" => Compressor::None,
                                _ => Compressor::Lz4,
                            });
                        }
                    }
                }
            }
            // Other engines' settings are ignored, as mongod ignores settings for
            // engines other than the one it runs.
            _ => {}
        }
    }
    Ok(chosen)
}

/// A collection's records tree with its compressor: record id key → document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Records {
    tree: Tree,
    compressor: Compressor,
}

/// A decoded document and the bytes it takes as stored.
pub type SizedDoc<'t> = (Cow<'t, [u8]>, u64);

/// One record as a tree range yields it: key and decoded document.
pub type RecordEntry<'t> = (Cow<'t, [u8]>, Cow<'t, [u8]>);

impl Records {
    /// An empty records tree stored with `compressor`.
    pub const fn empty(compressor: Compressor) -> Records {
        Records {
            tree: Tree::EMPTY,
            compressor,
        }
    }

    /// The records tree rooted at `root`, stored with `compressor`.
    pub const fn from_root(root: u64, compressor: Compressor) -> Records {
        Records {
            tree: Tree::from_root(root),
            compressor,
        }
    }

    /// The root page number to persist.
    pub const fn root(&self) -> u64 {
        self.tree.root()
    }

    /// How the documents are stored.
    pub const fn compressor(&self) -> Compressor {
        self.compressor
    }

    /// The document stored under `key`.
    pub fn get<'t, T: PageRead>(
        &self,
        txn: &'t T,
        key: &[u8],
    ) -> Result<Option<Cow<'t, [u8]>>, StoreError> {
        match self.tree.get(txn, key)? {
            Some(stored) => Ok(Some(self.compressor.decode(stored)?)),
            None => Ok(None),
        }
    }

    /// The document stored under `key` and the bytes it takes as stored.
    pub fn get_sized<'t, T: PageRead>(
        &self,
        txn: &'t T,
        key: &[u8],
    ) -> Result<Option<SizedDoc<'t>>, StoreError> {
        match self.tree.get(txn, key)? {
            Some(stored) => {
                let len = stored.len() as u64;
                Ok(Some((self.compressor.decode(stored)?, len)))
            }
            None => Ok(None),
        }
    }

    /// Stores `doc` under `key`; returns the bytes it takes as stored.
    pub fn insert(
        &mut self,
        txn: &mut WriteTxn<'_>,
        key: &[u8],
        doc: &[u8],
    ) -> Result<u64, StoreError> {
        let stored = self.compressor.encode(doc);
        self.tree.insert(txn, key, &stored)?;
        Ok(stored.len() as u64)
    }

    /// Removes `key`; returns whether it was present.
    pub fn remove(&mut self, txn: &mut WriteTxn<'_>, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.tree.remove(txn, key)?)
    }

    /// Frees every page and leaves the tree empty.
    pub fn destroy(&mut self, txn: &mut WriteTxn<'_>) -> Result<(), StoreError> {
        Ok(self.tree.destroy(txn)?)
    }

    /// Records with keys within `(lower, upper)`, decoded, in key order.
    pub fn range<'t, T: PageRead>(
        &self,
        txn: &'t T,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Result<
        impl DoubleEndedIterator<Item = Result<RecordEntry<'t>, StoreError>> + use<'t, T>,
        StoreError,
    > {
        self.range_leading(txn, lower, upper, None)
    }

    /// As [`Records::range`], each document cut down to its leading part holding `fields`
    /// ([`Compressor::decode_leading`]); whole documents when `fields` is `None`.
    pub fn range_leading<'t, 'f, T: PageRead>(
        &self,
        txn: &'t T,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        fields: Option<&'f std::collections::BTreeSet<String>>,
    ) -> Result<
        impl DoubleEndedIterator<Item = Result<RecordEntry<'t>, StoreError>> + use<'t, 'f, T>,
        StoreError,
    > {
        let compressor = self.compressor;
        let range = self.tree.range(txn, lower, upper)?;
        Ok(range.map(move |entry| {
            let (key, value) = entry?;
            let doc = match fields {
                Some(fields) => compressor.decode_leading(value, fields)?,
                None => compressor.decode(value)?,
            };
            Ok((key, doc))
        }))
    }

    /// The first record's key, its document's length and the bytes it takes as stored
    /// (one descent, one decode): what trimming the oldest record needs.
    pub fn first_sized<T: PageRead>(
        &self,
        txn: &T,
    ) -> Result<Option<(Vec<u8>, u64, u64)>, StoreError> {
        let Some(entry) = self.tree.iter(txn)?.next() else {
            return Ok(None);
        };
        let (key, stored) = entry?;
        let stored_len = stored.len() as u64;
        let doc = self.compressor.decode(stored)?;
        Ok(Some((key.into_owned(), doc.len() as u64, stored_len)))
    }

    /// Every record, decoded, in key order.
    pub fn iter<'t, T: PageRead>(
        &self,
        txn: &'t T,
    ) -> Result<
        impl DoubleEndedIterator<Item = Result<RecordEntry<'t>, StoreError>> + use<'t, T>,
        StoreError,
    > {
        self.range(txn, Bound::Unbounded, Bound::Unbounded)
    }

    /// Walks the tree and checks its invariants (the values are checked by the caller).
    pub fn verify<T: PageRead>(&self, txn: &T) -> Result<btree::TreeReport, StoreError> {
        Ok(self.tree.verify(txn)?)
    }

    /// The bytes every value takes as stored and decoded, decoding each (for `validate`).
    pub fn sizes<T: PageRead>(&self, txn: &T) -> Result<(u64, u64), StoreError> {
        let (mut stored, mut decoded) = (0, 0);
        for entry in self.tree.iter(txn)? {
            let (_, value) = entry?;
            stored += value.len() as u64;
            decoded += self.compressor.decode(value)?.len() as u64;
        }
        Ok((stored, decoded))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip(compressor: Compressor, doc: &[u8]) -> Vec<u8> {
        let stored = compressor.encode(doc).into_owned();
        compressor
            .decode(Cow::Borrowed(&stored))
            .expect("decodes")
            .into_owned()
    }

    #[test]
    fn small_and_incompressible_values_stay_raw_and_borrowed() {
        let small = vec![7u8; 100];
        let stored = Compressor::Lz4.encode(&small);
        assert_eq!(stored[0], TAG_RAW);
        let decoded = Compressor::Lz4.decode(Cow::Borrowed(&stored)).unwrap();
        assert!(matches!(decoded, Cow::Borrowed(_)));
        assert_eq!(&*decoded, &small[..]);
        // Pseudo-random bytes do not compress by 1/8.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert_eq!(Compressor::Lz4.encode(&noise)[0], TAG_RAW);
    }

    #[test]
    fn repetitive_values_compress() {
        let doc = b"abcdefgh".repeat(1000);
        let stored = Compressor::Lz4.encode(&doc);
        assert_eq!(stored[0], TAG_LZ4);
        assert!(stored.len() < doc.len() / 4);
        assert_eq!(roundtrip(Compressor::Lz4, &doc), doc);
        assert!(matches!(Compressor::None.encode(&doc), Cow::Borrowed(_)));
    }

    #[test]
    fn damaged_values_are_corruption_never_data() {
        let doc = b"abcdefgh".repeat(1000);
        let stored = Compressor::Lz4.encode(&doc).into_owned();
        // A wrong length, a cut-off block, an unknown tag, an empty value.
        let mut longer = stored.clone();
        longer[1] ^= 1;
        let cut = stored[..stored.len() - 3].to_vec();
        let mut tag = stored.clone();
        tag[0] = 7;
        for bad in [longer, cut, tag, Vec::new(), vec![TAG_LZ4, 1]] {
            let err = Compressor::Lz4.decode(Cow::Owned(bad)).unwrap_err();
            assert!(matches!(err, StoreError::Corrupt(_)), "{err:?}");
        }
        let mut huge = stored.clone();
        huge[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Compressor::Lz4.decode(Cow::Owned(huge)).is_err());
    }

    #[test]
    fn create_options_choose_the_compressor() {
        use bson::rawdoc;
        let ask = |options: bson::RawDocumentBuf| requested(&options);
        assert_eq!(ask(rawdoc! {}).unwrap(), None);
        let ours =
            |name: &str| rawdoc! { "storageEngine": { "multiforadb": { "compressor": name } } };
        assert_eq!(ask(ours("none")).unwrap(), Some(Compressor::None));
        assert_eq!(ask(ours("lz4")).unwrap(), Some(Compressor::Lz4));
        assert_eq!(
            ask(ours("zstd")).unwrap_err().code(),
            ErrorCode::NotImplemented
        );
        assert_eq!(ask(ours("brotli")).unwrap_err().code(), ErrorCode::BadValue);
        let wt = |config: &str| rawdoc! { "storageEngine": { "wiredTiger": { "configString": config } } };
        assert_eq!(
            ask(wt("block_compressor=none")).unwrap(),
            Some(Compressor::None)
        );
        assert_eq!(
            ask(wt("block_compressor=zstd")).unwrap(),
            Some(Compressor::Lz4)
        );
        assert_eq!(ask(wt("split_pct=90")).unwrap(), None);
        assert_eq!(
            ask(rawdoc! { "storageEngine": 1 }).unwrap_err().code(),
            ErrorCode::BadValue
        );
    }

    fn sample(pad: usize) -> bson::RawDocumentBuf {
        bson::rawdoc! {
            "_id": 7, "k": "key", "n": 1.5, "sub": { "x": [1, 2, 3] },
            "pad": "p".repeat(pad), "last": true,
        }
    }

    fn leading(doc: &bson::RawDocumentBuf, fields: &[&str]) -> Vec<u8> {
        let stored = Compressor::Lz4.encode(doc.as_bytes()).into_owned();
        let fields = fields.iter().map(|f| (*f).to_owned()).collect();
        Compressor::Lz4
            .decode_leading(Cow::Owned(stored), &fields)
            .expect("decodes")
            .into_owned()
    }

    #[test]
    fn a_leading_decode_stops_after_the_fields_asked_for() {
        let doc = sample(20_000);
        let cut = leading(&doc, &["k", "_id"]);
        let cut = bson::RawDocument::from_bytes(&cut).expect("well-formed");
        let keys: Vec<_> = cut
            .iter()
            .map(|e| e.unwrap().0.as_str().to_owned())
            .collect();
        assert_eq!(keys, ["_id", "k"]);
        assert_eq!(cut.get_str("k").unwrap(), "key");
        // Through the nested document, not past the padding.
        let cut = leading(&doc, &["sub"]);
        assert!(cut.len() < 100, "{}", cut.len());
        // A missing field, or the last one: the whole document.
        assert_eq!(leading(&doc, &["nope"]), doc.as_bytes());
        assert_eq!(leading(&doc, &["last"]), doc.as_bytes());
        // No fields: the empty document.
        assert_eq!(leading(&doc, &[]), bson::rawdoc! {}.as_bytes());
        // A small (raw) value comes back whole and borrowed.
        let small = bson::rawdoc! { "_id": 1, "k": 2 };
        let stored = Compressor::Lz4.encode(small.as_bytes()).into_owned();
        let out = Compressor::Lz4
            .decode_leading(Cow::Borrowed(&stored), &["k".to_owned()].into())
            .unwrap();
        assert!(matches!(out, Cow::Borrowed(_)));
    }

    proptest! {
        #[test]
        fn a_leading_decode_agrees_with_the_whole_document(
            pad in 0usize..5000,
            noise in prop::collection::vec(any::<u8>(), 0..400),
            pick in prop::collection::vec(0usize..7, 0..4),
        ) {
            let mut doc = sample(pad);
            doc.append(bson::cstr!("bin"), bson::Binary {
                subtype: bson::spec::BinarySubtype::Generic,
                bytes: noise,
            });
            let names = ["_id", "k", "n", "sub", "pad", "last", "bin"];
            let fields: Vec<&str> = pick.iter().map(|&i| names[i]).collect();
            let cut = leading(&doc, &fields);
            let cut = bson::RawDocument::from_bytes(&cut).expect("well-formed");
            for field in &fields {
                prop_assert_eq!(cut.get(field).unwrap(), doc.get(field).unwrap());
            }
        }

        #[test]
        fn a_damaged_leading_decode_never_panics(
            at in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let doc = sample(3000);
            let mut stored = Compressor::Lz4.encode(doc.as_bytes()).into_owned();
            let i = at.index(stored.len());
            stored[i] ^= 1 << bit;
            let fields = ["pad".to_owned(), "bin".to_owned()].into();
            let _ = Compressor::Lz4.decode_leading(Cow::Owned(stored), &fields);
        }

        #[test]
        fn every_value_round_trips(doc in prop::collection::vec(0u8..4, 0..3000)) {
            prop_assert_eq!(roundtrip(Compressor::Lz4, &doc), doc.clone());
            prop_assert_eq!(roundtrip(Compressor::None, &doc), doc);
        }

        #[test]
        fn flipped_bytes_never_panic(
            doc in prop::collection::vec(0u8..4, 128..2000),
            at in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let mut stored = Compressor::Lz4.encode(&doc).into_owned();
            let i = at.index(stored.len());
            stored[i] ^= 1 << bit;
            // Either an error or some bytes; never a panic (the extent checksum stops
            // such bytes before they get here in the store).
            let _ = Compressor::Lz4.decode(Cow::Owned(stored));
        }
    }
}
