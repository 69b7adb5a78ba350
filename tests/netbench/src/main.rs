//! With `--compression [--rounds R]`: issue 20's OP_COMPRESSED row instead (see
//! `compression.rs`).
//!
//! Ping round trips per second against the multiforadb server and against a bare TCP echo
//! server, both in this process, from 1, 8 and 64 concurrent clients.
//!
//! The echo server has the same shape as the real one (one mio thread, non-blocking
//! sockets, TCP_NODELAY) but does no framing or command work: it writes back each
//! byte it reads. Each client sends the same OP_MSG ping frame to both and waits
//! for a reply of the size the target sends, so the difference between the two is
//! what framing, decoding, dispatch and reply building cost. The targets are
//! measured alternately, twice each, and the better run of each is kept, because
//! this machine's neighbours are noisy.
#![forbid(unsafe_code)]

mod compression;
mod echo;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

struct Options {
    seconds: f64,
    clients: Vec<usize>,
}

fn options() -> Options {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
    };
    let seconds = value("--seconds")
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let clients = value("--clients")
        .map(|list| list.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 8, 64]);
    Options { seconds, clients }
}

fn ping_frame() -> Vec<u8> {
    wire::OpMsg::new(bson::rawdoc! { "ping": 1, "$db": "admin" })
        .encode(1, 0)
        .expect("encodes")
}

/// Round trips per second from `clients` threads for `seconds`.
fn measure(address: SocketAddr, clients: usize, seconds: f64, reply_len: usize) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let frame = Arc::new(ping_frame());
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let (stop, count, frame) = (Arc::clone(&stop), Arc::clone(&count), Arc::clone(&frame));
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(address).expect("connect");
                stream.set_nodelay(true).expect("nodelay");
                let mut reply = vec![0u8; reply_len];
                let mut done = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    stream.write_all(&frame).expect("send");
                    stream.read_exact(&mut reply).expect("reply");
                    done += 1;
                }
                count.fetch_add(done, Ordering::Relaxed);
            })
        })
        .collect();
    // Let every client connect and warm up before counting.
    std::thread::sleep(Duration::from_millis(200));
    let before = count.load(Ordering::Relaxed);
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().expect("client thread");
    }
    // Completed round trips include the warm-up; scale by the whole client run time.
    let total = count.load(Ordering::Relaxed) - before;
    total as f64 / (started.elapsed().as_secs_f64() + 0.2)
}

fn start_server(dispatch: server::Dispatch) -> SocketAddr {
    let mut config = server::Config::defaults();
    config.port = 0;
    config.max_connections = 10_000;
    config.dispatch = dispatch;
    config.log_level = server::LogLevel::Warn;
    let engine = Arc::new(config.memory_engine(vec!["mfdb-netbench".into()]));
    let server = server::Server::bind(&config, engine).expect("bind");
    let address = *server.local_addresses().first().expect("one address");
    std::thread::spawn(move || server.run().expect("server runs"));
    address
}

fn reply_len(address: SocketAddr) -> usize {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream.write_all(&ping_frame()).expect("send");
    let mut prefix = [0u8; 4];
    stream.read_exact(&mut prefix).expect("reply");
    usize::try_from(i32::from_le_bytes(prefix)).expect("length")
}

fn main() {
    let options = options();
    if std::env::args().any(|a| a == "--compression") {
        let rounds = std::env::args()
            .skip_while(|a| a != "--rounds")
            .nth(1)
            .and_then(|r| r.parse().ok())
            .unwrap_or(21);
        compression::run(start_server(server::Dispatch::Auto), rounds);
        return;
    }
    let server = start_server(server::Dispatch::Auto);
    let pool = start_server(server::Dispatch::Pool);
    let echo = echo::start();
    let server_reply = reply_len(server);
    let echo_reply = ping_frame().len();
    println!(
        "ping benchmark: {} s per run, best of 2; request {} B, reply {} B (echo {} B)",
        options.seconds,
        ping_frame().len(),
        server_reply,
        echo_reply
    );
    println!(
        "| clients | echo rt/s | server rt/s | server/echo time | server/echo throughput | server, all on workers rt/s |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for &clients in &options.clients {
        let (mut best_echo, mut best_server, mut best_pool) = (0f64, 0f64, 0f64);
        for _ in 0..2 {
            best_echo = best_echo.max(measure(echo, clients, options.seconds, echo_reply));
            best_server = best_server.max(measure(server, clients, options.seconds, server_reply));
            best_pool = best_pool.max(measure(pool, clients, options.seconds, server_reply));
        }
        println!(
            "| {clients} | {best_echo:.0} | {best_server:.0} | {:.2}x | {:.2}x | {best_pool:.0} |",
            best_echo / best_server,
            best_server / best_echo
        );
    }
}
