//! What kind of server answers at a URL, found in well under 2 s before
//! any client library connects: a NATS server greets first (`INFO`); a
//! Redis server answers an inline `PING` with `+PONG` (or an error); an
//! AMQP broker answers anything but its protocol header with its own
//! (`AMQP` and the version it speaks). A URL whose scheme names another
//! kind of server than the one there is refused, naming both.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{LiveError, Target};

/// How long the probe waits to connect, and for an answer to its ping.
const STEP: Duration = Duration::from_millis(600);
/// How long it waits for a server that greets first (NATS does at once).
const GREETING: Duration = Duration::from_millis(250);

/// The kind of server a probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Amqp,
    Redis,
    Nats,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Amqp => "an AMQP broker (RabbitMQ)",
            Kind::Redis => "a Redis server",
            Kind::Nats => "a NATS server",
        }
    }

    fn scheme(self) -> &'static str {
        match self {
            Kind::Amqp => "amqp",
            Kind::Redis => "redis",
            Kind::Nats => "nats",
        }
    }

    fn of(target: Target) -> Kind {
        match target {
            Target::Amqp => Kind::Amqp,
            Target::Redis => Kind::Redis,
            Target::Nats => Kind::Nats,
        }
    }
}

/// `host:port` of a URL (`scheme://user:pw@host:port/path`).
pub fn address(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or("");
    authority.rsplit('@').next().unwrap_or("")
}

/// What the first bytes a server sent say it is.
pub fn kind_of(greeting: &[u8]) -> Option<Kind> {
    if greeting.starts_with(b"INFO ") {
        Some(Kind::Nats)
    } else if greeting.starts_with(b"AMQP") {
        Some(Kind::Amqp)
    } else if greeting.starts_with(b"+PONG") || greeting.starts_with(b"-") {
        Some(Kind::Redis)
    } else {
        None
    }
}

/// Checks that the server at `url` is the kind its scheme names: an
/// error naming what is there otherwise. Nothing answering is absent; a
/// server of no kind known here is let through (its client will say).
pub async fn check(url: &str, target: Target) -> Result<(), LiveError> {
    let addr = address(url);
    let stream = tokio::time::timeout(STEP, TcpStream::connect(addr)).await;
    let mut stream = match stream {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            return Err(LiveError::Absent(format!(
                "no broker answers at {addr}: {e}"
            )));
        }
        Err(_) => {
            return Err(LiveError::Absent(format!(
                "no broker answers at {addr}: no connection within {} ms",
                STEP.as_millis()
            )));
        }
    };
    let mut buf = [0u8; 16];
    // A NATS server greets at once.
    let greeted = match tokio::time::timeout(GREETING, stream.read(&mut buf)).await {
        Ok(Ok(n)) if n > 0 => Some(n),
        _ => None,
    };
    let n = match greeted {
        Some(n) => n,
        None => {
            // Inline PING, padded to the 8 bytes of a protocol header:
            // Redis answers +PONG (an empty line is nothing to it); an AMQP
            // broker, which reads 8 bytes first, its own header.
            if stream.write_all(b"PING\r\n\r\n").await.is_err() {
                return Ok(());
            }
            match tokio::time::timeout(STEP, stream.read(&mut buf)).await {
                Ok(Ok(n)) => n,
                _ => return Ok(()),
            }
        }
    };
    let Some(found) = kind_of(&buf[..n]) else {
        return Ok(());
    };
    let wanted = Kind::of(target);
    if found == wanted {
        return Ok(());
    }
    Err(LiveError::Failed(format!(
        "{addr} is {}, not {}: use {}://{addr} with the files for it, or the URL of {}",
        found.name(),
        wanted.name(),
        found.scheme(),
        wanted.name()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_greeting_names_its_server() {
        assert_eq!(kind_of(b"INFO {\"server_id\""), Some(Kind::Nats));
        assert_eq!(kind_of(b"AMQP\x00\x00\x09\x01"), Some(Kind::Amqp));
        assert_eq!(kind_of(b"+PONG\r\n"), Some(Kind::Redis));
        assert_eq!(
            kind_of(b"-NOAUTH Authentication required."),
            Some(Kind::Redis)
        );
        assert_eq!(kind_of(b"HTTP/1.1 400"), None);
        assert_eq!(
            address("amqp://guest:guest@127.0.0.1:5672/%2f"),
            "127.0.0.1:5672"
        );
        assert_eq!(address("redis://127.0.0.1:6379"), "127.0.0.1:6379");
    }
}
