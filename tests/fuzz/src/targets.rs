//! The registry of fuzz targets: one entry per decoder of outside bytes.
//!
//! A target takes arbitrary bytes and must return normally (any `Err` is fine);
//! a panic, an abort or a hang is a bug. Each entry also names seed inputs that
//! reach deep into the decoder, which the driver mutates.

/// A registered fuzz target.
pub struct Target {
    /// The name used on the command line (`cargo xtask fuzz <name>`).
    pub name: &'static str,
    /// Valid or nearly valid inputs for the driver to start from.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// The code under test.
    pub run: fn(&[u8]),
}

/// Every fuzz target of the workspace.
pub const TARGETS: &[Target] = &[
    Target {
        name: "bson-validate",
        seeds: bson_targets::seeds,
        run: bson_targets::validate,
    },
    Target {
        name: "wal_block",
        seeds: wal_targets::block_seeds,
        run: wal_targets::block,
    },
    Target {
        name: "wal_recovery",
        seeds: wal_targets::log_seeds,
        run: wal_targets::recovery,
    },
    Target {
        name: "pager_open",
        seeds: crate::storage_targets::data_file_seeds,
        run: crate::storage_targets::open_damaged_data_file,
    },
    Target {
        name: "btree_node",
        seeds: crate::storage_targets::node_seeds,
        run: crate::storage_targets::read_damaged_node,
    },
    Target {
        name: "record_decode",
        seeds: crate::storage_targets::record_seeds,
        run: crate::storage_targets::decode_damaged_record,
    },
    Target {
        name: "regex",
        seeds: regex_targets::seeds,
        run: regex_targets::run,
    },
    Target {
        name: "query-parse",
        seeds: query_targets::seeds,
        run: query_targets::parse,
    },
    Target {
        name: "wire",
        seeds: wire_targets::seeds,
        run: wire_targets::run,
    },
    Target {
        name: "wire-compressed",
        seeds: wire_targets::compressed_seeds,
        run: wire_targets::compressed,
    },
    Target {
        name: "sasl",
        seeds: crate::sasl_target::seeds,
        run: crate::sasl_target::run,
    },
    Target {
        name: "update-parse",
        seeds: update_targets::seeds,
        run: update_targets::parse,
    },
];

/// Targets of the `bson-canonical` crate: validation and what runs on validated bytes.
mod bson_targets {
    pub fn seeds() -> Vec<Vec<u8>> {
        let docs = [
            bson::rawdoc! {"_id": 1, "a": "text", "b": {"c": [1, 2.5, {"d": true}]}},
            bson::rawdoc! {"bin": bson::Binary { subtype: bson::spec::BinarySubtype::Generic, bytes: vec![1, 2] }},
            bson::rawdoc! {"r": bson::Regex { pattern: "a.*".try_into().expect("cstr"), options: "i".try_into().expect("cstr") }},
            bson::rawdoc! {"n": bson::RawBson::Null, "t": bson::Timestamp { time: 1, increment: 2 }},
        ];
        docs.iter().map(|d| d.as_bytes().to_vec()).collect()
    }

    /// Validation must never panic; whatever it accepts, the order functions, the
    /// key encoding and path lookup must handle without panicking either.
    pub fn validate(data: &[u8]) {
        check_document(data);
        // Most mutations break the outer length first; also try the bytes with it
        // repaired, so the walk reaches the nested elements.
        if data.len() >= 5 {
            let mut repaired = data.to_vec();
            let length = u32::try_from(data.len()).unwrap_or(u32::MAX);
            repaired[..4].copy_from_slice(&length.to_le_bytes());
            check_document(&repaired);
        }
    }

    fn check_document(data: &[u8]) {
        let depth = bson_canonical::limits::WIRE_NESTING_DEPTH_MAX;
        if bson_canonical::validate_bson(data, depth).is_err() {
            return;
        }
        let Ok(doc) = bson::RawDocument::from_bytes(data) else {
            panic!("validated bytes are not a raw document");
        };
        let whole = bson::RawBsonRef::Document(doc);
        assert_eq!(
            bson_canonical::compare_values(whole, whole),
            std::cmp::Ordering::Equal
        );
        let _ = bson_canonical::encode(whole);
        let _ = bson_canonical::path::values(doc, "a.b.0.c");
        let _ = bson_canonical::validate_for_storage(data);
    }
}

/// Targets of the `wal` crate: the block decoder and recovery over a whole file.
mod wal_targets {
    use std::sync::Arc;
    use wal::format::{self, BlockMeta, Codec};
    use wal::limits::BLOCK_HEADER_LEN;
    use wal::{Dir, Lsn, MemDir, MemStorage, Wal, WalOptions};

    const SALT: u64 = 0x5a17;

    fn meta(codec: Codec, count: u32) -> BlockMeta {
        BlockMeta {
            lsn_first: Lsn(1),
            record_count: count,
            synced_end: 512,
            session: 1,
            codec,
            salt: SALT,
        }
    }

    /// Encoded blocks: compressible and raw, one and several records.
    pub fn block_seeds() -> Vec<Vec<u8>> {
        let mut seeds = Vec::new();
        for codec in [Codec::Lz4, Codec::Raw] {
            let mut raw = Vec::new();
            format::push_record(&mut raw, b"hello hello hello hello hello");
            format::push_record(&mut raw, b"");
            format::push_record(&mut raw, &[7u8; 300]);
            let mut out = Vec::new();
            format::encode_block(&mut out, &raw, &meta(codec, 3));
            seeds.push(out);
        }
        seeds
    }

    /// Decodes the bytes as a block; then again with the checksum recomputed, so the
    /// decompressor and the record framing see arbitrary (checksum-valid) bytes too.
    pub fn block(input: &[u8]) {
        let _ = format::decode_block(input, SALT);
        if input.len() >= BLOCK_HEADER_LEN {
            let mut fixed = input.to_vec();
            let len_stored = u32::from_le_bytes([fixed[4], fixed[5], fixed[6], fixed[7]]);
            let end = (BLOCK_HEADER_LEN + len_stored as usize).min(fixed.len());
            let checksum =
                format::block_checksum(SALT, &fixed[..40], &fixed[BLOCK_HEADER_LEN..end]);
            fixed[40..48].copy_from_slice(&checksum.to_le_bytes());
            if let Ok((header, records)) = format::decode_block(&fixed, SALT) {
                assert_eq!(records.len(), header.record_count as usize);
            }
        }
    }

    fn options() -> WalOptions {
        WalOptions {
            codec: Codec::Lz4,
            block_len_target: 512,
            preallocate_chunk: 4096,
            flush_threshold: 1024,
            ..WalOptions::default()
        }
    }

    /// A small log file of a few blocks.
    pub fn log_seeds() -> Vec<Vec<u8>> {
        let dir = Arc::new(MemDir::<MemStorage>::new());
        let Ok((wal, _)) = Wal::open(Arc::clone(&dir) as Arc<dyn Dir>, "wal", options()) else {
            return Vec::new();
        };
        for i in 0..8u8 {
            let _ = wal.append(&[i; 100]).and_then(|lsn| wal.commit(lsn));
        }
        drop(wal);
        let bytes = dir.file("wal").map(|f| f.snapshot()).unwrap_or_default();
        // Keep the log region, not all of the zero preallocation.
        vec![bytes[..bytes.len().min(4096)].to_vec()]
    }

    /// Opens the bytes as a log file: any result but a panic is fine, and what opens
    /// must have dense LSNs.
    pub fn recovery(input: &[u8]) {
        let dir = Arc::new(MemDir::<MemStorage>::new());
        dir.insert("wal", MemStorage::from_bytes(input.to_vec()));
        if let Ok((_, recovery)) = Wal::open(dir as Arc<dyn Dir>, "wal", options()) {
            for (i, (lsn, _)) in recovery.records.iter().enumerate() {
                assert_eq!(lsn.0, recovery.lsn_start.0 + i as u64);
            }
        }
    }
}

/// Targets of the `regex` crate: compile and match arbitrary patterns.
mod regex_targets {
    /// Splits `regex` input at the first two `0x00` bytes: pattern, options, subject.
    fn regex_split(input: &[u8]) -> (&[u8], &[u8], &[u8]) {
        let mut parts = input.splitn(3, |&b| b == 0);
        let pattern = parts.next().unwrap_or_default();
        let options = parts.next().unwrap_or_default();
        let subject = parts.next().unwrap_or_default();
        (pattern, options, subject)
    }

    pub fn seeds() -> Vec<Vec<u8>> {
        let cases: &[(&str, &str, &str)] = &[
            (
                r"^(?<user>[a-z0-9._%+-]+)@[a-z]+\.com$",
                "i",
                "Ann.Lee@example.com",
            ),
            (r"(a|aa)+$", "", "aaaaaaaaaaaaaaaaaaaaaaaaab"),
            (r"^(a+)+\1$", "", "aaaaaaaaaaaaaaaaaaaaaaaab"),
            (r"(?<=\$)\d+(?!\.)|\bfoo\B", "m", "cost $42 foobar\n"),
            (r"(?>a+)b|a*+c|x{2,5}?", "s", "aaab aac xxxxxx"),
            (
                r"[[:alpha:]\d-]+(?i)straße\x{263A}\Qa.b\E",
                "x",
                "abc-1STRASSE",
            ),
            (r"(?:(a)|b)\1*(?(1)x)", "", "aab"),
            (r"\w+\s*=\s*'[^']*'", "", "key = 'value'"),
        ];
        cases
            .iter()
            .map(|(p, o, s)| [p.as_bytes(), &[0], o.as_bytes(), &[0], s.as_bytes()].concat())
            .collect()
    }

    /// Compiles and matches; any `Err` is fine, a panic or a hang is a bug.
    pub fn run(input: &[u8]) {
        let (pattern, options, subject) = regex_split(input);
        let pattern = String::from_utf8_lossy(pattern);
        let options = String::from_utf8_lossy(options);
        let subject = String::from_utf8_lossy(subject);
        // A smaller step budget keeps each fuzz iteration fast.
        let Ok(re) = regex::Regex::new(&pattern, &options) else {
            return;
        };
        let re = re.with_step_limit(100_000);
        let is_match = re.is_match(&subject);
        let found = re.find(&subject);
        let caps = re.captures(&subject);
        if let (Ok(is_match), Ok(found), Ok(caps)) = (is_match, found, caps) {
            assert_eq!(is_match, found.is_some());
            assert_eq!(found, caps.and_then(|c| c.get(0)));
        }
        // A search from every offset starts no earlier than it (none from inside a
        // character), and from offset 0 agrees with `captures`.
        for start in 0..=subject.len() {
            if let Ok(Some(caps)) = re.captures_at(&subject, start) {
                assert!(subject.is_char_boundary(start), "{start}");
                let whole = caps.get(0).map(|m| m.range());
                assert!(
                    whole.as_ref().is_some_and(|r| r.start >= start),
                    "{whole:?} from {start}"
                );
            }
        }
        if let (Ok(at_zero), Ok(first)) = (re.captures_at(&subject, 0), re.find(&subject)) {
            assert_eq!(at_zero.and_then(|c| c.get(0)), first);
        }
        let _ = re.literal_prefix();
    }
}

/// Targets of the `query` crate: filter parsing and matching.
mod query_targets {
    pub fn seeds() -> Vec<Vec<u8>> {
        let filters = [
            bson::rawdoc! {"a": 1, "b.c": {"$gt": 2, "$lt": [1]}},
            bson::rawdoc! {"$or": [{"a": {"$in": [1, "x", null]}}, {"a": {"$exists": false}}]},
            bson::rawdoc! {"a": {"$elemMatch": {"b": {"$regex": "^x", "$options": "i"}}}},
            bson::rawdoc! {"a": {"$not": {"$size": 2}}, "n": {"$mod": [3, 1]}, "f": {"$bitsAllSet": [1, 5]}},
            bson::rawdoc! {"$expr": {"$gt": [{"$add": ["$a", 1]}, {"$size": "$b"}]}},
            bson::rawdoc! {"$jsonSchema": {"required": ["a"], "properties": {"a": {"bsonType": "int", "minimum": 0}}}},
            bson::rawdoc! {"a": {"$all": [{"$elemMatch": {"$gt": 1}}]}, "t": {"$type": ["string", 16]}},
            bson::rawdoc! {"$expr": {"$eq": [{"$getField": {"field": {"$literal": "$a"}, "input": {"$setField": {"field": "a.b", "value": "$$REMOVE", "input": "$$ROOT"}}}}, {"$rand": {}}]}},
            bson::rawdoc! {"$expr": {"$in": [{"$regexFindAll": {"input": "$t", "regex": "x*", "options": "i"}}, {"$zip": {"inputs": ["$s", {"$range": [0, 3]}], "useLongestLength": true, "defaults": [1, 2]}}]}},
            bson::rawdoc! {"$expr": {"$reduce": {"input": {"$sortArray": {"input": "$a", "sortBy": {"b": -1}}}, "initialValue": {"$pow": [2, 62]}, "in": {"$mergeObjects": [{"$arrayToObject": [[["k", "$$this"]]]}, {"$maxN": {"n": 2, "input": "$$value"}}]}}}},
        ];
        filters.iter().map(|d| d.as_bytes().to_vec()).collect()
    }

    /// Filter parsing must never panic, and neither may matching what parses.
    pub fn parse(data: &[u8]) {
        query_parse_document(data);
        // As for `bson-validate`: also try the bytes with the outer length repaired.
        if data.len() >= 5 {
            let mut repaired = data.to_vec();
            let length = u32::try_from(data.len()).unwrap_or(u32::MAX);
            repaired[..4].copy_from_slice(&length.to_le_bytes());
            query_parse_document(&repaired);
        }
        // Most mutated bytes are not BSON; also read them as choices in a small
        // filter grammar, so every input reaches the parser and the matcher.
        let mut choices = data.iter().copied();
        let filter = grammar_document(&mut choices, 0);
        if let Ok(raw) = bson::RawDocumentBuf::try_from(&filter) {
            query_parse_document(raw.as_bytes());
        }
    }

    const GRAMMAR_KEYS: &[&str] = &[
        "a",
        "a.b",
        "a.0",
        "b",
        "n",
        "$and",
        "$or",
        "$nor",
        "$expr",
        "$comment",
        "$jsonSchema",
        "$where",
        "a.$",
        "$foo",
        "s.1.x",
        "",
    ];
    const GRAMMAR_OPERATORS: &[&str] = &[
        "$eq",
        "$ne",
        "$gt",
        "$gte",
        "$lt",
        "$lte",
        "$in",
        "$nin",
        "$exists",
        "$type",
        "$size",
        "$all",
        "$elemMatch",
        "$mod",
        "$bitsAllSet",
        "$bitsAnyClear",
        "$not",
        "$regex",
        "$options",
        "$foo",
        "$add",
        "$cond",
        "$concat",
        "$slice",
        "$literal",
        "$filter",
        "$let",
        "$switch",
        "$getField",
        "$setField",
        "$unsetField",
        "$rand",
        "required",
        "properties",
        "bsonType",
        "minimum",
        "items",
        "enum",
        "pattern",
        "$arrayElemAt",
        "$toInt",
        "$split",
        "$round",
        "$substrBytes",
        "$map",
        "input",
        "as",
        "in",
        "cond",
        "vars",
        "$arrayToObject",
        "$objectToArray",
        "$mergeObjects",
        "$indexOfArray",
        "$range",
        "$reverseArray",
        "$zip",
        "inputs",
        "defaults",
        "useLongestLength",
        "$reduce",
        "initialValue",
        "$sortArray",
        "sortBy",
        "$firstN",
        "$maxN",
        "n",
        "$regexMatch",
        "$regexFindAll",
        "regex",
        "options",
        "$replaceAll",
        "find",
        "replacement",
        "$strcasecmp",
        "$substrCP",
        "$indexOfCP",
        "$indexOfBytes",
        "$pow",
        "$log",
        "$ln",
        "$sin",
        "$acosh",
        "$atan2",
        "$bitAnd",
        "$bitNot",
        "$bsonSize",
        "$tsSecond",
        "$stdDevSamp",
    ];
    const GRAMMAR_STRINGS: &[&str] = &[
        "$a",
        "$a.b",
        "$$ROOT",
        "$$x",
        "x",
        "^a.*b",
        "(",
        "i",
        "number",
        "int",
        "string",
        "",
        "ims",
        "$",
        "$$CURRENT.n",
        "this",
        "array",
        "$$this",
        "$$value",
        "x*",
        "é",
    ];

    fn grammar_pick<'a>(choices: &mut impl Iterator<Item = u8>, from: &[&'a str]) -> &'a str {
        let index = usize::from(choices.next().unwrap_or(0)) % from.len();
        from.get(index).copied().unwrap_or("")
    }

    fn grammar_document(choices: &mut impl Iterator<Item = u8>, depth: usize) -> bson::Document {
        let mut doc = bson::Document::new();
        let fields = choices.next().unwrap_or(0) % 4;
        for _ in 0..fields {
            let key = if choices.next().unwrap_or(0).is_multiple_of(2) {
                grammar_pick(choices, GRAMMAR_KEYS)
            } else {
                grammar_pick(choices, GRAMMAR_OPERATORS)
            };
            doc.insert(key, grammar_value(choices, depth + 1));
        }
        doc
    }

    fn grammar_value(choices: &mut impl Iterator<Item = u8>, depth: usize) -> bson::Bson {
        let choice = choices.next().unwrap_or(0);
        let small = i32::from(choices.next().unwrap_or(0) as i8);
        match choice % 11 {
            0 => bson::Bson::Int32(small),
            1 => bson::Bson::Int64(i64::from(small) << 40),
            2 => bson::Bson::Double(
                [f64::NAN, -0.0, 1.5, f64::INFINITY, 1e300][small.unsigned_abs() as usize % 5],
            ),
            3 => bson::Bson::String(grammar_pick(choices, GRAMMAR_STRINGS).to_owned()),
            4 => bson::Bson::Null,
            5 => bson::Bson::Boolean(small.is_positive()),
            6 => bson::Bson::RegularExpression(bson::Regex {
                pattern: grammar_pick(choices, GRAMMAR_STRINGS)
                    .try_into()
                    .expect("grammar strings hold no NUL"),
                options: "i".try_into().expect("no NUL"),
            }),
            7 | 8 if depth < 5 => bson::Bson::Array(
                (0..choices.next().unwrap_or(0) % 4)
                    .map(|_| grammar_value(choices, depth + 1))
                    .collect(),
            ),
            _ if depth < 5 => bson::Bson::Document(grammar_document(choices, depth + 1)),
            _ => bson::Bson::MinKey,
        }
    }

    fn query_parse_document(data: &[u8]) {
        let depth = bson_canonical::limits::WIRE_NESTING_DEPTH_MAX;
        if bson_canonical::validate_bson(data, depth).is_err() {
            return;
        }
        let Ok(filter_doc) = bson::RawDocument::from_bytes(data) else {
            return;
        };
        let Ok(filter) = query::Filter::parse(filter_doc) else {
            return;
        };
        let docs = [
            bson::rawdoc! {"_id": 1, "a": 1, "b": {"c": [1, 2.5, "x"]}},
            bson::rawdoc! {"a": [{"b": 1}, {"c": null}, [1, 2]], "n": -7, "t": "text"},
            bson::rawdoc! {"a": {"b": {"$x": 1}}, "f": 54_i64, "s": [], "n": f64::NAN},
            bson::rawdoc! {},
        ];
        for doc in &docs {
            let _ = filter.try_matches(doc);
        }
        // The same document as a collection validator, explained where it refuses one.
        if let Ok(validator) = query::Validator::parse(filter_doc) {
            for doc in &docs {
                if !validator.matches(doc) {
                    let _ = validator.explain(doc);
                }
            }
        }
        if let Ok(expression) = query::Expression::parse(bson::RawBsonRef::Document(filter_doc)) {
            for doc in &docs {
                let _ = expression.evaluate(doc);
            }
        }
        let _ = query::SortSpec::parse(filter_doc);
        if let Ok(projection) = query::Projection::parse(filter_doc) {
            for doc in &docs {
                let _ = projection.apply(doc, Some(&filter));
            }
        }
    }
}

/// Targets of the `wire` crate: the message decoder.
mod wire_targets {
    /// Wire decoder: any frame decodes or errors; a decoded OP_MSG re-encodes to an
    /// equal message, and merging its sequences into the command never panics.
    pub fn run(bytes: &[u8]) {
        decode_checked(bytes);
        // Most mutations break the length prefix first; also try the input with its
        // prefix repaired so the fuzzer reaches the sections and documents.
        if bytes.len() >= 4 {
            let mut repaired = bytes.to_vec();
            let length = i32::try_from(bytes.len()).unwrap_or(i32::MAX).to_le_bytes();
            repaired.splice(0..4, length);
            decode_checked(&repaired);
        }
    }

    fn decode_checked(bytes: &[u8]) {
        if let Ok((header, wire::Message::Msg(msg))) = wire::decode(bytes) {
            let _ = msg.command_document();
            let again = msg
                .encode(header.request_id, header.response_to)
                .expect("re-encodes");
            match wire::decode(&again) {
                Ok((_, wire::Message::Msg(decoded))) => assert_eq!(decoded, msg, "round trip"),
                other => panic!("re-encoded OP_MSG failed to decode: {other:?}"),
            }
        }
    }

    /// OP_COMPRESSED frames, with lying sizes and damaged payloads under every compressor:
    /// a clean refusal or the announced size exactly, and what decompresses decodes or is
    /// refused (the wire target's checks), never a panic.
    pub fn compressed(bytes: &[u8]) {
        use wire::Compressor;
        const ALL: [Compressor; 4] = [
            Compressor::Noop,
            Compressor::Snappy,
            Compressor::Zlib,
            Compressor::Zstd,
        ];
        let mut repaired = bytes.to_vec();
        if repaired.len() >= 16 {
            let length = i32::try_from(repaired.len())
                .unwrap_or(i32::MAX)
                .to_le_bytes();
            repaired.splice(0..4, length);
            repaired.splice(12..16, wire::OP_COMPRESSED.to_le_bytes());
        }
        for frame in [bytes, &repaired[..]] {
            if let Ok((inner, _)) = wire::compression::decompress(frame, &ALL) {
                let announced = frame
                    .get(20..24)
                    .map(|b| i32::from_le_bytes(b.try_into().expect("four bytes")));
                assert_eq!(
                    Some(i32::try_from(inner.len()).expect("bounded") - 16),
                    announced,
                    "decompressed length is the announced one"
                );
                decode_checked(&inner);
            }
        }
    }

    pub fn compressed_seeds() -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for frame in seeds() {
            for id in 0..4 {
                let compressor = wire::Compressor::from_id(id).expect("id");
                if let Ok(compressed) = wire::compression::compress(&frame, compressor) {
                    out.push(compressed);
                }
            }
        }
        out
    }

    pub fn seeds() -> Vec<Vec<u8>> {
        use bson::rawdoc;
        let ping = wire::OpMsg::new(rawdoc! { "ping": 1, "$db": "admin" });
        let mut checksummed = ping.clone();
        checksummed.flags = wire::MsgFlags(wire::MsgFlags::CHECKSUM_PRESENT);
        let mut insert = wire::OpMsg::new(rawdoc! { "insert": "c", "$db": "d" });
        insert.sequences.push(wire::DocumentSequence {
            identifier: "documents".into(),
            documents: vec![
                rawdoc! { "_id": 1, "a": [1.5, "x", { "b": null }] },
                rawdoc! {},
            ],
        });
        let query = wire::OpQuery {
            flags: 0,
            full_collection_name: "admin.$cmd".into(),
            number_to_skip: 0,
            number_to_return: -1,
            query: rawdoc! { "isMaster": 1, "client": { "driver": { "name": "x" } } },
            return_fields_selector: None,
        };
        let reply = wire::OpReply::single(rawdoc! { "ok": 1.0 });
        [
            ping.encode(1, 0),
            checksummed.encode(2, 0),
            insert.encode(3, 0),
            query.encode(4),
            reply.encode(5, 4),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// Targets of the `update` crate: update parsing, and applying what parses.
mod update_targets {
    pub fn seeds() -> Vec<Vec<u8>> {
        let updates = [
            bson::rawdoc! {"$set": {"a.b": 1, "c.2": [1]}, "$unset": {"d": ""}},
            bson::rawdoc! {"$inc": {"n": 1}, "$mul": {"m": 2.5}, "$min": {"x": 1}, "$max": {"y": "s"}},
            bson::rawdoc! {"$push": {"a": {"$each": [3, 1], "$sort": -1, "$slice": -2, "$position": 0}}},
            bson::rawdoc! {"$addToSet": {"a": {"$each": [1, 2]}}, "$pop": {"b": -1}, "$pullAll": {"c": [1]}},
            bson::rawdoc! {"$pull": {"a": {"b": {"$gt": 1}}}, "$bit": {"n": {"and": 5, "xor": 1}}},
            bson::rawdoc! {"$rename": {"a.b": "z"}, "$currentDate": {"t": {"$type": "timestamp"}}},
            bson::rawdoc! {"$set": {"a.$[].b": 1, "a.$.c": 2, "a.$[x].d": 3}},
            bson::rawdoc! {"b": 2, "c": {"d": [1]}},
        ];
        updates.iter().map(|d| d.as_bytes().to_vec()).collect()
    }

    /// Names that are not update operators, so parsing's refusals are exercised too.
    const NOT_OPERATORS: &[&str] = &["$foo", "a"];
    const PATHS: &[&str] = &[
        "a", "a.b", "a.0", "a.5", "a.$", "a.$[]", "a.$[x]", "a.$[].b", "b", "n", "_id", "t", "",
        "a..b", "$x", "c.d.e",
    ];

    fn pick<'a>(choices: &mut impl Iterator<Item = u8>, from: &[&'a str]) -> &'a str {
        let index = usize::from(choices.next().unwrap_or(0)) % from.len();
        from.get(index).copied().unwrap_or_default()
    }

    fn value(choices: &mut impl Iterator<Item = u8>, depth: usize) -> bson::Bson {
        match choices.next().unwrap_or(0) % 10 {
            0 => bson::Bson::Int32(i32::from(choices.next().unwrap_or(0)) - 128),
            1 => bson::Bson::Int64(i64::MAX),
            2 => bson::Bson::Double(f64::from(choices.next().unwrap_or(0)) / 3.0),
            3 => bson::Bson::String(pick(choices, PATHS).to_owned()),
            4 => bson::Bson::Null,
            5 => bson::Bson::Boolean(true),
            6 if depth < 4 => bson::Bson::Array(
                (0..choices.next().unwrap_or(0) % 4)
                    .map(|_| value(choices, depth + 1))
                    .collect(),
            ),
            _ if depth < 4 => {
                let mut doc = bson::Document::new();
                for _ in 0..choices.next().unwrap_or(0) % 4 {
                    let key = pick(
                        choices,
                        &[
                            "$each",
                            "$slice",
                            "$sort",
                            "$position",
                            "$type",
                            "and",
                            "b",
                            "$gt",
                        ],
                    );
                    doc.insert(key, value(choices, depth + 1));
                }
                bson::Bson::Document(doc)
            }
            _ => bson::Bson::Int32(1),
        }
    }

    /// Update parsing must never panic, and neither may applying what parses.
    pub fn parse(data: &[u8]) {
        parse_document(data);
        // Most mutated bytes are not BSON; also read them as choices in a small
        // update grammar, so every input reaches the parser and the operators.
        let mut choices = data.iter().copied();
        let mut update = bson::Document::new();
        for _ in 0..1 + choices.next().unwrap_or(0) % 3 {
            let mut fields = bson::Document::new();
            for _ in 0..1 + choices.next().unwrap_or(0) % 3 {
                fields.insert(pick(&mut choices, PATHS), value(&mut choices, 0));
            }
            let name = match choices.next().unwrap_or(0) % 8 {
                0 => pick(&mut choices, NOT_OPERATORS),
                _ => pick(&mut choices, update::OPERATORS),
            };
            update.insert(name, fields);
        }
        if let Ok(raw) = bson::RawDocumentBuf::try_from(&update) {
            parse_document(raw.as_bytes());
        }
    }

    fn parse_document(data: &[u8]) {
        let depth = bson_canonical::limits::WIRE_NESTING_DEPTH_MAX;
        if bson_canonical::validate_bson(data, depth).is_err() {
            return;
        }
        let Ok(update_doc) = bson::RawDocument::from_bytes(data) else {
            return;
        };
        let options = update::UpdateOptions {
            array_filters: vec![bson::rawdoc! {"x": {"$gt": 1}}],
            ..update::UpdateOptions::default()
        };
        for options in [options, update::UpdateOptions::default()] {
            let Ok(parsed) = update::Update::parse(update_doc, options) else {
                continue;
            };
            let query = query::Filter::parse(&bson::rawdoc! {"a.c": 1}).ok();
            let context = update::ApplyContext {
                query: query.as_ref(),
                now: Some(bson::DateTime::from_millis(0)),
                is_insert: false,
            };
            let docs = [
                bson::rawdoc! {"_id": 1, "a": [{"b": 1, "c": 1}, 2, [3]], "n": 7, "b": [1, 2]},
                bson::rawdoc! {"_id": 2, "a": {"b": {"c": null}}, "c": "s", "t": 1.5},
            ];
            for doc in &docs {
                let _ = parsed.apply(doc, &context);
            }
        }
        let _ = update::upsert_seed(update_doc);
    }
}
