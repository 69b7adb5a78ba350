//! A minimal MongoDB client for the crash matrix: one TCP connection, one OP_MSG command
//! at a time (built and parsed by the `wire` crate), no retries, no pool. The matrix needs
//! to know exactly which commands were sent and which were acknowledged, which a real
//! driver's retries and pools would blur.

use anyhow::{Context, Result, bail};
use bson::{Bson, Document, RawDocumentBuf, doc};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Why a command got no usable reply.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The connection broke (the server died): the command is unacknowledged.
    Lost(std::io::Error),
    /// The server answered, but not with success (an error reply, a write error).
    Refused(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Lost(error) => write!(f, "connection lost: {error}"),
            Failure::Refused(why) => write!(f, "refused: {why}"),
        }
    }
}

/// One connection to the server.
pub(crate) struct Client {
    stream: TcpStream,
    request_id: i32,
}

impl Client {
    pub(crate) fn connect(address: &str, timeout: Duration) -> std::io::Result<Client> {
        let addr = address
            .parse()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Client {
            stream,
            request_id: 0,
        })
    }

    /// Sends `body` to database `db` and returns the reply document, whatever it says.
    pub(crate) fn raw_command(
        &mut self,
        db: &str,
        mut body: Document,
    ) -> Result<Document, Failure> {
        body.insert("$db", db);
        let raw = RawDocumentBuf::try_from(&body)
            .map_err(|e| Failure::Refused(format!("encoding the command: {e}")))?;
        self.request_id = self.request_id.wrapping_add(1);
        let frame = wire::OpMsg::new(raw)
            .encode(self.request_id, 0)
            .map_err(|e| Failure::Refused(format!("encoding the message: {e}")))?;
        self.stream.write_all(&frame).map_err(Failure::Lost)?;
        let mut length = [0u8; 4];
        self.stream.read_exact(&mut length).map_err(Failure::Lost)?;
        let total = usize::try_from(i32::from_le_bytes(length))
            .ok()
            .filter(|&n| n >= 16)
            .ok_or_else(|| Failure::Refused("bad reply length".into()))?;
        let mut reply = vec![0u8; total];
        reply[..4].copy_from_slice(&length);
        self.stream
            .read_exact(&mut reply[4..])
            .map_err(Failure::Lost)?;
        let body = match wire::decode(&reply) {
            Ok((_, wire::Message::Msg(msg))) => msg.body,
            Ok((_, other)) => return Err(Failure::Refused(format!("unexpected reply {other:?}"))),
            Err((_, error)) => return Err(Failure::Refused(format!("bad reply: {error}"))),
        };
        Document::try_from(body.as_ref())
            .map_err(|e| Failure::Refused(format!("reply is not a document: {e}")))
    }

    /// Sends a command and requires `ok: 1` with no write errors or write-concern error.
    pub(crate) fn command(&mut self, db: &str, body: Document) -> Result<Document, Failure> {
        let reply = self.raw_command(db, body)?;
        let ok = match reply.get("ok") {
            Some(Bson::Double(x)) => *x == 1.0,
            Some(Bson::Int32(x)) => *x == 1,
            Some(Bson::Int64(x)) => *x == 1,
            _ => false,
        };
        if !ok || reply.contains_key("writeErrors") || reply.contains_key("writeConcernError") {
            return Err(Failure::Refused(format!("{reply}")));
        }
        Ok(reply)
    }

    /// Every document of `db.coll`, through find and getMore.
    pub(crate) fn find_all(&mut self, db: &str, coll: &str) -> Result<Vec<Document>> {
        let reply = self
            .command(db, doc! {"find": coll, "filter": {}, "batchSize": 200})
            .map_err(|e| anyhow::anyhow!("find {db}.{coll}: {e}"))?;
        let mut docs = Vec::new();
        let mut cursor = reply.get_document("cursor")?.clone();
        let mut batch = "firstBatch";
        loop {
            for item in cursor.get_array(batch)? {
                match item {
                    Bson::Document(d) => docs.push(d.clone()),
                    other => bail!("find {db}.{coll} returned a non-document {other}"),
                }
            }
            let id = cursor.get_i64("id")?;
            if id == 0 {
                return Ok(docs);
            }
            let reply = self
                .command(
                    db,
                    doc! {"getMore": id, "collection": coll, "batchSize": 200},
                )
                .map_err(|e| anyhow::anyhow!("getMore {db}.{coll}: {e}"))?;
            cursor = reply.get_document("cursor")?.clone();
            batch = "nextBatch";
        }
    }

    /// The names in a listCollections / listDatabases style reply's first batch.
    pub(crate) fn names(&mut self, db: &str, body: Document) -> Result<Vec<String>> {
        let reply = self.command(db, body).map_err(|e| anyhow::anyhow!("{e}"))?;
        let items = match reply.get_array("databases") {
            Ok(list) => list.clone(),
            Err(_) => {
                let cursor = reply.get_document("cursor").context("cursor")?;
                if cursor.get_i64("id").unwrap_or(0) != 0 {
                    bail!("listing returned more than one batch");
                }
                cursor.get_array("firstBatch")?.clone()
            }
        };
        let mut names = Vec::new();
        for item in items {
            let Bson::Document(d) = item else {
                bail!("listing item is not a document");
            };
            names.push(d.get_str("name")?.to_owned());
        }
        Ok(names)
    }
}
