//! Hostile and broken clients: each gets an error or a closed socket, and the server
//! keeps serving everyone else.

use crate::harness::{TestServer, closed_within, ping_frame, read_frame, roundtrip};
use bson::rawdoc;
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

const CLOSE_WAIT: Duration = Duration::from_secs(5);

#[test]
fn garbage_bytes_close_the_connection() {
    let mut server = TestServer::start(&[]);
    let mut bystander = server.raw();
    let mut stream = server.raw();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("send");
    assert!(closed_within(&mut stream, CLOSE_WAIT));
    roundtrip(&mut bystander, &ping_frame(1));
    server.assert_healthy();
}

#[test]
fn two_gigabyte_length_prefix_closes_the_connection_without_buffering() {
    let mut server = TestServer::start(&[]);
    let mut stream = server.raw();
    let mut frame = 2_000_000_000i32.to_le_bytes().to_vec();
    frame.extend_from_slice(&[0u8; 12]);
    stream.write_all(&frame).expect("send");
    assert!(closed_within(&mut stream, CLOSE_WAIT));
    assert!(server.log_contains("outside [16, 48000000]"));
    server.assert_healthy();
}

#[test]
fn truncated_frame_then_hangup_leaves_the_server_up() {
    let mut server = TestServer::start(&[]);
    let frame = ping_frame(1);
    let mut stream = server.raw();
    stream.write_all(&frame[..frame.len() / 2]).expect("send");
    drop(stream);
    std::thread::sleep(Duration::from_millis(100));
    server.assert_healthy();
}

#[test]
fn truncated_frame_left_hanging_is_closed_by_the_frame_timeout() {
    let mut server = TestServer::start(&["--frame-timeout-secs", "1"]);
    let frame = ping_frame(1);
    let mut stream = server.raw();
    stream.write_all(&frame[..frame.len() - 3]).expect("send");
    assert!(closed_within(&mut stream, CLOSE_WAIT));
    assert!(server.log_contains("message incomplete after 1s"));
    server.assert_healthy();
}

#[test]
fn unknown_opcode_gets_an_error_reply() {
    let mut server = TestServer::start(&[]);
    let mut stream = server.raw();
    // 2012 is OP_COMPRESSED (its malformed frames are the compression tests').
    for opcode in [2005i32, 2011, 1234] {
        let mut frame = ping_frame(21);
        frame[12..16].copy_from_slice(&opcode.to_le_bytes());
        let (header, reply) = roundtrip(&mut stream, &frame);
        assert_eq!(header.response_to, 21);
        assert_eq!(reply.get_f64("ok").ok(), Some(0.0));
        assert_eq!(
            reply.get_str("codeName").ok(),
            Some("ProtocolError"),
            "{reply}"
        );
    }
    server.assert_healthy();
}

#[test]
fn invalid_bson_in_a_section_gets_an_error_reply() {
    let mut server = TestServer::start(&[]);
    let mut stream = server.raw();
    let mut frame = ping_frame(31);
    frame[25] = 0x77; // the first element's type byte
    let (header, reply) = roundtrip(&mut stream, &frame);
    assert_eq!(header.response_to, 31);
    assert_eq!(reply.get_i32("code").ok(), Some(22));
    // The connection is still usable: framing was intact.
    let (_, reply) = roundtrip(&mut stream, &ping_frame(32));
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
    server.assert_healthy();
}

#[test]
fn client_sending_one_byte_a_second_does_not_stall_others() {
    let mut server = TestServer::start(&["--frame-timeout-secs", "2"]);
    let mut slow = server.raw();
    let frame = ping_frame(1);
    let trickle = std::thread::spawn(move || {
        for byte in &frame {
            if slow.write_all(&[*byte]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        slow
    });
    std::thread::sleep(Duration::from_millis(1500));
    let mut fast = server.raw();
    let started = Instant::now();
    for id in 0..200 {
        roundtrip(&mut fast, &ping_frame(id));
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let mut slow = trickle.join().expect("trickle thread");
    assert!(closed_within(&mut slow, CLOSE_WAIT));
    assert!(server.log_contains("message incomplete after 2s"));
    server.assert_healthy();
}

#[test]
fn client_that_never_speaks_holds_nothing_but_its_socket() {
    let mut server = TestServer::start(&[]);
    let _silent: Vec<TcpStream> = (0..20).map(|_| server.raw()).collect();
    std::thread::sleep(Duration::from_millis(300));
    server.assert_healthy();
    // With an idle timeout configured, silent clients are closed.
    let mut strict = TestServer::start(&["--idle-timeout-secs", "1"]);
    let mut silent = strict.raw();
    assert!(closed_within(&mut silent, CLOSE_WAIT));
    strict.assert_healthy();
}

#[test]
fn thousand_connections_at_once_are_all_served() {
    let mut server = TestServer::start(&["--max-connections", "1100"]);
    let mut streams: Vec<TcpStream> = (0..1000).map(|_| server.raw()).collect();
    for (id, stream) in streams.iter_mut().enumerate() {
        stream
            .write_all(&ping_frame(i32::try_from(id).expect("small")))
            .expect("send");
    }
    for (id, stream) in streams.iter_mut().enumerate() {
        let (header, _) = crate::harness::decode_reply(&read_frame(stream).expect("reply"));
        assert_eq!(header.response_to, i32::try_from(id).expect("small"));
    }
    server.assert_healthy();
}

#[test]
fn connections_over_the_limit_are_closed_and_others_unaffected() {
    // mongod's spelling of the flag.
    let mut server = TestServer::start(&["--maxConns", "3"]);
    let mut kept: Vec<TcpStream> = (0..3).map(|_| server.raw()).collect();
    for stream in &mut kept {
        roundtrip(stream, &ping_frame(1));
    }
    let mut extra = server.raw();
    assert!(closed_within(&mut extra, CLOSE_WAIT));
    assert!(server.log_contains(
        r#""id":22942,"ctx":"listener","msg":"Connection refused because there are too many open connections""#
    ));
    assert!(server.log_contains(r#""connectionCount":3,"limit":3}"#));
    for stream in &mut kept {
        roundtrip(stream, &ping_frame(2));
    }
    drop(kept);
    std::thread::sleep(Duration::from_millis(200));
    server.assert_healthy();
}

#[test]
fn op_msg_from_a_client_with_an_unknown_required_flag_is_refused() {
    let mut server = TestServer::start(&[]);
    let mut stream = server.raw();
    let mut msg = wire::OpMsg::new(rawdoc! { "ping": 1, "$db": "admin" });
    msg.flags = wire::MsgFlags(1 << 4);
    let (_, reply) = roundtrip(&mut stream, &msg.encode(1, 0).expect("encode"));
    assert_eq!(reply.get_str("codeName").ok(), Some("ProtocolError"));
    server.assert_healthy();
}
