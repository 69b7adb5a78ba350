//! Starting and stopping the server under test, and raw-socket helpers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wire::{Header, Message};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A running server process, killed on drop (with the files of a database `start` made up).
pub struct TestServer {
    child: Child,
    pub address: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
    /// The temporary database `start` chose (no test knows its path): removed on drop.
    owned: Option<std::path::PathBuf>,
}

impl TestServer {
    /// A fresh temporary database path (nothing there yet).
    pub fn temp_db() -> std::path::PathBuf {
        std::env::temp_dir().join(format!(
            "mfdb-test-{}-{}.mfdb",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Starts the server on a free port (`--port 0`) with a temporary database path.
    pub fn start(extra: &[&str]) -> TestServer {
        let db = TestServer::temp_db();
        let mut server = TestServer::start_at(&db, extra);
        server.owned = Some(db);
        server
    }

    /// Starts the server on a free port on the database file `db`.
    pub fn start_at(db: &std::path::Path, extra: &[&str]) -> TestServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mfdb-server"))
            .args(["--port", "0", "--log-level", "debug", "--db"])
            .arg(db)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("server starts");
        let stderr = child.stderr.take().expect("stderr piped");
        let mut lines = BufReader::new(stderr).lines();
        let mut address = None;
        let log = Arc::new(Mutex::new(Vec::new()));
        for line in lines.by_ref() {
            let line = line.expect("log line");
            log.lock().expect("log").push(line.clone());
            if let Some(port) = listening_port(&line) {
                address = Some(SocketAddr::from(([127, 0, 0, 1], port)));
                break;
            }
        }
        let address = address.unwrap_or_else(|| panic!("server did not start: {log:?}"));
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().expect("log").push(line);
            }
        });
        TestServer {
            child,
            address,
            log,
            owned: None,
        }
    }

    /// Runs the server on `db` expecting it to refuse to start: waits (up to 10 s) for it
    /// to exit and returns its status and everything it wrote to stderr.
    pub fn refused_at(db: &std::path::Path) -> (ExitStatus, String) {
        TestServer::refused_with(db, &[])
    }

    /// [`TestServer::refused_at`] with the server flags `extra`.
    pub fn refused_with(db: &std::path::Path, extra: &[&str]) -> (ExitStatus, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mfdb-server"))
            .args(["--port", "0", "--db"])
            .arg(db)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("server starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server that should refuse to start kept running");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .expect("stderr piped")
            .read_to_string(&mut stderr)
            .expect("stderr");
        (status, stderr)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn uri(&self) -> String {
        format!(
            "mongodb://{}/?directConnection=true&serverSelectionTimeoutMS=5000",
            self.address
        )
    }

    pub fn client(&self) -> mongodb::sync::Client {
        mongodb::sync::Client::with_uri_str(self.uri()).expect("client")
    }

    /// Whether the server's log has (or gets within 5 s) a line containing `text`;
    /// log lines arrive through a pipe, a moment after the event they describe.
    pub fn log_contains(&self, text: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if self
                .log
                .lock()
                .expect("log")
                .iter()
                .any(|line| line.contains(text))
            {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every log line so far (for failure messages).
    pub fn log_lines(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    /// Kills the process with SIGKILL (no chance to flush or close anything) and reaps it.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits (up to 10 s) for the process to exit.
    pub fn terminate(&mut self) -> ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "server did not exit after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A raw connection with a read timeout, for speaking the wire protocol by hand.
    pub fn raw(&self) -> TcpStream {
        let stream = TcpStream::connect(self.address).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        stream.set_nodelay(true).expect("nodelay");
        stream
    }

    /// Asserts the server still answers a fresh client's ping.
    pub fn assert_healthy(&mut self) {
        assert!(self.is_running(), "server exited");
        let mut stream = self.raw();
        let (_, reply) = roundtrip(&mut stream, &ping_frame(77));
        assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(db) = &self.owned {
            let mut wal = db.clone().into_os_string();
            wal.push("-wal");
            let _ = std::fs::remove_file(db);
            let _ = std::fs::remove_file(wal);
        }
    }
}

/// The port of mongod's "Waiting for connections" line (`"attr":{"port":N,..}`, in the
/// JSON and the plain log format alike), the server's last line before it serves.
pub fn listening_port(line: &str) -> Option<u16> {
    if !line.contains("Waiting for connections") {
        return None;
    }
    let rest = line.split("\"port\":").nth(1)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// An OP_MSG ping with request id `id`.
pub fn ping_frame(id: i32) -> Vec<u8> {
    wire::OpMsg::new(bson::rawdoc! { "ping": 1, "$db": "admin" })
        .encode(id, 0)
        .expect("encode")
}

/// Reads one whole frame, or `None` if the server closed the connection.
pub fn read_frame(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut prefix = [0u8; 4];
    stream.read_exact(&mut prefix).ok()?;
    let length = usize::try_from(i32::from_le_bytes(prefix)).expect("positive length");
    let mut frame = prefix.to_vec();
    frame.resize(length, 0);
    stream.read_exact(&mut frame[4..]).ok()?;
    Some(frame)
}

/// Sends `frame`, reads the reply, and returns its header and body document.
pub fn roundtrip(stream: &mut TcpStream, frame: &[u8]) -> (Header, bson::Document) {
    stream.write_all(frame).expect("send");
    let reply = read_frame(stream).expect("a reply");
    decode_reply(&reply)
}

pub fn decode_reply(reply: &[u8]) -> (Header, bson::Document) {
    let (header, message) = wire::decode(reply).expect("server replies decode");
    let body = match message {
        Message::Msg(msg) => msg.body,
        Message::Reply(mut reply) => reply.documents.remove(0),
        other => panic!("unexpected reply {other:?}"),
    };
    (header, bson::Document::try_from(&body).expect("valid body"))
}

/// Whether the server closed `stream` (read returns EOF or reset) within `wait`.
pub fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    stream.set_read_timeout(Some(wait)).expect("timeout");
    let mut buffer = [0u8; 256];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(error) => {
                return !matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
            }
        }
    }
}
