//! A bare TCP echo server on one mio thread: the floor the ping benchmark compares against.

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;

const LISTENER: Token = Token(usize::MAX);

struct Connection {
    stream: TcpStream,
    pending: Vec<u8>,
}

/// Starts the echo server on a free loopback port and returns its address.
pub fn start() -> SocketAddr {
    let mut listener = TcpListener::bind("127.0.0.1:0".parse().expect("address")).expect("bind");
    let address = listener.local_addr().expect("address");
    let poll = Poll::new().expect("poll");
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)
        .expect("register");
    std::thread::spawn(move || serve(poll, listener));
    address
}

fn serve(mut poll: Poll, listener: TcpListener) {
    let mut events = Events::with_capacity(1024);
    let mut connections: Vec<Connection> = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        poll.poll(&mut events, None).expect("poll");
        for event in &events {
            if event.token() == LISTENER {
                while let Ok((mut stream, _)) = listener.accept() {
                    stream.set_nodelay(true).expect("nodelay");
                    let token = Token(connections.len());
                    let interest = Interest::READABLE | Interest::WRITABLE;
                    poll.registry()
                        .register(&mut stream, token, interest)
                        .expect("register");
                    connections.push(Connection {
                        stream,
                        pending: Vec::new(),
                    });
                }
                continue;
            }
            let Some(connection) = connections.get_mut(event.token().0) else {
                continue;
            };
            echo(connection, &mut buffer);
        }
    }
}

fn echo(connection: &mut Connection, buffer: &mut [u8]) {
    loop {
        match connection.stream.read(buffer) {
            Ok(0) => break,
            Ok(count) => connection
                .pending
                .extend_from_slice(buffer.get(..count).unwrap_or_default()),
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    while !connection.pending.is_empty() {
        match connection.stream.write(&connection.pending) {
            Ok(count) => {
                connection.pending.drain(..count);
            }
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}
