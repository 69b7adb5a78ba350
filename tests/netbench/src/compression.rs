//! `--compression`: issue 20's row. `find` of 1,000 16 KiB documents (one batch) over
//! loopback, uncompressed and with each compressor, the modes taking turns; per mode the
//! median round trip (the client's decompression and decoding included, as a driver's) and
//! the bytes the reply took on the wire. The documents are text-like: words of a small
//! vocabulary and numbers in pseudo-random order (what logs and JSON payloads look like),
//! not a repeated byte.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Instant;
use wire::Compressor;

const DOCS: usize = 1000;
const DOC_BYTES: usize = 16 * 1024;
const WORDS: &[&str] = &[
    "order",
    "shipped",
    "customer",
    "total",
    "amount",
    "pending",
    "address",
    "street",
    "city",
    "status",
    "delivered",
    "item",
    "quantity",
    "price",
    "discount",
    "warehouse",
    "region",
    "north",
    "south",
    "priority",
    "express",
    "standard",
    "return",
    "refund",
    "invoice",
];

fn payload(seed: u64) -> String {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = String::with_capacity(DOC_BYTES);
    while out.len() < DOC_BYTES - 200 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let word = WORDS[(x % WORDS.len() as u64) as usize];
        out.push_str(word);
        out.push(if x.is_multiple_of(5) { ':' } else { ' ' });
        if x.is_multiple_of(3) {
            out.push_str(&((x >> 20) % 100_000).to_string());
            out.push(' ');
        }
    }
    out
}

fn send(stream: &mut TcpStream, frame: &[u8], compressor: Option<Compressor>) -> (usize, Vec<u8>) {
    let frame = match compressor {
        Some(c) => wire::compression::compress(frame, c).expect("compress"),
        None => frame.to_vec(),
    };
    stream.write_all(&frame).expect("send");
    let mut prefix = [0u8; 4];
    stream.read_exact(&mut prefix).expect("reply");
    let len = usize::try_from(i32::from_le_bytes(prefix)).expect("length");
    let mut reply = prefix.to_vec();
    reply.resize(len, 0);
    stream.read_exact(&mut reply[4..]).expect("reply body");
    let inner = if wire::compression::is_compressed(&reply) {
        let all = [
            Compressor::Noop,
            Compressor::Snappy,
            Compressor::Zlib,
            Compressor::Zstd,
        ];
        wire::compression::decompress(&reply, &all)
            .expect("decompress")
            .0
    } else {
        reply
    };
    (len, inner)
}

fn command(body: bson::RawDocumentBuf) -> Vec<u8> {
    wire::OpMsg::new(body).encode(1, 0).expect("encode")
}

pub fn run(address: SocketAddr, rounds: usize) {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    for chunk in 0..DOCS / 100 {
        let mut docs = bson::RawArrayBuf::new();
        for i in chunk * 100..(chunk + 1) * 100 {
            docs.push(bson::rawdoc! { "_id": i as i64, "payload": payload(i as u64) });
        }
        let insert = command(bson::rawdoc! { "insert": "c", "documents": docs, "$db": "bench" });
        let (_, reply) = send(&mut stream, &insert, None);
        assert!(wire::decode(&reply).is_ok());
    }
    let find = command(bson::rawdoc! { "find": "c", "batchSize": DOCS as i32, "$db": "bench" });
    let modes: [(&str, Option<Compressor>); 4] = [
        ("none", None),
        ("snappy", Some(Compressor::Snappy)),
        ("zlib", Some(Compressor::Zlib)),
        ("zstd", Some(Compressor::Zstd)),
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut wire_bytes = vec![0usize; modes.len()];
    for round in 0..rounds {
        for turn in 0..modes.len() {
            // Forward on even rounds, backward on odd ones.
            let m = if round % 2 == 0 {
                turn
            } else {
                modes.len() - 1 - turn
            };
            let compressor = modes[m].1;
            let start = Instant::now();
            let (len, inner) = send(&mut stream, &find, compressor);
            let (_, message) = wire::decode(&inner).expect("decode");
            let wire::Message::Msg(msg) = message else {
                panic!("not OP_MSG")
            };
            let batch = msg
                .body
                .get_document("cursor")
                .and_then(|c| c.get_array("firstBatch"))
                .expect("firstBatch");
            assert_eq!(batch.into_iter().count(), DOCS);
            times[m].push(start.elapsed().as_secs_f64() * 1e3);
            wire_bytes[m] = len;
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let base = median(&mut times[0].clone());
    println!(
        "find of {DOCS} x 16 KiB text-like documents, one batch, {rounds} rounds taking turns"
    );
    println!("| compressor | median ms | throughput vs none | reply bytes | bytes vs none |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (m, (name, _)) in modes.iter().enumerate() {
        let t = median(&mut times[m]);
        println!(
            "| {name} | {t:.2} | {:.2}x | {} | {:.2}x fewer |",
            base / t,
            wire_bytes[m],
            wire_bytes[0] as f64 / wire_bytes[m] as f64
        );
    }
}
